/* Does the compiler build BF16 code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_bf16(const void *mem);

int dispatch_check_bf16(const void *mem)
{
    const float *p = (const float *)mem;
    bfloat16x8_t a = vreinterpretq_bf16_u16(vld1q_u16((const unsigned short *)mem));
    float32x4_t acc = vbfdotq_f32(vld1q_f32(p), a, a);
    return (int)vgetq_lane_f32(acc, 0);
}
