/*@targets baseline sse42 (avx2 fma3) avx512_skx vsx3 vxe rvv */
/*
 * The float32 and float64 loops that have no hand-written kernel: the
 * comparisons writing bool bytes, neg, abs, where, fill and copy, contiguous and
 * with a scalar operand, compiled per target (Note [Generic dispatched loops]
 * in loop_paths.h). neg flips the sign bit and abs clears it, as the
 * reference's -a and fabs do (a NaN keeps its payload); a comparison with a
 * NaN is false (ne: true) in vector compares as in C.
 */
#include "loop_paths.h"

#define FLOAT_LOOPS_(NAME, sfx, T, FABS)                                                  \
    DK_FLOAT_COMPARISONS(sfx, NAME, T)                                                    \
    DK_UNARY(dk_neg_##sfx, NEG, NAME, T, T, -a)                                           \
    DK_UNARY(dk_abs_##sfx, ABS, NAME, T, T, FABS(a))                                      \
    DK_WHERE(dk_where_##sfx, NAME, DK_U(sizeof_##sfx))                                    \
    DK_FILL(dk_fill_##sfx, NAME, DK_U(sizeof_##sfx))                                      \
    DK_COPY(dk_copy_##sfx, NAME, DK_U(sizeof_##sfx))
#define DK_U_sizeof_f32 uint32_t
#define DK_U_sizeof_f64 uint64_t
FLOAT_LOOPS_(FLOAT32, f32, float, __builtin_fabsf)
FLOAT_LOOPS_(FLOAT64, f64, double, __builtin_fabs)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define FLOAT_ENTRIES_(NAME, sfx)                                                         \
    DK_COMPARISON_ENTRIES(sfx, NAME)                                                      \
    DK_ENTRY(NEG, NAME, dk_neg_##sfx) DK_ENTRY(ABS, NAME, dk_abs_##sfx)                   \
    DK_ENTRY(WHERE, NAME, dk_where_##sfx) DK_ENTRY(FILL, NAME, dk_fill_##sfx)             \
    DK_ENTRY(COPY, NAME, dk_copy_##sfx)
DISPATCH_KERNELS_EXPORT(float_loops,
    DISPATCH_KERNELS_LOOP_WITH_2D(LT, FLOAT32, dk_lt_f32, 1) /* the one traced entry of this source */
    FLOAT_ENTRIES_(FLOAT32, f32)
    FLOAT_ENTRIES_(FLOAT64, f64)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "float_loops.dispatch.h"
DISPATCH_KERNELS_CHOOSER(float_loops)
#endif
