/* Does the compiler build AVX512_SPR code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512_spr(const void *mem);

int dispatch_check_avx512_spr(const void *mem)
{
    const float *p = (const float *)mem;
    __m512h a = _mm512_loadu_ph(p);
    return (int)_mm512_reduce_add_ph(_mm512_add_ph(a, a));
}
