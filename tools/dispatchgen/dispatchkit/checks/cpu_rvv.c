/* Does the compiler build RVV code? One intrinsic, compiled to an object. */
#include <riscv_vector.h>

int dispatch_check_rvv(const void *mem);

int dispatch_check_rvv(const void *mem)
{
    const float *p = (const float *)mem;
    size_t vl = __riscv_vsetvl_e32m1(4);
    vfloat32m1_t a = __riscv_vle32_v_f32m1(p, vl);
    vfloat32m1_t s = __riscv_vfredusum_vs_f32m1_f32m1(__riscv_vfadd_vv_f32m1(a, a, vl),
                                                      __riscv_vfmv_s_f_f32m1(0.0f, vl), vl);
    return (int)__riscv_vfmv_f_s_f32m1_f32(s);
}
