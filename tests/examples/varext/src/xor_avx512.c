#include <immintrin.h>

#include "varext.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__AVX512BW__)
#error "xor_avx512.c is the AVX512_SKX variant"
#endif

void varext_xor_avx512(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i x = _mm512_loadu_si512((const void *)(a + i));
        __m512i y = _mm512_loadu_si512((const void *)(b + i));
        _mm512_storeu_si512((void *)(dst + i), _mm512_xor_si512(x, y));
    }
    for (; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}

const char *varext_impl_avx512(void) { return "avx512"; }
