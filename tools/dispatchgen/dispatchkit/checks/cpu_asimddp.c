/* Does the compiler build ASIMDDP code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_asimddp(const void *mem);

int dispatch_check_asimddp(const void *mem)
{
    const float *p = (const float *)mem;
    uint8x16_t a = vld1q_u8((const unsigned char *)p);
    uint32x4_t s = vdotq_u32(vdupq_n_u32(0), a, a);
    return (int)vgetq_lane_u32(s, 0);
}
