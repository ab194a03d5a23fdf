/*@targets baseline sse42 (avx2 fma3) vsx3 vsx4 vx vxe vxe2 */
/*
 * add, sub, mul, div, maximum, minimum and sqrt for float32/float64.
 * No AVX-512 target: Note [Streaming arithmetic stops at AVX2].
 * Correctly rounded (or exactly defined: simd.h's max/min) on every target,
 * so every target gives the same bits; see Note [Same answer on every target]
 * in simd.h. The loops are kernels_loops.h's templates.
 *
 * Note [Streaming arithmetic stops at AVX2]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * These loops read two arrays and write one, one operation per element: past
 * L1 they run at the memory's speed, and wider registers only add the
 * AVX-512 costs (split 512-bit ops on AMD, the lower clock license on Intel).
 * Timed on the development machine (AMD Zen 4 with AVX-512, 1 thread, out=
 * preallocated, median of 15, the AVX-512 variant against the AVX2 one forced
 * with DISPATCH_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_SKX"): at 1M
 * elements AVX-512 took 1.05-1.18x the AVX2 time for add/mul/div/maximum
 * (float32 and float64, int_arith's int32/int64 likewise), at 64K
 * 0.92-1.09x (noise), sqrt 0.94-0.99x. NumPy (loops_arithm_fp, loops_autovec)
 * and PyTorch (binary ops registered with REGISTER_DISPATCH, which leaves
 * the AVX512 slot to the AVX2 kernel) stop these loops at AVX2 on every
 * CPU. int_arith.dispatch.c follows this Note.
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
    DISPATCH_KERNELS_LOOP_WITH_2D(ADD, FLOAT32, dispatch_kernel_add_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SUB, FLOAT32, dispatch_kernel_sub_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MUL, FLOAT32, dispatch_kernel_mul_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(DIV, FLOAT32, dispatch_kernel_div_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MAXIMUM, FLOAT32, dispatch_kernel_maximum_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MINIMUM, FLOAT32, dispatch_kernel_minimum_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SQRT, FLOAT32, dispatch_kernel_sqrt_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(ADD, FLOAT64, dispatch_kernel_add_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SUB, FLOAT64, dispatch_kernel_sub_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MUL, FLOAT64, dispatch_kernel_mul_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(DIV, FLOAT64, dispatch_kernel_div_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MAXIMUM, FLOAT64, dispatch_kernel_maximum_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MINIMUM, FLOAT64, dispatch_kernel_minimum_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SQRT, FLOAT64, dispatch_kernel_sqrt_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "arith.dispatch.h"
DISPATCH_KERNELS_CHOOSER(arith)
#endif
