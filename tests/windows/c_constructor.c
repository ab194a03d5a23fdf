/* A C program whose constructor (a .ctors entry, as gcc's C++ static objects
 * are) runs code built with the baseline flags before main: the toolkit's
 * guard must run before it (tests/test_windows_guard.py). Priority 101, the
 * first a program may ask for: a guard that were a constructor itself could
 * at best tie with it. */
#include <stdio.h>

double baseline_payload(void);

__attribute__((constructor(101))) static void early(void)
{
    printf("constructor %.1f\n", baseline_payload());
}

int main(void)
{
    printf("main\n");
    return 0;
}
