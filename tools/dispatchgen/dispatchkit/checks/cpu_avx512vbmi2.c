/* Does the compiler build AVX512VBMI2 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512vbmi2(const void *mem);

int dispatch_check_avx512vbmi2(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    a = _mm512_shldi_epi64(a, a, 3);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(a));
}
