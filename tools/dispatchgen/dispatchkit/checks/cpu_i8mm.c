/* Does the compiler build I8MM code? One intrinsic, compiled to an object. */
#include <arm_neon.h>

int dispatch_check_i8mm(const void *mem);

int dispatch_check_i8mm(const void *mem)
{
    const signed char *p = (const signed char *)mem;
    int8x16_t a = vld1q_s8(p);
    int32x4_t acc = vmmlaq_s32(vdupq_n_s32(0), a, a);
    return vgetq_lane_s32(acc, 0);
}
