/*
 * Loop templates shared by the dispatchable kernel sources. Every loop has the
 * inner-loop signature of the elementwise engine,
 *
 *     void loop(char **data, const intptr_t *steps, intptr_t n, void *ctx)
 *
 * as sources/include/dispatch/loops.h defines it: data[0] the output, then
 * the inputs; steps: the byte stride of each operand; n: elements; ctx: the
 * loop's extra argument (alpha, value) or NULL. A stride of 0 is a broadcast
 * scalar. Each template has a contiguous vector path, a scalar-broadcast
 * vector path where it pays, and a general strided path; all three give the
 * same bits for the same values (Note [Same answer on every target] in
 * simd.h), so a result never depends on the memory layout.
 *
 * Included only by *.dispatch.c (it uses DISPATCH_CPU_DISPATCH_CURFX).
 */
#ifndef DISPATCH_KERNELS_LOOPS_H_
#define DISPATCH_KERNELS_LOOPS_H_

#include <stdint.h>
#include "kernels_export.h"
#include "simd.h"
#include "gather_bits.h"
#include "line_head.h"

#define DISPATCH_KERNELS_LANES_f32 DV_LANES_F32
#define DISPATCH_KERNELS_LANES_f64 DV_LANES_F64
#define DISPATCH_KERNELS_LANES(S) DISPATCH_KERNELS_LANES_##S

/* Elements per chunk when a strided operand is gathered into a buffer. */
#define DISPATCH_KERNELS_CHUNK 256

/*
 * Unary: data = {out, in}. VEC maps one vector; the strided path gathers a
 * chunk into a stack buffer, runs the contiguous path on it in place, and
 * scatters it back, so strided and contiguous inputs take the same arithmetic.
 * FTZ = 1 runs the loop with DAZ|FTZ set (Note [No denormal arithmetic]).
 */
#define DISPATCH_KERNELS_UNARY_LOOP(NAME, T, S, VEC, FTZ)                             \
    static void NAME##_contig_(T *dst, const T *src, intptr_t n)                      \
    {                                                                                 \
        const intptr_t L = DISPATCH_KERNELS_LANES(S);                                 \
        intptr_t i = 0;                                                               \
        for (; i + 2 * L <= n; i += 2 * L) {                                          \
            dv_store_##S(dst + i, VEC(dv_load_##S(src + i)));                         \
            dv_store_##S(dst + i + L, VEC(dv_load_##S(src + i + L)));                 \
        }                                                                             \
        for (; i + L <= n; i += L)                                                    \
            dv_store_##S(dst + i, VEC(dv_load_##S(src + i)));                         \
        if (i < n)                                                                    \
            dv_store_partial_##S(dst + i, n - i,                                      \
                                 VEC(dv_load_partial_##S(src + i, n - i, (T)1)));     \
    }                                                                                 \
    /* Note [Every other element in the loop]: dst[i] = VEC(src[2 i]); a vector   \
     * reads one element past its last lane, so only while another follows */    \
    static void NAME##_even_(T *dst, const T *src, intptr_t n)                        \
    {                                                                                 \
        const intptr_t L = DISPATCH_KERNELS_LANES(S);                                 \
        intptr_t i = 0;                                                               \
        for (; i + 2 * L < n; i += 2 * L) {                                           \
            dv_store_##S(dst + i, VEC(dv_load_even_##S(src + 2 * i)));                \
            dv_store_##S(dst + i + L, VEC(dv_load_even_##S(src + 2 * i + 2 * L)));    \
        }                                                                             \
        for (; i + L < n; i += L)                                                     \
            dv_store_##S(dst + i, VEC(dv_load_even_##S(src + 2 * i)));                \
        T rest[DISPATCH_KERNELS_LANES(S)];                                            \
        for (intptr_t j = 0; j < n - i; j++) rest[j] = src[2 * (i + j)];              \
        NAME##_contig_(dst + i, rest, n - i);                                         \
    }                                                                                 \
    DISPATCH_KERNELS_UNARY_CHUNKED_(NAME, T, FTZ, NAME##_even_)

/*
 * Note [Every other element in the loop]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x[:, ::2].sqrt() into a new tensor: the engine used to copy the input's
 * chunk into a buffer first (Note [Gathered strided inputs] in
 * sources/iterator/iterator.c), a pass that runs before the arithmetic
 * instead of beside it. For every other float32/float64 into a contiguous
 * output the loop reads the input itself, each vector from two loads and a
 * shuffle (dv_load_even), which ride along with the arithmetic: sqrt of
 * x[:, ::2] of a (256, 1024) tensor, SSE4.2, float32 79-87 -> 56-57 us,
 * float64 242-250 -> 190-200 (NumPy 59-61 and 197-205); AVX2 57-63 -> 32-34
 * and 138-143 -> 102; exp and log 0-30% less. The last vector, whose loads
 * would pass the view's last element, is gathered into lanes on the stack.
 */

/* The loop NAME of elements T (and its 2-D loop) around NAME##_contig_(dst,
 * src, n), defined before it: contiguous operands run it directly, any other
 * layout a chunk at a time gathered into a stack buffer and scattered back.
 * FTZ as DISPATCH_KERNELS_UNARY_LOOP's. */
#define DISPATCH_KERNELS_UNARY_CHUNKED(NAME, T, FTZ)                                  \
    DISPATCH_KERNELS_UNARY_CHUNKED_(NAME, T, FTZ, NULL)
/* ... and with EVEN(dst, src, n) (or NULL) for an input of every other
 * element into a contiguous output. */
#define DISPATCH_KERNELS_UNARY_CHUNKED_(NAME, T, FTZ, EVEN)                           \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                             \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,        \
                                           intptr_t n, void *ctx)                     \
    {                                                                                 \
        (void)ctx;                                                                    \
        const intptr_t os = steps[0], is = steps[1];                                  \
        const unsigned mode = (FTZ) ? dv_fpmode_enter() : 0u;                         \
        void (*const even_)(T *, const T *, intptr_t) = EVEN;                         \
        if (is == (intptr_t)sizeof(T) && os == (intptr_t)sizeof(T)) {                 \
            NAME##_contig_((T *)data[0], (const T *)data[1], n);                      \
        } else if (even_ && is == 2 * (intptr_t)sizeof(T) && os == (intptr_t)sizeof(T) && \
                   (uintptr_t)data[1] % sizeof(T) == 0) {                             \
            even_((T *)data[0], (const T *)data[1], n);                               \
        } else {                                                                      \
            T buf[DISPATCH_KERNELS_CHUNK];                                            \
            for (intptr_t i = 0; i < n; i += DISPATCH_KERNELS_CHUNK) {                \
                intptr_t m = n - i < DISPATCH_KERNELS_CHUNK ? n - i : DISPATCH_KERNELS_CHUNK; \
                char *op = data[0] + i * os;                                          \
                const char *ip = data[1] + i * is;                                    \
                dk_gather_bits(buf, ip, is, sizeof(T), m);                            \
                NAME##_contig_(buf, buf, m);                                          \
                dk_scatter_bits(op, os, buf, sizeof(T), m);                           \
            }                                                                         \
        }                                                                             \
        if (FTZ) dv_fpmode_leave(mode);                                               \
    }                                                                                 \
    DISPATCH_KERNELS_LOOP2D(NAME, 2)

/*
 * Binary: data = {out, a, b}. VEC(a, b) on vectors, SCALAR(a, b) on elements
 * (the same operation: see simd.h). With ALPHA = 1 the loop reads a scale
 * from ctx (loops.h: out = a op alpha*b; NULL or 1 means none), computed as
 * a op (alpha*b), two roundings, as the reference loop does.
 *
 * Note [Interleaved loads and stores]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The contiguous path loads, computes and stores one vector at a time, two
 * per iteration. A version that first loaded four vectors of each input and
 * then stored four ran at ~75% of the STREAM triad on 16M-element NumPy
 * arrays (whose data all sit at the same offset in a page) and at 100% on
 * differently placed arrays; the interleaved order reaches the triad on both
 * (tools/bench/run.py, %triad column).
 */
#define DISPATCH_KERNELS_BINARY_LOOP(NAME, T, S, VEC, SCALAR, ALPHA)                  \
    /* element strides (x[:, ::2]): the scalar path's statements on typed         \
     * pointers, which the compiler vectorizes (Note [Strided paths] in           \
     * loop_paths.h), inlined with the constant strides of every other column */  \
    DV_INLINE void NAME##_strided_(T *o, const T *a, const T *b, intptr_t so,         \
                                   intptr_t sa, intptr_t sb, intptr_t n, T alpha,     \
                                   const int scaled)                                  \
    {                                                                                 \
        for (intptr_t i = 0; i < n; i++) {                                            \
            T y = b[i * sb];                                                          \
            if (scaled) y = alpha * y;                                                \
            o[i * so] = SCALAR(a[i * sa], y);                                         \
        }                                                                             \
    }                                                                                 \
    DV_INLINE void NAME##_run_(char **data, const intptr_t *steps, intptr_t n,        \
                               T alpha, const int scaled)                             \
    {                                                                                 \
        const intptr_t L = DISPATCH_KERNELS_LANES(S), sz = (intptr_t)sizeof(T);       \
        const intptr_t so = steps[0], sa = steps[1], sb = steps[2];                   \
        T *o = (T *)data[0];                                                          \
        const T *a = (const T *)data[1], *b = (const T *)data[2];                     \
        const dv_##S k = dv_set1_##S(alpha);                                          \
        (void)k;                                                                      \
        intptr_t i = 0;                                                               \
        /* Note [Stores on whole lines] in line_head.h: elements up to the     \
         * output's vector boundary first, every operand contiguous or broadcast */ \
        if (so == sz && (sa == sz || sa == 0) && (sb == sz || sb == 0)) {             \
            const intptr_t h = dk_line_head(o, sz, L * sz, n);                        \
            for (; i < h; i++) {                                                      \
                T y = b[sb ? i : 0];                                                  \
                if (scaled) y = alpha * y;                                            \
                o[i] = SCALAR(a[sa ? i : 0], y);                                      \
            }                                                                         \
        }                                                                             \
        if (sa == sz && sb == sz && so == sz) {                                       \
            for (; i + 2 * L <= n; i += 2 * L) {                                      \
                dv_##S b0 = dv_load_##S(b + i), b1 = dv_load_##S(b + i + L);          \
                if (scaled) { b0 = dv_mul_##S(k, b0); b1 = dv_mul_##S(k, b1); }       \
                dv_store_##S(o + i, VEC(dv_load_##S(a + i), b0));                     \
                dv_store_##S(o + i + L, VEC(dv_load_##S(a + i + L), b1));             \
            }                                                                         \
            for (; i + L <= n; i += L) {                                              \
                dv_##S b0 = dv_load_##S(b + i);                                       \
                if (scaled) b0 = dv_mul_##S(k, b0);                                   \
                dv_store_##S(o + i, VEC(dv_load_##S(a + i), b0));                     \
            }                                                                         \
        } else if (sa == 0 && sb == sz && so == sz) {                                 \
            const dv_##S av = dv_set1_##S(*a);                                        \
            for (; i + 2 * L <= n; i += 2 * L) {                                      \
                dv_##S b0 = dv_load_##S(b + i), b1 = dv_load_##S(b + i + L);          \
                if (scaled) { b0 = dv_mul_##S(k, b0); b1 = dv_mul_##S(k, b1); }       \
                dv_store_##S(o + i, VEC(av, b0));                                     \
                dv_store_##S(o + i + L, VEC(av, b1));                                 \
            }                                                                         \
        } else if (sa == sz && sb == 0 && so == sz) {                                 \
            const dv_##S bv = scaled ? dv_set1_##S(alpha * *b) : dv_set1_##S(*b);     \
            for (; i + 2 * L <= n; i += 2 * L) {                                      \
                dv_##S a0 = dv_load_##S(a + i), a1 = dv_load_##S(a + i + L);          \
                dv_store_##S(o + i, VEC(a0, bv));                                     \
                dv_store_##S(o + i + L, VEC(a1, bv));                                 \
            }                                                                         \
        } else if (so % sz == 0 && sa % sz == 0 && sb % sz == 0) {                    \
            const intptr_t eo = so / sz, ea = sa / sz, eb = sb / sz;                  \
            if (eo == 1 && ea == 2 && eb == 2)                                        \
                NAME##_strided_(o, a, b, 1, 2, 2, n, alpha, scaled);                  \
            else if (eo == 2 && ea == 2 && eb == 1)                                   \
                NAME##_strided_(o, a, b, 2, 2, 1, n, alpha, scaled);                  \
            else NAME##_strided_(o, a, b, eo, ea, eb, n, alpha, scaled);              \
            return;                                                                   \
        }                                                                             \
        /* The tail of the vector paths, and every other layout. */                  \
        char *po = data[0] + i * so;                                                  \
        const char *pa = data[1] + i * sa, *pb = data[2] + i * sb;                    \
        for (; i < n; i++, pa += sa, pb += sb, po += so) {                            \
            T x, y, r;                                                                \
            memcpy(&x, pa, sizeof(T));                                                \
            memcpy(&y, pb, sizeof(T));                                                \
            if (scaled) y = alpha * y;                                                \
            r = SCALAR(x, y);                                                         \
            memcpy(po, &r, sizeof(T));                                                \
        }                                                                             \
    }                                                                                 \
    /* one row: the loop itself, inlined in its 2-D loop too (Note [2-D loops]) */    \
    DV_INLINE int NAME##_row_(char **data, const intptr_t *steps, intptr_t n,         \
                              void *ctx)                                              \
    {                                                                                 \
        T alpha = (T)1;                                                               \
        if ((ALPHA) && ctx) memcpy(&alpha, ctx, sizeof(T));                           \
        if (alpha != (T)1) NAME##_run_(data, steps, n, alpha, 1);                     \
        else NAME##_run_(data, steps, n, alpha, 0);                                   \
        return 1;                                                                     \
    }                                                                                 \
    /* the 1-D loop is the 2-D loop of one row (Note [Unit paths compiled once]   \
     * in loop_paths.h): the row's paths are compiled once */                     \
    DISPATCH_KERNELS_LOOP2D_ROWS(NAME, 3, NAME##_row_, DISPATCH_KERNELS_NO_REST)

#endif /* DISPATCH_KERNELS_LOOPS_H_ */
