/*@targets baseline sse42 (avx2 fma3) avx512_skx vsx3 vxe rvv */
/*
 * Every loop of bool and of every integer dtype of the list, contiguous and
 * with a scalar operand, compiled per target (Note [Generic dispatched loops]
 * in loop_paths.h): comparisons writing bool bytes, + - * max min neg abs
 * addcmul, where, fill and copy. Arithmetic is unsigned, in the element's own
 * width, so it wraps exactly as the reference's does and is never undefined.
 * int_arith.dispatch.c's int32/int64 kernels, registered after these, keep
 * their pairs.
 */
#include "loop_paths.h"

/* The loops of one integer row: storage T of `size` bytes. */
#define INT_LOOPS_(NAME, sfx, T, size)                                                    \
    DK_COMPARISONS(sfx, NAME, T)                                                          \
    DK_BINARY(dk_add_##sfx, ADD, NAME, T, T, 1,                                           \
              (DK_U(size))((DK_M(size))(DK_U(size))a + (DK_M(size))(DK_U(size))k *         \
                                                           (DK_M(size))(DK_U(size))b))    \
    DK_BINARY(dk_sub_##sfx, SUB, NAME, T, T, 1,                                           \
              (DK_U(size))((DK_M(size))(DK_U(size))a - (DK_M(size))(DK_U(size))k *         \
                                                           (DK_M(size))(DK_U(size))b))    \
    DK_BINARY(dk_mul_##sfx, MUL, NAME, T, T, 0,                                           \
              (DK_U(size))((DK_M(size))(DK_U(size))a * (DK_M(size))(DK_U(size))b))        \
    DK_BINARY(dk_maximum_##sfx, MAXIMUM, NAME, T, T, 0, a > b ? a : b)                    \
    DK_BINARY(dk_minimum_##sfx, MINIMUM, NAME, T, T, 0, a < b ? a : b)                    \
    DK_UNARY(dk_neg_##sfx, NEG, NAME, T, T, (DK_U(size))(0u - (DK_M(size))(DK_U(size))a)) \
    DK_UNARY(dk_abs_##sfx, ABS, NAME, T, T,                                               \
             DISPATCH_INT_IS_SIGNED(T) && ((DK_U(size))a >> (8 * (size)-1))               \
                 ? (T)(DK_U(size))(0u - (DK_M(size))(DK_U(size))a)                        \
                 : a)                                                                     \
    DK_TERNARY(dk_addcmul_##sfx, ADDCMUL, NAME, T,                                        \
               (DK_U(size))((DK_M(size))(DK_U(size))a +                                   \
                            (DK_M(size))(DK_U(size))k * (DK_M(size))(DK_U(size))b *       \
                                (DK_M(size))(DK_U(size))c))                               \
    DK_WHERE(dk_where_##sfx, NAME, DK_U(size))                                            \
    DK_FILL(dk_fill_##sfx, NAME, DK_U(size))                                              \
    DK_COPY(dk_copy_##sfx, NAME, DK_U(size))

#define INT_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) INT_ROW_##CAT(NAME, sfx, T, size)
#define INT_ROW_INT(NAME, sfx, T, size) INT_LOOPS_(NAME, sfx, T, size)
#define INT_ROW_BOOL(NAME, sfx, T, size)
#define INT_ROW_FLOAT(NAME, sfx, T, size)
DISPATCH_FORALL_DTYPES(INT_ROW_)

/* bool: or, and, the comparisons of bytes 0 and 1. */
DK_COMPARISONS(b8, BOOL, dk_bool8)
DK_BINARY(dk_add_b8, ADD, BOOL, dk_bool8, dk_bool8, 1, (a | (k & b)) != 0)
DK_BINARY(dk_mul_b8, MUL, BOOL, dk_bool8, dk_bool8, 0, a & b)
DK_BINARY(dk_maximum_b8, MAXIMUM, BOOL, dk_bool8, dk_bool8, 0, a | b)
DK_BINARY(dk_minimum_b8, MINIMUM, BOOL, dk_bool8, dk_bool8, 0, a & b)
DK_UNARY(dk_abs_b8, ABS, BOOL, dk_bool8, dk_bool8, a)
DK_WHERE(dk_where_b8, BOOL, uint8_t)
DK_FILL(dk_fill_b8, BOOL, uint8_t)
DK_COPY(dk_copy_b8, BOOL, uint8_t)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define INT_ENTRIES_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) INT_ENTRIES_##CAT(NAME, sfx)
#define INT_ENTRIES_BOOL(NAME, sfx)
#define INT_ENTRIES_FLOAT(NAME, sfx)
#define INT_ENTRIES_INT(NAME, sfx)                                                        \
    DK_COMPARISON_ENTRIES(sfx, NAME)                                                      \
    DK_ENTRY(ADD, NAME, dk_add_##sfx) DK_ENTRY(SUB, NAME, dk_sub_##sfx)                   \
    DK_ENTRY(MUL, NAME, dk_mul_##sfx) DK_ENTRY(MAXIMUM, NAME, dk_maximum_##sfx)           \
    DK_ENTRY(MINIMUM, NAME, dk_minimum_##sfx) DK_ENTRY(NEG, NAME, dk_neg_##sfx)           \
    DK_ENTRY(ABS, NAME, dk_abs_##sfx) DK_ENTRY(ADDCMUL, NAME, dk_addcmul_##sfx)           \
    DK_ENTRY(WHERE, NAME, dk_where_##sfx) DK_ENTRY(FILL, NAME, dk_fill_##sfx)             \
    DK_ENTRY(COPY, NAME, dk_copy_##sfx)
DISPATCH_KERNELS_EXPORT(int_loops,
    DISPATCH_KERNELS_LOOP_WITH_2D(ADD, BOOL, dk_add_b8, 1) /* the one traced entry of this source */
    DK_COMPARISON_ENTRIES(b8, BOOL)
    DK_ENTRY(MUL, BOOL, dk_mul_b8) DK_ENTRY(MAXIMUM, BOOL, dk_maximum_b8)
    DK_ENTRY(MINIMUM, BOOL, dk_minimum_b8) DK_ENTRY(WHERE, BOOL, dk_where_b8)
    DK_ENTRY(FILL, BOOL, dk_fill_b8) DK_ENTRY(ABS, BOOL, dk_abs_b8)
    DK_ENTRY(COPY, BOOL, dk_copy_b8)
    DISPATCH_FORALL_DTYPES(INT_ENTRIES_)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "int_loops.dispatch.h"
DISPATCH_KERNELS_CHOOSER(int_loops)
#endif
