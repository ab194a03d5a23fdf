/* Does the compiler build AVX512DQ code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512dq(const void *mem);

int dispatch_check_avx512dq(const void *mem)
{
    const float *p = (const float *)mem;
    __m512i a = _mm512_loadu_si512((const void *)p);
    return (int)_mm512_reduce_add_pd(_mm512_cvtepi64_pd(a));
}
