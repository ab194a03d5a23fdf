/* Does the compiler build BMI2 code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_bmi2(const void *mem);

int dispatch_check_bmi2(const void *mem)
{
    unsigned int v;
    __builtin_memcpy(&v, mem, sizeof(v));
    return (int)_pdep_u32(v, 0x0f0f0f0fu);
}
