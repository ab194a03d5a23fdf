/* Does the compiler build AVX512_ICL code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512_icl(const void *mem);

int dispatch_check_avx512_icl(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    a = _mm512_popcnt_epi8(a);        /* BITALG */
    a = _mm512_shldi_epi16(a, a, 3);   /* VBMI2 */
    a = _mm512_popcnt_epi32(a);       /* VPOPCNTDQ */
    a = _mm512_aesenc_epi128(a, a);   /* VAES, 512-bit */
    a = _mm512_clmulepi64_epi128(a, a, 0x10); /* VPCLMULQDQ, 512-bit */
    a = _mm512_gf2p8mul_epi8(a, a);   /* GFNI, 512-bit */
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(a));
}
