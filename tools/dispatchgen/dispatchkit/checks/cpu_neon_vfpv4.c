/* Does the compiler build NEON_VFPV4 code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_neon_vfpv4(const void *mem);

int dispatch_check_neon_vfpv4(const void *mem)
{
    const float *p = (const float *)mem;
    float32x4_t a = vld1q_f32(p);
    return (int)vgetq_lane_f32(vfmaq_f32(a, a, a), 0);
}
