/* Does the compiler build AVX512BW code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512bw(const void *mem);

int dispatch_check_avx512bw(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    a = _mm512_abs_epi8(a);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(a));
}
