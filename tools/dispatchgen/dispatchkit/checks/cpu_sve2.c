/* Does the compiler build SVE2 code? One intrinsic, compiled to an object. */
#include <arm_sve.h>

int dispatch_check_sve2(const void *mem);

int dispatch_check_sve2(const void *mem)
{
    const int *p = (const int *)mem;
    svint32_t a = svld1_s32(svptrue_b32(), p);
    /* a halving add: SVE2's, not SVE's */
    return (int)svaddv_s32(svptrue_b32(), svhadd_s32_x(svptrue_b32(), a, a));
}
