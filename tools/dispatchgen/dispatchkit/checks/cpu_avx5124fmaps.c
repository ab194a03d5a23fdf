/* Does the compiler build AVX5124FMAPS code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx5124fmaps(const void *mem);

int dispatch_check_avx5124fmaps(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    __m128 b = _mm_loadu_ps(p);
    return (int)_mm512_reduce_add_ps(_mm512_4fmadd_ps(a, a, a, a, a, &b));
}
