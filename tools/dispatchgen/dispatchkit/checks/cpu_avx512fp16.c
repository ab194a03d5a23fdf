/* Does the compiler build AVX512FP16 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512fp16(const void *mem);

int dispatch_check_avx512fp16(const void *mem)
{
    const float *p = (const float *)mem;
    __m512h a = _mm512_loadu_ph(p);
    return (int)_mm512_reduce_add_ph(_mm512_add_ph(a, a));
}
