/* Does the compiler build FMA3 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_fma3(const void *mem);

int dispatch_check_fma3(const void *mem)
{
    const float *p = (const float *)mem;
    __m256 a = _mm256_loadu_ps(p);
    return (int)_mm256_cvtss_f32(_mm256_fmadd_ps(a, a, a));
}
