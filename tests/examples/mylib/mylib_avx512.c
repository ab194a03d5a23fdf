#include <immintrin.h>

#include "mylib.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__AVX512BW__)
#error "mylib_avx512.c is the AVX512_SKX variant"
#endif

uint32_t mylib_sum_avx512(const uint32_t *x, size_t n)
{
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) acc = _mm512_add_epi32(acc, _mm512_loadu_si512(x + i));
    uint32_t s = (uint32_t)_mm512_reduce_add_epi32(acc);
    for (; i < n; ++i) s += x[i];
    return s;
}

void mylib_xor_avx512(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(a + i),
                                                      _mm512_loadu_si512(b + i)));
    if (i < n) {
        __mmask64 m = (__mmask64)(~0ULL >> (64 - (n - i)));  /* 0 < n - i < 64 */
        _mm512_mask_storeu_epi8(dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + i),
                                                             _mm512_maskz_loadu_epi8(m, b + i)));
    }
}
