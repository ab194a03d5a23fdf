/*
 * The layouts a dispatched loop takes itself, written once for every (loop,
 * dtype): all operands contiguous, and one input a broadcast scalar (stride
 * 0) with the others contiguous. Each is a plain C loop over typed pointers
 * with unit stride, which the compiler vectorizes under the flags of each
 * @targets target the including *.dispatch.c is compiled for (the build is
 * -O3; tests/test_kernels_isa.py reads the instructions). Every other layout
 * runs the reference loop of the same (loop, dtype), which is also the truth
 * every path is compared with (test_loops_targets.c).
 *
 * Note [Generic dispatched loops]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The reference loops (sources/core/cpu_loops_reference.c) are compiled once,
 * at the baseline, one strided element at a time: right for every layout,
 * slow for the common ones. The sources built from this header
 * (int_loops, float_loops, narrow_loops and cast_loops .dispatch.c) give every
 * (loop, dtype) pair and every cast a contiguous and a scalar-operand path per
 * CPU target, from one written expression per loop and category. They come
 * first in meson's loop_kernel_sources, so a hand-written kernel of the same
 * pair (arith, int_arith, half_arith, ...) registered after them wins. The
 * expressions compute in the element's own width (8- and 16-bit integers in
 * lanes of their own width: unsigned arithmetic of the same size, products in
 * `unsigned` so that no promotion to int can overflow), which wraps exactly
 * as the reference's uint64_t arithmetic does once truncated.
 *
 * Included only by *.dispatch.c (it uses DISPATCH_CPU_DISPATCH_CURFX).
 */
#ifndef DISPATCH_KERNELS_LOOP_PATHS_H_
#define DISPATCH_KERNELS_LOOP_PATHS_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/dtype.h"
#include "dispatch/loops.h"

/* bool is one byte, 0 or 1 */
typedef uint8_t dk_bool8;

/* The unsigned type of a size (U), and the type a product of two of them is
 * computed in (M: never promoted to a signed int that could overflow). */
#define DK_U_1 uint8_t
#define DK_U_2 uint16_t
#define DK_U_4 uint32_t
#define DK_U_8 uint64_t
#define DK_M_1 unsigned
#define DK_M_2 unsigned
#define DK_M_4 uint32_t
#define DK_M_8 uint64_t
#define DK_U(size) DK_U_##size
#define DK_M(size) DK_M_##size

#define DK_INLINE static inline __attribute__((always_inline))

/* The reference loop of (LOOP, DTYPE): every layout the paths do not take. */
#define DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx) \
    dispatch_loop_reference(DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE)(data, s, n, ctx)

/* A scale read from ctx (alpha of add/sub, value of addcmul); 1 without one. */
#define DK_CTX_VALUE(T, ctx) ({ T v_ = (T)1; if (ctx) memcpy(&v_, (ctx), sizeof v_); v_; })

/*
 * Binary: data = {out (OT), a (T), b (T)}; EXPR of a, b and k, the scale of
 * ctx when SCALED (add, sub), else k is 1. The body is inlined twice, with
 * k == 1 a constant, so the common call has no multiply.
 */
#define DK_BINARY(NAME, LOOP, DTYPE, T, OT, SCALED, EXPR)                                 \
    DK_INLINE void NAME##_body_(char **data, const intptr_t *s, intptr_t n, void *ctx,    \
                                const T k)                                                \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(T), oz = (intptr_t)sizeof(OT);                \
        OT *o = (OT *)data[0];                                                            \
        const T *pa = (const T *)data[1], *pb = (const T *)data[2];                       \
        (void)k;                                                                          \
        if (s[0] == oz && s[1] == z && s[2] == z) {                                       \
            for (intptr_t i = 0; i < n; i++) {                                            \
                const T a = pa[i], b = pb[i];                                             \
                o[i] = (OT)(EXPR);                                                        \
            }                                                                             \
        } else if (s[0] == oz && s[1] == 0 && s[2] == z) {                                \
            T a;                                                                          \
            memcpy(&a, pa, sizeof a);                                                     \
            for (intptr_t i = 0; i < n; i++) {                                            \
                const T b = pb[i];                                                        \
                o[i] = (OT)(EXPR);                                                        \
            }                                                                             \
        } else if (s[0] == oz && s[1] == z && s[2] == 0) {                                \
            T b;                                                                          \
            memcpy(&b, pb, sizeof b);                                                     \
            for (intptr_t i = 0; i < n; i++) {                                            \
                const T a = pa[i];                                                        \
                o[i] = (OT)(EXPR);                                                        \
            }                                                                             \
        } else {                                                                          \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }                                                                                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const T k = (SCALED) ? DK_CTX_VALUE(T, ctx) : (T)1;                               \
        if (k == (T)1) NAME##_body_(data, s, n, ctx, (T)1);                               \
        else NAME##_body_(data, s, n, ctx, k);                                            \
    }

/* Unary: data = {out (OT), a (T)}; contiguous, else the reference. */
#define DK_UNARY(NAME, LOOP, DTYPE, T, OT, EXPR)                                          \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        if (s[0] == (intptr_t)sizeof(OT) && s[1] == (intptr_t)sizeof(T)) {                \
            OT *o = (OT *)data[0];                                                        \
            const T *pa = (const T *)data[1];                                             \
            for (intptr_t i = 0; i < n; i++) {                                            \
                const T a = pa[i];                                                        \
                o[i] = (OT)(EXPR);                                                        \
            }                                                                             \
        } else {                                                                          \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }

/* addcmul: data = {out, a, b, c}, out = a + value * b * c (value from ctx);
 * all contiguous, or one input a broadcast scalar; else the reference. */
#define DK_TERNARY_PATH_(T, EXPR, AV, BV, CV)                                             \
    for (intptr_t i = 0; i < n; i++) {                                                    \
        const T a = (AV), b = (BV), c = (CV);                                             \
        o[i] = (T)(EXPR);                                                                 \
    }
#define DK_TERNARY(NAME, LOOP, DTYPE, T, EXPR)                                            \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(T);                                           \
        const T k = DK_CTX_VALUE(T, ctx);                                                 \
        T *o = (T *)data[0];                                                              \
        const T *pa = (const T *)data[1], *pb = (const T *)data[2], *pc = (const T *)data[3]; \
        T as, bs, cs;                                                                     \
        memcpy(&as, pa, sizeof as);                                                       \
        memcpy(&bs, pb, sizeof bs);                                                       \
        memcpy(&cs, pc, sizeof cs);                                                       \
        const int zeros = (s[1] == 0) + (s[2] == 0) + (s[3] == 0);                        \
        const int units = (s[1] == z) + (s[2] == z) + (s[3] == z);                        \
        if (s[0] != z || zeros > 1 || zeros + units != 3) {                               \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        } else if (zeros == 0) {                                                          \
            DK_TERNARY_PATH_(T, EXPR, pa[i], pb[i], pc[i])                                \
        } else if (s[1] == 0) {                                                           \
            DK_TERNARY_PATH_(T, EXPR, as, pb[i], pc[i])                                   \
        } else if (s[2] == 0) {                                                           \
            DK_TERNARY_PATH_(T, EXPR, pa[i], bs, pc[i])                                   \
        } else {                                                                          \
            DK_TERNARY_PATH_(T, EXPR, pa[i], pb[i], cs)                                   \
        }                                                                                 \
    }

/* copy: data = {out, in}, as bits of U; contiguous (memmove, as the
 * reference), or a broadcast input written n times; else the reference. */
#define DK_COPY(NAME, DTYPE, U)                                                           \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(U);                                           \
        if (s[0] == z && s[1] == z) {                                                     \
            memmove(data[0], data[1], (size_t)n * sizeof(U));                             \
        } else if (s[0] == z && s[1] == 0) {                                              \
            U v, *o = (U *)data[0];                                                       \
            memcpy(&v, data[1], sizeof v);                                                \
            for (intptr_t i = 0; i < n; i++) o[i] = v;                                    \
        } else {                                                                          \
            DK_REFERENCE(COPY, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }

/*
 * where: data = {out, cond (bool), a, b}, moved as the unsigned type U of the
 * element's size (bits, never values: a NaN's payload is kept). The
 * condition contiguous; a and b each contiguous or a broadcast scalar.
 */
#define DK_WHERE_PATH_(AV, BV)                                                            \
    for (intptr_t i = 0; i < n; i++) o[i] = pc[i] ? (AV) : (BV);
#define DK_WHERE(NAME, DTYPE, U)                                                          \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(U);                                           \
        U *o = (U *)data[0];                                                              \
        const dk_bool8 *pc = (const dk_bool8 *)data[1];                                   \
        const U *pa = (const U *)data[2], *pb = (const U *)data[3];                       \
        U as, bs;                                                                         \
        memcpy(&as, pa, sizeof as);                                                       \
        memcpy(&bs, pb, sizeof bs);                                                       \
        if (s[0] != z || s[1] != 1 || (s[2] != z && s[2] != 0) || (s[3] != z && s[3] != 0)) { \
            DK_REFERENCE(WHERE, DTYPE, data, s, n, ctx);                                  \
        } else if (s[2] == z && s[3] == z) {                                              \
            DK_WHERE_PATH_(pa[i], pb[i])                                                  \
        } else if (s[2] == z) {                                                           \
            DK_WHERE_PATH_(pa[i], bs)                                                     \
        } else if (s[3] == z) {                                                           \
            DK_WHERE_PATH_(as, pb[i])                                                     \
        } else {                                                                          \
            DK_WHERE_PATH_(as, bs)                                                        \
        }                                                                                 \
    }

/* fill: data = {out}, the value from ctx, as bits of its size. */
#define DK_FILL(NAME, DTYPE, U)                                                           \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        if (s[0] == (intptr_t)sizeof(U)) {                                                \
            U v, *o = (U *)data[0];                                                       \
            memcpy(&v, ctx, sizeof v);                                                    \
            for (intptr_t i = 0; i < n; i++) o[i] = v;                                    \
        } else {                                                                          \
            DK_REFERENCE(FILL, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }

/* The six comparisons of a dtype, writing bool bytes. */
#define DK_COMPARISONS(SFX, DTYPE, T)                                                     \
    DK_BINARY(dk_eq_##SFX, EQ, DTYPE, T, dk_bool8, 0, a == b)                             \
    DK_BINARY(dk_ne_##SFX, NE, DTYPE, T, dk_bool8, 0, a != b)                             \
    DK_BINARY(dk_lt_##SFX, LT, DTYPE, T, dk_bool8, 0, a < b)                              \
    DK_BINARY(dk_le_##SFX, LE, DTYPE, T, dk_bool8, 0, a <= b)                             \
    DK_BINARY(dk_gt_##SFX, GT, DTYPE, T, dk_bool8, 0, a > b)                              \
    DK_BINARY(dk_ge_##SFX, GE, DTYPE, T, dk_bool8, 0, a >= b)
#define DK_ENTRY(LOOP, DTYPE, FN) DISPATCH_KERNELS_LOOP_UNTRACED(LOOP, DTYPE, FN)
#define DK_COMPARISON_ENTRIES(SFX, DTYPE)                                                 \
    DK_ENTRY(EQ, DTYPE, dk_eq_##SFX) DK_ENTRY(NE, DTYPE, dk_ne_##SFX)                     \
    DK_ENTRY(LT, DTYPE, dk_lt_##SFX) DK_ENTRY(LE, DTYPE, dk_le_##SFX)                     \
    DK_ENTRY(GT, DTYPE, dk_gt_##SFX) DK_ENTRY(GE, DTYPE, dk_ge_##SFX)

#endif /* DISPATCH_KERNELS_LOOP_PATHS_H_ */
