/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * add, sub, mul, div, maximum, minimum and sqrt for float32/float64.
 * Correctly rounded (or exactly defined: simd.h's max/min) on every target,
 * so every target gives the same bits; see Note [Same answer on every target]
 * in simd.h. The loops are kernels_loops.h's templates.
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"
#include "kernels_loops.h"

#define S_ADD(a, b) ((a) + (b))
#define S_SUB(a, b) ((a) - (b))
#define S_MUL(a, b) ((a) * (b))
#define S_DIV(a, b) ((a) / (b))

DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_add_f32, float, f32, dv_add_f32, S_ADD, 1)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_sub_f32, float, f32, dv_sub_f32, S_SUB, 1)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_mul_f32, float, f32, dv_mul_f32, S_MUL, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_div_f32, float, f32, dv_div_f32, S_DIV, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_maximum_f32, float, f32, dv_max_f32, dv_smax_f32, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_minimum_f32, float, f32, dv_min_f32, dv_smin_f32, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_add_f64, double, f64, dv_add_f64, S_ADD, 1)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_sub_f64, double, f64, dv_sub_f64, S_SUB, 1)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_mul_f64, double, f64, dv_mul_f64, S_MUL, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_div_f64, double, f64, dv_div_f64, S_DIV, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_maximum_f64, double, f64, dv_max_f64, dv_smax_f64, 0)
DISPATCH_KERNELS_BINARY_LOOP(dispatch_kernel_minimum_f64, double, f64, dv_min_f64, dv_smin_f64, 0)

DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_sqrt_f32, float, f32, dv_sqrt_f32, 0)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_sqrt_f64, double, f64, dv_sqrt_f64, 0)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(arith,
    DISPATCH_KERNELS_LOOP(ADD, FLOAT32, dispatch_kernel_add_f32)
    DISPATCH_KERNELS_LOOP(SUB, FLOAT32, dispatch_kernel_sub_f32)
    DISPATCH_KERNELS_LOOP(MUL, FLOAT32, dispatch_kernel_mul_f32)
    DISPATCH_KERNELS_LOOP(DIV, FLOAT32, dispatch_kernel_div_f32)
    DISPATCH_KERNELS_LOOP(MAXIMUM, FLOAT32, dispatch_kernel_maximum_f32)
    DISPATCH_KERNELS_LOOP(MINIMUM, FLOAT32, dispatch_kernel_minimum_f32)
    DISPATCH_KERNELS_LOOP(SQRT, FLOAT32, dispatch_kernel_sqrt_f32)
    DISPATCH_KERNELS_LOOP(ADD, FLOAT64, dispatch_kernel_add_f64)
    DISPATCH_KERNELS_LOOP(SUB, FLOAT64, dispatch_kernel_sub_f64)
    DISPATCH_KERNELS_LOOP(MUL, FLOAT64, dispatch_kernel_mul_f64)
    DISPATCH_KERNELS_LOOP(DIV, FLOAT64, dispatch_kernel_div_f64)
    DISPATCH_KERNELS_LOOP(MAXIMUM, FLOAT64, dispatch_kernel_maximum_f64)
    DISPATCH_KERNELS_LOOP(MINIMUM, FLOAT64, dispatch_kernel_minimum_f64)
    DISPATCH_KERNELS_LOOP(SQRT, FLOAT64, dispatch_kernel_sqrt_f64)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "arith.dispatch.h"
DISPATCH_KERNELS_CHOOSER(arith)
#endif
