/* Does the compiler build SSE code? One intrinsic, compiled to an object. */
#include <xmmintrin.h>

int dispatch_check_sse(const void *mem);

int dispatch_check_sse(const void *mem)
{
    const float *p = (const float *)mem;
    __m128 a = _mm_loadu_ps(p);
    return (int)_mm_cvtss_f32(_mm_add_ps(a, a));
}
