/* Does the compiler build F16C code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_f16c(const void *mem);

int dispatch_check_f16c(const void *mem)
{
    const float *p = (const float *)mem;
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    return (int)_mm_cvtss_f32(_mm_cvtph_ps(a));
}
