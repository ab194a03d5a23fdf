/* Does the compiler build SSSE3 code? One intrinsic, compiled to an object. */
#include <tmmintrin.h>

int dispatch_check_ssse3(const void *mem);

int dispatch_check_ssse3(const void *mem)
{
    const float *p = (const float *)mem;
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    return _mm_cvtsi128_si32(_mm_abs_epi8(a));
}
