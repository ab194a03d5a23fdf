/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * The product of n float32 or float64 elements `stride` bytes apart, in
 * float64: the FOLD_PROD kernels of the reduction kernel table
 * (dispatch/reduce_kernel_table.h), which the engine runs for prod.
 *
 * Note [Product order]
 * ~~~~~~~~~~~~~~~~~~~~
 * 32 running products: element i goes into product i % 32, then the 32
 * are combined pairwise, (p0 p1)(p2 p3)..., halving until one is left (32
 * independent chains, so a multiply's latency does not bound the loop).
 * The order is a fact of n alone, written out in the source, so every
 * target (the compiler packs the 32 lanes into the vectors it has;
 * multiplies are never reassociated or contracted) gives the same bits, on
 * every layout (the engine hands a strided run over as it is) and thread
 * count (the engine splits outputs, never one product). float32 multiplies
 * in float64, as NumPy's float32 prod does not: each step rounds at
 * float64's precision, and the result is rounded to float32 once; it
 * overflows only where the float64 product does.
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"

#define PROD_LANES 32

#define DEF_PROD(NAME, T)                                                                  \
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n);  \
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n)   \
    {                                                                                      \
        double acc[PROD_LANES];                                                            \
        for (int k = 0; k < PROD_LANES; k++) acc[k] = 1;                                   \
        intptr_t i = 0;                                                                    \
        if (stride == (intptr_t)sizeof(T)) { /* contiguous: the lanes vectorize */        \
            const T *x = (const T *)(const void *)p;                                       \
            for (; i + PROD_LANES <= n; i += PROD_LANES)                                   \
                for (int k = 0; k < PROD_LANES; k++) acc[k] *= (double)x[i + k];           \
        }                                                                                  \
        for (; i < n; i++) {                                                               \
            T v;                                                                           \
            __builtin_memcpy(&v, p + i * stride, sizeof v);                                \
            acc[i % PROD_LANES] *= (double)v;                                              \
        }                                                                                  \
        for (int w = PROD_LANES / 2; w >= 1; w /= 2) /* pairwise, in place */            \
            for (int k = 0; k < w; k++) acc[k] = acc[2 * k] * acc[2 * k + 1];              \
        return acc[0];                                                                     \
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
 * per column. Each column sees the same multiplies in the same order as
 * DEF_PROD's strided loop, so the bits are FOLD_PROD's, on every target and
 * for any split of the columns between calls or threads.
 */
#define PROD_COL_CHUNK 64

#define DEF_PROD_COLS(NAME, T)                                                             \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t rstride, intptr_t nrows, \
                                           intptr_t ncols, void *out);                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t rstride, intptr_t nrows, \
                                           intptr_t ncols, void *out)                      \
    {                                                                                      \
        _Alignas(64) double acc[PROD_LANES][PROD_COL_CHUNK];                               \
        for (intptr_t c0 = 0; c0 < ncols; c0 += PROD_COL_CHUNK) {                          \
            const intptr_t w = ncols - c0 < PROD_COL_CHUNK ? ncols - c0 : PROD_COL_CHUNK;  \
            for (int k = 0; k < PROD_LANES; k++)                                           \
                for (int c = 0; c < PROD_COL_CHUNK; c++) acc[k][c] = 1;                    \
            for (intptr_t r = 0; r < nrows; r++) {                                         \
                const T *restrict x = (const T *)(const void *)(p + r * rstride) + c0;     \
                double *restrict a = acc[r % PROD_LANES];                                  \
                if (w == PROD_COL_CHUNK) /* a fixed count: whole vectors */                \
                    for (int c = 0; c < PROD_COL_CHUNK; c++) a[c] *= (double)x[c];         \
                else                                                                       \
                    for (intptr_t c = 0; c < w; c++) a[c] *= (double)x[c];                 \
            }                                                                              \
            for (int h = PROD_LANES / 2; h >= 1; h /= 2) /* pairwise, as DEF_PROD */       \
                for (int k = 0; k < h; k++)                                                \
                    for (int c = 0; c < PROD_COL_CHUNK; c++)                               \
                        acc[k][c] = acc[2 * k][c] * acc[2 * k + 1][c];                     \
            T *o = (T *)out + c0;                                                          \
            for (intptr_t c = 0; c < w; c++) o[c] = (T)acc[0][c];                          \
        }                                                                                  \
    }

DEF_PROD_COLS(dispatch_kernel_prod_cols_f32, float)
DEF_PROD_COLS(dispatch_kernel_prod_cols_f64, double)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(prod,
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT32, dispatch_kernel_prod_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT64, dispatch_kernel_prod_f64, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, FLOAT32, dispatch_kernel_prod_cols_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_COLS_PROD, FLOAT64, dispatch_kernel_prod_cols_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "prod.dispatch.h"
DISPATCH_KERNELS_CHOOSER(prod)
#endif
