/* Does the compiler build AVX512ER code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512er(const void *mem);

int dispatch_check_avx512er(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    return (int)_mm512_reduce_add_ps(_mm512_exp2a23_ps(a));
}
