/* Does the compiler build SSE2 code? One intrinsic, compiled to an object. */
#include <emmintrin.h>

int dispatch_check_sse2(const void *mem);

int dispatch_check_sse2(const void *mem)
{
    const float *p = (const float *)mem;
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    return _mm_cvtsi128_si32(_mm_add_epi32(a, a));
}
