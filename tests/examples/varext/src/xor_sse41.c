#include <smmintrin.h>

#include "varext.h"

#if DISPATCH_CPU_TARGET_IS_BASELINE || !defined(__SSE4_1__)
#error "xor_sse41.c is the SSE41 variant"
#endif

void varext_xor_sse41(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(b + i));
        _mm_storeu_si128((__m128i *)(dst + i), _mm_xor_si128(x, y));
    }
    for (; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}

const char *varext_impl_sse41(void) { return "sse41"; }
