/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * dot: the sum of n products a[i] * b[i], multiplied and summed in one pass
 * (the DOT kernels of the reduction kernel table, dispatch/
 * reduce_kernel_table.h, which dot_cpu in sources/dispatcher/
 * operators_reduce.c runs).
 *
 * Note [Dot order]
 * ~~~~~~~~~~~~~~~~
 * Floats: each product in float64 (exact for float32 and narrower inputs),
 * and the n products summed in the order of the float64 sum of
 * sum.dispatch.c (Note [Sum order independent of the vector width]):
 * leaves of DOT_LEAF = 512 products read as rows of 32 lanes, lane j
 * accumulating products j, j+32, ... from -0.0, a partial last row padded
 * with -0.0, the lanes added in the tree 16, 8, 4, 2, 1; a longer range
 * split at ((n / 512 + 1) / 2) * 512 and the halves added. So the result
 * has the bits of summing a float64 buffer of the products with the sum
 * kernel (what dot did before it had a kernel of its own), on every target
 * and for any stride; a range cut at the tree's split points gives the
 * same bits, so dot_cpu may split the top levels across threads.
 * Multiplies and adds are never contracted (-ffp-contract=off).
 * Integers: the products and their sum wrap; only the low bits of the
 * dtype's width reach the result, so the lanes are as wide as the dtype
 * and not wider (8-bit inputs in 16-bit lanes), where the vectors hold the
 * most of them. Their order does not matter: wrapping addition is exact.
 */
#include <stdint.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "gather_bits.h"
#include "narrow_vector.h"
#include "read_ahead.h"

#define DOT_LANES 32               /* 256 bytes of float64 lanes */
#define DOT_LEAF (DOT_LANES * 16)  /* the sum's float64 leaf */

#if defined(__AVX__)
#include <immintrin.h>
/* float32's whole rows of a leaf on AVX targets: the 32 float64 lanes as 8
 * chains of 4, each product's factors widened from memory (vcvtps2pd ymm,
 * m128), multiplied, then added (never fused): the compiler's 4 chains of
 * 8 lanes were bound by their widening on Zen 4, as prod's were (Note in
 * prod.dispatch.c). The same lanes take the same adds in the same order:
 * the same bits. Returns the elements done. */
static intptr_t dot_f32_rows(const float *restrict a, const float *restrict b, intptr_t n,
                             double *acc)
{
    __m256d s[DOT_LANES / 4];
    for (int k = 0; k < DOT_LANES / 4; k++) s[k] = _mm256_loadu_pd(acc + 4 * k);
    intptr_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES)
        for (int k = 0; k < DOT_LANES / 4; k++)
            s[k] = _mm256_add_pd(s[k], _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + i + 4 * k)),
                                                     _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4 * k))));
    for (int k = 0; k < DOT_LANES / 4; k++) _mm256_storeu_pd(acc + 4 * k, s[k]);
    return i;
}
#define DOT_ROWS_float(a, b, n, acc) dot_f32_rows(a, b, n, acc)
#else
#define DOT_ROWS_float(a, b, n, acc) 0
#endif
#if defined(__AVX512F__)
/* float64's whole rows of a leaf on AVX-512: the compiler's loop (4 chains
 * of 8 lanes, multiplied then added, as here) with each line asked for 2 KiB
 * ahead, the next leaf's when the rows run out, on the CPUs where that pays
 * (on Zen 5 the hardware's prefetch alone left it at 1.1-1.2x torch's time
 * from 256K up; 1 thread, alternating processes: 256K 1.11-1.14x -> 0.89x,
 * 1M 1.20-1.21x -> 1.11-1.15x; on Zen 4 it costs: Note [Reads asked for
 * ahead, by CPU family] in read_ahead.h). `ask` is a constant in each of
 * the two copies dot_f64_rows makes. The same lanes take the same adds in
 * the same order: the same bits. Returns the elements done. */
static inline __attribute__((always_inline)) intptr_t
dot_f64_rows_(const double *restrict a, const double *restrict b, intptr_t n, __m512d *s,
              const int ask)
{
    intptr_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES)
        for (int k = 0; k < DOT_LANES / 8; k++) {
            if (ask) {
                DK_ASK_AHEAD(a + i + 8 * k, 0);
                DK_ASK_AHEAD(b + i + 8 * k, 0);
            }
            s[k] = _mm512_add_pd(s[k], _mm512_mul_pd(_mm512_loadu_pd(a + i + 8 * k),
                                                     _mm512_loadu_pd(b + i + 8 * k)));
        }
    return i;
}

/*
 * Note [Dot's loads on whole lines]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * NumPy's buffers start 16 or 48 bytes into a cache line, so every 64-byte
 * load of dot_f64_rows_ there spans two lines; on a Zen 4 that made a 256K
 * float64 dot of such arrays 52.6-55.7 us against 45.6-46.6 for arrays
 * that start on a line (a C harness, 6 alternating runs; torch's
 * library peels to a line: 44-46 us either way). A peel would move
 * products between lanes (Note [Dot order]), so the lanes are made from
 * whole lines instead: each operand read a line at a time from the line
 * its first element is in, and each 8 lanes taken from two neighbouring
 * lines by vpermt2pd, shifted by the element's place in its line (m). The
 * line before the first element and the one after the last are read under
 * masks of the lanes in the operand, so nothing outside it is read. The
 * same products reach the same lanes in the same order: the same bits
 * (52.6 -> 47.4 us; 64K 12.9 -> 11.8). Operands that start on a line keep
 * the plain loads (the shifts cost them 1.2 us).
 */
static inline __attribute__((always_inline)) __m512d
dot_f64_line_(const double *line, __m512d *prev, __m512i shift, __mmask8 keep, const int last)
{
    const __m512d next = last ? _mm512_maskz_load_pd(keep, line) : _mm512_load_pd(line);
    const __m512d v = _mm512_permutex2var_pd(*prev, shift, next);
    *prev = next;
    return v;
}
static inline __attribute__((always_inline)) void
dot_f64_lines_row_(__m512d *s, const double *la, const double *lb, __m512d *pa, __m512d *pb,
                   __m512i sa, __m512i sb, __mmask8 ka, __mmask8 kb, const int ask, const int last)
{
    for (int k = 0; k < DOT_LANES / 8; k++) {
        if (ask) {
            DK_ASK_AHEAD(la + 8 * k, 0);
            DK_ASK_AHEAD(lb + 8 * k, 0);
        }
        const int end = last && k == DOT_LANES / 8 - 1;
        const __m512d x = dot_f64_line_(la + 8 * k + 8, pa, sa, ka, end);
        const __m512d y = dot_f64_line_(lb + 8 * k + 8, pb, sb, kb, end);
        s[k] = _mm512_add_pd(s[k], _mm512_mul_pd(x, y));
    }
}
static inline __attribute__((always_inline)) intptr_t
dot_f64_lines_(const double *a, const double *b, intptr_t n, __m512d *s, const int ask)
{
    const intptr_t rows = n / DOT_LANES * DOT_LANES;
    if (rows == 0) return 0;
    const unsigned ma = (unsigned)((uintptr_t)a / sizeof(double)) % 8;
    const unsigned mb = (unsigned)((uintptr_t)b / sizeof(double)) % 8;
    const __m512i lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i sa = _mm512_add_epi64(lanes, _mm512_set1_epi64(ma));
    const __m512i sb = _mm512_add_epi64(lanes, _mm512_set1_epi64(mb));
    const double *la = a - ma, *lb = b - mb; /* the lines of the first elements */
    /* the first line from the first element on; the last, up to the last */
    __m512d pa = _mm512_maskz_load_pd((__mmask8)(0xFFu << ma), la);
    __m512d pb = _mm512_maskz_load_pd((__mmask8)(0xFFu << mb), lb);
    const __mmask8 ka = (__mmask8)((1u << ma) - 1), kb = (__mmask8)((1u << mb) - 1);
    intptr_t i = 0;
    for (; i + DOT_LANES < rows; i += DOT_LANES)
        dot_f64_lines_row_(s, la + i, lb + i, &pa, &pb, sa, sb, ka, kb, ask, 0);
    dot_f64_lines_row_(s, la + i, lb + i, &pa, &pb, sa, sb, ka, kb, ask, 1);
    return rows;
}
/* The whole rows of a leaf into its 32 lanes: on whole lines where an
 * operand starts inside one, with the lines asked for ahead where this CPU
 * gains from it. Returns the elements done. */
static intptr_t dot_f64_rows(const double *restrict a, const double *restrict b, intptr_t n,
                             double *acc)
{
    __m512d s[DOT_LANES / 8];
    for (int k = 0; k < DOT_LANES / 8; k++) s[k] = _mm512_loadu_pd(acc + 8 * k);
    const int ask = dk_reads_ahead();
    const uintptr_t at = (uintptr_t)a | (uintptr_t)b;
    const intptr_t i = at % 64 != 0 && at % 8 == 0
                           ? (ask ? dot_f64_lines_(a, b, n, s, 1) : dot_f64_lines_(a, b, n, s, 0))
                           : (ask ? dot_f64_rows_(a, b, n, s, 1) : dot_f64_rows_(a, b, n, s, 0));
    for (int k = 0; k < DOT_LANES / 8; k++) _mm512_storeu_pd(acc + 8 * k, s[k]);
    return i;
}
#define DOT_ROWS_double(a, b, n, acc) dot_f64_rows(a, b, n, acc)
#else
#define DOT_ROWS_double(a, b, n, acc) 0
#endif

#if defined(__AVX512F__)
/* float64's whole rows of a leaf of every other element (x[::2]): each 8
 * lanes from 16 doubles loaded under the even mask (never reading the odd
 * element past the view's end) and packed by vpermt2pd, where the gather
 * into a buffer first stored and loaded each element once more (256K, 1
 * thread: 125-148 -> 99 us; torch 110, NumPy 84 on one BLAS thread). With
 * the lines asked for ahead, on Zen 5, ours/torch in alternating processes:
 * 256K 0.95-1.21 -> 0.82-0.92 (0.59-0.81 with the caches emptied first),
 * 1M 1.39-1.65 -> 0.68-0.75; on Zen 4 they cost (Note [Reads asked for
 * ahead, by CPU family]), and `ask` is a constant in each of the two
 * copies dot_f64_even_rows makes. The same lanes take the same adds in the
 * same order: the same bits. Returns the elements done. */
static inline __attribute__((always_inline)) intptr_t
dot_f64_even_rows_(const double *restrict a, const double *restrict b, intptr_t n, double *acc,
                   const int ask)
{
    const __m512i evens = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    __m512d s[DOT_LANES / 8];
    for (int k = 0; k < DOT_LANES / 8; k++) s[k] = _mm512_loadu_pd(acc + 8 * k);
    intptr_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES)
        for (int k = 0; k < DOT_LANES / 8; k++) {
            const double *pa = a + 2 * (i + 8 * k), *pb = b + 2 * (i + 8 * k);
            /* both lines of each operand, 2 KiB ahead: a masked load waits for a
             * line in no cache (Note [Masked accesses ask for their lines]) */
            if (ask) {
                DK_ASK_AHEAD(pa, 0);
                DK_ASK_AHEAD(pa + 8, 0);
                DK_ASK_AHEAD(pb, 0);
                DK_ASK_AHEAD(pb + 8, 0);
            }
            const __m512d x = _mm512_permutex2var_pd(_mm512_maskz_loadu_pd(0x55, pa), evens,
                                                     _mm512_maskz_loadu_pd(0x55, pa + 8));
            const __m512d y = _mm512_permutex2var_pd(_mm512_maskz_loadu_pd(0x55, pb), evens,
                                                     _mm512_maskz_loadu_pd(0x55, pb + 8));
            s[k] = _mm512_add_pd(s[k], _mm512_mul_pd(x, y));
        }
    for (int k = 0; k < DOT_LANES / 8; k++) _mm512_storeu_pd(acc + 8 * k, s[k]);
    return i;
}
static intptr_t dot_f64_even_rows(const double *restrict a, const double *restrict b, intptr_t n,
                                  double *acc)
{
    return dk_reads_ahead() ? dot_f64_even_rows_(a, b, n, acc, 1)
                            : dot_f64_even_rows_(a, b, n, acc, 0);
}
#define DOT_EVEN_ROWS_double(a, b, n, acc) dot_f64_even_rows(a, b, n, acc)
#elif defined(__AVX2__)
/* float64's whole rows of a leaf of every other element (x[::2]) on AVX2:
 * each 4 lanes from a load at the group's first element and one three
 * elements on, which ends on the last element the group needs (never past
 * the view's end); one shuffle takes the even elements of both, in the
 * lane order 0, 2, 1, 3, so the accumulators are kept in that order in the
 * loop and put back after (256K, 1 thread, five alternating pairs of
 * processes: 157-182 -> 127-136 us, NumPy 208; the gather into a buffer
 * stored and loaded each element once more). The same products
 * reach the same accumulators in the same order: the same bits. Returns
 * the elements done. */
static intptr_t dot_f64_even_rows(const double *restrict a, const double *restrict b, intptr_t n,
                                  double *acc)
{
    __m256d s[DOT_LANES / 4];
    for (int k = 0; k < DOT_LANES / 4; k++)
        s[k] = _mm256_permute4x64_pd(_mm256_loadu_pd(acc + 4 * k), 0xD8);
    intptr_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES)
        for (int k = 0; k < DOT_LANES / 4; k++) {
            const double *pa = a + 2 * (i + 4 * k), *pb = b + 2 * (i + 4 * k);
            const __m256d x = _mm256_shuffle_pd(_mm256_loadu_pd(pa), _mm256_loadu_pd(pa + 3), 0xA);
            const __m256d y = _mm256_shuffle_pd(_mm256_loadu_pd(pb), _mm256_loadu_pd(pb + 3), 0xA);
            s[k] = _mm256_add_pd(s[k], _mm256_mul_pd(x, y));
        }
    for (int k = 0; k < DOT_LANES / 4; k++)
        _mm256_storeu_pd(acc + 4 * k, _mm256_permute4x64_pd(s[k], 0xD8));
    return i;
}
#define DOT_EVEN_ROWS_double(a, b, n, acc) dot_f64_even_rows(a, b, n, acc)
#elif defined(__SSE2__) && !defined(__AVX__)
#include <emmintrin.h>
/* float64's whole rows of a leaf of every other element (x[::2]) in SSE
 * lanes, two 8-byte loads a vector (never the odd element past the view's
 * end): the 32 lanes in two halves, each half's 8 vectors of lanes running
 * down every row before the other half's (16 vectors of lanes would take
 * every xmm register), where each leaf was gathered into a buffer first
 * (256K, 1 thread, SSE4.2, five alternating pairs of processes: 205-322 ->
 * 162-215 us, NumPy 298-314; the contiguous leaf, the same two halves,
 * measured 81-122 us both ways and keeps the compiler's loop). Each lane
 * takes the same adds in the same order: the same bits. Returns the
 * elements done. */
static intptr_t dot_f64_even_rows(const double *restrict a, const double *restrict b, intptr_t n,
                                  double *acc)
{
    const intptr_t rows = n / DOT_LANES * DOT_LANES;
    for (int h = 0; h < DOT_LANES; h += DOT_LANES / 2) {
        __m128d s[DOT_LANES / 4];
        for (int k = 0; k < DOT_LANES / 4; k++) s[k] = _mm_loadu_pd(acc + h + 2 * k);
        for (intptr_t i = 0; i < rows; i += DOT_LANES)
            for (int k = 0; k < DOT_LANES / 4; k++) {
                const double *pa = a + 2 * (i + h + 2 * k), *pb = b + 2 * (i + h + 2 * k);
                const __m128d x = _mm_loadh_pd(_mm_load_sd(pa), pa + 2);
                const __m128d y = _mm_loadh_pd(_mm_load_sd(pb), pb + 2);
                s[k] = _mm_add_pd(s[k], _mm_mul_pd(x, y));
            }
        for (int k = 0; k < DOT_LANES / 4; k++) _mm_storeu_pd(acc + h + 2 * k, s[k]);
    }
    return rows;
}
#define DOT_EVEN_ROWS_double(a, b, n, acc) dot_f64_even_rows(a, b, n, acc)
#endif

/* The lane tree of a leaf's 32 lanes, lane k + lane k + w for w = 16, 8, 4,
 * 2, 1 (Note [Dot order]). On x86 in registers, the same pairs in the same
 * order (the same bits): the compiler's loop over the array ran each level
 * through the stack, its loads waiting on the level before's stores (perf
 * put a fifth of a 256K float64 dot's samples there on a Zen 4; in
 * registers the float32 dot of 256K, whose rows did not change, went from
 * 39.4 to 36.1 us at 1 thread, 22.1 to 18.7 at 2, bench_matrix.py). */
static inline double dot_lane_tree(const double *acc)
{
#if defined(__AVX__)
    __m256d v[DOT_LANES / 4];
    for (int k = 0; k < DOT_LANES / 4; k++) v[k] = _mm256_loadu_pd(acc + 4 * k);
    for (int w = DOT_LANES / 8; w >= 1; w /= 2) /* w = 16, 8, 4: whole registers */
        for (int k = 0; k < w; k++) v[k] = _mm256_add_pd(v[k], v[k + w]);
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(v[0]),
                                 _mm256_extractf128_pd(v[0], 1)); /* w = 2 */
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));  /* w = 1 */
#elif defined(__SSE2__)
    __m128d v[DOT_LANES / 2];
    for (int k = 0; k < DOT_LANES / 2; k++) v[k] = _mm_loadu_pd(acc + 2 * k);
    for (int w = DOT_LANES / 4; w >= 1; w /= 2) /* w = 16, 8, 4, 2: whole registers */
        for (int k = 0; k < w; k++) v[k] = _mm_add_pd(v[k], v[k + w]);
    return _mm_cvtsd_f64(_mm_add_sd(v[0], _mm_unpackhi_pd(v[0], v[0]))); /* w = 1 */
#else
    double t[DOT_LANES];
    memcpy(t, acc, sizeof t);
    for (int w = DOT_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) t[k] = t[k] + t[k + w];
    return t[0];
#endif
}

/* One leaf of n <= DOT_LEAF products of a and b (float32 or float64,
 * widened to float64), E elements apart (1: contiguous, 2: every other):
 * the sum's leaf over the products. ROWS runs whole rows by vector first. */
#define DEF_DOT_LEAF(NAME, T, E, ROWS)                                                     \
    static double NAME(const T *restrict a, const T *restrict b, intptr_t n)               \
    {                                                                                      \
        double acc[DOT_LANES];                                                             \
        for (int k = 0; k < DOT_LANES; k++) acc[k] = -0.0;                                 \
        intptr_t i = ROWS(a, b, n, acc);                                                   \
        for (; i + DOT_LANES <= n; i += DOT_LANES)                                         \
            for (int k = 0; k < DOT_LANES; k++)                                            \
                acc[k] = acc[k] + (double)a[(i + k) * E] * (double)b[(i + k) * E];         \
        if (i < n) {                                                                       \
            double row[DOT_LANES];                                                         \
            for (int k = 0; k < DOT_LANES; k++)                                            \
                row[k] = i + k < n ? (double)a[(i + k) * E] * (double)b[(i + k) * E] : -0.0; \
            for (int k = 0; k < DOT_LANES; k++) acc[k] = acc[k] + row[k];                  \
        }                                                                                  \
        return dot_lane_tree(acc);                                                         \
    }
DEF_DOT_LEAF(dot_leaf_f32, float, 1, DOT_ROWS_float)
DEF_DOT_LEAF(dot_leaf_f64, double, 1, DOT_ROWS_double)
#if defined(DOT_EVEN_ROWS_double)
DEF_DOT_LEAF(dot_leaf_f64_even, double, 2, DOT_EVEN_ROWS_double)
#define DOT_EVEN_LEAF_double(a, b, n) dot_leaf_f64_even(a, b, n)
#endif

/* A leaf of a dtype's operands at any strides: contiguous float32 and
 * float64 read in place, anything else gathered (and a narrow float
 * widened to float32, exact) into a leaf of float32 or float64 first. */
typedef double (*dot_leaf_fn)(const char *a, intptr_t sa, const char *b, intptr_t sb,
                              intptr_t n);

#define DEF_DOT_LEAF_OF(NAME, T, LEAF)                                                     \
    static double NAME(const char *a, intptr_t sa, const char *b, intptr_t sb, intptr_t n) \
    {                                                                                      \
        if (sa == (intptr_t)sizeof(T) && sb == (intptr_t)sizeof(T))                        \
            return LEAF((const T *)(const void *)a, (const T *)(const void *)b, n);        \
        T x[DOT_LEAF], y[DOT_LEAF];                                                        \
        const intptr_t z = (intptr_t)sizeof(T);                                            \
        if (sa % z == 0 && sb % z == 0 && ((uintptr_t)a | (uintptr_t)b) % _Alignof(T) == 0) { \
            /* element strides, typed (Note [Strided paths] in loop_paths.h) */            \
            const T *pa = (const T *)(const void *)a, *pb = (const T *)(const void *)b;    \
            const intptr_t ea = sa / z, eb = sb / z;                                       \
            if (ea == 2 && eb == 2 && DOT_HAS_EVEN_LEAF_##T)                               \
                return DOT_EVEN_LEAF_##T(pa, pb, n);                                       \
            if (ea == 2 && eb == 2)                                                        \
                for (intptr_t i = 0; i < n; i++) x[i] = pa[2 * i], y[i] = pb[2 * i];       \
            else                                                                           \
                for (intptr_t i = 0; i < n; i++) x[i] = pa[i * ea], y[i] = pb[i * eb];     \
            return LEAF(x, y, n);                                                          \
        }                                                                                  \
        for (intptr_t i = 0; i < n; i++) {                                                 \
            memcpy(&x[i], a + i * sa, sizeof(T));                                          \
            memcpy(&y[i], b + i * sb, sizeof(T));                                          \
        }                                                                                  \
        return LEAF(x, y, n);                                                              \
    }
#if !defined(DOT_EVEN_LEAF_double)
#define DOT_EVEN_LEAF_double(a, b, n) 0.0
#define DOT_HAS_EVEN_LEAF_double 0
#else
#define DOT_HAS_EVEN_LEAF_double 1
#endif
#define DOT_EVEN_LEAF_float(a, b, n) 0.0
#define DOT_HAS_EVEN_LEAF_float 0
DEF_DOT_LEAF_OF(dot_leaf_of_f32, float, dot_leaf_f32)
DEF_DOT_LEAF_OF(dot_leaf_of_f64, double, dot_leaf_f64)

/* Narrow floats: widened to float32 by vector (narrow_vector.h), a leaf at a time. */
#define DEF_DOT_LEAF_NARROW(sfx, ST)                                                       \
    static double dot_leaf_of_##sfx(const char *a, intptr_t sa, const char *b, intptr_t sb, \
                                    intptr_t n)                                            \
    {                                                                                      \
        ST ga[DOT_LEAF], gb[DOT_LEAF];                                                     \
        const ST *pa = (const ST *)(const void *)a, *pb = (const ST *)(const void *)b;     \
        if (sa != (intptr_t)sizeof(ST)) { /* typed: x[::2] by shuffles (gather_bits.h) */  \
            dk_gather_bits(ga, a, sa, (intptr_t)sizeof(ST), n);                            \
            pa = ga;                                                                       \
        }                                                                                  \
        if (sb != (intptr_t)sizeof(ST)) {                                                  \
            dk_gather_bits(gb, b, sb, (intptr_t)sizeof(ST), n);                            \
            pb = gb;                                                                       \
        }                                                                                  \
        float x[DOT_LEAF], y[DOT_LEAF];                                                    \
        dk_##sfx##_to_f32_n(x, pa, n);                                                     \
        dk_##sfx##_to_f32_n(y, pb, n);                                                     \
        return dot_leaf_f32(x, y, n);                                                      \
    }
DEF_DOT_LEAF_NARROW(f16, uint16_t)
#define DOT_BITS_LEAF_(NAME, sfx, T, E, M, NANS) DEF_DOT_LEAF_NARROW(sfx, T)
DISPATCH_FORALL_BITS_FLOATS(DOT_BITS_LEAF_)

/* The sum's tree over leaves (Note [Dot order]). */
static double dot_tree(dot_leaf_fn leaf, const char *a, intptr_t sa, const char *b,
                       intptr_t sb, intptr_t n)
{
    if (n <= DOT_LEAF) return leaf(a, sa, b, sb, n);
    intptr_t h = ((n / DOT_LEAF + 1) / 2) * DOT_LEAF;
    double lo = dot_tree(leaf, a, sa, b, sb, h);
    double hi = dot_tree(leaf, a + h * sa, sa, b + h * sb, sb, n - h);
    return lo + hi;
}

#define DEF_DOT_FLOAT(NAME, LEAF)                                                          \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *a, intptr_t sa, const char *b,      \
                                           intptr_t sb, intptr_t n, void *out);            \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *a, intptr_t sa, const char *b,      \
                                           intptr_t sb, intptr_t n, void *out)             \
    {                                                                                      \
        double s = n > 0 ? dot_tree(LEAF, a, sa, b, sb, n) : 0.0;                          \
        memcpy(out, &s, sizeof s);                                                         \
    }
DEF_DOT_FLOAT(dispatch_kernel_dot_f32, dot_leaf_of_f32)
DEF_DOT_FLOAT(dispatch_kernel_dot_f64, dot_leaf_of_f64)
DEF_DOT_FLOAT(dispatch_kernel_dot_f16, dot_leaf_of_f16)
#define DOT_BITS_FLOAT_(NAME, sfx, T, E, M, NANS) \
    DEF_DOT_FLOAT(dispatch_kernel_dot_##sfx, dot_leaf_of_##sfx)
DISPATCH_FORALL_BITS_FLOATS(DOT_BITS_FLOAT_)

/* Integers: products and sum in unsigned lanes U of the dtype's width
 * (16 bits for 8-bit dtypes: x86 has no 8-bit multiply), which wrap; the
 * result sign-extended from T to int64. W: the type U multiplies in (not
 * int, where a uint16_t would promote and overflow). */
#define DEF_DOT_INT(NAME, T, U, W)                                                          \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *a, intptr_t sa, const char *b,      \
                                           intptr_t sb, intptr_t n, void *out);            \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *a, intptr_t sa, const char *b,      \
                                           intptr_t sb, intptr_t n, void *out)             \
    {                                                                                      \
        U acc = 0;                                                                         \
        if (sa == (intptr_t)sizeof(T) && sb == (intptr_t)sizeof(T)) {                      \
            const T *restrict x = (const T *)(const void *)a;                              \
            const T *restrict y = (const T *)(const void *)b;                              \
            for (intptr_t i = 0; i < n; i++) acc += (U)((W)(U)x[i] * (W)(U)y[i]);                \
        } else if (sa == 2 * (intptr_t)sizeof(T) && sb == 2 * (intptr_t)sizeof(T)) {      \
            /* every other element (x[::2]): a constant step, deinterleaved by        \
             * shuffles (per element, as below: 273 us for 256K uint8, torch 170) */   \
            const T *restrict x = (const T *)(const void *)a;                              \
            const T *restrict y = (const T *)(const void *)b;                              \
            for (intptr_t i = 0; i < n; i++) acc += (U)((W)(U)x[2 * i] * (W)(U)y[2 * i]);   \
        } else {                                                                           \
            for (intptr_t i = 0; i < n; i++) {                                             \
                T x, y;                                                                    \
                memcpy(&x, a + i * sa, sizeof x);                                          \
                memcpy(&y, b + i * sb, sizeof y);                                          \
                acc += (U)((W)(U)x * (W)(U)y);                                                 \
            }                                                                              \
        }                                                                                  \
        int64_t r = (int64_t)(T)acc;                                                       \
        memcpy(out, &r, sizeof r);                                                         \
    }
DEF_DOT_INT(dispatch_kernel_dot_u8, uint8_t, uint16_t, uint32_t)
DEF_DOT_INT(dispatch_kernel_dot_i8, int8_t, uint16_t, uint32_t)
DEF_DOT_INT(dispatch_kernel_dot_i16, int16_t, uint16_t, uint32_t)
DEF_DOT_INT(dispatch_kernel_dot_i32, int32_t, uint32_t, uint32_t)
DEF_DOT_INT(dispatch_kernel_dot_i64, int64_t, uint64_t, uint64_t)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define DOT_BITS_ENTRY_(NAME, sfx, T, E, M, NANS) \
    DISPATCH_KERNELS_REDUCE(DOT, NAME, dispatch_kernel_dot_##sfx, 1)
DISPATCH_KERNELS_EXPORT(dot,
    DISPATCH_KERNELS_REDUCE(DOT, UINT8, dispatch_kernel_dot_u8, 1)
    DISPATCH_KERNELS_REDUCE(DOT, INT8, dispatch_kernel_dot_i8, 1)
    DISPATCH_KERNELS_REDUCE(DOT, INT16, dispatch_kernel_dot_i16, 1)
    DISPATCH_KERNELS_REDUCE(DOT, INT32, dispatch_kernel_dot_i32, 1)
    DISPATCH_KERNELS_REDUCE(DOT, INT64, dispatch_kernel_dot_i64, 1)
    DISPATCH_KERNELS_REDUCE(DOT, FLOAT16, dispatch_kernel_dot_f16, 1)
    DISPATCH_FORALL_BITS_FLOATS(DOT_BITS_ENTRY_)
    DISPATCH_KERNELS_REDUCE(DOT, FLOAT32, dispatch_kernel_dot_f32, 1)
    DISPATCH_KERNELS_REDUCE(DOT, FLOAT64, dispatch_kernel_dot_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "dot.dispatch.h"
DISPATCH_KERNELS_CHOOSER(dot)
#endif
