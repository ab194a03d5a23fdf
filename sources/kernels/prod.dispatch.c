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

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(prod,
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT32, dispatch_kernel_prod_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_PROD, FLOAT64, dispatch_kernel_prod_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "prod.dispatch.h"
DISPATCH_KERNELS_CHOOSER(prod)
#endif
