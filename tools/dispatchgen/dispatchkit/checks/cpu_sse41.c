/* Does the compiler build SSE41 code? One intrinsic, compiled to an object. */
#include <smmintrin.h>

int dispatch_check_sse41(const void *mem);

int dispatch_check_sse41(const void *mem)
{
    const float *p = (const float *)mem;
    __m128 a = _mm_loadu_ps(p);
    return (int)_mm_cvtss_f32(_mm_floor_ps(a));
}
