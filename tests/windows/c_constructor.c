/* A C program whose constructor (a .ctors entry, as gcc's C++ static objects
 * are) runs code built with the baseline flags before main: the toolkit's
 * guard must run before it (tests/test_windows_guard.py). */
#include <stdio.h>

double baseline_payload(void);

__attribute__((constructor)) static void early(void)
{
    printf("constructor %.1f\n", baseline_payload());
}

int main(void)
{
    printf("main\n");
    return 0;
}
