/* Does the compiler build BMI code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_bmi(const void *mem);

int dispatch_check_bmi(const void *mem)
{
    unsigned int v;
    __builtin_memcpy(&v, mem, sizeof(v));
    return (int)_andn_u32(v, v >> 3);
}
