/* Does the compiler build AVX512_SKX code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512_skx(const void *mem);

int dispatch_check_avx512_skx(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    __m256i b = _mm256_loadu_si256((const __m256i *)p);
    a = _mm512_abs_epi8(a);         /* BW */
    a = _mm512_xor_epi64(a, _mm512_castpd_si512(_mm512_and_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(a)))); /* DQ */
    b = _mm256_mask_add_epi32(b, 0x0f, b, b); /* VL */
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(a)) + _mm256_extract_epi32(b, 0);
}
