/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * sum of float32/float64, blocked and pairwise, the same bits on every target.
 *
 * Note [Sum order independent of the vector width]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A leaf of up to DISPATCH_SUM_LEAF elements is read as rows of 128 bytes
 * (32 float32 or 16 float64 "virtual lanes"); lane j accumulates elements
 * j, j+R, j+2R, ... in order, whatever the hardware width (2 zmm, 4 ymm or
 * 8 xmm registers, or 32 scalars hold the same lanes), then the lanes are
 * added in a fixed tree (16+16, 8+8, ...). A longer range is split in two at
 * a point that depends only on n, each half summed the same way, and the two
 * results added. The result is therefore a function of the values and n
 * only: identical on every target, for any stride, and for any number of
 * threads when the engine splits at the same points. The accumulators start
 * at -0.0 and a partial row is padded with -0.0 (x + -0.0 == x for every x,
 * -0.0 included), so the padding never changes a bit.
 *
 * Error bound (Higham, pairwise/blocked summation): with u the unit roundoff
 * (2^-24, 2^-53) and h = L/R + log2(R) + ceil(log2(n/L)) the depth of the
 * addition tree (L leaf elements, R lanes per row),
 *     |computed - exact| <= h u / (1 - h u) * sum |x_i|.
 * float32: L = 512, R = 32: h = 16 + 5 + ceil(log2(n/512)), e.g. n = 2^24:
 * h = 36. NumPy's pairwise sum (8 accumulators, 128-element blocks) has
 * h = 16 + 3 + ceil(log2(n/128)); the two bounds are within a few units.
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"

#define DISPATCH_SUM_ROW_BYTES 128
#define DISPATCH_SUM_ROWS 16

#define DISPATCH_KERNELS_SUM(NAME, T, S)                                               \
    enum { NAME##_R = DISPATCH_SUM_ROW_BYTES / (int)sizeof(T),                         \
           NAME##_V = NAME##_R / DISPATCH_KERNELS_SUM_LANES_##S,                       \
           NAME##_LEAF = NAME##_R * DISPATCH_SUM_ROWS };                               \
    /* One leaf of n <= LEAF contiguous elements. */                                   \
    static T NAME##_leaf_(const T *p, intptr_t n)                                      \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        dv_##S acc[NAME##_V];                                                          \
        for (int j = 0; j < NAME##_V; j++) acc[j] = dv_set1_##S((T)-0.0);              \
        intptr_t i = 0;                                                                \
        for (; i + NAME##_R <= n; i += NAME##_R)                                       \
            for (int j = 0; j < NAME##_V; j++)                                         \
                acc[j] = dv_add_##S(acc[j], dv_load_##S(p + i + j * L));               \
        if (i < n) {                                                                   \
            T row[NAME##_R];                                                           \
            for (intptr_t j = 0; j < NAME##_R; j++) row[j] = i + j < n ? p[i + j] : (T)-0.0; \
            for (int j = 0; j < NAME##_V; j++)                                         \
                acc[j] = dv_add_##S(acc[j], dv_load_##S(row + j * L));                 \
        }                                                                              \
        T lanes[NAME##_R];                                                             \
        for (int j = 0; j < NAME##_V; j++) dv_store_##S(lanes + j * L, acc[j]);        \
        for (int w = NAME##_R / 2; w >= 1; w /= 2)                                     \
            for (int j = 0; j < w; j++) lanes[j] = lanes[j] + lanes[j + w];            \
        return lanes[0];                                                               \
    }                                                                                  \
    static T NAME##_rec_(const char *p, intptr_t stride, intptr_t n)                   \
    {                                                                                  \
        if (n <= NAME##_LEAF) {                                                        \
            if (stride == (intptr_t)sizeof(T)) return NAME##_leaf_((const T *)p, n);   \
            T buf[NAME##_LEAF];                                                        \
            for (intptr_t i = 0; i < n; i++) memcpy(&buf[i], p + i * stride, sizeof(T)); \
            return NAME##_leaf_(buf, n);                                               \
        }                                                                              \
        /* Split at a multiple of the leaf: depends on n only. */                      \
        intptr_t h = ((n / NAME##_LEAF + 1) / 2) * NAME##_LEAF;                        \
        T lo = NAME##_rec_(p, stride, h);                                              \
        T hi = NAME##_rec_(p + h * stride, stride, n - h);                             \
        return lo + hi;                                                                \
    }                                                                                  \
    T DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n)    \
    {                                                                                  \
        if (n <= 0) return (T)0;                                                       \
        return NAME##_rec_(p, stride, n);                                              \
    }

#define DISPATCH_KERNELS_SUM_LANES_f32 DV_LANES_F32
#define DISPATCH_KERNELS_SUM_LANES_f64 DV_LANES_F64

float DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32)(const char *p, intptr_t stride, intptr_t n);
double DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64)(const char *p, intptr_t stride, intptr_t n);
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_f32, float, f32)
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_f64, double, f64)
