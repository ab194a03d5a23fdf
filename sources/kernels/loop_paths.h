/*
 * The layouts a dispatched loop takes itself, written once for every (loop,
 * dtype): all operands contiguous, one input a broadcast scalar (stride 0)
 * with the others contiguous, and any strides that are whole elements (a
 * view x[:, ::2], an in-place op on one). Each is a plain C loop over typed
 * pointers, which the compiler vectorizes under the flags of each @targets
 * target the including *.dispatch.c is compiled for (the build is -O3;
 * tests/test_kernels_isa.py reads the instructions): unit stride, or element
 * strides (Note [Strided paths]). A byte stride that is not a whole element
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
#include "compare_bytes.h"
#include "mul_bytes.h"
#include "gather_bits.h"
#include "clang_loops.h"
#include "line_head.h"
#include "kernels_export.h"

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

/*
 * Note [Strided paths]
 * ~~~~~~~~~~~~~~~~~~~~
 * A strided operand is read as p[i * st], st its stride in elements, in the
 * same inlined loop as the contiguous path's: the compiler builds vectors by
 * element (or gathers, where a target has them and they pay) and keeps the
 * operation in lanes, where the reference loop, compiled at the baseline,
 * does one element at a time through memcpy. The loop is inlined once more
 * with constant strides for the layouts of every other column (1 out of 2
 * in, and in place 2 out of 2 and 1 in), so that the compiler can load two
 * vectors and permute their even lanes instead of building them by element.
 * DK_ELEMS is true when every byte stride is a whole number of elements.
 */
#define DK_ELEMS(s, z) ((s) % (intptr_t)(z) == 0)
/* A byte stride's size, for the bytes a loop's stores walk. */
#define DK_ABS_(s) ((size_t)((s) < 0 ? -(s) : (s)))

/*
 * Note [Unit paths compiled once]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A binary loop's 2-D loop inlines its unit-stride layouts per row (Note
 * [2-D loops] in loops.h: rows of 64 bytes pay no call), and its 1-D loop
 * had them inlined too: every unit path was compiled twice per (loop, dtype)
 * and target. The 1-D loop is now its 2-D loop of one row, and the layouts a
 * row does not inline are one noinline call (a scaled add or sub, strides,
 * the reference): the unit paths are compiled once. A 1-D call pays a loop
 * of one row, a few instructions; int_loops' AVX2 object took 9% less code
 * and 10% less compile time.
 */

/* The reference loop of (LOOP, DTYPE): every layout the paths do not take. */
#define DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx) \
    dispatch_loop_reference(DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE)(data, s, n, ctx)

/* The operand count of each loop of the table by its NAME (DK_NOPS_ADD is
 * 3): the size of a 2-D loop's pointers (DISPATCH_KERNELS_LOOP2D). */
enum {
#define DK_NOPS_(NAME, name, nin, ctx, bools) DK_NOPS_##NAME = (nin) + 1,
    DISPATCH_FORALL_LOOPS(DK_NOPS_)
#undef DK_NOPS_
};

/* A scale read from ctx (alpha of add/sub, value of addcmul); 1 without one. */
#define DK_CTX_VALUE(T, ctx) ({ T v_ = (T)1; if (ctx) memcpy(&v_, (ctx), sizeof v_); v_; })

/*
 * Binary: data = {out (OT), a (T), b (T)}; EXPR of a, b and k, the scale of
 * ctx when SCALED (add, sub), else k is 1. The body is inlined twice, with
 * k == 1 a constant, so the common call has no multiply. A broadcast input
 * (stride 0) with a strided other is a strided path too.
 */
#define DK_BINARY(NAME, LOOP, DTYPE, T, OT, SCALED, EXPR)                                 \
    DK_BINARY_PATHS_(NAME, LOOP, DTYPE, T, OT, EXPR)                                      \
    /* a row of its 2-D loop inlined: the unit-stride layouts without a scale             \
     * (rows of 64 bytes pay no call) ... */                                              \
    DK_INLINE int NAME##_row_(char **d, const intptr_t *s, intptr_t n, void *ctx)         \
    {                                                                                     \
        const T k = (SCALED) ? DK_CTX_VALUE(T, ctx) : (T)1;                               \
        return k == (T)1 && NAME##_unit_(d, s, n, (T)1, 0);                               \
    }                                                                                     \
    /* ... and the rest of a row, in one call (Note [Unit paths compiled once]) */        \
    static DISPATCH_KERNELS_NOINLINE void NAME##_rest_(char **data, const intptr_t *s,    \
                                                       intptr_t n, void *ctx)             \
    {                                                                                     \
        const T k = (SCALED) ? DK_CTX_VALUE(T, ctx) : (T)1;                               \
        if (k == (T)1) NAME##_others_(data, s, n, ctx, (T)1, 0);                          \
        else if (!NAME##_unit_(data, s, n, k, 0)) NAME##_others_(data, s, n, ctx, k, 0);  \
    }                                                                                     \
    DISPATCH_KERNELS_LOOP2D_ROWS(NAME, 3, NAME##_row_, NAME##_rest_)

/* o[i] = EXPR of a = AV and b = BV (each an element of i or a number) over the
 * contiguous output o of n elements, from its first line boundary (Note
 * [Stores on whole lines] in line_head.h). */
#define DK_UNIT_RUN_(T, OT, AV, BV, EXPR)                                                 \
    DK_LINE_HEADED_ROLLED(o, n, {                                                         \
        const T a = (AV);                                                                 \
        const T b = (BV);                                                                 \
        o[i] = (OT)(EXPR);                                                                \
    })

/* The paths of DK_BINARY and DK_COMPARISON: EXPR of a, b, k (the scale) and
 * f (a comparison's complement, Note [Comparisons by three bodies]), each
 * a constant where the caller's is. */
#define DK_BINARY_PATHS_(NAME, LOOP, DTYPE, T, OT, EXPR)                                  \
    DK_INLINE void NAME##_strided_(OT *o, const T *pa, const T *pb, intptr_t so,          \
                                   intptr_t sa, intptr_t sb, intptr_t n, const T k,       \
                                   const unsigned f)                                      \
    {                                                                                     \
        (void)k, (void)f;                                                                 \
        for (intptr_t i = 0; i < n; i++) {                                                \
            const T a = pa[i * sa], b = pb[i * sb];                                       \
            o[i * so] = (OT)(EXPR);                                                       \
        }                                                                                 \
    }                                                                                     \
    /* o[i] = a[2 * i] op b[2 * i] of bytes (Note [Every other byte under clang]) */       \
    DK_INLINE void NAME##_even_bytes_(OT *o, const T *pa, const T *pb, intptr_t n,        \
                                      const T k, const unsigned f)                        \
    {                                                                                     \
        (void)k, (void)f;                                                                 \
        for (intptr_t i = 0; i + 1 < n; i++) {                                            \
            const T a = (T)dk_even_byte(pa + 2 * i), b = (T)dk_even_byte(pb + 2 * i);     \
            o[i] = (OT)(EXPR);                                                            \
        }                                                                                 \
        if (n > 0) /* the last alone: its pair may end past the view */                   \
            NAME##_strided_(o + n - 1, pa + 2 * n - 2, pb + 2 * n - 2, 1, 2, 2, 1, k, f);  \
    }                                                                                     \
    /* the three unit-stride layouts (all contiguous, a or b a scalar), each from         \
     * the output's first line boundary (Note [Stores on whole lines] in                  \
     * line_head.h): 1 when the layout is one of them and it ran */                       \
    DK_INLINE int NAME##_unit_(char **data, const intptr_t *s, intptr_t n, const T k,     \
                               const unsigned f)                                          \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(T), oz = (intptr_t)sizeof(OT);                \
        OT *o = (OT *)data[0];                                                            \
        const T *pa = (const T *)data[1], *pb = (const T *)data[2];                       \
        (void)k, (void)f;                                                                 \
        if (DK_COMPARE_BYTES_TAKES(DISPATCH_LOOP_##LOOP, T, OT, s)) {                     \
            /* whole blocks (Note [Wide comparisons to bytes] in compare_bytes.h) */      \
            const intptr_t done = dk_compare_bytes(DISPATCH_LOOP_##LOOP, DK_CMP_KIND(T),  \
                                                   (int)sizeof(T), f, (uint8_t *)o,       \
                                                   data[1], s[1], data[2], s[2], n);      \
            o += done, n -= done;                                                         \
            pa += s[1] ? done : 0, pb += s[2] ? done : 0;                                 \
        }                                                                                 \
        if (DK_MUL_BYTES_TAKES(DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE, s)) {              \
            /* Note [Byte products in 16-bit lanes] in mul_bytes.h */                     \
            const intptr_t done = dk_mul_bytes((uint8_t *)o, (const uint8_t *)pa, s[1],  \
                                               (const uint8_t *)pb, s[2], n);             \
            o += done, n -= done;                                                         \
            pa += s[1] ? done : 0, pb += s[2] ? done : 0;                                 \
        }                                                                                 \
        if (sizeof(OT) == sizeof(T) && s[0] == oz && s[1] == z && (s[2] == z || s[2] == 0) \
            && DK_SAME_ADDRESS(o, pa)) { /* Note [In place under clang] */                \
            const T *po = (const T *)(const void *)o;                                     \
            if (s[2] == z) {                                                              \
                DK_UNIT_RUN_(T, OT, po[i], pb[i], EXPR);                                  \
            } else {                                                                      \
                T b_;                                                                     \
                memcpy(&b_, pb, sizeof b_);                                               \
                DK_UNIT_RUN_(T, OT, po[i], b_, EXPR);                                     \
            }                                                                             \
        } else if (s[0] == oz && s[1] == z && s[2] == z) {                                \
            DK_UNIT_RUN_(T, OT, pa[i], pb[i], EXPR);                                      \
        } else if (s[0] == oz && s[1] == 0 && s[2] == z) {                                \
            T a_;                                                                         \
            memcpy(&a_, pa, sizeof a_);                                                   \
            DK_UNIT_RUN_(T, OT, a_, pb[i], EXPR);                                         \
        } else if (s[0] == oz && s[1] == z && s[2] == 0) {                                \
            T b_;                                                                         \
            memcpy(&b_, pb, sizeof b_);                                                   \
            DK_UNIT_RUN_(T, OT, pa[i], b_, EXPR);                                         \
        } else {                                                                          \
            return 0;                                                                     \
        }                                                                                 \
        return 1;                                                                         \
    }                                                                                     \
    /* the layouts other than the unit-stride ones */                                     \
    DK_INLINE void NAME##_others_(char **data, const intptr_t *s, intptr_t n, void *ctx,  \
                                  const T k, const unsigned f)                            \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(T), oz = (intptr_t)sizeof(OT);                \
        OT *o = (OT *)data[0];                                                            \
        const T *pa = (const T *)data[1], *pb = (const T *)data[2];                       \
        if (DK_ELEMS(s[0], oz) && DK_ELEMS(s[1], z) && DK_ELEMS(s[2], z)) {               \
            const intptr_t so = s[0] / oz, sa = s[1] / z, sb = s[2] / z;                  \
            if (so == 1 && sa == 2 && sb == 2 && DK_EVEN_BYTES_BY_PAIRS && z == 1)        \
                NAME##_even_bytes_(o, pa, pb, n, k, f);                                   \
            else if (so == 1 && sa == 2 && sb == 2)                                       \
                NAME##_strided_(o, pa, pb, 1, 2, 2, n, k, f);                             \
            else if (so == 2 && sa == 2 && sb == 1)                                       \
                NAME##_strided_(o, pa, pb, 2, 2, 1, n, k, f);                             \
            else NAME##_strided_(o, pa, pb, so, sa, sb, n, k, f);                         \
        } else {                                                                          \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }

/* Unary: data = {out (OT), a (T)}; contiguous (from the output's first line
 * boundary: Note [Stores on whole lines]) or element strides, else the
 * reference. The strided loop is NAME##_strided_, also for a source that
 * runs it on a (loop, dtype) of its own (the narrow floats' sign bit). */
#define DK_UNARY(NAME, LOOP, DTYPE, T, OT, EXPR)                                          \
    DK_INLINE void NAME##_strided_(OT *o, const T *pa, intptr_t so, intptr_t sa,          \
                                   intptr_t n)                                            \
    {                                                                                     \
        for (intptr_t i = 0; i < n; i++) {                                                \
            const T a = pa[i * sa];                                                       \
            o[i * so] = (OT)(EXPR);                                                       \
        }                                                                                 \
    }                                                                                     \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                                 \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const intptr_t oz = (intptr_t)sizeof(OT), z = (intptr_t)sizeof(T);                \
        OT *o = (OT *)data[0];                                                            \
        const T *pa = (const T *)data[1];                                                 \
        if (s[0] == oz && s[1] == z) {                                                    \
            DK_LINE_HEADED_ROLLED(o, n, {                                                 \
                const T a = pa[i];                                                        \
                o[i] = (OT)(EXPR);                                                        \
            });                                                                           \
        } else if (DK_ELEMS(s[0], oz) && DK_ELEMS(s[1], z)) {                             \
            const intptr_t so = s[0] / oz, sa = s[1] / z;                                 \
            if (so == 1 && sa == 2) NAME##_strided_(o, pa, 1, 2, n);                      \
            else if (so == 2 && sa == 2) NAME##_strided_(o, pa, 2, 2, n);                 \
            else NAME##_strided_(o, pa, so, sa, n);                                       \
        } else {                                                                          \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }                                                                                     \
    DISPATCH_KERNELS_LOOP2D(NAME, 2)

/* addcmul: data = {out, a, b, c}, out = a + value * b * c (value from ctx);
 * all contiguous, one input a broadcast scalar, or element strides (one
 * loop: the strides are runtime values); else the reference. */
#define DK_TERNARY_PATH_(T, EXPR, AV, BV, CV, OV)                                         \
    for (intptr_t i = 0; i < n; i++) {                                                    \
        const T a = (AV), b = (BV), c = (CV);                                             \
        OV = (T)(EXPR);                                                                   \
    }
#define DK_TERNARY(NAME, LOOP, DTYPE, T, EXPR)                                            \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                                 \
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
        if (DK_ADDCMUL_BYTES_TAKES(DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE, s)) {          \
            /* Note [Byte products in 16-bit lanes] in mul_bytes.h */                     \
            const intptr_t done = dk_addcmul_bytes(                                       \
                (uint8_t *)o, (const uint8_t *)pa, s[1], (const uint8_t *)pb, s[2],       \
                (const uint8_t *)pc, s[3], (uint8_t)k, n);                                \
            o += done, n -= done;                                                         \
            pa += s[1] ? done : 0, pb += s[2] ? done : 0, pc += s[3] ? done : 0;          \
        }                                                                                 \
        const int zeros = (s[1] == 0) + (s[2] == 0) + (s[3] == 0);                        \
        const int units = (s[1] == z) + (s[2] == z) + (s[3] == z);                        \
        if (!DK_ELEMS(s[0], z) || !DK_ELEMS(s[1], z) || !DK_ELEMS(s[2], z) ||             \
            !DK_ELEMS(s[3], z)) {                                                         \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
        } else if (s[0] == z && s[1] == 2 * z && s[2] == 2 * z && s[3] == 2 * z) {        \
            /* every other column (Note [Strided paths]): constant strides */             \
            DK_TERNARY_PATH_(T, EXPR, pa[2 * i], pb[2 * i], pc[2 * i], o[i])              \
        } else if (s[0] != z || zeros > 1 || zeros + units != 3) {                        \
            DK_TERNARY_PATH_(T, EXPR, pa[i * (s[1] / z)], pb[i * (s[2] / z)],             \
                             pc[i * (s[3] / z)], o[i * (s[0] / z)])                       \
        } else if (zeros == 0) {                                                          \
            DK_TERNARY_PATH_(T, EXPR, pa[i], pb[i], pc[i], o[i])                                \
        } else if (s[1] == 0) {                                                           \
            DK_TERNARY_PATH_(T, EXPR, as, pb[i], pc[i], o[i])                                   \
        } else if (s[2] == 0) {                                                           \
            DK_TERNARY_PATH_(T, EXPR, pa[i], bs, pc[i], o[i])                                   \
        } else {                                                                          \
            DK_TERNARY_PATH_(T, EXPR, pa[i], pb[i], cs, o[i])                                   \
        }                                                                                 \
    }                                                                                     \
    DISPATCH_KERNELS_LOOP2D(NAME, 4)

/* The 1-D and 2-D loops of a fill or copy, whose stores stream where one
 * call writes past dk_streams' threshold (a copy of one value or of a
 * column, each row one value, counts as a fill: Note [Stores past the
 * caches]) and ask for their lines ahead where they walk DK_FAR_MIN bytes or
 * more (`far`, Note [Masked accesses ask for their lines] in gather_bits.h):
 * NAME##_body_(data, s, n, ctx, stream, far) does one row and ROW(d, s, n,
 * stream), inlined, takes a row first where it can (0 where it does not),
 * for NOPS operands of U; one fence after the rows. */
#define DK_NO_STREAMED_ROW_(d, s, n, stream) 0
#define DK_STREAMED_LOOPS_(NAME, NOPS, U, ROW)                                            \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        const int stream = dk_streams((size_t)n * sizeof(U), (NOPS) > 1 && s[1] != 0);    \
        NAME##_body_(data, s, n, ctx, stream, dk_far((size_t)n * DK_ABS_(s[0])));         \
        if (stream) DK_STREAM_FENCE_();                                                   \
    }                                                                                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_2d)(char **data, const intptr_t *s,           \
                                                const intptr_t *outer, intptr_t n,        \
                                                intptr_t rows, void *ctx);                \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_2d)(char **data, const intptr_t *s,           \
                                                const intptr_t *outer, intptr_t n,        \
                                                intptr_t rows, void *ctx)                 \
    {                                                                                     \
        const int stream =                                                                \
            dk_streams((size_t)n * (size_t)rows * sizeof(U), (NOPS) > 1 && s[1] != 0);   \
        const int far = dk_far((size_t)n * (size_t)rows * DK_ABS_(s[0]));                 \
        char *d_[NOPS];                                                                   \
        for (int k_ = 0; k_ < (NOPS); k_++) d_[k_] = data[k_];                            \
        for (intptr_t r_ = 0; r_ < rows; r_++) {                                          \
            if (!ROW(d_, s, n, stream)) NAME##_body_(d_, s, n, ctx, stream, far);         \
            for (int k_ = 0; k_ < (NOPS); k_++) d_[k_] += outer[k_];                      \
        }                                                                                 \
        if (stream) DK_STREAM_FENCE_();                                                   \
    }

/* copy: data = {out, in}, as bits of U; contiguous (memmove, as the
 * reference), a broadcast input written n times, or element strides (a
 * forward loop: a copy between overlapping strided views is the
 * reference's order too); else the reference. */
#define DK_COPY(NAME, DTYPE, U)                                                           \
    DK_INLINE void NAME##_strided_(U *o, const U *pa, intptr_t so, intptr_t sa, intptr_t n) \
    {                                                                                     \
        for (intptr_t i = 0; i < n; i++) o[i * so] = pa[i * sa];                          \
    }                                                                                     \
    DISPATCH_KERNELS_NOINLINE /* its 1-D and 2-D loops call it */                         \
    static void NAME##_body_(char **data, const intptr_t *s, intptr_t n, void *ctx,       \
                             int stream, int far)                                         \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(U);                                           \
        if (s[0] == z && s[1] == z) {                                                     \
            if (!dk_copy_on_lines(data[0], data[1], (size_t)n * sizeof(U), stream))       \
                memmove(data[0], data[1], (size_t)n * sizeof(U));                         \
        } else if (s[0] == z && s[1] == 0) {                                              \
            U v, *o = (U *)data[0];                                                       \
            memcpy(&v, data[1], sizeof v);                                                \
            DK_FILL_RUN(o, n, v, stream);                                                 \
        } else if (DK_ELEMS(s[0], z) && DK_ELEMS(s[1], z)) {                              \
            const intptr_t so = s[0] / z, sa = s[1] / z;                                  \
            if (so == 2 && sa == 2 && dk_copy_every_other(data[0], data[1], z, n, far)) { \
            } else if (so == 1 && sa == 2) {                                              \
                NAME##_strided_((U *)data[0], (const U *)data[1], 1, 2, n);               \
            } else if (so == 2 && sa == 1) {                                              \
                if (!dk_spread_every_other(data[0], data[1], z, n, far))                  \
                    NAME##_strided_((U *)data[0], (const U *)data[1], 2, 1, n);           \
            } else { /* a load and a store an element, unrolled as fill's */             \
                U *o = (U *)data[0];                                                      \
                const U *pa = (const U *)data[1];                                         \
                _Pragma("GCC unroll 8")                                                   \
                for (intptr_t i = 0; i < n; i++) o[i * so] = pa[i * sa];                  \
            }                                                                             \
        } else {                                                                          \
            DK_REFERENCE(COPY, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }                                                                                     \
    /* a row of its 2-D loop inlined: a broadcast value (copy_ of a column) */            \
    DK_INLINE int NAME##_row_(char **d, const intptr_t *s, intptr_t n, int stream)        \
    {                                                                                     \
        if (s[0] != (intptr_t)sizeof(U) || s[1] != 0) return 0;                           \
        U v, *o = (U *)d[0];                                                              \
        memcpy(&v, d[1], sizeof v);                                                       \
        DK_FILL_RUN(o, n, v, stream);                                                     \
        return 1;                                                                         \
    }                                                                                     \
    DK_STREAMED_LOOPS_(NAME, 2, U, NAME##_row_)

/*
 * where: data = {out, cond (bool), a, b}, moved as the unsigned type U of the
 * element's size (bits, never values: a NaN's payload is kept). The
 * condition contiguous; a and b each contiguous or a broadcast scalar.
 * Under clang, where both are arrays, both values are read before the
 * choice: `pc[i] ? pa[i] : pb[i]` reads only one, and clang (14) under
 * AVX-512 kept that as a branch an element (random conditions: 3.5 ns an
 * element, where of (512, 512) uint8 888 us against gcc's 12); read both,
 * it is a vector blend. With a number on either side clang blends the
 * first form already (read first, (512, 1) columns of bytes took 15 us
 * against 8.6), and gcc every form (the second took it 4-8% longer).
 */
#define DK_WHERE_PATH_(AV, BV)                                                            \
    for (intptr_t i = 0; i < n; i++) o[i] = pc[i] ? (AV) : (BV);
#if defined(__clang__)
#define DK_WHERE_ARRAYS_PATH_(U)                                                          \
    for (intptr_t i = 0; i < n; i++) {                                                    \
        const U a_ = pa[i], b_ = pb[i];                                                   \
        o[i] = pc[i] ? a_ : b_;                                                           \
    }
#else
#define DK_WHERE_ARRAYS_PATH_(U) DK_WHERE_PATH_(pa[i], pb[i])
#endif
#define DK_WHERE(NAME, DTYPE, U)                                                          \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                                 \
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
            DK_WHERE_ARRAYS_PATH_(U)                                                      \
        } else if (s[2] == z) {                                                           \
            DK_WHERE_PATH_(pa[i], bs)                                                     \
        } else if (s[3] == z) {                                                           \
            DK_WHERE_PATH_(as, pb[i])                                                     \
        } else {                                                                          \
            DK_WHERE_PATH_(as, bs)                                                        \
        }                                                                                 \
    }                                                                                     \
    DISPATCH_KERNELS_LOOP2D(NAME, 4)

/* fill: data = {out}, the value from ctx, as bits of its size; contiguous or
 * element strides (every other one a constant), else the reference. A strided
 * fill is one store an element and nothing else, so its loop is unrolled (8
 * stores an iteration; the loop of one took about two cycles a store): below
 * AVX-512, x[:, ::2].fill_ of 64K int8 41-47 -> 18-23 us, int32 25-46 ->
 * 16-20, float64 52-54 -> 26-28 (NumPy's 24, 25, 46). */
#define DK_FILL(NAME, DTYPE, U)                                                           \
    DISPATCH_KERNELS_NOINLINE /* its 1-D and 2-D loops call it */                         \
    static void NAME##_body_(char **data, const intptr_t *s, intptr_t n, void *ctx,       \
                             int stream, int far)                                         \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(U);                                           \
        U v, *o = (U *)data[0];                                                           \
        memcpy(&v, ctx, sizeof v);                                                        \
        if (s[0] == z) {                                                                  \
            DK_FILL_RUN(o, n, v, stream);                                                 \
        } else if (s[0] == 2 * z) {                                                       \
            if (!dk_fill_every_other(data[0], &v, z, n, far)) {                           \
                _Pragma("GCC unroll 8") /* clang reads it too */                          \
                for (intptr_t i = 0; i < n; i++) o[2 * i] = v;                            \
            }                                                                             \
        } else if (DK_ELEMS(s[0], z)) {                                                   \
            const intptr_t so = s[0] / z;                                                 \
            _Pragma("GCC unroll 8")                                                       \
            for (intptr_t i = 0; i < n; i++) o[i * so] = v;                               \
        } else {                                                                          \
            DK_REFERENCE(FILL, DTYPE, data, s, n, ctx);                                   \
        }                                                                                 \
    }                                                                                     \
    DK_STREAMED_LOOPS_(NAME, 1, U, DK_NO_STREAMED_ROW_)

/*
 * Note [Comparisons by three bodies]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Six comparisons per dtype, each with every layout's loop (compare_bytes'
 * blocks, the unit-stride loops, the strided ones, and the unit ones again in
 * its 2-D loop), were half of int_loops' code and of its compile time on
 * every target. Their results are three bodies at most: a > b is b < a, and
 * a != b is the complement of a == b, for floats too (a NaN makes == false
 * and != true); for integers a >= b is the complement of a < b and a <= b of
 * b < a, where a float needs <= as its own body (a NaN makes both orders
 * false), and a >= b is b <= a. So a dtype compiles lt and eq (floats: and
 * le) as bodies, DK_COMPARISON, with f, the complement, an argument: every
 * bool is xor'd with it, one more vector operation a block. The other
 * comparisons, DK_COMPARISON_VIA, swap the operands (pointers and strides)
 * and call a body; a byte stride that is not a whole element still runs their
 * own reference loop. The one layout of the strided paths that lost its
 * constant strides by a swap, out and a every other element with b
 * contiguous, is an out= view of bool; it takes the element-stride loop.
 */
#define DK_COMPARISON(NAME, LOOP, DTYPE, T, EXPR)                                         \
    DK_BINARY_PATHS_(NAME, LOOP, DTYPE, T, dk_bool8, (EXPR) ^ f)                          \
    /* every comparison of this body calls these two: the layouts other than the          \
     * unit-stride ones ... */                                                            \
    static DISPATCH_KERNELS_NOINLINE void NAME##_cmp_(char **data, const intptr_t *s,     \
                                                      intptr_t n, void *ctx, unsigned f)  \
    {                                                                                     \
        NAME##_others_(data, s, n, ctx, (T)1, f);                                         \
    }                                                                                     \
    /* ... and rows, the unit-stride layouts inlined (a 1-D call is one row) */           \
    static DISPATCH_KERNELS_NOINLINE void NAME##_cmp2d_(char **data, const intptr_t *s,   \
                                                        const intptr_t *outer, intptr_t n, \
                                                        intptr_t rows, void *ctx,         \
                                                        unsigned f)                       \
    {                                                                                     \
        char *d_[3] = {data[0], data[1], data[2]};                                        \
        for (intptr_t r_ = 0; r_ < rows; r_++) {                                          \
            if (!NAME##_unit_(d_, s, n, (T)1, f)) NAME##_cmp_(d_, s, n, ctx, f);          \
            for (int k_ = 0; k_ < 3; k_++) d_[k_] += outer[k_];                           \
        }                                                                                 \
    }                                                                                     \
    DK_COMPARISON_VIA(NAME, LOOP, DTYPE, T, NAME, 0, 0)

/* NAME (the comparison LOOP) as BODY's with the operands swapped (SWAP) and
 * its bools complemented (FLIP). */
#define DK_COMPARISON_VIA(NAME, LOOP, DTYPE, T, BODY, SWAP, FLIP)                         \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx);                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *s, intptr_t n,    \
                                           void *ctx)                                     \
    {                                                                                     \
        if (!DK_ELEMS(s[1], sizeof(T)) || !DK_ELEMS(s[2], sizeof(T))) {                   \
            DK_REFERENCE(LOOP, DTYPE, data, s, n, ctx);                                   \
            return;                                                                       \
        }                                                                                 \
        static const intptr_t none_[3]; /* the outer strides of one row */                \
        if (!(SWAP)) { /* no copies: a 1-D call of 512 elements is via_f32's chunk */     \
            BODY##_cmp2d_(data, s, none_, n, 1, ctx, (FLIP));                             \
            return;                                                                       \
        }                                                                                 \
        char *d_[3] = {data[0], data[2], data[1]};                                        \
        const intptr_t s_[3] = {s[0], s[2], s[1]};                                        \
        BODY##_cmp2d_(d_, s_, none_, n, 1, ctx, (FLIP));                                  \
    }                                                                                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_2d)(char **data, const intptr_t *s,           \
                                                const intptr_t *outer, intptr_t n,        \
                                                intptr_t rows, void *ctx);                \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_2d)(char **data, const intptr_t *s,           \
                                                const intptr_t *outer, intptr_t n,        \
                                                intptr_t rows, void *ctx)                 \
    {                                                                                     \
        if (!DK_ELEMS(s[1], sizeof(T)) || !DK_ELEMS(s[2], sizeof(T))) {                   \
            char *d_[3] = {data[0], data[1], data[2]};                                    \
            for (intptr_t r_ = 0; r_ < rows; r_++) {                                      \
                DK_REFERENCE(LOOP, DTYPE, d_, s, n, ctx);                                 \
                for (int k_ = 0; k_ < 3; k_++) d_[k_] += outer[k_];                       \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        if (!(SWAP)) {                                                                    \
            BODY##_cmp2d_(data, s, outer, n, rows, ctx, (FLIP));                          \
            return;                                                                       \
        }                                                                                 \
        char *d_[3] = {data[0], data[2], data[1]};                                        \
        const intptr_t s_[3] = {s[0], s[2], s[1]}, o_[3] = {outer[0], outer[2], outer[1]}; \
        BODY##_cmp2d_(d_, s_, o_, n, rows, ctx, (FLIP));                                  \
    }

/* The six comparisons of a dtype, writing bool bytes (Note [Comparisons by
 * three bodies]): of integers ... */
#define DK_COMPARISONS(SFX, DTYPE, T)                                                     \
    DK_COMPARISONS_LT_EQ_(SFX, DTYPE, T)                                                  \
    DK_COMPARISON_VIA(dk_le_##SFX, LE, DTYPE, T, dk_lt_##SFX, 1, 1)                       \
    DK_COMPARISON_VIA(dk_ge_##SFX, GE, DTYPE, T, dk_lt_##SFX, 0, 1)
/* ... and of floats, whose <= is a body of its own */
#define DK_FLOAT_COMPARISONS(SFX, DTYPE, T)                                               \
    DK_COMPARISONS_LT_EQ_(SFX, DTYPE, T)                                                  \
    DK_COMPARISON(dk_le_##SFX, LE, DTYPE, T, a <= b)                                      \
    DK_COMPARISON_VIA(dk_ge_##SFX, GE, DTYPE, T, dk_le_##SFX, 1, 0)
#define DK_COMPARISONS_LT_EQ_(SFX, DTYPE, T)                                              \
    DK_COMPARISON(dk_eq_##SFX, EQ, DTYPE, T, a == b)                                      \
    DK_COMPARISON(dk_lt_##SFX, LT, DTYPE, T, a < b)                                       \
    DK_COMPARISON_VIA(dk_ne_##SFX, NE, DTYPE, T, dk_eq_##SFX, 0, 1)                       \
    DK_COMPARISON_VIA(dk_gt_##SFX, GT, DTYPE, T, dk_lt_##SFX, 1, 0)
/* An entry with its 2-D loop (each DK_ macro above writes FN##_2d). */
#define DK_ENTRY(LOOP, DTYPE, FN) DISPATCH_KERNELS_LOOP_WITH_2D(LOOP, DTYPE, FN, 0)
#define DK_COMPARISON_ENTRIES(SFX, DTYPE)                                                 \
    DK_ENTRY(EQ, DTYPE, dk_eq_##SFX) DK_ENTRY(NE, DTYPE, dk_ne_##SFX)                     \
    DK_ENTRY(LT, DTYPE, dk_lt_##SFX) DK_ENTRY(LE, DTYPE, dk_le_##SFX)                     \
    DK_ENTRY(GT, DTYPE, dk_gt_##SFX) DK_ENTRY(GE, DTYPE, dk_ge_##SFX)

#endif /* DISPATCH_KERNELS_LOOP_PATHS_H_ */
