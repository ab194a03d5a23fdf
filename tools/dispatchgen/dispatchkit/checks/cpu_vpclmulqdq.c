/* Does the compiler build VPCLMULQDQ code? One intrinsic (256-bit carry-less multiply), compiled to an object. */
#include <immintrin.h>

int dispatch_check_vpclmulqdq(const void *mem);

int dispatch_check_vpclmulqdq(const void *mem)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)mem);
    a = _mm256_clmulepi64_epi128(a, a, 0x01);
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(a));
}
