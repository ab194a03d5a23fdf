/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * The product of n float32 or float64 elements `stride` bytes apart, in
 * float64: the FOLD_PROD kernels of the reduction kernel table
 * (dispatch/reduce_kernel_table.h), which the engine runs for prod.
 *
 * Note [Product order]
 * ~~~~~~~~~~~~~~~~~~~~
 * A block of up to DISPATCH_FOLD_BLOCK (4096) elements: 32 running
 * products, element i of the block into product i % 32, then the 32
 * combined pairwise, (p0 p1)(p2 p3)..., halving until one is left (32
 * independent chains, so a multiply's latency does not bound the loop).
 * More elements: split in whole blocks at dispatch_fold_split(n) and the
 * two halves' products multiplied (Note [Fold blocks] in
 * dispatch/reduce_kernel_table.h). The order is a fact of n alone, written
 * out in the source, so every target (the compiler packs the 32 lanes into
 * the vectors it has; multiplies are never reassociated or contracted)
 * gives the same bits, on every layout (the engine hands a strided run
 * over as it is) and thread count (the engine splits outputs, and one
 * product only where the kernel splits it). float32 multiplies
 * in float64, as NumPy's float32 prod does not: each step rounds at
 * float64's precision, and the result is rounded to float32 once; it
 * overflows only where the float64 product does.
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/reduce_kernel_table.h"
#include "narrow_vector.h"
#include "pair_element.h"
#include "simd.h"

#define PROD_LANES 32
#define PROD_COL_CHUNK 64 /* Note [Product columns] */

#if defined(__AVX__)
#include <immintrin.h>
/* float32's contiguous run on AVX targets: the 32 running products as 8
 * chains of 4 float64 lanes, each step widening 4 floats from memory
 * (vcvtps2pd ymm, m128). The compiler's form of the loop below (on
 * AVX-512: 4 chains of 8 lanes, each 16 floats loaded, the upper half
 * extracted, then widened) was bound by its widening on Zen 4: 4.75 us for
 * 64K floats, this 2.54 (a C test harness, -march=skylake-avx512). The
 * same lanes take the same multiplies in the same order: the same bits.
 * Returns the elements done (whole rows of 32). */
static intptr_t prod_f32_rows(const float *x, intptr_t n, double *acc)
{
    __m256d a[PROD_LANES / 4];
    for (int k = 0; k < PROD_LANES / 4; k++) a[k] = _mm256_loadu_pd(acc + 4 * k);
    intptr_t i = 0;
    for (; i + PROD_LANES <= n; i += PROD_LANES)
        for (int k = 0; k < PROD_LANES / 4; k++)
            a[k] = _mm256_mul_pd(a[k], _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k)));
    for (int k = 0; k < PROD_LANES / 4; k++) _mm256_storeu_pd(acc + 4 * k, a[k]);
    return i;
}
#define PROD_ROWS_float(x, n, acc) prod_f32_rows(x, n, acc)

/* One row of PROD_COL_CHUNK float32 columns multiplied into its running
 * products, 4 widened from memory at a time, as prod_f32_rows (prod(dim=0)
 * of (512, 512): 40.8 -> ... us). */
static inline int prod_f32_col_row(double *restrict a, const float *restrict x)
{
    for (int c = 0; c < PROD_COL_CHUNK; c += 4)
        _mm256_store_pd(a + c, _mm256_mul_pd(_mm256_load_pd(a + c),
                                             _mm256_cvtps_pd(_mm_loadu_ps(x + c))));
    return 1;
}
#define PROD_COL_ROW_float(a, x) prod_f32_col_row(a, x)

/* w running products times rows x, x + s, x + 2 s, x + 3 s of float32
 * (Note [Product rows four at a time]), 4 widened from memory at a time as
 * prod_f32_col_row; the columns past the last 4 one at a time. */
static inline void prod_f32_fuse4(double *restrict a, const char *x, intptr_t s, intptr_t w)
{
    const float *x0 = (const float *)(const void *)x;
    const float *x1 = (const float *)(const void *)(x + s);
    const float *x2 = (const float *)(const void *)(x + 2 * s);
    const float *x3 = (const float *)(const void *)(x + 3 * s);
    const intptr_t whole = w - w % 4;
    for (intptr_t c = 0; c < whole; c += 4) {
        __m256d v = _mm256_loadu_pd(a + c);
        v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(x0 + c)));
        v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(x1 + c)));
        v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(x2 + c)));
        v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(x3 + c)));
        _mm256_storeu_pd(a + c, v);
    }
    for (intptr_t c = whole; c < w; c++)
        a[c] = a[c] * (double)x0[c] * (double)x1[c] * (double)x2[c] * (double)x3[c];
}
#define PROD_FUSE4_float(a, x, s, w) prod_f32_fuse4(a, x, s, w)
#else
#define PROD_ROWS_float(x, n, acc) 0
#define PROD_COL_ROW_float(a, x) 0
#endif
#define PROD_ROWS_double(x, n, acc) 0
#define PROD_COL_ROW_double(a, x) 0

/* w running products times rows x, x + s, x + 2 s, x + 3 s of T, in that
 * order (Note [Product rows four at a time]): left to right, each multiply
 * rounded, as four passes of one row would leave them. */
#define DEF_PROD_FUSE4(T)                                                                  \
    static inline void prod_fuse4_##T(double *restrict a, const char *x, intptr_t s,       \
                                      intptr_t w)                                          \
    {                                                                                      \
        const T *restrict x0 = (const T *)(const void *)x;                                 \
        const T *restrict x1 = (const T *)(const void *)(x + s);                           \
        const T *restrict x2 = (const T *)(const void *)(x + 2 * s);                       \
        const T *restrict x3 = (const T *)(const void *)(x + 3 * s);                       \
        for (intptr_t c = 0; c < w; c++)                                                   \
            a[c] = a[c] * (double)x0[c] * (double)x1[c] * (double)x2[c] * (double)x3[c];   \
    }
DEF_PROD_FUSE4(double)
#define PROD_FUSE4_double(a, x, s, w) prod_fuse4_double(a, x, s, w)
#ifndef PROD_FUSE4_float
DEF_PROD_FUSE4(float)
#define PROD_FUSE4_float(a, x, s, w) prod_fuse4_float(a, x, s, w)
#endif
#define PROD_FUSE 4
#define PROD_GROUP (PROD_LANES * PROD_FUSE)
/* The row read PROD_AHEAD lanes after row r + lane + j PROD_LANES of the
 * group at r (the next group's where the lanes run out). */
#define PROD_AHEAD 4
static inline intptr_t prod_row_ahead(intptr_t r, int lane, int j)
{
    const int k = lane + PROD_AHEAD;
    return k < PROD_LANES ? r + k + (intptr_t)j * PROD_LANES
                          : r + PROD_GROUP + (k - PROD_LANES) + (intptr_t)j * PROD_LANES;
}

/* The pairwise tree of Note [Product order] over the 32 running products,
 * each level into an array of its own: done in place, each multiply
 * waited on the store before it (17 ns a call against 5 in a C harness;
 * a third of prod(dim=1)'s time on rows of 512). The same pairs. */
_Static_assert(PROD_LANES == 32, "prod_tree's levels are written for 32 lanes");
static inline double prod_tree(const double *acc)
{
    double l16[16], l8[8], l4[4], l2[2];
    for (int k = 0; k < 16; k++) l16[k] = acc[2 * k] * acc[2 * k + 1];
    for (int k = 0; k < 8; k++) l8[k] = l16[2 * k] * l16[2 * k + 1];
    for (int k = 0; k < 4; k++) l4[k] = l8[2 * k] * l8[2 * k + 1];
    for (int k = 0; k < 2; k++) l2[k] = l4[2 * k] * l4[2 * k + 1];
    return l2[0] * l2[1];
}

#define DEF_PROD(NAME, T)                                                                  \
    static double NAME##_block(const char *p, intptr_t stride, intptr_t n)                 \
    {                                                                                      \
        double acc[PROD_LANES];                                                            \
        for (int k = 0; k < PROD_LANES; k++) acc[k] = 1;                                   \
        intptr_t i = 0;                                                                    \
        if (stride == (intptr_t)sizeof(T)) { /* contiguous: the lanes vectorize */        \
            const T *x = (const T *)(const void *)p;                                       \
            i = PROD_ROWS_##T(x, n, acc);                                                  \
            for (; i + PROD_LANES <= n; i += PROD_LANES)                                   \
                for (int k = 0; k < PROD_LANES; k++) acc[k] *= (double)x[i + k];           \
        }                                                                                  \
        for (; i < n; i++) {                                                               \
            T v;                                                                           \
            __builtin_memcpy(&v, p + i * stride, sizeof v);                                \
            acc[i % PROD_LANES] *= (double)v;                                              \
        }                                                                                  \
        return prod_tree(acc);                                                             \
    }                                                                                      \
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n);  \
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n)   \
    {                                                                                      \
        if (n <= DISPATCH_FOLD_BLOCK) return NAME##_block(p, stride, n);                   \
        const intptr_t h = dispatch_fold_split(n);                                         \
        return DISPATCH_CPU_DISPATCH_CURFX(NAME)(p, stride, h) *                           \
               DISPATCH_CPU_DISPATCH_CURFX(NAME)(p + h * stride, stride, n - h);           \
    }

DEF_PROD(dispatch_kernel_prod_f32, float)
DEF_PROD(dispatch_kernel_prod_f64, double)

/*
 * Note [Product columns]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * prod(dim=0) of a row-major matrix: each column is the product of its
 * nrows elements rstride bytes apart, in Note [Product order]'s order: row
 * r goes into running product r % 32 of its column, and the 32 are
 * combined pairwise. Running that order down one column at a time reads
 * one element per cache line; here it runs across PROD_COL_CHUNK columns
 * at a time instead: 32 rows of running products (one per lane of the
 * order, PROD_COL_CHUNK columns each, 16 KiB of float64, in L1), row r
 * multiplied into row r % 32 by whole vectors, then the same pairwise tree
 * per column; more rows than a block split as DEF_PROD splits them (Note
 * [Fold blocks]), the halves' columns multiplied. Each column sees the
 * same multiplies in the same order as DEF_PROD's strided loop, so the bits
 * are FOLD_PROD's, on every target and for any split of the columns between
 * calls or threads.
 * float16 and bfloat16 columns (FOLD_COLS_PROD of a narrow dtype) are
 * widened a row of PROD_COL_CHUNK at a time, exactly, and folded as
 * float32's, the result written as float32: the float32 product of the
 * widened values, which the engine then rounds to the narrow dtype, the
 * bits of reducing a float32 copy (what the engine did before, with the
 * copy's cast and the reduction splitting the matrix between threads by
 * rows and by columns: every line then crossed between the two cores, and
 * prod(dim=0) of (512, 512) bfloat16 took 225 us at 2 threads, 53 at one).
 */
/*
 * Note [Short product columns]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * With fewer rows than the order's 32 lanes, lanes nrows.. never take a
 * row and hold 1: multiplying by 1 gives the other factor's bits exactly
 * (a NaN's payload and a zero's sign included), so the pairwise tree skips
 * them, a lane paired with one of them passing on as it is. prod(dim=0) of
 * (8, 512) float64 initialised and combined 32 lanes of 64 columns for 8
 * rows of work: 3.9 us, torch 2.2. The same bits as the full tree.
 */
/*
 * Note [Product columns from whole rows]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The block form reads PROD_COL_CHUNK columns (512 bytes of float64) of
 * each row down the rows, then the next columns: from a cache that is
 * free, from memory every row is a new page, and (32768, 512) float64 read
 * at 10 GB/s where NumPy's row walk reads 23. Given more than
 * DISPATCH_FOLD_COLS_NARROW columns (the engine's units of an input it
 * streams: whole rows), the kernel keeps the 32 rows of running products
 * for all of them (up to PROD_WIDE_COLS, 128 KiB of float64, in L2) and
 * reads the rows in address order: the same multiplies per column in the
 * same order, so the same bits (test_loops_targets runs both forms). A
 * failed allocation leaves the work to the block form.
 */
/*
 * Note [Product rows four at a time]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Row r goes into running product r % 32, so rows r, r + 32, r + 64 and
 * r + 96 go into the same one, in that order: both forms take rows in
 * groups of 128 and multiply each lane's four rows into it in one pass,
 * ((a x0) x1) x2) x3 with each multiply rounded, the multiplies a pass of
 * one row at a time would make, in its order: the same bits. A pass of one
 * row loads and stores its lane's running products for each row read, and
 * that traffic was the bound: prod(dim=0) of (32768, 512) float64 (the
 * wide form, 128 KiB of running products in L2) 7.8 -> 4.2 ms, NumPy
 * 4.3-4.6; float32 5.5 -> 2.9 (NumPy 2.5, in float32); (512, 512) float64
 * (the block form) 64 -> 43 us, NumPy 39-54. Eight rows a pass measured
 * as four. The rows past the last whole group go one at a time.
 * float32's and float64's fused passes prefetch nothing: the one-row
 * pass's row-ahead prefetch made them slower (53 against 43 us there, 212
 * against 194 on (2048, 512); no shape measured gained from it). A narrow
 * float (its engine hands over 128 columns at a time: the block form) has
 * its four rows widened first, exactly, multiplied as float32's, and
 * prefetches the rows PROD_AHEAD lanes ahead: prod(dim=0) of (512, 512)
 * float16 42 -> 30 us (torch 32), (32768, 512) 3.3-4.4 -> 3.0 ms (torch
 * 3.3; 4.5-5.9 without the prefetch).
 */
#define PROD_WIDE_COLS 512
/* DEF_PROD_COLS over T elements read as ST (T itself, or a narrow float's
 * storage widened to float by WIDEN(dst, src, n)), results written as OUT. */
#define PROD_AS_IS(dst, src, n) ((void)0)
#define DEF_PROD_COLS(NAME, T, ST, OUT, WIDEN)                                             \
    /* The products of w <= PROD_COL_CHUNK columns from p down nrows <= a block of rows. */ \
    static void NAME##_block(const char *p, intptr_t rstride, intptr_t nrows, intptr_t w,  \
                             double *res)                                                 \
    {                                                                                      \
        _Alignas(64) double acc[PROD_LANES][PROD_COL_CHUNK];                               \
        _Alignas(64) ST widened[PROD_FUSE][PROD_COL_CHUNK];                                \
        /* lanes past the rows stay 1: Note [Short product columns] */                     \
        int used = nrows < PROD_LANES ? (nrows > 0 ? (int)nrows : 1) : PROD_LANES;         \
        for (int k = 0; k < used; k++)                                                     \
            for (int c = 0; c < PROD_COL_CHUNK; c++) acc[k][c] = 1;                        \
        intptr_t r0 = 0;                                                                   \
        /* Note [Product rows four at a time] */                                          \
        for (; r0 + PROD_GROUP <= nrows; r0 += PROD_GROUP)                                 \
            for (int k = 0; k < PROD_LANES; k++) {                                         \
                const char *row = p + (r0 + k) * rstride;                                  \
                intptr_t s = PROD_LANES * rstride;                                         \
                if (sizeof(T) != sizeof(ST)) {                                             \
                    for (int j = 0; j < PROD_FUSE && sizeof(T) < sizeof(ST); j++) {        \
                        /* a narrow float's rows only: a pair's took longer with it */     \
                        const intptr_t ahead = prod_row_ahead(r0, k, j);                   \
                        if (ahead < nrows)                                                 \
                            for (int l = 0; l < (int)(PROD_COL_CHUNK * sizeof(T)); l += 64) \
                                __builtin_prefetch(p + ahead * rstride + l);               \
                    }                                                                      \
                    for (int j = 0; j < PROD_FUSE; j++)                                    \
                        WIDEN(widened[j], (const T *)(const void *)(row + j * s), w);      \
                    row = (const char *)widened, s = (intptr_t)sizeof widened[0];          \
                }                                                                          \
                if (w == PROD_COL_CHUNK) /* a fixed count: whole vectors */                \
                    PROD_FUSE4_##ST(acc[k], row, s, PROD_COL_CHUNK);                       \
                else                                                                       \
                    PROD_FUSE4_##ST(acc[k], row, s, w);                                    \
            }                                                                              \
        for (intptr_t r = r0; r < nrows; r++) {                                            \
            const char *row = p + r * rstride;                                             \
            const ST *restrict x = (const ST *)(const void *)row;                          \
            double *restrict a = acc[r % PROD_LANES];                                      \
            if (r + 16 < nrows) /* the rows 16 ahead: rows far apart outrun the prefetcher */ \
                for (int l = 0; l < (int)(PROD_COL_CHUNK * sizeof(T)); l += 64)            \
                    __builtin_prefetch(row + 16 * rstride + l);                            \
            if (sizeof(T) != sizeof(ST)) {                                                 \
                WIDEN(widened[0], (const T *)(const void *)row, w);                        \
                x = widened[0];                                                            \
            }                                                                              \
            if (w == PROD_COL_CHUNK && PROD_COL_ROW_##ST(a, x)) /* AVX: done */           \
                continue;                                                                  \
            if (w == PROD_COL_CHUNK) /* a fixed count: whole vectors */                    \
                for (int c = 0; c < PROD_COL_CHUNK; c++) a[c] *= (double)x[c];             \
            else                                                                           \
                for (intptr_t c = 0; c < w; c++) a[c] *= (double)x[c];                     \
        }                                                                                  \
        for (int h = PROD_LANES / 2; h >= 1; h /= 2) { /* pairwise, as DEF_PROD */         \
            for (int k = 0; 2 * k + 1 < used; k++)                                         \
                for (int c = 0; c < PROD_COL_CHUNK; c++)                                   \
                    acc[k][c] = acc[2 * k][c] * acc[2 * k + 1][c];                         \
            if (used % 2) /* a lane paired with a 1: itself */                             \
                for (int c = 0; c < PROD_COL_CHUNK; c++) acc[used / 2][c] = acc[used - 1][c]; \
            used = (used + 1) / 2;                                                         \
        }                                                                                  \
        for (intptr_t c = 0; c < w; c++) res[c] = acc[0][c];                               \
    }                                                                                      \
    /* The wide form (Note [Product columns from whole rows]): w columns of   \
     * nrows <= a block, rows in address order into acc (PROD_LANES rows of w),        \
     * widened through wbuf (w elements) for a narrow float. */                          \
    static void NAME##_wide_block(const char *p, intptr_t rstride, intptr_t nrows,        \
                                  intptr_t w, double *acc, ST *wbuf, double *res)         \
    {                                                                                      \
        int used = nrows < PROD_LANES ? (nrows > 0 ? (int)nrows : 1) : PROD_LANES;         \
        for (intptr_t k = 0; k < used * w; k++) acc[k] = 1;                                \
        intptr_t r0 = 0;                                                                   \
        if (sizeof(T) == sizeof(ST)) /* Note [Product rows four at a time] */             \
            for (; r0 + PROD_GROUP <= nrows; r0 += PROD_GROUP)                             \
                for (int k = 0; k < PROD_LANES; k++)                                       \
                    PROD_FUSE4_##ST(acc + k * w, p + (r0 + k) * rstride, PROD_LANES * rstride, w); \
        for (intptr_t r = r0; r < nrows; r++) {                                            \
            const char *row = p + r * rstride;                                             \
            const ST *restrict x = (const ST *)(const void *)row;                          \
            double *restrict a = acc + (r % PROD_LANES) * w;                               \
            if (sizeof(T) != sizeof(ST)) {                                                 \
                WIDEN(wbuf, (const T *)(const void *)row, w);                              \
                x = wbuf;                                                                  \
            }                                                                              \
            for (intptr_t c = 0; c < w; c++) a[c] *= (double)x[c];                         \
        }                                                                                  \
        for (int h = PROD_LANES / 2; h >= 1; h /= 2) { /* pairwise, as DEF_PROD */         \
            for (int k = 0; 2 * k + 1 < used; k++) {                                       \
                double *restrict d = acc + k * w;                                          \
                const double *l = acc + 2 * k * w, *r = acc + (2 * k + 1) * w;             \
                for (intptr_t c = 0; c < w; c++) d[c] = l[c] * r[c];                       \
            }                                                                              \
            if (used % 2) /* a lane paired with a 1: itself */                             \
                memmove(acc + (used / 2) * w, acc + (used - 1) * w, (size_t)w * sizeof(double)); \
            used = (used + 1) / 2;                                                         \
        }                                                                                  \
        memcpy(res, acc, (size_t)w * sizeof(double));                                      \
    }                                                                                      \
    /* Any number of rows, split as DEF_PROD splits; 0 when out of memory. */             \
    static int NAME##_wide_rows(const char *p, intptr_t rstride, intptr_t nrows, intptr_t w, \
                                double *acc, ST *wbuf, double *res)                       \
    {                                                                                      \
        if (nrows <= DISPATCH_FOLD_BLOCK) {                                                \
            NAME##_wide_block(p, rstride, nrows, w, acc, wbuf, res);                       \
            return 1;                                                                      \
        }                                                                                  \
        const intptr_t h = dispatch_fold_split(nrows);                                     \
        double *right = malloc((size_t)w * sizeof(double));                                \
        int ok = right && NAME##_wide_rows(p, rstride, h, w, acc, wbuf, res) &&            \
                 NAME##_wide_rows(p + h * rstride, rstride, nrows - h, w, acc, wbuf, right); \
        if (ok)                                                                            \
            for (intptr_t c = 0; c < w; c++) res[c] = res[c] * right[c];                   \
        free(right);                                                                       \
        return ok;                                                                         \
    }                                                                                      \
    /* All ncols columns, PROD_WIDE_COLS at a time; 0 (nothing written) when out of       \
     * memory, for the block form to run instead. */                                      \
    static int NAME##_wide(const char *p, intptr_t rstride, intptr_t nrows, intptr_t ncols, \
                           OUT *out)                                                      \
    {                                                                                      \
        const intptr_t w0 = ncols < PROD_WIDE_COLS ? ncols : PROD_WIDE_COLS;               \
        double *acc = malloc((size_t)w0 * (PROD_LANES + 1) * sizeof(double));              \
        ST *wbuf = malloc((size_t)w0 * sizeof(ST));                                        \
        int ok = acc && wbuf;                                                              \
        double *res = ok ? acc + PROD_LANES * w0 : NULL;                                   \
        for (intptr_t c0 = 0; ok && c0 < ncols; c0 += w0) {                                \
            const intptr_t w = ncols - c0 < w0 ? ncols - c0 : w0;                          \
            ok = NAME##_wide_rows(p + c0 * (intptr_t)sizeof(T), rstride, nrows, w, acc, wbuf, res); \
            for (intptr_t c = 0; ok && c < w; c++) out[c0 + c] = (OUT)res[c];              \
        }                                                                                  \
        free(acc), free(wbuf);                                                             \
        return ok;                                                                         \
    }                                                                                      \
    /* Any number of rows: split as DEF_PROD splits (Note [Fold blocks]). */              \
    static void NAME##_rows(const char *p, intptr_t rstride, intptr_t nrows, intptr_t w,   \
                            double *res)                                                  \
    {                                                                                      \
        if (nrows <= DISPATCH_FOLD_BLOCK) {                                                \
            NAME##_block(p, rstride, nrows, w, res);                                       \
            return;                                                                        \
        }                                                                                  \
        const intptr_t h = dispatch_fold_split(nrows);                                     \
        double right[PROD_COL_CHUNK];                                                      \
        NAME##_rows(p, rstride, h, w, res);                                                \
        NAME##_rows(p + h * rstride, rstride, nrows - h, w, right);                        \
        for (intptr_t c = 0; c < w; c++) res[c] = res[c] * right[c];                       \
    }                                                                                      \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t rstride, intptr_t nrows, \
                                           intptr_t ncols, void *out);                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t rstride, intptr_t nrows, \
                                           intptr_t ncols, void *out)                      \
    {                                                                                      \
        if (ncols > DISPATCH_FOLD_COLS_NARROW && NAME##_wide(p, rstride, nrows, ncols, (OUT *)out)) \
            return;                                                                        \
        double res[PROD_COL_CHUNK];                                                        \
        for (intptr_t c0 = 0; c0 < ncols; c0 += PROD_COL_CHUNK) {                          \
            const intptr_t w = ncols - c0 < PROD_COL_CHUNK ? ncols - c0 : PROD_COL_CHUNK;  \
            NAME##_rows(p + c0 * (intptr_t)sizeof(T), rstride, nrows, w, res);             \
            OUT *o = (OUT *)out + c0;                                                      \
            for (intptr_t c = 0; c < w; c++) o[c] = (OUT)res[c];                           \
        }                                                                                  \
    }

DEF_PROD_COLS(dispatch_kernel_prod_cols_f32, float, float, double, PROD_AS_IS)
DEF_PROD_COLS(dispatch_kernel_prod_cols_f64, double, double, double, PROD_AS_IS)
DEF_PROD_COLS(dispatch_kernel_prod_cols_f16, uint16_t, float, float, dk_f16_to_f32_n)
#define PROD_COLS_BITS_(NAME, sfx, T, E, M, NANS)                                         \
    DEF_PROD_COLS(dispatch_kernel_prod_cols_##sfx, T, float, float, dk_##sfx##_to_f32_n)
DISPATCH_FORALL_BITS_FLOATS(PROD_COLS_BITS_)

/*
 * Note [Product columns of every other element]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * prod(dim=0) of x[:, ::2] (columns two elements apart: FOLD_COLS_EVEN_PROD)
 * runs the column kernels above with a pair of elements as their element
 * and the pair's first as the value: each row's w firsts gathered into the
 * kernels' buffer as a narrow float's are widened into it, then the same
 * multiplies in the same order, so FOLD_PROD's bits per column. The engine
 * copied such a view into a dense slab first (Note [Columns of every other
 * element] in sum.dispatch.c: the sums' way); that copy read, wrote and
 * read again what this reads once. The narrow floats' prefetch of the rows
 * ahead is left out: a pair's row is 16 lines a block, not 2, and with it
 * the kernel took 213 us where it takes 168. (512, 1024)[:, ::2] float64,
 * Sapphire Rapids, 1 thread, alternating processes: 249 -> 168 us (NumPy
 * 161); (2048, 256)[:, ::2] 251 -> 158 (NumPy 173); (128, 1024)[:, ::2], in
 * L2, 22 -> 15 (NumPy 31). The gather reads no element past a row's last
 * first (prod_firsts_).
 */
#define PROD_FIRSTS_(S, T)                                                                 \
    static void prod_firsts_##S(T *restrict dst, const dispatch_pair_##S *restrict src,  \
                                intptr_t n)                                                \
    {                                                                                      \
        const T *e = (const T *)(const void *)src;                                         \
        for (intptr_t i = 0; i < n; i++) dst[i] = e[2 * i];                                \
    }
PROD_FIRSTS_(f32, float)
PROD_FIRSTS_(f64, double)
DEF_PROD_COLS(dispatch_kernel_prod_cols_f32_even, dispatch_pair_f32, float, double,
              prod_firsts_f32)
DEF_PROD_COLS(dispatch_kernel_prod_cols_f64_even, dispatch_pair_f64, double, double,
              prod_firsts_f64)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define PROD_COLS_BITS_ENTRY_(NAME, sfx, T, E, M, NANS)                                   \
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, NAME, dispatch_kernel_prod_cols_##sfx, 1)
DISPATCH_KERNELS_EXPORT(prod,
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT32, dispatch_kernel_prod_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT64, dispatch_kernel_prod_f64, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, FLOAT32, dispatch_kernel_prod_cols_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, FLOAT64, dispatch_kernel_prod_cols_f64, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, FLOAT16, dispatch_kernel_prod_cols_f16, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_EVEN_PROD, FLOAT32, dispatch_kernel_prod_cols_f32_even, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_EVEN_PROD, FLOAT64, dispatch_kernel_prod_cols_f64_even, 1)
    DISPATCH_FORALL_BITS_FLOATS(PROD_COLS_BITS_ENTRY_)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "prod.dispatch.h"
DISPATCH_KERNELS_CHOOSER(prod)
#endif
