/* Does the compiler build AVX512BF16 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512bf16(const void *mem);

int dispatch_check_avx512bf16(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    __m512bh b = _mm512_cvtne2ps_pbh(a, a);
    return (int)_mm512_reduce_add_ps(_mm512_dpbf16_ps(a, b, b));
}
