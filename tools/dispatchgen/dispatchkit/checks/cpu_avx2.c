/* Does the compiler build AVX2 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx2(const void *mem);

int dispatch_check_avx2(const void *mem)
{
    const float *p = (const float *)mem;
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(_mm256_abs_epi16(a)));
}
