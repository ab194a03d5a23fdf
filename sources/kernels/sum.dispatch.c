/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * sum of float32/float64, blocked and pairwise, the same bits on every target.
 *
 * Note [Sum order independent of the vector width]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A leaf of up to NAME##_LEAF elements (DISPATCH_KERNELS_SUM below:
 * DISPATCH_SUM_ROWS rows) is read as rows of 256 bytes (64 float32 or 32
 * float64 "virtual lanes"); lane j accumulates elements
 * j, j+R, j+2R, ... in order, whatever the hardware width (4 zmm, 8 ymm or
 * 16 xmm registers, or 64 scalars hold the same lanes: four or more
 * independent chains of adds on every x86 target), then the lanes are added
 * in a fixed tree (32+32, 16+16, ...; the levels wider than one register
 * are whole-register adds). A longer range is split in two at
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
 * float32: L = 1024, R = 64: h = 16 + 6 + ceil(log2(n/1024)), e.g. n = 2^24:
 * h = 36. NumPy's pairwise sum (8 accumulators, 128-element blocks) has
 * h = 16 + 3 + ceil(log2(n/128)); the two bounds are within a few units.
 */
#include <stdint.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/narrow_float.h"
#include "dispatch/reduce_kernel_table.h"
#include "gather_bits.h"
#include "narrow_vector.h"
#include "pair_element.h"
#include "simd.h"

#define DISPATCH_SUM_ROW_BYTES 256
#define DISPATCH_SUM_ROWS 16
/* Note [Two streams]
 * ~~~~~~~~~~~~~~~~~~
 * Past the caches a single core reads faster from two sequential streams
 * than from one: on the development machine (AMD Zen 2, 1 thread, 64 MiB of
 * float32 in 2 MiB pages) one stream of 4 KiB leaves took 5.0-5.7 ms, two
 * streams read in one loop 4.1-4.4 ms, and a row sum of 2 KiB rows 5.3-5.5
 * ms against 4.3-4.6 ms for two rows half the matrix apart. The streams must
 * be far apart: 2 and 4 KiB apart were slower than one stream (8.0 and
 * 5.2-5.8 ms), from 32 KiB apart on they gave the full gain. So a contiguous
 * range of up to DISPATCH_SUM_BLOCK leaves reads its leaves in pairs, one
 * from each half of the range, and a row sum reads row r with row
 * r + nrows / 2, when the two are DISPATCH_SUM_STREAM_GAP bytes apart or
 * more. Each leaf keeps its own accumulators and order, so the bits are
 * those of one leaf at a time. The pair needs two rows of lanes in registers
 * (16 ymm: all of the AVX2 target's, where gcc keeps two of them on the
 * stack, a load and a store per 512 bytes read; 16 of the AVX-512 target's
 * 32): on the 128-bit targets the two leaves are summed one after the other.
 * max and min do the same (the EXT kernels): a long range is read from its
 * two halves at once, rows two at a time, four chains per stream; they are
 * exact, so only the speed changes (16M float32 max, 1 thread: 1.03x to
 * 0.82x torch's time). */
#define DISPATCH_SUM_BLOCK 64
#define DISPATCH_SUM_STREAM_GAP (32 << 10)
/* 1 when two streams `bytes` apart (either way) are far enough to pair. */
static inline int dispatch_sum_far_apart(intptr_t bytes)
{
    return bytes >= DISPATCH_SUM_STREAM_GAP || bytes <= -DISPATCH_SUM_STREAM_GAP;
}
#if DV_WIDTH >= 32
#define DISPATCH_SUM_TWO_STREAMS 1
#else
#define DISPATCH_SUM_TWO_STREAMS 0
#endif

/* The lane tree of one register, lane j + lane j + w for w = L/2, ..., 1:
 * on x86 the halves of the register, added in registers (the same pairs, so
 * the same bits as the scalar tree); elsewhere the scalar tree itself. */
#if DV_WIDTH >= 16 && !defined(DV_NEON)
static inline float dispatch_sum_tree128_f32(__m128 s)
{
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));              /* w = 2 */
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));          /* w = 1 */
    return _mm_cvtss_f32(s);
}
static inline double dispatch_sum_tree128_f64(__m128d s)
{
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s))); /* w = 1 */
}
#endif
#if DV_WIDTH >= 32
static inline float dispatch_sum_tree256_f32(__m256 v)
{
    return dispatch_sum_tree128_f32(_mm_add_ps(_mm256_castps256_ps128(v),
                                               _mm256_extractf128_ps(v, 1)));
}
static inline double dispatch_sum_tree256_f64(__m256d v)
{
    return dispatch_sum_tree128_f64(_mm_add_pd(_mm256_castpd256_pd128(v),
                                               _mm256_extractf128_pd(v, 1)));
}
#endif
static inline float dispatch_sum_tree_f32(dv_f32 v)
{
#if DV_WIDTH == 64
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return dispatch_sum_tree256_f32(_mm256_add_ps(lo, hi));
#elif DV_WIDTH == 32
    return dispatch_sum_tree256_f32(v);
#elif DV_WIDTH == 16 && !defined(DV_NEON)
    return dispatch_sum_tree128_f32(v);
#else
    float lanes[DV_LANES_F32];
    dv_store_f32(lanes, v);
    for (int w = DV_LANES_F32 / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) lanes[j] = lanes[j] + lanes[j + w];
    return lanes[0];
#endif
}
static inline double dispatch_sum_tree_f64(dv_f64 v)
{
#if DV_WIDTH == 64
    return dispatch_sum_tree256_f64(
        _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1)));
#elif DV_WIDTH == 32
    return dispatch_sum_tree256_f64(v);
#elif DV_WIDTH == 16 && !defined(DV_NEON)
    return dispatch_sum_tree128_f64(v);
#else
    double lanes[DV_LANES_F64];
    dv_store_f64(lanes, v);
    for (int w = DV_LANES_F64 / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) lanes[j] = lanes[j] + lanes[j + w];
    return lanes[0];
#endif
}

/*
 * Note [Sum leaves in 256-bit registers]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The sum's leaves load and add only, so past L1 they run at the cache's or
 * the memory's speed, and on the AVX-512 target they use 256-bit registers
 * (8 ymm accumulators hold the row's lanes; Note [Sum order independent of
 * the vector width] makes that the same bits). Timed on the development
 * machine (AMD Zen 4, 1 thread), the AVX2 variant's sum of 1M elements took
 * 0.88-0.96x the AVX-512 variant's time (float32 and float64, full and
 * dim=-1), as PyTorch, whose sum kernel keeps AVX2 on AVX-512 CPUs, found
 * ("slower with AVX512", SumKernel.cpp). max/min and the column reductions
 * keep 512-bit registers: there AVX-512 took 0.73-0.95x the AVX2 time.
 */
#if DV_WIDTH == 64
typedef __m256 ds_f32;
typedef __m256d ds_f64;
#define ds_load_f32 _mm256_loadu_ps
#define ds_load_f64 _mm256_loadu_pd
#define ds_add_f32 _mm256_add_ps
#define ds_add_f64 _mm256_add_pd
#define ds_set1_f32 _mm256_set1_ps
#define ds_set1_f64 _mm256_set1_pd
#define ds_tree_f32 dispatch_sum_tree256_f32
#define ds_tree_f64 dispatch_sum_tree256_f64
#define DS_LANES_f32 8
#define DS_LANES_f64 4
#else
typedef dv_f32 ds_f32;
typedef dv_f64 ds_f64;
#define ds_load_f32 dv_load_f32
#define ds_load_f64 dv_load_f64
#define ds_add_f32 dv_add_f32
#define ds_add_f64 dv_add_f64
#define ds_set1_f32 dv_set1_f32
#define ds_set1_f64 dv_set1_f64
#define ds_tree_f32 dispatch_sum_tree_f32
#define ds_tree_f64 dispatch_sum_tree_f64
#define DS_LANES_f32 DV_LANES_F32
#define DS_LANES_f64 DV_LANES_F64
#endif
#define DISPATCH_AS_STORED(x) (x)

/*
 * Note [Sums of every other element]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A row of every other element (x[:, ::2], x[1::2]) reads as many cache
 * lines as the whole row, so its sum costs what the whole row's does only
 * if nothing else is paid per element. Gathered into a buffer first (the
 * copy loop's shuffles, then the leaf), float64 sum() of a (512, 1024)
 * matrix's every other column took 89-93 us against torch's 47 (its sum of
 * the whole matrix: 47 as well). So a leaf two elements apart loads its
 * lanes by EVENV: the same DS_LANES_S consecutive elements of the view as
 * a contiguous load gives, in the same lanes and order (the bits of Note
 * [Sum order independent of the vector width]), from two loads sorted by a
 * blend and a permutation, or one masked load. Nothing past the view's last
 * element p[2L - 2] is read (it may be the last of its memory): the masked
 * load leaves the next out, the second load starts one element back.
 * 51-53 us there; float32 47 -> 26 (torch 41).
 */
/* DS_LANES_S elements two apart (p[0], p[2], ...) as one vector (the note
 * above). */
static inline ds_f32 ds_load_even_f32(const float *p)
{
#if DV_WIDTH == 64
    const __m512 v = _mm512_maskz_loadu_ps(0x7fff, p);
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(
        _mm512_set_epi32(15, 13, 11, 9, 7, 5, 3, 1, 14, 12, 10, 8, 6, 4, 2, 0), v));
#elif DV_WIDTH == 32
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 7); /* p[7..14] */
    const __m256 m = _mm256_blend_ps(a, b, 0xaa); /* p0 p8 p2 p10 p4 p12 p6 p14 */
    return _mm256_permutevar8x32_ps(m, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
#elif DV_WIDTH == 16 && !defined(DV_NEON)
    const __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 3); /* p[3..6] */
    return _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 2, 0));
#else
    float f[DS_LANES_f32];
    for (int k = 0; k < DS_LANES_f32; k++) f[k] = p[2 * k];
    return ds_load_f32(f);
#endif
}
static inline ds_f64 ds_load_even_f64(const double *p)
{
#if DV_WIDTH == 64
    const __m512d v = _mm512_maskz_loadu_pd(0x7f, p);
    return _mm512_castpd512_pd256(
        _mm512_permutexvar_pd(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), v));
#elif DV_WIDTH == 32
    const __m256d a = _mm256_loadu_pd(p), b = _mm256_loadu_pd(p + 3); /* p[3..6] */
    const __m256d m = _mm256_blend_pd(a, b, 0xa);                     /* p0 p4 p2 p6 */
    return _mm256_permute4x64_pd(m, _MM_SHUFFLE(3, 1, 2, 0));
#elif DV_WIDTH == 16 && !defined(DV_NEON)
    return _mm_shuffle_pd(_mm_loadu_pd(p), _mm_loadu_pd(p + 1), 2); /* p0, p2 */
#else
    double f[DS_LANES_f64];
    for (int k = 0; k < DS_LANES_f64; k++) f[k] = p[2 * k];
    return ds_load_f64(f);
#endif
}

/* DS_LANES_f32 halves widened to one ds_f32 (a 256-bit register on the AVX2
 * and AVX-512 targets: vcvtph2ps; elsewhere narrow_vector.h's dk_h2f, whose
 * selects the compiler builds in lanes: the sum of (512, 512) float16 on
 * SSE4.2 took 648 us through the library's conversion, an element at a time). */
static inline ds_f32 dispatch_ds_load_half(const uint16_t *p)
{
#if defined(__F16C__) && (DV_WIDTH == 32 || DV_WIDTH == 64)
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
#else
    float f[DS_LANES_f32];
    for (int k = 0; k < DS_LANES_f32; k++) f[k] = dk_h2f(p[k]); /* by lanes, branch-free */
    return ds_load_f32(f);
#endif
}

/* DV_LANES_F32 halves widened to one dv_f32, for the column kernels. */
static inline dv_f32 dispatch_load_half_f32(const uint16_t *p)
{
#if defined(__F16C__) && DV_WIDTH == 32
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
#elif defined(__F16C__) && DV_WIDTH == 64
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
#else
    float f[DV_LANES_F32];
    for (int k = 0; k < DV_LANES_F32; k++) f[k] = dk_h2f(p[k]);
    return dv_load_f32(f);
#endif
}


/* The same for bfloat16: its bits are a float's top half (a shift, exact). */
static inline ds_f32 dispatch_ds_load_bf16(const uint16_t *p)
{
#if defined(__AVX2__) && (DV_WIDTH == 32 || DV_WIDTH == 64)
    return dk_bf16_widen_8(p);
#elif defined(__SSE2__) && DV_WIDTH == 16
    return dk_bf16_widen_4(p);
#else
    float f[DS_LANES_f32];
    for (int k = 0; k < DS_LANES_f32; k++) f[k] = dispatch_bfloat16_to_float_inline(p[k]);
    return ds_load_f32(f);
#endif
}

static inline dv_f32 dispatch_load_bf16_f32(const uint16_t *p)
{
#if defined(__AVX2__) && DV_WIDTH == 32
    return dk_bf16_widen_8(p);
#elif defined(__AVX512F__) && DV_WIDTH == 64
    return dk_bf16_widen_16(p);
#elif defined(__SSE2__) && DV_WIDTH == 16
    return dk_bf16_widen_4(p);
#else
    float f[DV_LANES_F32];
    for (int k = 0; k < DV_LANES_F32; k++) f[k] = dispatch_bfloat16_to_float_inline(p[k]);
    return dv_load_f32(f);
#endif
}

/* The narrow floats' even elements: packed, then widened as a run. */
static inline ds_f32 dispatch_ds_load_even_half(const uint16_t *p)
{
    uint16_t t[DS_LANES_f32];
    for (int k = 0; k < DS_LANES_f32; k++) t[k] = p[2 * k];
    return dispatch_ds_load_half(t);
}
static inline ds_f32 dispatch_ds_load_even_bf16(const uint16_t *p)
{
    uint16_t t[DS_LANES_f32];
    for (int k = 0; k < DS_LANES_f32; k++) t[k] = p[2 * k];
    return dispatch_ds_load_bf16(t);
}

#define DISPATCH_KERNELS_SUM_LANES_f32 DV_LANES_F32
#define DISPATCH_KERNELS_SUM_LANES_f64 DV_LANES_F64

/* The sum over a strided range of elements of type E, accumulated in T (S
 * its simd.h suffix): LOADV(q) reads DS_LANES_S elements at q as one ds_S
 * of T, EVENV(q) the same count two apart, TO_T(x) one element. float32
 * and float64 add as stored; float16 adds in float32 (every load widening
 * halves), so its bits are those of summing a float32 copy, without
 * writing one. The row of lanes is 256
 * bytes of T whatever E is: float16 runs the float32 tree. */
#define DISPATCH_KERNELS_SUM(NAME, E, T, S, LOADV, EVENV, TO_T)                        \
    enum { NAME##_R = DISPATCH_SUM_ROW_BYTES / (int)sizeof(T),                         \
           NAME##_V = NAME##_R / DS_LANES_##S,                                         \
           NAME##_LEAF = NAME##_R * DISPATCH_SUM_ROWS };                               \
    /* A leaf's partial last row (elements i..n-1, `step` apart, padded with */      \
    /* -0.0), then its lane tree: the levels above one vector are whole-vector */     \
    /* adds (lane j + lane j + w for w >= L), the rest scalar; the same pairs. */      \
    static inline T NAME##_finish_(ds_##S *acc, const E *p, intptr_t step, intptr_t i,  \
                                   intptr_t n)                                         \
    {                                                                                  \
        const intptr_t L = DS_LANES_##S;                                               \
        if (i < n) {                                                                   \
            T row[NAME##_R];                                                           \
            for (intptr_t j = 0; j < NAME##_R; j++)                                    \
                row[j] = i + j < n ? TO_T(p[(i + j) * step]) : (T)-0.0;                \
            for (int j = 0; j < NAME##_V; j++)                                         \
                acc[j] = ds_add_##S(acc[j], ds_load_##S(row + j * L));                 \
        }                                                                              \
        for (int w = NAME##_V / 2; w >= 1; w /= 2)                                     \
            for (int j = 0; j < w; j++) acc[j] = ds_add_##S(acc[j], acc[j + w]);       \
        return ds_tree_##S(acc[0]);                                                    \
    }                                                                                  \
    /* One leaf of n <= LEAF elements `step` (1 or 2, a constant) apart: */            \
    /* loaded by LOADV, or two apart by EVENV in the same lanes */                     \
    /* (Note [Sums of every other element]). */                                        \
    static inline __attribute__((always_inline)) T NAME##_leaf_by_(const E *p, intptr_t n, \
                                                                    const intptr_t step) \
    {                                                                                  \
        const intptr_t L = DS_LANES_##S;                                               \
        ds_##S acc[NAME##_V];                                                          \
        for (int j = 0; j < NAME##_V; j++) acc[j] = ds_set1_##S((T)-0.0);              \
        intptr_t i = 0;                                                                \
        for (; i + NAME##_R <= n; i += NAME##_R)                                       \
            for (int j = 0; j < NAME##_V; j++)                                         \
                acc[j] = ds_add_##S(acc[j], step == 1 ? LOADV(p + i + j * L)           \
                                                      : EVENV(p + 2 * (i + j * L)));   \
        return NAME##_finish_(acc, p, step, i, n);                                     \
    }                                                                                  \
    static T NAME##_leaf_(const E *p, intptr_t n) { return NAME##_leaf_by_(p, n, 1); }  \
    static T NAME##_even_leaf_(const E *p, intptr_t n) { return NAME##_leaf_by_(p, n, 2); } \
    /* Two leaves of n <= LEAF elements, at p and q, read in one loop (Note */         \
    /* [Two streams]): out[0] and out[1] are leaf_(p, n) and leaf_(q, n). */           \
    static void NAME##_leaf2_(const E *p, const E *q, intptr_t n, T *out)              \
    {                                                                                  \
        if (!DISPATCH_SUM_TWO_STREAMS) {                                               \
            out[0] = NAME##_leaf_(p, n);                                               \
            out[1] = NAME##_leaf_(q, n);                                               \
            return;                                                                    \
        }                                                                              \
        const intptr_t L = DS_LANES_##S;                                               \
        ds_##S a[NAME##_V], b[NAME##_V];                                               \
        for (int j = 0; j < NAME##_V; j++) a[j] = b[j] = ds_set1_##S((T)-0.0);         \
        intptr_t i = 0;                                                                \
        for (; i + NAME##_R <= n; i += NAME##_R) {                                     \
            for (int j = 0; j < NAME##_V; j++) a[j] = ds_add_##S(a[j], LOADV(p + i + j * L)); \
            for (int j = 0; j < NAME##_V; j++) b[j] = ds_add_##S(b[j], LOADV(q + i + j * L)); \
        }                                                                              \
        out[0] = NAME##_finish_(a, p, 1, i, n);                                        \
        out[1] = NAME##_finish_(b, q, 1, i, n);                                        \
    }                                                                                  \
    /* The tree over leaf values v[] of a range of n elements: rec_'s splits. */       \
    static T NAME##_combine_(const T *v, intptr_t n)                                   \
    {                                                                                  \
        if (n <= NAME##_LEAF) return v[0];                                             \
        intptr_t h = ((n / NAME##_LEAF + 1) / 2) * NAME##_LEAF;                        \
        T lo = NAME##_combine_(v, h);                                                  \
        T hi = NAME##_combine_(v + h / NAME##_LEAF, n - h);                            \
        return lo + hi;                                                                \
    }                                                                                  \
    /* A contiguous range of up to DISPATCH_SUM_BLOCK leaves: its leaves in */         \
    /* pairs from its two halves, then rec_'s tree over their values. */               \
    static T NAME##_block_(const E *p, intptr_t n)                                     \
    {                                                                                  \
        T v[DISPATCH_SUM_BLOCK];                                                       \
        const intptr_t m = n / NAME##_LEAF, half = (m + 1) / 2;                        \
        intptr_t paired = 0; /* leaves [0, paired) and [half, half + paired) */        \
        if (dispatch_sum_far_apart((m / 2) * NAME##_LEAF * (intptr_t)sizeof(E)))       \
            for (; paired + half < m; paired++) {                                      \
                T two[2];                                                              \
                NAME##_leaf2_(p + paired * NAME##_LEAF, p + (paired + half) * NAME##_LEAF, \
                              NAME##_LEAF, two);                                       \
                v[paired] = two[0];                                                    \
                v[paired + half] = two[1];                                             \
            }                                                                          \
        for (intptr_t k = paired; k < half; k++) v[k] = NAME##_leaf_(p + k * NAME##_LEAF, NAME##_LEAF); \
        for (intptr_t k = half + paired; k < m; k++)                                   \
            v[k] = NAME##_leaf_(p + k * NAME##_LEAF, NAME##_LEAF);                     \
        if (m * NAME##_LEAF < n) v[m] = NAME##_leaf_(p + m * NAME##_LEAF, n - m * NAME##_LEAF); \
        return NAME##_combine_(v, n);                                                  \
    }                                                                                  \
    /* A strided leaf, gathered first (out of line: its buffer stays off the  */       \
    /* contiguous path's stack frames; gather_bits.h's typed loads, which */           \
    /* vectorize, where one-element memcpys ran at 0.6 ns an element). */              \
    static __attribute__((noinline)) T NAME##_gather_leaf_(const char *p, intptr_t stride, \
                                                           intptr_t n)                 \
    {                                                                                  \
        E buf[NAME##_LEAF];                                                            \
        dk_gather_bits(buf, p, stride, (intptr_t)sizeof(E), n);                        \
        return NAME##_leaf_(buf, n);                                                   \
    }                                                                                  \
    static T NAME##_rec_(const char *p, intptr_t stride, intptr_t n)                   \
    {                                                                                  \
        const int contiguous = stride == (intptr_t)sizeof(E);                          \
        if (n <= NAME##_LEAF) {                                                        \
            if (contiguous) return NAME##_leaf_((const E *)(const void *)p, n);        \
            if (stride == 2 * (intptr_t)sizeof(E) && (uintptr_t)p % sizeof(E) == 0)   \
                return NAME##_even_leaf_((const E *)(const void *)p, n);               \
            return NAME##_gather_leaf_(p, stride, n);                                  \
        }                                                                              \
        if (contiguous && n <= DISPATCH_SUM_BLOCK * NAME##_LEAF)                       \
            return NAME##_block_((const E *)(const void *)p, n);                       \
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
    }                                                                                  \
    /* nrows sums of n elements `stride` bytes apart, the rows rstep bytes */          \
    /* apart, into out (ostep bytes apart): each row's bits are NAME's. Short */       \
    /* contiguous rows far enough apart are read two at a time, row r with */          \
    /* row r + nrows / 2 (Note [Two streams]). */                                      \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_rows)(const char *p, intptr_t rstep,       \
                                                  intptr_t stride, intptr_t n,         \
                                                  intptr_t nrows, char *out, intptr_t ostep) \
    {                                                                                  \
        const intptr_t half = nrows / 2;                                               \
        const intptr_t gap = half * rstep;                                             \
        intptr_t r = 0;                                                                \
        if (stride == (intptr_t)sizeof(E) && n > 0 && n <= NAME##_LEAF &&             \
            dispatch_sum_far_apart(gap)) {                                             \
            for (; r < half; r++) {                                                    \
                T two[2];                                                              \
                NAME##_leaf2_((const E *)(const void *)(p + r * rstep),                \
                              (const E *)(const void *)(p + (r + half) * rstep), n, two); \
                memcpy(out + r * ostep, &two[0], sizeof(T));                           \
                memcpy(out + (r + half) * ostep, &two[1], sizeof(T));                  \
            }                                                                          \
            r = 2 * half;                                                              \
        }                                                                              \
        for (; r < nrows; r++) {                                                       \
            T s = DISPATCH_CPU_DISPATCH_CURFX(NAME)(p + r * rstep, stride, n);         \
            memcpy(out + r * ostep, &s, sizeof(T));                                    \
        }                                                                              \
    }

float DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32)(const char *p, intptr_t stride, intptr_t n);
double DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64)(const char *p, intptr_t stride, intptr_t n);
float DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f16)(const char *p, intptr_t stride, intptr_t n);
#define DISPATCH_SUM_ROWS_PROTO(NAME)                                                      \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_rows)(const char *p, intptr_t rstep, intptr_t stride, \
                                                  intptr_t n, intptr_t nrows, char *out,   \
                                                  intptr_t ostep);
DISPATCH_SUM_ROWS_PROTO(dispatch_kernel_sum_f32)
DISPATCH_SUM_ROWS_PROTO(dispatch_kernel_sum_f64)
DISPATCH_SUM_ROWS_PROTO(dispatch_kernel_sum_f16)
float DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_bf16)(const char *p, intptr_t stride, intptr_t n);
DISPATCH_SUM_ROWS_PROTO(dispatch_kernel_sum_bf16)
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_f32, float, float, f32, ds_load_f32, ds_load_even_f32,
                     DISPATCH_AS_STORED)
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_f64, double, double, f64, ds_load_f64, ds_load_even_f64,
                     DISPATCH_AS_STORED)
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_f16, uint16_t, float, f32, dispatch_ds_load_half,
                     dispatch_ds_load_even_half, dispatch_half_to_float_inline)
DISPATCH_KERNELS_SUM(dispatch_kernel_sum_bf16, uint16_t, float, f32, dispatch_ds_load_bf16,
                     dispatch_ds_load_even_bf16, dispatch_bfloat16_to_float_inline)

/*
 * Note [Column reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * The outer-dim reduction (sum(dim=0) of a row-major matrix): rows of ncols
 * contiguous elements, rstride bytes apart, reduced to one row. As
 * PyTorch's reduction kernels do, the loop runs across the contiguous
 * columns, K vectors of columns at a time held in registers, and down the
 * rows, so every load is a full vector of a contiguous row and no element
 * is gathered; a leaf of rows is finished for all ncols columns before the
 * next, so memory is read in address order. Each column is summed on its
 * own, in an order fixed by nrows alone: leaves of DISPATCH_COLS_LEAF rows
 * added in row order starting from -0.0, and a longer run of rows split at
 * a multiple of the leaf ((nrows / LEAF + 1) / 2 leaves in the first half,
 * as the row sum splits) and the halves added. A column therefore gets the
 * same bits whichever vector (or scalar tail) holds it, on every target, for
 * any split of the columns between calls or threads, and for a split of
 * the rows along the same tree (sources/iterator/reduce_float.c cuts the top
 * levels into separate calls). Error bound as Note [Sum order independent
 * of the vector width] with h = LEAF + ceil(log2(nrows / LEAF)).
 * max and min go down the rows in order with simd.h's NaN rule (NaN
 * propagates); they need no tree.
 *
 * Note [Column streams]
 * ~~~~~~~~~~~~~~~~~~~~~
 * Holding columns in registers down a leaf reads each leaf's rows in
 * short pieces (256 bytes of 16 rows, then the next 256), which costs
 * nothing from a cache but halves the rate from memory: sum(dim=0) of
 * (32768, 512) float32 took 3.9-4.2 ms against NumPy's 1.9-2.3, which adds
 * whole rows into a row of results. With DISPATCH_COLS_STREAMS (set by the
 * engines for an input of DISPATCH_COLS_STREAM_BYTES or more) the kernels
 * read whole rows in address order, as NumPy does, and two ranges of rows
 * at once (the two halves of the tree, each leaf beside its twin in the
 * other half), as Note [Two streams] does for rows: one core keeps more
 * reads in flight from two streams than from one. 2.2 ms there; one stream
 * alone 2.7. The tree and each leaf's row order are unchanged, so the bits
 * are the same; max and min fold the two halves apart and join them, exact.
 * Below the threshold the register form stays: in L2 or L3 it is up to
 * 1.4x faster (1024 rows: 32 against 42 us).
 */
/* The instruction's max/min (x86: the second operand when either is NaN)
 * and its horizontal form over one register, for a fast pass of max/min
 * over contiguous elements that tracks NaN and infinity apart (x - x is 0
 * for every other x): a row holding either is done again with simd.h's
 * exact rule. Elsewhere only the exact pass runs. */
#if DV_WIDTH >= 16 && !defined(DV_NEON)
static inline float dispatch_hext128_f32(__m128 s, int is_min)
{
    __m128 t = _mm_movehl_ps(s, s);
    s = is_min ? _mm_min_ps(s, t) : _mm_max_ps(s, t);
    t = _mm_shuffle_ps(s, s, 1);
    s = is_min ? _mm_min_ss(s, t) : _mm_max_ss(s, t);
    return _mm_cvtss_f32(s);
}
static inline double dispatch_hext128_f64(__m128d s, int is_min)
{
    __m128d t = _mm_unpackhi_pd(s, s);
    return _mm_cvtsd_f64(is_min ? _mm_min_sd(s, t) : _mm_max_sd(s, t));
}
#endif
#if DV_WIDTH == 64
    #define DISPATCH_HAVE_RAW_EXT 1
    #define DISPATCH_RAW_MAX_f32 _mm512_max_ps
    #define DISPATCH_RAW_MIN_f32 _mm512_min_ps
    #define DISPATCH_RAW_MAX_f64 _mm512_max_pd
    #define DISPATCH_RAW_MIN_f64 _mm512_min_pd
static inline float dispatch_hext_f32(__m512 v, int is_min)
{
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    __m256 m = is_min ? _mm256_min_ps(lo, hi) : _mm256_max_ps(lo, hi);
    __m128 a = _mm256_castps256_ps128(m), b = _mm256_extractf128_ps(m, 1);
    return dispatch_hext128_f32(is_min ? _mm_min_ps(a, b) : _mm_max_ps(a, b), is_min);
}
static inline double dispatch_hext_f64(__m512d v, int is_min)
{
    __m256d lo = _mm512_castpd512_pd256(v), hi = _mm512_extractf64x4_pd(v, 1);
    __m256d m = is_min ? _mm256_min_pd(lo, hi) : _mm256_max_pd(lo, hi);
    __m128d a = _mm256_castpd256_pd128(m), b = _mm256_extractf128_pd(m, 1);
    return dispatch_hext128_f64(is_min ? _mm_min_pd(a, b) : _mm_max_pd(a, b), is_min);
}
#elif DV_WIDTH == 32
    #define DISPATCH_HAVE_RAW_EXT 1
    #define DISPATCH_RAW_MAX_f32 _mm256_max_ps
    #define DISPATCH_RAW_MIN_f32 _mm256_min_ps
    #define DISPATCH_RAW_MAX_f64 _mm256_max_pd
    #define DISPATCH_RAW_MIN_f64 _mm256_min_pd
static inline float dispatch_hext_f32(__m256 m, int is_min)
{
    __m128 a = _mm256_castps256_ps128(m), b = _mm256_extractf128_ps(m, 1);
    return dispatch_hext128_f32(is_min ? _mm_min_ps(a, b) : _mm_max_ps(a, b), is_min);
}
static inline double dispatch_hext_f64(__m256d m, int is_min)
{
    __m128d a = _mm256_castpd256_pd128(m), b = _mm256_extractf128_pd(m, 1);
    return dispatch_hext128_f64(is_min ? _mm_min_pd(a, b) : _mm_max_pd(a, b), is_min);
}
#elif DV_WIDTH == 16 && !defined(DV_NEON)
    #define DISPATCH_HAVE_RAW_EXT 1
    #define DISPATCH_RAW_MAX_f32 _mm_max_ps
    #define DISPATCH_RAW_MIN_f32 _mm_min_ps
    #define DISPATCH_RAW_MAX_f64 _mm_max_pd
    #define DISPATCH_RAW_MIN_f64 _mm_min_pd
    #define dispatch_hext_f32 dispatch_hext128_f32
    #define dispatch_hext_f64 dispatch_hext128_f64
#else
    #define DISPATCH_HAVE_RAW_EXT 0
    #define DISPATCH_RAW_MAX_f32 dv_max_f32
    #define DISPATCH_RAW_MIN_f32 dv_min_f32
    #define DISPATCH_RAW_MAX_f64 dv_max_f64
    #define DISPATCH_RAW_MIN_f64 dv_min_f64
static inline float dispatch_hext_f32(dv_f32 v, int is_min)
{
    float l[DV_LANES_F32], r;
    dv_store_f32(l, v);
    r = l[0];
    for (int j = 1; j < DV_LANES_F32; j++) r = is_min ? dv_smin_f32(r, l[j]) : dv_smax_f32(r, l[j]);
    return r;
}
static inline double dispatch_hext_f64(dv_f64 v, int is_min)
{
    double l[DV_LANES_F64], r;
    dv_store_f64(l, v);
    r = l[0];
    for (int j = 1; j < DV_LANES_F64; j++) r = is_min ? dv_smin_f64(r, l[j]) : dv_smax_f64(r, l[j]);
    return r;
}
#endif

#define DISPATCH_COLS_LEAF 16
#define DISPATCH_COLS_K 8

/* The fast pass of max/min over n >= DISPATCH_COLS_K vectors of contiguous
 * elements: the instruction's max/min in K independent chains, and beside
 * them the plain sum of every element, which is NaN when an element is NaN
 * (or when infinities of both signs meet: then the exact pass runs, which is
 * only slower). 1 and *r the answer when the sum is not NaN; 0 otherwise.
 * Its own function, eight named accumulators (DISPATCH_COLS_K), no arrays:
 * gcc kept arrays of them on the stack, and short rows (max over dim=1)
 * paid those spills on every call. */
#define DISPATCH_KERNELS_FAST_EXT(NAME, T, S, which, WHICH, BY, LOADV, K)              \
    static int NAME##_fast##BY##_##which##_(const T *p, intptr_t n, T *r)              \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        dv_##S a0 = LOADV(p), a1 = LOADV(p + (K) * L), a2 = LOADV(p + (K) * 2 * L),    \
               a3 = LOADV(p + (K) * 3 * L), a4 = LOADV(p + (K) * 4 * L),               \
               a5 = LOADV(p + (K) * 5 * L), a6 = LOADV(p + (K) * 6 * L),               \
               a7 = LOADV(p + (K) * 7 * L);                                            \
        dv_##S c0 = a0, c1 = a1, c2 = a2, c3 = a3, c4 = a4, c5 = a5, c6 = a6, c7 = a7; \
        intptr_t i = 8 * L;                                                            \
        for (; i + 8 * L <= n; i += 8 * L) {                                           \
            const T *q = p + (K) * i;                                                  \
            dv_##S x0 = LOADV(q), x1 = LOADV(q + (K) * L), x2 = LOADV(q + (K) * 2 * L), \
                   x3 = LOADV(q + (K) * 3 * L), x4 = LOADV(q + (K) * 4 * L),           \
                   x5 = LOADV(q + (K) * 5 * L), x6 = LOADV(q + (K) * 6 * L),           \
                   x7 = LOADV(q + (K) * 7 * L);                                        \
            a0 = DISPATCH_RAW_##WHICH##_##S(x0, a0), c0 = dv_add_##S(c0, x0);          \
            a1 = DISPATCH_RAW_##WHICH##_##S(x1, a1), c1 = dv_add_##S(c1, x1);          \
            a2 = DISPATCH_RAW_##WHICH##_##S(x2, a2), c2 = dv_add_##S(c2, x2);          \
            a3 = DISPATCH_RAW_##WHICH##_##S(x3, a3), c3 = dv_add_##S(c3, x3);          \
            a4 = DISPATCH_RAW_##WHICH##_##S(x4, a4), c4 = dv_add_##S(c4, x4);          \
            a5 = DISPATCH_RAW_##WHICH##_##S(x5, a5), c5 = dv_add_##S(c5, x5);          \
            a6 = DISPATCH_RAW_##WHICH##_##S(x6, a6), c6 = dv_add_##S(c6, x6);          \
            a7 = DISPATCH_RAW_##WHICH##_##S(x7, a7), c7 = dv_add_##S(c7, x7);          \
        }                                                                              \
        for (; i + L <= n; i += L) {                                                   \
            dv_##S x = LOADV(p + (K) * i);                                             \
            a0 = DISPATCH_RAW_##WHICH##_##S(x, a0), c0 = dv_add_##S(c0, x);            \
        }                                                                              \
        a0 = DISPATCH_RAW_##WHICH##_##S(a0, a4), a1 = DISPATCH_RAW_##WHICH##_##S(a1, a5); \
        a2 = DISPATCH_RAW_##WHICH##_##S(a2, a6), a3 = DISPATCH_RAW_##WHICH##_##S(a3, a7); \
        a0 = DISPATCH_RAW_##WHICH##_##S(a0, a2), a1 = DISPATCH_RAW_##WHICH##_##S(a1, a3); \
        a0 = DISPATCH_RAW_##WHICH##_##S(a0, a1);                                       \
        c0 = dv_add_##S(dv_add_##S(dv_add_##S(c0, c4), dv_add_##S(c1, c5)),            \
                        dv_add_##S(dv_add_##S(c2, c6), dv_add_##S(c3, c7)));           \
        T c = dispatch_sum_tree_##S(c0);                                               \
        if (c != c) return 0;                                                          \
        T m = dispatch_hext_##S(a0, DISPATCH_IS_MIN_##WHICH);                          \
        for (; i < n; i++) m = dv_s##which##_##S(m, p[(K) * i]);                       \
        *r = m;                                                                        \
        return 1;                                                                      \
    }
#define DISPATCH_IS_MIN_MAX 0
#define DISPATCH_IS_MIN_MIN 1

/* One stream's step in the pair below: four vectors at P folded into M0..M3
 * (max/min) and C0..C3 (sums). */
#define DISPATCH_EXT_FOUR(S, WHICH, LOADV, K, P, M, C)                                 \
    {                                                                                  \
        dv_##S x0 = LOADV(P), x1 = LOADV((P) + (K) * L), x2 = LOADV((P) + (K) * 2 * L), \
               x3 = LOADV((P) + (K) * 3 * L);                                          \
        M##0 = DISPATCH_RAW_##WHICH##_##S(x0, M##0), C##0 = dv_add_##S(C##0, x0);      \
        M##1 = DISPATCH_RAW_##WHICH##_##S(x1, M##1), C##1 = dv_add_##S(C##1, x1);      \
        M##2 = DISPATCH_RAW_##WHICH##_##S(x2, M##2), C##2 = dv_add_##S(C##2, x2);      \
        M##3 = DISPATCH_RAW_##WHICH##_##S(x3, M##3), C##3 = dv_add_##S(C##3, x3);      \
    }
/* One stream's answer: its lanes folded, then its scalar tail [i, n) of P,
 * its elements K apart; bit B of ok set and r[B] written when its sum is not
 * NaN. */
#define DISPATCH_EXT_ANSWER(T, S, which, WHICH, K, P, M, C, B)                         \
    {                                                                                  \
        M##0 = DISPATCH_RAW_##WHICH##_##S(M##0, M##2), M##1 = DISPATCH_RAW_##WHICH##_##S(M##1, M##3); \
        M##0 = DISPATCH_RAW_##WHICH##_##S(M##0, M##1);                                 \
        C##0 = dv_add_##S(dv_add_##S(C##0, C##2), dv_add_##S(C##1, C##3));            \
        T sum = dispatch_sum_tree_##S(C##0);                                           \
        if (sum == sum) {                                                              \
            T m = dispatch_hext_##S(M##0, DISPATCH_IS_MIN_##WHICH);                    \
            for (intptr_t j = i; j < n; j++) m = dv_s##which##_##S(m, (P)[(K) * j]);   \
            r[B] = m, ok |= 1 << (B);                                                  \
        }                                                                              \
    }
/* The fast pass over two ranges of n >= 4 vectors each, at p and q, read in
 * one loop (Note [Two streams]): four chains of max/min and four of sums per
 * range (16 registers). Bit k of the result is set when range k's sum is not
 * NaN; r[k] is then its answer. */
#define DISPATCH_KERNELS_FAST_EXT2(NAME, T, S, which, WHICH, BY, LOADV, K)             \
    static int NAME##_fast2##BY##_##which##_(const T *p, const T *q, intptr_t n, T *r) \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        dv_##S a0 = LOADV(p), a1 = LOADV(p + (K) * L), a2 = LOADV(p + (K) * 2 * L),    \
               a3 = LOADV(p + (K) * 3 * L);                                            \
        dv_##S b0 = LOADV(q), b1 = LOADV(q + (K) * L), b2 = LOADV(q + (K) * 2 * L),    \
               b3 = LOADV(q + (K) * 3 * L);                                            \
        dv_##S c0 = a0, c1 = a1, c2 = a2, c3 = a3, d0 = b0, d1 = b1, d2 = b2, d3 = b3; \
        intptr_t i = 4 * L;                                                            \
        for (; i + 4 * L <= n; i += 4 * L) {                                           \
            DISPATCH_EXT_FOUR(S, WHICH, LOADV, K, p + (K) * i, a, c)                   \
            DISPATCH_EXT_FOUR(S, WHICH, LOADV, K, q + (K) * i, b, d)                   \
        }                                                                              \
        for (; i + L <= n; i += L) {                                                   \
            dv_##S x = LOADV(p + (K) * i), y = LOADV(q + (K) * i);                     \
            a0 = DISPATCH_RAW_##WHICH##_##S(x, a0), c0 = dv_add_##S(c0, x);            \
            b0 = DISPATCH_RAW_##WHICH##_##S(y, b0), d0 = dv_add_##S(d0, y);            \
        }                                                                              \
        int ok = 0;                                                                    \
        DISPATCH_EXT_ANSWER(T, S, which, WHICH, K, p, a, c, 0)                         \
        DISPATCH_EXT_ANSWER(T, S, which, WHICH, K, q, b, d, 1)                         \
        return ok;                                                                     \
    }

/* The column kernels' inner block: four vectors of columns at c (a0..a3,
 * started by the caller) folded by OP down rows [R0, R1) of p (rs bytes
 * apart), in row order, then stored to out + c. */
#define DISPATCH_COLS_FOUR_DOWN(S, E, LOADV, OP, R0, R1)                               \
    for (intptr_t r = (R0); r < (R1); r++) {                                           \
        const E *row = (const E *)(const void *)(p + r * rs) + c;                      \
        a0 = OP(a0, LOADV(row));                                                       \
        a1 = OP(a1, LOADV(row + L));                                                   \
        a2 = OP(a2, LOADV(row + 2 * L));                                               \
        a3 = OP(a3, LOADV(row + 3 * L));                                               \
    }                                                                                  \
    dv_store_##S(out + c, a0);                                                         \
    dv_store_##S(out + c + L, a1);                                                     \
    dv_store_##S(out + c + 2 * L, a2);                                                 \
    dv_store_##S(out + c + 3 * L, a3);

/* Column max or min (`which`): each column folded row by row in row order
 * from its first row (so every split of the columns gives the same bits),
 * the rows taken a leaf of DISPATCH_COLS_LEAF at a time with four vectors
 * of columns held in registers down the leaf, as the sum's leaf; streaming
 * whole rows through the L1 row of results instead took twice the sum's
 * time (amax(dim=0) of (128, 512) float32 14.6-17.5 us against 7.5). */
#define DISPATCH_KERNELS_CEXT(NAME, E, T, S, LOADV, TO_T, which)                      \
    static void NAME##_cext_##which##_(const char *p, intptr_t rs, intptr_t n,         \
                                       intptr_t ncols, T *out)                         \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        const E *first = (const E *)(const void *)p;                                   \
        for (intptr_t k = 0; k < ncols; k++) out[k] = TO_T(first[k]);                  \
        for (intptr_t r0 = 1; r0 < n; r0 += DISPATCH_COLS_LEAF) {                      \
            const intptr_t r1 = n - r0 < DISPATCH_COLS_LEAF ? n : r0 + DISPATCH_COLS_LEAF; \
            intptr_t c = 0;                                                            \
            for (; c + 4 * L <= ncols; c += 4 * L) {                                   \
                dv_##S a0 = dv_load_##S(out + c), a1 = dv_load_##S(out + c + L),       \
                       a2 = dv_load_##S(out + c + 2 * L), a3 = dv_load_##S(out + c + 3 * L); \
                DISPATCH_COLS_FOUR_DOWN(S, E, LOADV, dv_##which##_##S, r0, r1)         \
            }                                                                          \
            for (; c + L <= ncols; c += L) {                                           \
                dv_##S a = dv_load_##S(out + c);                                       \
                for (intptr_t r = r0; r < r1; r++)                                     \
                    a = dv_##which##_##S(a, LOADV((const E *)(const void *)(p + r * rs) + c)); \
                dv_store_##S(out + c, a);                                              \
            }                                                                          \
            for (; c < ncols; c++)                                                     \
                for (intptr_t r = r0; r < r1; r++)                                     \
                    out[c] = dv_s##which##_##S(out[c],                                 \
                                               TO_T(((const E *)(const void *)(p + r * rs))[c])); \
        }                                                                              \
        /* which zero, which NaN: Note [Which zero, which NaN] */                      \
        NAME##_first_cols_(out, p, rs, n, ncols);                                      \
    }

/*
 * Note [Which zero, which NaN]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max and min answer with the first reduced element (in the order of the
 * reduced elements) that equals the extreme: of -0.0 and +0.0 the first met,
 * of several NaNs the first, with its own sign and payload. That is torch's
 * rule for max(x, dim) and argmax (the values are the element at the first
 * index, Note [max and min with indices] in sources/iterator/reduce_indices.c),
 * so amax(x, dim) gives max(x, dim).values bit for bit, on every layout,
 * target and thread count (torch's own full amax of a contiguous tensor
 * picks a zero by SIMD lane, and NumPy's by layout). The vector passes
 * compare lanes in the order their registers hold them, so they find the
 * extreme's value, not which equal element it was; only a zero or a NaN
 * has equals of other bits, so when the answer is one, NAME##_first_ (a
 * range) and NAME##_first_cols_ (columns) find the first equal element from
 * the first one and stop there (at once for a row that starts with it; a
 * whole second pass at worst). Any other
 * answer costs one comparison. Threads and the engine's split points
 * combine parts keeping the earlier part on a tie (iterator.c).
 *
 * Note [The first zero by vectors]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A zero answer is common (non-negative data: counts, ReLU outputs), and
 * the search for the first zero went an element at a time, down each
 * column in turn: amin(dim=0) of (512, 512) float32 integers 0-99 (a zero
 * in each column about 100 rows down) took 96-109 us against 14-15 with no
 * zero (torch 32-38), each step of a column's walk a line of its own;
 * amin(dim=1) 38-50 against 13-14. Now a vector of elements is compared at
 * a time and the lanes that hold read from the mask's bits (dv_mask_bits):
 * a range stops at the first vector with one; columns are resolved
 * together, the rows read in address order, each vector of columns loaded
 * only while one of them is pending.
 */
/* Whether y answers for the extreme m (a NaN or a zero) in the Note's sense:
 * any NaN for a NaN, either zero for a zero (+0.0 == -0.0). */
#define DISPATCH_LIKE_EXTREME(y, m) ((m) != (m) ? (y) != (y) : (y) == (m))
#define DISPATCH_KERNELS_FIRST_COLS(NAME, E, T, S, LOADV, TO_T)                        \
    /* out[k] of ncols columns (rs bytes a row, n rows), each the column's             \
     * extreme: a zero or a NaN becomes the column's first element equal to it,        \
     * rows read in address order (Note [The first zero by vectors]). */               \
    static void NAME##_first_cols_(T *out, const char *p, intptr_t rs, intptr_t n,     \
                                   intptr_t ncols)                                     \
    {                                                                                  \
        enum { W = 64 * 64 }; /* columns a pass: a bit each, 512 bytes of stack */     \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        const dv_##S zero = dv_set1_##S((T)0);                                         \
        for (intptr_t c0 = 0; c0 < ncols; c0 += W) {                                   \
            const intptr_t w = ncols - c0 < W ? ncols - c0 : W;                        \
            uint64_t pending[W / 64] = {0};                                            \
            intptr_t left = 0;                                                         \
            int nans = 0;                                                              \
            for (intptr_t k = 0; k < w; k++)                                           \
                if (!(out[c0 + k] == out[c0 + k] && out[c0 + k] != (T)0)) {            \
                    pending[k / 64] |= (uint64_t)1 << (k % 64), left++;                \
                    nans |= out[c0 + k] != out[c0 + k];                                \
                }                                                                      \
            for (intptr_t r = 0; r < n && left; r++) {                                 \
                const E *row = (const E *)(const void *)(p + r * rs) + c0;             \
                /* a vector of columns at a time (L divides 64: never across two       \
                 * words), the lanes that hold from the mask; the last few columns     \
                 * each tried */                                                       \
                for (intptr_t c = 0; c < w; c += L) {                                  \
                    const intptr_t v = w - c < L ? w - c : L;                          \
                    uint64_t hit = pending[c / 64] >> (c % 64) & (((uint64_t)1 << v) - 1); \
                    if (hit && v == L) {                                               \
                        const dv_##S x = LOADV(row + c);                               \
                        hit &= dv_mask_bits_##S(dv_eq_##S(x, zero)) |                  \
                               (nans ? dv_mask_bits_##S(dv_isnan_##S(x)) : 0u);        \
                    }                                                                  \
                    for (; hit; hit &= hit - 1) {                                      \
                        const intptr_t k = c + __builtin_ctzll(hit);                   \
                        const T m = out[c0 + k], y = TO_T(row[k]);                     \
                        if (DISPATCH_LIKE_EXTREME(y, m)) {                             \
                            out[c0 + k] = y;                                           \
                            pending[k / 64] &= ~((uint64_t)1 << (k % 64));             \
                            left--;                                                    \
                        }                                                              \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }

#define DISPATCH_COLS_SADD(a, b) ((a) + (b))
/* out = OP(out, row) over ncols columns (SOP on the scalar tail): one step
 * of the streaming form (Note [Column streams]). */
#define DISPATCH_COLS_ROW_STEP(NAME, E, T, S, LOADV, TO_T, which, OP, SOP)              \
    static inline void NAME##_crow_##which##_(T *out, const E *row, intptr_t ncols)    \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        intptr_t c = 0;                                                                \
        for (; c + 4 * L <= ncols; c += 4 * L) {                                       \
            dv_##S a0 = OP(dv_load_##S(out + c), LOADV(row + c));                      \
            dv_##S a1 = OP(dv_load_##S(out + c + L), LOADV(row + c + L));              \
            dv_##S a2 = OP(dv_load_##S(out + c + 2 * L), LOADV(row + c + 2 * L));      \
            dv_##S a3 = OP(dv_load_##S(out + c + 3 * L), LOADV(row + c + 3 * L));      \
            dv_store_##S(out + c, a0);                                                 \
            dv_store_##S(out + c + L, a1);                                             \
            dv_store_##S(out + c + 2 * L, a2);                                         \
            dv_store_##S(out + c + 3 * L, a3);                                         \
        }                                                                              \
        for (; c + L <= ncols; c += L)                                                 \
            dv_store_##S(out + c, OP(dv_load_##S(out + c), LOADV(row + c)));           \
        for (; c < ncols; c++) out[c] = SOP(out[c], TO_T(row[c]));                     \
    }

/* Column max or min in the streaming form (Note [Column streams]): rows
 * [0, n/2) folded into out and [n/2, n) into tmp, each from its first row
 * in row order, two streams at once, then out = OP(out, tmp). max and min
 * are exact, so the value is the one-stream value; which zero and which
 * NaN are then chosen as the other forms choose them. */
#define DISPATCH_KERNELS_CEXT_STREAMS(NAME, E, T, S, LOADV, TO_T, which)              \
    static void NAME##_cext2_##which##_(const char *p, intptr_t rs, intptr_t n,        \
                                        intptr_t ncols, T *out, T *tmp)                \
    {                                                                                  \
        const intptr_t h = n / 2;                                                      \
        if (h == 0) {                                                                  \
            NAME##_cext_##which##_(p, rs, n, ncols, out);                              \
            return;                                                                    \
        }                                                                              \
        const E *first = (const E *)(const void *)p;                                   \
        const E *second = (const E *)(const void *)(p + h * rs);                       \
        for (intptr_t k = 0; k < ncols; k++) out[k] = TO_T(first[k]), tmp[k] = TO_T(second[k]); \
        for (intptr_t r = 1; r < n - h; r++) {                                         \
            if (r < h) NAME##_crow_##which##_(out, (const E *)(const void *)(p + r * rs), ncols); \
            NAME##_crow_##which##_(tmp, (const E *)(const void *)(p + (h + r) * rs), ncols); \
        }                                                                              \
        NAME##_res_crow_##which##_(out, tmp, ncols);                                   \
        /* which zero, which NaN: Note [Which zero, which NaN] */                      \
        NAME##_first_cols_(out, p, rs, n, ncols);                                      \
    }

#define DISPATCH_KERNELS_COLS(NAME, E, T, S, LOADV, TO_T)                              \
    DISPATCH_KERNELS_FIRST_COLS(NAME, E, T, S, LOADV, TO_T)                            \
    /* out = OP(out, row), column by column: the streaming form's step, a       \
     * whole row read in address order. */                                             \
    DISPATCH_COLS_ROW_STEP(NAME, E, T, S, LOADV, TO_T, add, dv_add_##S, DISPATCH_COLS_SADD) \
    DISPATCH_COLS_ROW_STEP(NAME, E, T, S, LOADV, TO_T, max, dv_max_##S, dv_smax_##S)   \
    DISPATCH_COLS_ROW_STEP(NAME, E, T, S, LOADV, TO_T, min, dv_min_##S, dv_smin_##S)   \
    /* the same over a row of results (the tree's halves added, the two streams'     \
     * max/min joined) */                                                              \
    DISPATCH_COLS_ROW_STEP(NAME##_res, T, T, S, dv_load_##S, DISPATCH_AS_STORED, add,  \
                           dv_add_##S, DISPATCH_COLS_SADD)                             \
    DISPATCH_COLS_ROW_STEP(NAME##_res, T, T, S, dv_load_##S, DISPATCH_AS_STORED, max,  \
                           dv_max_##S, dv_smax_##S)                                    \
    DISPATCH_COLS_ROW_STEP(NAME##_res, T, T, S, dv_load_##S, DISPATCH_AS_STORED, min,  \
                           dv_min_##S, dv_smin_##S)                                    \
    /* One leaf in the streaming form: -0.0, then each row added in row order. */     \
    static void NAME##_cleaf_rows_(const char *p, intptr_t rs, intptr_t n, intptr_t ncols, \
                                   T *out)                                             \
    {                                                                                  \
        for (intptr_t k = 0; k < ncols; k++) out[k] = (T)-0.0;                         \
        for (intptr_t r = 0; r < n; r++)                                               \
            NAME##_crow_add_(out, (const E *)(const void *)(p + r * rs), ncols);       \
    }                                                                                  \
    /* Two leaves, of np rows at p and nq at q, read as two streams: their rows       \
     * alternate, each leaf's in its own row order. */                                 \
    static void NAME##_cleaf2_rows_(const char *p, intptr_t np, const char *q, intptr_t nq, \
                                    intptr_t rs, intptr_t ncols, T *outp, T *outq)     \
    {                                                                                  \
        for (intptr_t k = 0; k < ncols; k++) outp[k] = (T)-0.0, outq[k] = (T)-0.0;     \
        for (intptr_t r = 0; r < (np > nq ? np : nq); r++) {                           \
            if (r < np) NAME##_crow_add_(outp, (const E *)(const void *)(p + r * rs), ncols); \
            if (r < nq) NAME##_crow_add_(outq, (const E *)(const void *)(q + r * rs), ncols); \
        }                                                                              \
    }                                                                                  \
    /* One leaf (n <= LEAF rows) of all ncols columns into out, each column            \
     * -0.0 + row 0 + row 1 + ... in row order. float32 (float16 too, each             \
     * load widening halves): four vectors of columns held in registers down           \
     * the leaf's rows, then the next four                                             \
     * (sum(dim=0) of (128, 512) 0.88-0.97x -> 0.54-0.66x torch's time on              \
     * Zen 2); float64 keeps streaming whole rows into the L1-resident out:            \
     * blocking measured no better there (64K: 0.63-0.75x against 0.51-0.72x           \
     * torch's time, within this VM's noise). The same bits either way. */             \
    static void NAME##_cleaf_(const char *p, intptr_t rs, intptr_t n, intptr_t ncols,  \
                              T *out)                                                  \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        if (sizeof(T) == 8) {                                                          \
            NAME##_cleaf_rows_(p, rs, n, ncols, out);                                  \
            return;                                                                    \
        }                                                                              \
        intptr_t c = 0;                                                                \
        for (; c + 4 * L <= ncols; c += 4 * L) {                                       \
            dv_##S a0 = dv_set1_##S((T)-0.0), a1 = a0, a2 = a0, a3 = a0;               \
            DISPATCH_COLS_FOUR_DOWN(S, E, LOADV, dv_add_##S, 0, n)                     \
        }                                                                              \
        for (; c + L <= ncols; c += L) {                                               \
            dv_##S a = dv_set1_##S((T)-0.0);                                           \
            for (intptr_t r = 0; r < n; r++)                                           \
                a = dv_add_##S(a, LOADV((const E *)(const void *)(p + r * rs) + c));   \
            dv_store_##S(out + c, a);                                                  \
        }                                                                              \
        for (; c < ncols; c++) {                                                       \
            T a = (T)-0.0;                                                             \
            for (intptr_t r = 0; r < n; r++)                                           \
                a = a + TO_T(((const E *)(const void *)(p + r * rs))[c]);              \
            out[c] = a;                                                                \
        }                                                                              \
    }                                                                                  \
    /* The tree; scratch holds ncols elements per level below this one. */             \
    static void NAME##_csum_(const char *p, intptr_t rs, intptr_t n, intptr_t ncols,   \
                             T *out, T *scratch)                                       \
    {                                                                                  \
        if (n <= DISPATCH_COLS_LEAF) {                                                 \
            NAME##_cleaf_(p, rs, n, ncols, out);                                       \
            return;                                                                    \
        }                                                                              \
        intptr_t h = ((n / DISPATCH_COLS_LEAF + 1) / 2) * DISPATCH_COLS_LEAF;          \
        NAME##_csum_(p, rs, h, ncols, out, scratch);                                   \
        NAME##_csum_(p + h * rs, rs, n - h, ncols, scratch, scratch + ncols);          \
        NAME##_res_crow_add_(out, scratch, ncols);                                     \
    }                                                                                  \
    /* The trees of np rows at p and nq rows at q into outp and outq, read as        \
     * two streams (Note [Column streams]): both split alike while both are            \
     * longer than a leaf, each by its own row count, so each keeps its own            \
     * tree; scratch holds two rows of ncols per level. */                             \
    static void NAME##_csum2_(const char *p, intptr_t np, const char *q, intptr_t nq,  \
                              intptr_t rs, intptr_t ncols, T *outp, T *outq, T *scratch) \
    {                                                                                  \
        if (np <= DISPATCH_COLS_LEAF && nq <= DISPATCH_COLS_LEAF) {                    \
            NAME##_cleaf2_rows_(p, np, q, nq, rs, ncols, outp, outq);                  \
            return;                                                                    \
        }                                                                              \
        if (np <= DISPATCH_COLS_LEAF || nq <= DISPATCH_COLS_LEAF) { /* a leaf's worth */ \
            NAME##_csum_(p, rs, np, ncols, outp, scratch);                             \
            NAME##_csum_(q, rs, nq, ncols, outq, scratch);                             \
            return;                                                                    \
        }                                                                              \
        intptr_t hp = ((np / DISPATCH_COLS_LEAF + 1) / 2) * DISPATCH_COLS_LEAF;        \
        intptr_t hq = ((nq / DISPATCH_COLS_LEAF + 1) / 2) * DISPATCH_COLS_LEAF;        \
        NAME##_csum2_(p, hp, q, hq, rs, ncols, outp, outq, scratch);                   \
        NAME##_csum2_(p + hp * rs, np - hp, q + hq * rs, nq - hq, rs, ncols, scratch,  \
                      scratch + ncols, scratch + 2 * ncols);                           \
        NAME##_res_crow_add_(outp, scratch, ncols);                                    \
        NAME##_res_crow_add_(outq, scratch + ncols, ncols);                            \
    }                                                                                  \
    /* The tree of csum_, its two halves read as two streams. */                       \
    static void NAME##_csum_streams_(const char *p, intptr_t rs, intptr_t n, intptr_t ncols, \
                                     T *out, T *scratch)                               \
    {                                                                                  \
        if (n <= DISPATCH_COLS_LEAF) {                                                 \
            NAME##_cleaf_rows_(p, rs, n, ncols, out);                                  \
            return;                                                                    \
        }                                                                              \
        intptr_t h = ((n / DISPATCH_COLS_LEAF + 1) / 2) * DISPATCH_COLS_LEAF;          \
        NAME##_csum2_(p, h, p + h * rs, n - h, rs, ncols, out, scratch, scratch + ncols); \
        NAME##_res_crow_add_(out, scratch, ncols);                                     \
    }                                                                                  \
    DISPATCH_KERNELS_CEXT(NAME, E, T, S, LOADV, TO_T, max)                             \
    DISPATCH_KERNELS_CEXT(NAME, E, T, S, LOADV, TO_T, min)                             \
    DISPATCH_KERNELS_CEXT_STREAMS(NAME, E, T, S, LOADV, TO_T, max)                     \
    DISPATCH_KERNELS_CEXT_STREAMS(NAME, E, T, S, LOADV, TO_T, min)                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_cols)(int op, const char *p, intptr_t rs,  \
                                                  intptr_t nrows, intptr_t ncols, T *out, \
                                                  void *scratch)                       \
    {                                                                                  \
        const int streams = op & DISPATCH_COLS_STREAMS;                                \
        op &= ~DISPATCH_COLS_STREAMS;                                                  \
        if (nrows <= 0) {                                                              \
            for (intptr_t c = 0; c < ncols; c++) out[c] = (T)0;                        \
            return;                                                                    \
        }                                                                              \
        if (op == 0)                                                                   \
            (streams ? NAME##_csum_streams_ : NAME##_csum_)(p, rs, nrows, ncols, out,  \
                                                            (T *)scratch);             \
        else if (streams)                                                              \
            (op == 1 ? NAME##_cext2_max_ : NAME##_cext2_min_)(p, rs, nrows, ncols, out, \
                                                              (T *)scratch);           \
        else if (op == 1) NAME##_cext_max_(p, rs, nrows, ncols, out);                  \
        else NAME##_cext_min_(p, rs, nrows, ncols, out);                               \
    }

/*
 * Note [Extremes of every other element]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max and min of a row two elements apart (x[:, ::2]) read it in place, as
 * the sums do (Note [Sums of every other element]): the same passes as a
 * contiguous row's, each vector loaded by dispatch_ext_load_even_S from the
 * view's elements only (a masked second load on AVX-512; the sums' loads
 * below it), the scalar tails two apart. The view was copied dense first,
 * a slab at a time (reduce_copies.c), and the copy of its 16 MiB of lines
 * took as long as NumPy's whole in-place reduction, the slab's own pass
 * after it: max() of every other column of (1024, 2048) float64, 1
 * thread, 434 us (NumPy 343), 201 now; float32 189 -> 95 (NumPy 409).
 * Exact, so the answer is the copy's, the element Note [Which zero, which
 * NaN] picks.
 */
#if DV_WIDTH == 64
static inline __m512 dispatch_ext_load_even_f32(const float *p)
{
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even,
                                  _mm512_maskz_loadu_ps(0x7fff, p + 16));
}
static inline __m512d dispatch_ext_load_even_f64(const double *p)
{
    const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_pd(_mm512_loadu_pd(p), even, _mm512_maskz_loadu_pd(0x7f, p + 8));
}
#else
#define dispatch_ext_load_even_f32 ds_load_even_f32 /* ds is dv below 512 bits */
#define dispatch_ext_load_even_f64 ds_load_even_f64
#endif

/* The first of n elements K apart at p equal to the extreme m when m is a
 * zero or a NaN, else m (Note [Which zero, which NaN], Note [The first zero
 * by vectors]). */
#define DISPATCH_KERNELS_FIRST(NAME, T, S, BY, LOADV, K)                               \
    static T NAME##_first##BY##_(T m, const T *p, intptr_t n)                          \
    {                                                                                  \
        if (m == m && m != (T)0) return m;                                             \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        const dv_##S vm = dv_set1_##S(m);                                              \
        intptr_t i = 0;                                                                \
        for (; i + L <= n; i += L) {                                                   \
            const dv_##S x = LOADV(p + (K) * i);                                       \
            const unsigned hit = m != m ? dv_mask_bits_##S(dv_isnan_##S(x))            \
                                        : dv_mask_bits_##S(dv_eq_##S(x, vm));          \
            if (hit) return p[(K) * (i + __builtin_ctz(hit))];                         \
        }                                                                              \
        for (; i < n; i++)                                                             \
            if (DISPATCH_LIKE_EXTREME(p[(K) * i], m)) return p[(K) * i];               \
        return m;                                                                      \
    }

/* max (is_min = 0) or min of n >= 1 elements K apart at p (BY: their loads'
 * name, K 1 or 2: Note [Extremes of every other element]), read as one
 * stream: the instruction fast pass, then the exact one; NaN propagates (the
 * first NaN met). And ext_pair: the fast pass over rows p and q of n
 * elements, when they can be read as two streams: bit k set when row k's
 * r[k] is its answer (no NaN met). */
#define DISPATCH_KERNELS_EXT_BY(NAME, T, S, BY, LOADV, K)                              \
    DISPATCH_KERNELS_FIRST(NAME, T, S, BY, LOADV, K)                                   \
    DISPATCH_KERNELS_FAST_EXT(NAME, T, S, max, MAX, BY, LOADV, K)                      \
    DISPATCH_KERNELS_FAST_EXT(NAME, T, S, min, MIN, BY, LOADV, K)                      \
    DISPATCH_KERNELS_FAST_EXT2(NAME, T, S, max, MAX, BY, LOADV, K)                     \
    DISPATCH_KERNELS_FAST_EXT2(NAME, T, S, min, MIN, BY, LOADV, K)                     \
    static T NAME##_ext1##BY##_(int is_min, const T *p, intptr_t n)                    \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        if (n < DISPATCH_COLS_K * L) {                                                 \
            T acc = p[0];                                                              \
            for (intptr_t i = 1; i < n; i++)                                           \
                acc = is_min ? dv_smin_##S(acc, p[(K) * i]) : dv_smax_##S(acc, p[(K) * i]); \
            return acc;                                                                \
        }                                                                              \
        if (DISPATCH_HAVE_RAW_EXT) { /* the fast pass */                               \
            T r;                                                                       \
            if (is_min ? NAME##_fast##BY##_min_(p, n, &r) : NAME##_fast##BY##_max_(p, n, &r)) \
                return r;                                                              \
        }                                                                              \
        dv_##S acc[DISPATCH_COLS_K];                                                   \
        for (int k = 0; k < DISPATCH_COLS_K; k++) acc[k] = LOADV(p + (K) * k * L);     \
        intptr_t i = DISPATCH_COLS_K * L;                                              \
        T lanes[DISPATCH_KERNELS_SUM_LANES_##S];                                       \
        if (is_min) {                                                                  \
            for (; i + DISPATCH_COLS_K * L <= n; i += DISPATCH_COLS_K * L)             \
                for (int k = 0; k < DISPATCH_COLS_K; k++)                              \
                    acc[k] = dv_min_##S(acc[k], LOADV(p + (K) * (i + k * L)));         \
            for (; i + L <= n; i += L) acc[0] = dv_min_##S(acc[0], LOADV(p + (K) * i)); \
        } else {                                                                       \
            for (; i + DISPATCH_COLS_K * L <= n; i += DISPATCH_COLS_K * L)             \
                for (int k = 0; k < DISPATCH_COLS_K; k++)                              \
                    acc[k] = dv_max_##S(acc[k], LOADV(p + (K) * (i + k * L)));         \
            for (; i + L <= n; i += L) acc[0] = dv_max_##S(acc[0], LOADV(p + (K) * i)); \
        }                                                                              \
        for (int w = DISPATCH_COLS_K / 2; w >= 1; w /= 2) /* a tree: short chains */   \
            for (int k = 0; k < w; k++)                                                \
                acc[k] = is_min ? dv_min_##S(acc[k], acc[k + w])                       \
                                : dv_max_##S(acc[k], acc[k + w]);                      \
        dv_store_##S(lanes, acc[0]);                                                   \
        /* The last lanes and the tail without branches on the data: NaN is            \
         * tracked apart (the result is then the first NaN met). */                    \
        T r = lanes[0];                                                                \
        int nan = r != r;                                                              \
        T first_nan = r;                                                               \
        for (intptr_t j = 1; j < L; j++) {                                             \
            T x = lanes[j];                                                            \
            if (!nan) first_nan = x;                                                   \
            nan |= x != x;                                                             \
            r = is_min ? (x < r ? x : r) : (x > r ? x : r);                            \
        }                                                                              \
        for (; i < n; i++) {                                                           \
            T x = p[(K) * i];                                                          \
            if (!nan) first_nan = x;                                                   \
            nan |= x != x;                                                             \
            r = is_min ? (x < r ? x : r) : (x > r ? x : r);                            \
        }                                                                              \
        return nan ? first_nan : r;                                                    \
    }                                                                                  \
    static int NAME##_ext_pair##BY##_(int is_min, const T *p, const T *q, intptr_t n, T *r) \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_SUM_LANES_##S;                             \
        intptr_t gap = (q - p) * (intptr_t)sizeof(T);                                  \
        if (!DISPATCH_SUM_TWO_STREAMS || !DISPATCH_HAVE_RAW_EXT || n < 4 * L ||       \
            !dispatch_sum_far_apart(gap))                                              \
            return 0;                                                                  \
        return is_min ? NAME##_fast2##BY##_min_(p, q, n, r)                            \
                      : NAME##_fast2##BY##_max_(p, q, n, r);                           \
    }                                                                                  \
    /* One row of n >= 1 elements: a long one read from its two halves at once */     \
    /* (Note [Two streams]); max and min are exact, so the answer is the */             \
    /* one-stream answer, the element Note [Which zero, which NaN] picks. */           \
    static T NAME##_one##BY##_(int is_min, const T *p, intptr_t n)                     \
    {                                                                                  \
        const intptr_t h = n / 2;                                                      \
        T two[2], m;                                                                   \
        if (NAME##_ext_pair##BY##_(is_min, p, p + (K) * h, h, two) == 3) {             \
            m = is_min ? dv_smin_##S(two[0], two[1]) : dv_smax_##S(two[0], two[1]);    \
            if (n > 2 * h)                                                             \
                m = is_min ? dv_smin_##S(m, p[(K) * (n - 1)]) : dv_smax_##S(m, p[(K) * (n - 1)]); \
        } else {                                                                       \
            m = NAME##_ext1##BY##_(is_min, p, n); /* short, or a NaN */                \
        }                                                                              \
        return NAME##_first##BY##_(m, p, n);                                           \
    }                                                                                  \
    /* nrows of those, the rows rstep bytes apart, into out (ostep bytes */            \
    /* apart): row r read beside row r + nrows / 2 when they are far enough */        \
    /* apart. */                                                                       \
    static void NAME##_rows##BY##_(int is_min, const char *p, intptr_t rstep, intptr_t n, \
                                   intptr_t nrows, char *out, intptr_t ostep)          \
    {                                                                                  \
        const intptr_t half = nrows / 2;                                               \
        for (intptr_t r = 0; r < half; r++) {                                          \
            const T *a = (const T *)(const void *)(p + r * rstep);                     \
            const T *b = (const T *)(const void *)(p + (r + half) * rstep);            \
            T two[2];                                                                  \
            int ok = NAME##_ext_pair##BY##_(is_min, a, b, n, two);                     \
            if (!(ok & 1)) two[0] = NAME##_ext1##BY##_(is_min, a, n);                  \
            if (!(ok & 2)) two[1] = NAME##_ext1##BY##_(is_min, b, n);                  \
            two[0] = NAME##_first##BY##_(two[0], a, n);                                \
            two[1] = NAME##_first##BY##_(two[1], b, n);                                \
            memcpy(out + r * ostep, &two[0], sizeof(T));                               \
            memcpy(out + (r + half) * ostep, &two[1], sizeof(T));                      \
        }                                                                              \
        if (nrows > 2 * half) {                                                        \
            T m = NAME##_one##BY##_(is_min, (const T *)(const void *)(p + 2 * half * rstep), n); \
            memcpy(out + 2 * half * ostep, &m, sizeof(T));                             \
        }                                                                              \
    }

/* max and min of float32/float64 (the instruction fast pass, then the exact
 * one): the column kernels' types that reduce in place; rows contiguous or
 * two elements apart. */
#define DISPATCH_KERNELS_EXT(NAME, T, S)                                               \
    DISPATCH_KERNELS_EXT_BY(NAME, T, S, , dv_load_##S, 1)                              \
    DISPATCH_KERNELS_EXT_BY(NAME, T, S, _even, dispatch_ext_load_even_##S, 2)          \
    /* max (is_min = 0) or min of n >= 1 contiguous elements; NaN propagates. */       \
    T DISPATCH_CPU_DISPATCH_CURFX(NAME##_ext)(int is_min, const T *p, intptr_t n)      \
    {                                                                                  \
        return NAME##_one_(is_min, p, n);                                              \
    }                                                                                  \
    /* nrows of those, each of n elements `step` bytes apart (any step; one */         \
    /* element or two are read by vectors), the rows rstep bytes apart, into */       \
    /* out (ostep bytes apart). */                                                     \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME##_ext_rows)(int is_min, const char *p,       \
                                                      intptr_t rstep, intptr_t step,   \
                                                      intptr_t n, intptr_t nrows,      \
                                                      char *out, intptr_t ostep)       \
    {                                                                                  \
        const intptr_t z = (intptr_t)sizeof(T);                                        \
        if (n < 1) return;                                                             \
        if (step == z) {                                                               \
            NAME##_rows_(is_min, p, rstep, n, nrows, out, ostep);                      \
        } else if (step == 2 * z && (uintptr_t)p % sizeof(T) == 0 && rstep % z == 0) { \
            NAME##_rows_even_(is_min, p, rstep, n, nrows, out, ostep);                 \
        } else { /* element by element: the first NaN, else the first extreme */       \
            for (intptr_t r = 0; r < nrows; r++) {                                     \
                const char *q = p + r * rstep;                                         \
                T m, x;                                                                \
                memcpy(&m, q, sizeof m);                                               \
                for (intptr_t i = 1; i < n && m == m; i++) {                           \
                    memcpy(&x, q + i * step, sizeof x);                                \
                    if (x != x || (is_min ? x < m : x > m)) m = x;                     \
                }                                                                      \
                memcpy(out + r * ostep, &m, sizeof m);                                 \
            }                                                                          \
        }                                                                              \
    }

void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32_cols)(int op, const char *p, intptr_t rs,
                                                               intptr_t nrows, intptr_t ncols,
                                                               float *out, void *scratch);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64_cols)(int op, const char *p, intptr_t rs,
                                                               intptr_t nrows, intptr_t ncols,
                                                               double *out, void *scratch);
/* float16 and bfloat16 columns accumulate in float32 (out, scratch:
 * float32), each column reduced in the float32 kernel's order and tree: the
 * bits of reducing a float32 copy, without writing the copy. */
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_bf16_cols)(int op, const char *p, intptr_t rs,
                                                                intptr_t nrows, intptr_t ncols,
                                                                float *out, void *scratch);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f16_cols)(int op, const char *p, intptr_t rs,
                                                               intptr_t nrows, intptr_t ncols,
                                                               float *out, void *scratch);
float DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32_ext)(int is_min, const float *p,
                                                               intptr_t n);
double DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64_ext)(int is_min, const double *p,
                                                                intptr_t n);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32_ext_rows)(int is_min, const char *p,
                                                                   intptr_t rstep, intptr_t step,
                                                                   intptr_t n, intptr_t nrows,
                                                                   char *out, intptr_t ostep);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64_ext_rows)(int is_min, const char *p,
                                                                   intptr_t rstep, intptr_t step,
                                                                   intptr_t n, intptr_t nrows,
                                                                   char *out, intptr_t ostep);
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_f32, float, float, f32, dv_load_f32, DISPATCH_AS_STORED)
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_f64, double, double, f64, dv_load_f64, DISPATCH_AS_STORED)
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_f16, uint16_t, float, f32, dispatch_load_half_f32,
                      dispatch_half_to_float_inline)
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_bf16, uint16_t, float, f32, dispatch_load_bf16_f32,
                      dispatch_bfloat16_to_float_inline)
DISPATCH_KERNELS_EXT(dispatch_kernel_sum_f32, float, f32)
DISPATCH_KERNELS_EXT(dispatch_kernel_sum_f64, double, f64)

/*
 * Note [Columns of every other element]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * sum, mean, max and min over the rows of every other column (x[:, ::2]
 * over dim 0) run the column kernels above with an element of two: a
 * column c is the first of the pair at c (DISPATCH_PAIR_FIRST), a vector
 * of L columns the even load of Note [Extremes of every other element]
 * from the pair at c. So every form of Note [Column reductions] and Note
 * [Column streams] reads the view in place, in the same order and tree as
 * on its dense copy: the copy's bits, without the copy, which the slabs
 * of reduce_copies.c wrote and read again: sum(dim=0) of every other
 * column of (512, 1024) float64, 1 thread, 108.6 -> 60.1 us (NumPy 98.6),
 * of (1024, 2048) 478 -> 406 (NumPy 383), float32 259 -> 135 (NumPy 360).
 * prod does the same with its own column kernels (Note [Product columns of
 * every other element] in prod.dispatch.c).
 */
#define dispatch_load_pair_f32(q) dispatch_ext_load_even_f32((const float *)(const void *)(q))
#define dispatch_load_pair_f64(q) dispatch_ext_load_even_f64((const double *)(const void *)(q))
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f32_even_cols)(int op, const char *p,
                                                                    intptr_t rs, intptr_t nrows,
                                                                    intptr_t ncols, float *out,
                                                                    void *scratch);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f64_even_cols)(int op, const char *p,
                                                                    intptr_t rs, intptr_t nrows,
                                                                    intptr_t ncols, double *out,
                                                                    void *scratch);
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_f32_even, dispatch_pair_f32, float, f32,
                      dispatch_load_pair_f32, DISPATCH_PAIR_FIRST)
DISPATCH_KERNELS_COLS(dispatch_kernel_sum_f64_even, dispatch_pair_f64, double, f64,
                      dispatch_load_pair_f64, DISPATCH_PAIR_FIRST)

/*
 * Note [float16 max and min as integers]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Halves are ordered by their bits once a negative half's magnitude bits
 * are flipped (key = h ^ 0x7fff when the sign is set, read as int16):
 * -inf < ... < -0 < +0 < ... < +inf, NaNs beyond the infinities. So max
 * and min of n contiguous halves are integer max/min (vpmaxsw/vpminsw under
 * the AVX2 and AVX-512 flags; the compiler vectorizes these plain loops)
 * of keys, mapped back (the map is its own inverse): the result is one of
 * the elements, with no widening and no float32 copy. The keys put +0
 * above -0, so a zero answer is then replaced by the first zero, as every
 * max/min answers (Note [Which zero, which NaN]). NaN is
 * told apart by the largest magnitude (above 0x7c00 is a NaN; bfloat16,
 * whose keys order the same way: above 0x7f80): then the
 * kernel returns 0 and the caller takes the float32 path, which propagates
 * it. The reduction is exact, so every target gives the same bits.
 */
static inline int16_t dispatch_half_key(uint16_t h)
{
    int16_t s = (int16_t)h;
    return (int16_t)(s ^ ((s >> 15) & 0x7fff));
}
/* One element of the fold below: its key into best, its magnitude into mag. */
static inline void dispatch_half_ext_step(int is_min, uint16_t h, int16_t *best, int16_t *mag)
{
    const int16_t x = dispatch_half_key(h), a = (int16_t)(h & 0x7fff);
    *best = is_min ? (x < *best ? x : *best) : (x > *best ? x : *best);
    *mag = a > *mag ? a : *mag;
}

static inline int dispatch_half_ext_(int is_min, const uint16_t *p, intptr_t n, uint16_t *r,
                                     int16_t inf_bits)
{
    const uint16_t *const row = p; /* its first zero, at the end */
    const int16_t start = dispatch_half_key(p[0]);
    int16_t best = start, mag = 0;
    intptr_t i = 0;
    /* A long row is folded from a line boundary, the elements before it
     * first: one starting 16 bytes into a line read each 128 bytes of lanes
     * from three lines (float16 amax() of 1M 46.6 us there, 30.6 on a
     * boundary). max and min are exact in any order. A short row keeps its
     * loads (rows of 512 halves took 4-7% longer with the head). */
    for (; n >= 4096 && (uintptr_t)p % 64 != 0; p++, n--)
        dispatch_half_ext_step(is_min, *p, &best, &mag);
#if defined(__clang__)
    /* one accumulator of each, which clang vectorizes as reductions of its
     * own; it kept the lanes below as scalars (Note [Plain reductions under
     * clang] in int_reduce.dispatch.c): float16 amax() 2.7x gcc's time */
    if (is_min)
        for (; i < n; i++) {
            int16_t x = dispatch_half_key(p[i]), a = (int16_t)(p[i] & 0x7fff);
            best = x < best ? x : best;
            mag = a > mag ? a : mag;
        }
    else
        for (; i < n; i++) {
            int16_t x = dispatch_half_key(p[i]), a = (int16_t)(p[i] & 0x7fff);
            best = x > best ? x : best;
            mag = a > mag ? a : mag;
        }
#else
    enum { K = 64 }; /* 128 bytes of lanes: four ymm or two zmm chains */
    int16_t m[K], g[K];
    for (int k = 0; k < K; k++) m[k] = start, g[k] = 0;
    if (is_min) {
        for (; i + K <= n; i += K)
            for (int k = 0; k < K; k++) {
                int16_t x = dispatch_half_key(p[i + k]), a = (int16_t)(p[i + k] & 0x7fff);
                m[k] = x < m[k] ? x : m[k];
                g[k] = a > g[k] ? a : g[k];
            }
    } else {
        for (; i + K <= n; i += K)
            for (int k = 0; k < K; k++) {
                int16_t x = dispatch_half_key(p[i + k]), a = (int16_t)(p[i + k] & 0x7fff);
                m[k] = x > m[k] ? x : m[k];
                g[k] = a > g[k] ? a : g[k];
            }
    }
    for (int k = 0; k < K; k++) {
        best = is_min ? (m[k] < best ? m[k] : best) : (m[k] > best ? m[k] : best);
        mag = g[k] > mag ? g[k] : mag;
    }
#endif
    for (; i < n; i++) dispatch_half_ext_step(is_min, p[i], &best, &mag);
    if (mag > inf_bits) return 0;
    if (best == 0 || best == -1) { /* +0 or -0: the first zero (Note [Which zero, which NaN]) */
        for (i = 0; (row[i] & 0x7fff) != 0; i++) {
        }
        *r = row[i];
        return 1;
    }
    *r = (uint16_t)dispatch_half_key((uint16_t)best);
    return 1;
}

int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f16_ext)(int is_min, const uint16_t *p,
                                                            intptr_t n, uint16_t *r);
int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_f16_ext)(int is_min, const uint16_t *p,
                                                            intptr_t n, uint16_t *r)
{
    return dispatch_half_ext_(is_min, p, n, r, 0x7c00);
}
/* bfloat16 is ordered by its bits the same way; above 0x7f80 is a NaN. */
int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_bf16_ext)(int is_min, const uint16_t *p,
                                                             intptr_t n, uint16_t *r);
int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_sum_bf16_ext)(int is_min, const uint16_t *p,
                                                             intptr_t n, uint16_t *r)
{
    return dispatch_half_ext_(is_min, p, n, r, 0x7f80);
}

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(sum,
    DISPATCH_KERNELS_REDUCE(SUM, FLOAT32, dispatch_kernel_sum_f32, 1)
    DISPATCH_KERNELS_REDUCE(SUM, FLOAT64, dispatch_kernel_sum_f64, 1)
    DISPATCH_KERNELS_REDUCE(SUM, FLOAT16, dispatch_kernel_sum_f16, 1)
    DISPATCH_KERNELS_REDUCE(SUM_ROWS, FLOAT32, dispatch_kernel_sum_f32_rows, 0)
    DISPATCH_KERNELS_REDUCE(SUM_ROWS, FLOAT64, dispatch_kernel_sum_f64_rows, 0)
    DISPATCH_KERNELS_REDUCE(SUM_ROWS, FLOAT16, dispatch_kernel_sum_f16_rows, 0)
    DISPATCH_KERNELS_REDUCE(COLS, FLOAT16, dispatch_kernel_sum_f16_cols, 0)
    DISPATCH_KERNELS_REDUCE(EXT, FLOAT16, dispatch_kernel_sum_f16_ext, 0)
    DISPATCH_KERNELS_REDUCE(SUM, BFLOAT16, dispatch_kernel_sum_bf16, 1)
    DISPATCH_KERNELS_REDUCE(SUM_ROWS, BFLOAT16, dispatch_kernel_sum_bf16_rows, 0)
    DISPATCH_KERNELS_REDUCE(COLS, BFLOAT16, dispatch_kernel_sum_bf16_cols, 0)
    DISPATCH_KERNELS_REDUCE(EXT, BFLOAT16, dispatch_kernel_sum_bf16_ext, 0)
    DISPATCH_KERNELS_REDUCE(COLS, FLOAT32, dispatch_kernel_sum_f32_cols, 0)
    DISPATCH_KERNELS_REDUCE(COLS, FLOAT64, dispatch_kernel_sum_f64_cols, 0)
    DISPATCH_KERNELS_REDUCE(COLS_EVEN, FLOAT32, dispatch_kernel_sum_f32_even_cols, 0)
    DISPATCH_KERNELS_REDUCE(COLS_EVEN, FLOAT64, dispatch_kernel_sum_f64_even_cols, 0)
    DISPATCH_KERNELS_REDUCE(EXT, FLOAT32, dispatch_kernel_sum_f32_ext, 0)
    DISPATCH_KERNELS_REDUCE(EXT, FLOAT64, dispatch_kernel_sum_f64_ext, 0)
    DISPATCH_KERNELS_REDUCE(EXT_ROWS, FLOAT32, dispatch_kernel_sum_f32_ext_rows, 0)
    DISPATCH_KERNELS_REDUCE(EXT_ROWS, FLOAT64, dispatch_kernel_sum_f64_ext_rows, 0)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "sum.dispatch.h"
DISPATCH_KERNELS_CHOOSER(sum)
#endif
