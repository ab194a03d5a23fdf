/* Does the compiler build GFNI code? One intrinsic (GF(2^8) multiply, SSE form), compiled to an object. */
#include <immintrin.h>

int dispatch_check_gfni(const void *mem);

int dispatch_check_gfni(const void *mem)
{
    __m128i a = _mm_loadu_si128((const __m128i *)mem);
    a = _mm_gf2p8mul_epi8(a, a);
    return _mm_cvtsi128_si32(a);
}
