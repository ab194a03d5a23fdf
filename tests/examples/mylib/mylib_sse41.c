#include <immintrin.h>
#include <string.h>

#include "mylib.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__SSE4_1__)
#error "mylib_sse41.c is the SSE41 variant"
#endif

uint32_t mylib_sum_sse41(const uint32_t *x, size_t n)
{
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) acc = _mm_add_epi32(acc, _mm_loadu_si128((const __m128i *)(x + i)));
    uint32_t s = (uint32_t)_mm_extract_epi32(acc, 0) + (uint32_t)_mm_extract_epi32(acc, 1) +
                 (uint32_t)_mm_extract_epi32(acc, 2) + (uint32_t)_mm_extract_epi32(acc, 3);
    for (; i < n; ++i) s += x[i];
    return s;
}

void mylib_xor_sse41(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i)),
                                  _mm_loadu_si128((const __m128i *)(b + i)));
        _mm_storeu_si128((__m128i *)(dst + i), v);
    }
    for (; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}
