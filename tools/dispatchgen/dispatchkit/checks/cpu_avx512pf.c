/* Does the compiler build AVX512PF code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512pf(const void *mem);

int dispatch_check_avx512pf(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i i = _mm512_loadu_si512((const void *)p);
    _mm512_prefetch_i32gather_ps(i, p, 4, _MM_HINT_T0);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(i));
}
