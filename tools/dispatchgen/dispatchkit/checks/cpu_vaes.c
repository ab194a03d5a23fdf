/* Does the compiler build VAES code? One intrinsic (256-bit AES round), compiled to an object. */
#include <immintrin.h>

int dispatch_check_vaes(const void *mem);

int dispatch_check_vaes(const void *mem)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)mem);
    a = _mm256_aesenc_epi128(a, a);
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(a));
}
