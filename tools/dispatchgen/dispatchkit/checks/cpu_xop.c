/* Does the compiler build XOP code? One intrinsic, compiled to an object. */
#include <x86intrin.h>

int dispatch_check_xop(const void *mem);

int dispatch_check_xop(const void *mem)
{
    const float *p = (const float *)mem;
    __m128i a = _mm_loadu_si128((const __m128i *)p);
    return _mm_cvtsi128_si32(_mm_comge_epu32(a, a));
}
