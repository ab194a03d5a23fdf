/* Does the compiler build SSE3 code? One intrinsic, compiled to an object. */
#include <pmmintrin.h>

int dispatch_check_sse3(const void *mem);

int dispatch_check_sse3(const void *mem)
{
    const float *p = (const float *)mem;
    __m128 a = _mm_loadu_ps(p);
    return (int)_mm_cvtss_f32(_mm_hadd_ps(a, a));
}
