/* The AVX2 variant in C intrinsics (-Dasm=false); xor_avx2.S otherwise. */
#include <immintrin.h>

#include "varext.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__AVX2__)
#error "xor_avx2.c is the AVX2 variant"
#endif

void varext_xor_avx2(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(a + i));
        __m256i y = _mm256_loadu_si256((const __m256i *)(b + i));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_xor_si256(x, y));
    }
    for (; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}

const char *varext_impl_avx2(void) { return "avx2-c"; }
