/* Does the compiler build ASIMDFHM code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_asimdfhm(const void *mem);

int dispatch_check_asimdfhm(const void *mem)
{
    const float *p = (const float *)mem;
    float32x2_t a = vld1_f32(p);
    float16x4_t h = vld1_f16((const __fp16 *)p);
    return (int)vget_lane_f32(vfmlal_low_f16(a, h, h), 0);
}
