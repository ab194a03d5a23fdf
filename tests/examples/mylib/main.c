/* mylib-demo: prints the variant of each entry point this CPU runs and
 * checks it against the portable one on inputs of every length up to 300. */
#include <stdio.h>
#include <string.h>

#include "dispatch/cpu_features.h"
#include "mylib.h"

/* DISPATCH_CPU_TARGET_NAME as the .S file saw it; absent (weak: NULL) when
 * this build skipped the AVX2 variant. */
extern const char mylib_xor_avx2_built_for[] __attribute__((weak));

int main(void)
{
    if (mylib_init() != 0) {
        fprintf(stderr, "mylib-demo: %s\n", dispatch_cpu_error());
        return 1;
    }
    static uint32_t x[300];
    static uint8_t a[300], b[300], got[300], want[300];
    for (int i = 0; i < 300; ++i) {
        x[i] = 2654435761u * (uint32_t)i;
        a[i] = (uint8_t)(i * 7);
        b[i] = (uint8_t)(i * 13 + 1);
    }
    int bad = 0;
    for (size_t n = 0; n <= 300; ++n) {
        bad |= mylib_sum(x, n) != mylib_sum_portable(x, n);
        memset(got, 0, sizeof(got));
        mylib_xor(got, a, b, n);
        mylib_xor_portable(want, a, b, n);
        bad |= memcmp(got, want, n) != 0;
    }
    printf("sum=%s xor=%s asm=%s %s\n", mylib_sum_target(), mylib_xor_target(),
           mylib_xor_avx2_built_for ? mylib_xor_avx2_built_for : "-", bad ? "WRONG" : "ok");
    return bad;
}
