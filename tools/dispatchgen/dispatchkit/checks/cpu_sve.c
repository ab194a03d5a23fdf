/* Does the compiler build SVE code? One intrinsic, compiled to an object. */
#include <arm_sve.h>

int dispatch_check_sve(const void *mem);

int dispatch_check_sve(const void *mem)
{
    const float *p = (const float *)mem;
    svfloat32_t a = svld1_f32(svptrue_b32(), p);
    return (int)svaddv_f32(svptrue_b32(), svadd_f32_z(svptrue_b32(), a, a));
}
