/* Does the compiler build AVX512_KNL code? One intrinsic, compiled to an object.
 * exp2a23 zero-masked: see cpu_avx512er.c. */
#include <immintrin.h>

int dispatch_check_avx512_knl(const void *mem);

int dispatch_check_avx512_knl(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    __m512i i = _mm512_loadu_si512((const void *)p);
    _mm512_prefetch_i32gather_ps(i, p, 4, _MM_HINT_T0);
    return (int)_mm512_reduce_add_ps(_mm512_maskz_exp2a23_ps((__mmask16)0xFFFF, a));
}
