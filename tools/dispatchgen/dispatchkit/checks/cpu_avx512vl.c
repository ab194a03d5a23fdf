/* Does the compiler build AVX512VL code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_avx512vl(const void *mem);

int dispatch_check_avx512vl(const void *mem)
{
    const float *p = (const float *)mem;
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    a = _mm256_mask_add_epi32(a, 0x0f, a, a);
    return _mm256_extract_epi32(a, 0);
}
