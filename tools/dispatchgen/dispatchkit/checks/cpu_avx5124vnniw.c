/* Does the compiler build AVX5124VNNIW code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx5124vnniw(const void *mem);

int dispatch_check_avx5124vnniw(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)p);
    a = _mm512_4dpwssd_epi32(a, a, a, a, a, &b);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(a));
}
