/* Does the compiler build FMA4 code? One intrinsic, compiled to an object. */
#include <x86intrin.h>

int dispatch_check_fma4(const void *mem);

int dispatch_check_fma4(const void *mem)
{
    const float *p = (const float *)mem;
    __m128 a = _mm_loadu_ps(p);
    return (int)_mm_cvtss_f32(_mm_macc_ps(a, a, a));
}
