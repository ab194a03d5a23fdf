/* Does the compiler build ASIMDHP code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_asimdhp(const void *mem);

int dispatch_check_asimdhp(const void *mem)
{
    const float *p = (const float *)mem;
    float16x8_t a = vld1q_f16((const __fp16 *)p);
    return (int)vgetq_lane_f16(vaddq_f16(a, a), 0);
}
