/* Does the compiler build AVX512ER code? One intrinsic, compiled to an object.
 * The zero-masked form: gcc 12's unmasked _mm512_exp2a23_ps passes an
 * uninitialized vector, which a user's -Wall -Werror (probes compile with
 * the user's flags) turns into a failed check. */
#include <immintrin.h>

int dispatch_check_avx512er(const void *mem);

int dispatch_check_avx512er(const void *mem)
{
    const float *p = (const float *)mem;
    __m512 a = _mm512_loadu_ps(p);
    return (int)_mm512_reduce_add_ps(_mm512_maskz_exp2a23_ps((__mmask16)0xFFFF, a));
}
