#include <immintrin.h>

#include "mylib.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__AVX2__)
#error "mylib_avx2.c is the AVX2 variant"
#endif

uint32_t mylib_sum_avx2(const uint32_t *x, size_t n)
{
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(x + i)));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    h = _mm_hadd_epi32(h, h);
    h = _mm_hadd_epi32(h, h);
    uint32_t s = (uint32_t)_mm_cvtsi128_si32(h);
    for (; i < n; ++i) s += x[i];
    return s;
}
