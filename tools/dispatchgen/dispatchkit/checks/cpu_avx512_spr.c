/* Does the compiler build AVX512_SPR code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512_spr(const void *mem);

int dispatch_check_avx512_spr(const void *mem)
{
    const float *p = (const float *)mem;
    __m512h a = _mm512_loadu_ph(p);
    __m512 f = _mm512_loadu_ps(p);
    __m256bh b = _mm512_cvtneps_pbh(f); /* AVX512BF16 */
    return (int)_mm512_reduce_add_ph(_mm512_add_ph(a, a)) + _mm256_extract_epi16((__m256i)b, 0);
}
