/* Does the compiler build NEON_FP16 code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_neon_fp16(const void *mem);

int dispatch_check_neon_fp16(const void *mem)
{
    const float *p = (const float *)mem;
    float32x4_t a = vld1q_f32(p);
    float16x4_t h = vcvt_f16_f32(a);
    return (int)vgetq_lane_f32(vcvt_f32_f16(h), 0);
}
