#include "mylib.h"

#if !DISPATCH_CPU_TARGET_IS_BASELINE
#error "mylib_portable.c is the baseline variant"
#endif

uint32_t mylib_sum_portable(const uint32_t *x, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return s;
}

void mylib_xor_portable(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}
