/* Does the compiler build ASIMD code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_asimd(const void *mem);

int dispatch_check_asimd(const void *mem)
{
    const float *p = (const float *)mem;
    float32x4_t a = vld1q_f32(p);
    return (int)vgetq_lane_f32(vrndnq_f32(a), 0);
}
