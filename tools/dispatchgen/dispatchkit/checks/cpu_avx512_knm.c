/* Does the compiler build AVX512_KNM code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512_knm(const void *mem);

int dispatch_check_avx512_knm(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    __m128 b = _mm_loadu_ps(p);
    __m512i i = _mm512_loadu_si512((const void *)p);
    a = _mm512_4fmadd_ps(a, a, a, a, a, &b);
    __m128i q = _mm_loadu_si128((const __m128i *)p);
    i = _mm512_4dpwssd_epi32(i, i, i, i, i, &q);
    i = _mm512_popcnt_epi64(i);
    return (int)_mm512_reduce_add_ps(a) + _mm_cvtsi128_si32(_mm512_castsi512_si128(i));
}
