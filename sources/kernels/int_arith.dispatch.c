/*@targets baseline sse42 (avx2 fma3) sve rvv */
/*
 * No AVX-512 target: Note [Streaming arithmetic stops at AVX2] in arith.dispatch.c.
 * add, sub, mul, maximum, minimum for int32 and int64: plain C loops that
 * the compiler vectorizes under each target's flags (the build is -O3; the
 * contiguous and scalar-broadcast paths are separate loops with unit
 * stride, which is what the vectorizer needs; see the assembly check in
 * tests/test_kernels_isa.py), the output's first elements up to a line
 * boundary apart (Note [Stores on whole lines] in line_head.h). Arithmetic
 * is done in the unsigned type, so it wraps like two's complement, never
 * undefined behaviour, and every target gives the same bits (integer
 * operations are exact).
 * data = {out, a, b}; ctx for add/sub: const T *alpha (out = a +- alpha*b).
 */
#include <stdint.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/dtype.h"
#include "kernels_export.h"
#include "clang_loops.h"
#include "line_head.h"

#define I_ADD(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define I_SUB(T, U, a, b) ((T)((U)(a) - (U)(b)))
#define I_MUL(T, U, a, b) ((T)((U)(a) * (U)(b)))
#define I_MAX(T, U, a, b) ((a) > (b) ? (a) : (b))
#define I_MIN(T, U, a, b) ((a) < (b) ? (a) : (b))

#define INT_LOOP(NAME, T, U, OP, ALPHA)                                                  \
    /* the unit-stride layouts without a scale: 1 when it ran (a row of the 2-D     \
     * loop inlined, as DK_BINARY's: x.sub_(col) of (512, 512) int32 paid a call   \
     * per row, 21 us against torch's 14) */                                         \
    static inline __attribute__((always_inline)) int NAME##_row_(                       \
        char **data, const intptr_t *steps, intptr_t n, void *ctx)                       \
    {                                                                                    \
        const intptr_t sz = (intptr_t)sizeof(T);                                         \
        if ((ALPHA) && ctx) {                                                            \
            T alpha;                                                                     \
            memcpy(&alpha, ctx, sizeof(T));                                              \
            if (alpha != 1) return 0;                                                    \
        }                                                                                \
        T *o = (T *)data[0];                                                             \
        const T *a = (const T *)data[1], *b = (const T *)data[2];                        \
        if (steps[0] == sz && steps[1] == sz && DK_SAME_ADDRESS(o, a) &&                 \
            (steps[2] == sz || steps[2] == 0)) { /* Note [In place under clang] */       \
            if (steps[2] == sz) {                                                        \
                DK_LINE_HEADED(o, n, o[i] = OP(T, U, o[i], b[i]));                       \
            } else {                                                                     \
                const T s = b[0];                                                        \
                DK_LINE_HEADED(o, n, o[i] = OP(T, U, o[i], s));                          \
            }                                                                            \
        } else if (steps[0] == sz && steps[1] == sz && steps[2] == sz) {                 \
            DK_LINE_HEADED(o, n, o[i] = OP(T, U, a[i], b[i]));                           \
        } else if (steps[0] == sz && steps[1] == 0 && steps[2] == sz) {                  \
            const T s = a[0];                                                            \
            DK_LINE_HEADED(o, n, o[i] = OP(T, U, s, b[i]));                              \
        } else if (steps[0] == sz && steps[1] == sz && steps[2] == 0) {                  \
            const T s = b[0];                                                            \
            DK_LINE_HEADED(o, n, o[i] = OP(T, U, a[i], s));                              \
        } else {                                                                         \
            return 0;                                                                    \
        }                                                                                \
        return 1;                                                                        \
    }                                                                                    \
    /* every other layout, and a scale (Note [Unit paths compiled once] in               \
     * loop_paths.h: the 1-D loop is the 2-D loop of one row) */                         \
    static DISPATCH_KERNELS_NOINLINE void NAME##_rest_(char **data, const intptr_t *steps, \
                                                       intptr_t n, void *ctx)            \
    {                                                                                    \
        const intptr_t sz = (intptr_t)sizeof(T);                                         \
        T alpha = 1;                                                                     \
        if ((ALPHA) && ctx) memcpy(&alpha, ctx, sizeof(T));                              \
        if (alpha != 1) {                                                                \
            for (intptr_t i = 0; i < n; i++) {                                           \
                T a, b, r;                                                               \
                memcpy(&a, data[1] + i * steps[1], sizeof(T));                           \
                memcpy(&b, data[2] + i * steps[2], sizeof(T));                           \
                b = I_MUL(T, U, alpha, b);                                               \
                r = OP(T, U, a, b);                                                      \
                memcpy(data[0] + i * steps[0], &r, sizeof(T));                           \
            }                                                                            \
            return;                                                                      \
        }                                                                                \
        T *o = (T *)data[0];                                                             \
        const T *a = (const T *)data[1], *b = (const T *)data[2];                        \
        if (steps[0] == sz && steps[1] == 2 * sz && steps[2] == 2 * sz) {                \
            /* every other element (x[:, ::2]): a constant step the compiler      \
             * deinterleaves by shuffles, where a variable one became gathers   \
             * (minimum of (512, 512) int32: 147 -> 62 us, torch 114) */            \
            for (intptr_t i = 0; i < n; i++) o[i] = OP(T, U, a[2 * i], b[2 * i]);        \
        } else if (steps[0] == 2 * sz && steps[1] == 2 * sz && steps[2] == sz) {         \
            /* in place into every other element (x[:, ::2] += y) */                     \
            for (intptr_t i = 0; i < n; i++) o[2 * i] = OP(T, U, a[2 * i], b[i]);        \
        } else if (steps[0] % sz == 0 && steps[1] % sz == 0 && steps[2] % sz == 0) {     \
            /* strides of whole elements: typed, so vectorized */                         \
            const intptr_t so = steps[0] / sz, sa = steps[1] / sz, sb = steps[2] / sz;   \
            for (intptr_t i = 0; i < n; i++) o[i * so] = OP(T, U, a[i * sa], b[i * sb]);  \
        } else {                                                                         \
            for (intptr_t i = 0; i < n; i++) {                                           \
                T x, y, r;                                                               \
                memcpy(&x, data[1] + i * steps[1], sizeof(T));                           \
                memcpy(&y, data[2] + i * steps[2], sizeof(T));                           \
                r = OP(T, U, x, y);                                                      \
                memcpy(data[0] + i * steps[0], &r, sizeof(T));                           \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    DISPATCH_KERNELS_LOOP2D_ROWS(NAME, 3, NAME##_row_, NAME##_rest_)

INT_LOOP(dispatch_kernel_add_i32, int32_t, uint32_t, I_ADD, 1)
INT_LOOP(dispatch_kernel_sub_i32, int32_t, uint32_t, I_SUB, 1)
INT_LOOP(dispatch_kernel_mul_i32, int32_t, uint32_t, I_MUL, 0)
INT_LOOP(dispatch_kernel_maximum_i32, int32_t, uint32_t, I_MAX, 0)
INT_LOOP(dispatch_kernel_minimum_i32, int32_t, uint32_t, I_MIN, 0)
INT_LOOP(dispatch_kernel_add_i64, int64_t, uint64_t, I_ADD, 1)
INT_LOOP(dispatch_kernel_sub_i64, int64_t, uint64_t, I_SUB, 1)
INT_LOOP(dispatch_kernel_mul_i64, int64_t, uint64_t, I_MUL, 0)
INT_LOOP(dispatch_kernel_maximum_i64, int64_t, uint64_t, I_MAX, 0)
INT_LOOP(dispatch_kernel_minimum_i64, int64_t, uint64_t, I_MIN, 0)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(int_arith,
    DISPATCH_KERNELS_LOOP_WITH_2D(ADD, INT32, dispatch_kernel_add_i32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SUB, INT32, dispatch_kernel_sub_i32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MUL, INT32, dispatch_kernel_mul_i32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MAXIMUM, INT32, dispatch_kernel_maximum_i32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MINIMUM, INT32, dispatch_kernel_minimum_i32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(ADD, INT64, dispatch_kernel_add_i64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(SUB, INT64, dispatch_kernel_sub_i64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MUL, INT64, dispatch_kernel_mul_i64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MAXIMUM, INT64, dispatch_kernel_maximum_i64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(MINIMUM, INT64, dispatch_kernel_minimum_i64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "int_arith.dispatch.h"
DISPATCH_KERNELS_CHOOSER(int_arith)
#endif
