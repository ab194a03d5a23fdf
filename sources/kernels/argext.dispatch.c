/*@targets baseline sse42 (avx2 fma3) avx512_skx vsx3 vxe rvv */
/*
 * The first index of the max or min of n contiguous elements, and its
 * value, in one pass: the ARG kernels of the reduction kernel table
 * (dispatch/reduce_kernel_table.h), which argmax, argmin, max(dim) and
 * min(dim) run for a contiguous reduced run of float32, float64 or an
 * integer dtype; and the same of each of a row-major matrix's columns, the
 * ARG_COLS kernels (Note [Column first extremes]), which every narrow float
 * has too.
 *
 * Note [One-pass first extremes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The answer is Note [max and min with indices]'s: the first element equal
 * to the extreme (a NaN's first index when a float run has one), its value
 * re-read from there. Found the two-pass way (the extreme, then a search
 * for it), a run was read twice, and argmax of 256K float64 took 2.7x
 * NumPy's one pass. Here the run is read in blocks of ARG_BLOCK bytes: each
 * block's extreme is taken in ARG_LANE_BYTES of lanes (element j into lane
 * j % lanes, no early exit: the compiler keeps the lanes in vectors), then
 * folded by halving the lanes; the first block whose extreme beats every
 * earlier block's (strictly) holds the first element equal to the run's
 * extreme, and only that block is searched again. A float block with a
 * NaN (tested in lanes beside the extreme) ends the pass: its first NaN is
 * the answer. The last elements short of a whole row of lanes are each a
 * block of one. Equal (==) is the test throughout, so a tie of -0.0 and
 * 0.0 answers the first of them, as the two passes did.
 */
#include <stdint.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"
#include "dispatch/reduce_kernel_table.h"

#define ARG_LANE_BYTES 256
#define ARG_BLOCK 8192
/* The search's rows: 256 bytes, at most 128 lanes (a lane number and the
 * row's length fit an unsigned lane as wide as the element); rows of 16
 * 8-byte lanes GCC unrolled whole and compiled scalar */
#define ARG_ROW(T) (sizeof(T) >= 2 ? 256 / sizeof(T) : 128)

#define ARG_GT_MAX(x, y) ((x) > (y))
#define ARG_GT_MIN(x, y) ((x) < (y))
/* x is a NaN: floats only (an integer is never one) */
#define ARG_NAN_FLOAT(x) ((x) != (x))
#define ARG_NAN_INT(x) 0

/* Halve the lanes m[0, 2h) into m[0, h), when there are more than h. */
#define ARG_HALVE(T, L, GT, m, nan, h)                                                   \
    if ((L) > (h))                                                                        \
        for (int k = 0; k < (h); k++) {                                                   \
            const T y = m[k + (h)];                                                       \
            m[k] = GT(y, m[k]) ? y : m[k];                                                \
            nan[k] |= nan[k + (h)];                                                       \
        }

/* Fold the ARG_LANE_BYTES (256) of lanes m[] of an integer T into m[0], as
 * vectors: the four 64-byte quarters into one, then its halves down to one
 * element. GCC compiled the lane-at-a-time halving into one serial chain of
 * the lanes through the stack (31 dependent maxima for int64). GT compares
 * vectors as it does elements: the mask it gives picks b's lanes. Integers
 * only: a float fold would also carry the NaN flags. */
_Static_assert(ARG_LANE_BYTES == 256, "ARG_FOLD_INT folds four 64-byte quarters");
#define ARG_VPICK(V, GT, a, b) ((V)((GT(b, a) & (__typeof__(GT(b, a)))(b)) |                 \
                                    (~GT(b, a) & (__typeof__(GT(b, a)))(a))))
#define ARG_VHALF(T, W, GT, m)                                                            \
    if ((W) >= sizeof(T)) { /* (the type is declared for any W) */                        \
        typedef T v_t __attribute__((vector_size((W) < sizeof(T) ? sizeof(T) : (W))));     \
        v_t a, b;                                                                         \
        memcpy(&a, m, sizeof a);                                                          \
        memcpy(&b, (char *)m + sizeof a, sizeof a);                                       \
        a = ARG_VPICK(v_t, GT, a, b);                                                     \
        memcpy(m, &a, sizeof a);                                                          \
    }
#define ARG_FOLD_INT(T, L, GT, m, nan)                                                    \
    {                                                                                     \
        typedef T v64_t __attribute__((vector_size(64)));                                 \
        v64_t q0, q1, q2, q3;                                                             \
        memcpy(&q0, m, 64), memcpy(&q1, (char *)m + 64, 64);                              \
        memcpy(&q2, (char *)m + 128, 64), memcpy(&q3, (char *)m + 192, 64);               \
        q0 = ARG_VPICK(v64_t, GT, q0, q1);                                                \
        q2 = ARG_VPICK(v64_t, GT, q2, q3);                                                \
        q0 = ARG_VPICK(v64_t, GT, q0, q2);                                                \
        memcpy(m, &q0, 64);                                                               \
        ARG_VHALF(T, 32, GT, m) ARG_VHALF(T, 16, GT, m) ARG_VHALF(T, 8, GT, m)           \
        ARG_VHALF(T, 4, GT, m) ARG_VHALF(T, 2, GT, m) ARG_VHALF(T, 1, GT, m)              \
        (void)nan;                                                                        \
    }
/* The lanes with their NaN flags, a lane at a time: the floats, and uint8,
 * whose unsigned lanes GCC folds as a vector tree itself (its argmax(dim=1)
 * of (512, 512) took 9.7 us this way, 13.1 through ARG_FOLD_INT). */
#define ARG_FOLD_LANES(T, L, GT, m, nan)                                                  \
    ARG_HALVE(T, L, GT, m, nan, 128) ARG_HALVE(T, L, GT, m, nan, 64)                      \
    ARG_HALVE(T, L, GT, m, nan, 32) ARG_HALVE(T, L, GT, m, nan, 16)                       \
    ARG_HALVE(T, L, GT, m, nan, 8) ARG_HALVE(T, L, GT, m, nan, 4)                         \
    ARG_HALVE(T, L, GT, m, nan, 2) ARG_HALVE(T, L, GT, m, nan, 1)

/* The first i in [at, at + len) with p[i] == best (there is one): a 64-bit
 * word of equal bits for each 64 / Z elements (ARG_EQ_WORD, per ISA below:
 * ARG_EQ_BITS bits an element), four words a step, the first set bit the
 * answer, where the search below took a lane minimum per row, folded across
 * the vector each time. argmax(dim=1) of (512, 512), 1 thread, AVX-512:
 * int32 29 -> 23.5 us, int8 17 -> 15 (NumPy 18 and 42); int64's time is the
 * first pass and the fold of its 32 lanes (ARG_FOLD_INT). Integers only:
 * the floats take the group form there (Note [First extremes in groups]). */
#if defined(__AVX512BW__)
#include <immintrin.h>
/* AVX-512: one vector compared under a mask, a bit an element */
#define ARG_EQ_MASK_1(v, x) _mm512_cmpeq_epi8_mask(v, x)
#define ARG_EQ_MASK_2(v, x) _mm512_cmpeq_epi16_mask(v, x)
#define ARG_EQ_MASK_4(v, x) _mm512_cmpeq_epi32_mask(v, x)
#define ARG_EQ_MASK_8(v, x) _mm512_cmpeq_epi64_mask(v, x)
#define ARG_SET1_1(b) _mm512_set1_epi8((char)(b))
#define ARG_SET1_2(b) _mm512_set1_epi16((short)(b))
#define ARG_SET1_4(b) _mm512_set1_epi32((int)(b))
#define ARG_SET1_8(b) _mm512_set1_epi64((long long)(b))
#define ARG_VEC __m512i
#define ARG_EQ_BITS(Z) 1
#define ARG_EQ_WORD(Z, p, b) ((uint64_t)ARG_EQ_MASK_##Z(_mm512_loadu_si512(p), b))
#define ARG_HAS_SEARCH 1
#elif defined(__AVX2__)
#include <immintrin.h>
/* AVX2: two vectors' equal lanes as byte masks (vpmovmskb), Z bits an element */
#define ARG_EQ_BYTES_1(v, x) _mm256_cmpeq_epi8(v, x)
#define ARG_EQ_BYTES_2(v, x) _mm256_cmpeq_epi16(v, x)
#define ARG_EQ_BYTES_4(v, x) _mm256_cmpeq_epi32(v, x)
#define ARG_EQ_BYTES_8(v, x) _mm256_cmpeq_epi64(v, x)
#define ARG_SET1_1(b) _mm256_set1_epi8((char)(b))
#define ARG_SET1_2(b) _mm256_set1_epi16((short)(b))
#define ARG_SET1_4(b) _mm256_set1_epi32((int)(b))
#define ARG_SET1_8(b) _mm256_set1_epi64x((long long)(b))
#define ARG_VEC __m256i
#define ARG_EQ_BITS(Z) (Z)
#define ARG_EQ_HALF_(Z, p, b)                                                             \
    (uint64_t)(uint32_t)_mm256_movemask_epi8(                                             \
        ARG_EQ_BYTES_##Z(_mm256_loadu_si256((const __m256i *)(const void *)(p)), b))
#define ARG_EQ_WORD(Z, p, b) (ARG_EQ_HALF_(Z, p, b) | ARG_EQ_HALF_(Z, (p) + 32 / Z, b) << 32)
#define ARG_HAS_SEARCH 1
#else
#define ARG_HAS_SEARCH 0
#endif
#if ARG_HAS_SEARCH
#define DEF_ARG_SEARCH_INT(NAME, T, Z)                                                    \
    static inline intptr_t NAME(const T *p, intptr_t at, intptr_t len, T best)           \
    {                                                                                     \
        enum { W = 64 / Z }; /* elements a word */                                        \
        const ARG_VEC b = ARG_SET1_##Z(best);                                             \
        intptr_t i = at;                                                                  \
        const intptr_t end = at + len;                                                    \
        for (; i + 4 * W <= end; i += 4 * W) {                                            \
            const uint64_t m0 = ARG_EQ_WORD(Z, p + i, b), m1 = ARG_EQ_WORD(Z, p + i + W, b); \
            const uint64_t m2 = ARG_EQ_WORD(Z, p + i + 2 * W, b);                         \
            const uint64_t m3 = ARG_EQ_WORD(Z, p + i + 3 * W, b);                         \
            if (m0 | m1 | m2 | m3) {                                                      \
                const int k = m0 ? 0 : m1 ? 1 : m2 ? 2 : 3;                               \
                const uint64_t m = k == 0 ? m0 : k == 1 ? m1 : k == 2 ? m2 : m3;          \
                return i + k * W + __builtin_ctzll(m) / ARG_EQ_BITS(Z);                   \
            }                                                                             \
        }                                                                                 \
        for (; i + W <= end; i += W) {                                                    \
            const uint64_t m = ARG_EQ_WORD(Z, p + i, b);                                  \
            if (m) return i + __builtin_ctzll(m) / ARG_EQ_BITS(Z);                        \
        }                                                                                 \
        while (!(p[i] == best)) i++;                                                      \
        return i;                                                                         \
    }
#endif

/*
 * Note [First extremes in groups]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * AVX-512, AVX2 and SSE4.2, 4- and 8-byte floats and signed integers: the one pass keeps,
 * per lane, the extreme and the first group of four vectors that raised it
 * (a strictly better group maximum; the running extreme itself is a max, off
 * the chain of compares). At the end the extreme is the lanes' extreme, the
 * group the least of the lanes holding it, and the answer the first equal
 * element of that group: four compares, where the one-pass form above
 * searched up to the whole run. A NaN is found by an unordered compare of
 * each pair of vectors (two a group, where a test per vector cost a third
 * of the pass); a run with one is scanned for its first. Per group: 3 max,
 * 1 compare, 2 selects and 2 NaN compares for 4 vectors, where the lane
 * form took 5 operations a vector. The kernel alone, 64 rows of 512 in L2,
 * one thread: float64 76 (extreme at a random place) / 93 (last) -> 48 ns a
 * row, int64 65 / 83 -> 41, float32 46 / 58 -> 30, int32 32 / 52 -> 26. A
 * last group short of four vectors is loaded in part (masked). The group's
 * first element is a 32-bit lane for 4-byte types, so a run is taken 2^30
 * elements at a time. On AVX2 (8 lanes, masks as vectors), argmax(dim=1) of
 * (512, 512), 1 thread, against the lane form with AVX2's search: int32 37
 * -> 17 us, int64 61 -> 33, float32 39 -> 21, float64 69 -> 31 (NumPy's AVX2
 * loops 18, 37, 21, 38). In SSE4.2's 16-byte vectors (4 or 2 lanes), the
 * same, against the lane form: int32 50-54 -> 33 us, int64 96-104 -> 70,
 * float32 72 -> 44, float64 140 -> 70 (NumPy's SSE loops 43, 88-131, 55,
 * 100-154). Its search (the byte masks of four vectors a 64-bit word) was
 * tried for the narrow integers' lane form there and lost: int8 and int16
 * argmax(dim=1) 31-39 -> 33-43 us, so below AVX2 they keep the row search.
 */
/* Both directions of a group form (DEF_ARG_GROUPS, per ISA below), a run
 * taken 2^30 elements at a time. */
#define DEF_ARG_GROUPS_BOTH(sfx, T, VT, S, KT, I)                                         \
    DEF_ARG_GROUPS(arg_groups_max_##sfx, T, VT, S, KT, I, MAX)                            \
    DEF_ARG_GROUPS(arg_groups_min_##sfx, T, VT, S, KT, I, MIN)                            \
    static intptr_t arg_groups_##sfx(int is_min, const T *p, intptr_t n, T *value)       \
    {                                                                                     \
        enum { CHUNK = 1 << 30 }; /* the group lanes' range (4-byte types) */            \
        intptr_t at = -1;                                                                 \
        T best = p[0];                                                                    \
        for (intptr_t c = 0; c < n; c += CHUNK) {                                         \
            T v;                                                                          \
            const intptr_t m = n - c < CHUNK ? n - c : CHUNK;                             \
            const intptr_t j = c + (is_min ? arg_groups_min_##sfx(p + c, m, &v)           \
                                           : arg_groups_max_##sfx(p + c, m, &v));         \
            if (v != v) { *value = v; return j; }                                         \
            if (at < 0 || (is_min ? ARG_GT_MIN(v, best) : ARG_GT_MAX(v, best)))           \
                best = v, at = j;                                                         \
        }                                                                                 \
        *value = best;                                                                    \
        return at;                                                                        \
    }
#if defined(__AVX512F__) /* every intrinsic below is AVX512F */
#include <immintrin.h>
#define ARGV_GT_ps(x, y) _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ)
#define ARGV_GT_pd(x, y) _mm512_cmp_pd_mask(x, y, _CMP_GT_OQ)
#define ARGV_GT_epi32(x, y) _mm512_cmpgt_epi32_mask(x, y)
#define ARGV_GT_epi64(x, y) _mm512_cmpgt_epi64_mask(x, y)
#define ARGV_EQ_ps(x, y) _mm512_cmp_ps_mask(x, y, _CMP_EQ_OQ)
#define ARGV_EQ_pd(x, y) _mm512_cmp_pd_mask(x, y, _CMP_EQ_OQ)
#define ARGV_EQ_epi32(x, y) _mm512_cmpeq_epi32_mask(x, y)
#define ARGV_EQ_epi64(x, y) _mm512_cmpeq_epi64_mask(x, y)
#define ARGV_UNORD_ps(x, y) _mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q)
#define ARGV_UNORD_pd(x, y) _mm512_cmp_pd_mask(x, y, _CMP_UNORD_Q)
#define ARGV_UNORD_epi32(x, y) 0
#define ARGV_UNORD_epi64(x, y) 0
#define ARGV_LOAD_ps _mm512_loadu_ps
#define ARGV_LOAD_pd _mm512_loadu_pd
#define ARGV_LOAD_epi32(p) _mm512_loadu_si512(p)
#define ARGV_LOAD_epi64(p) _mm512_loadu_si512(p)
#define ARGV_SET1_ps _mm512_set1_ps
#define ARGV_SET1_pd _mm512_set1_pd
#define ARGV_SET1_epi32 _mm512_set1_epi32
#define ARGV_SET1_epi64 _mm512_set1_epi64
/* the direction: max or min, and which of two lanes beats the other */
#define ARGV_EXT_MAX(S, x, y) _mm512_max_##S(x, y)
#define ARGV_EXT_MIN(S, x, y) _mm512_min_##S(x, y)
#define ARGV_BEATS_MAX(S, x, y) ARGV_GT_##S(x, y)
#define ARGV_BEATS_MIN(S, x, y) ARGV_GT_##S(y, x)
#define ARGV_REDUCE_MAX(S, v) _mm512_reduce_max_##S(v)
#define ARGV_REDUCE_MIN(S, v) _mm512_reduce_min_##S(v)
/* The lanes of the r-th vector of a group at p + at that lie before n, as a
 * mask (r < 4, at < n). */
#define ARGV_PART(KT, V, n, at, r)                                                        \
    ((KT)((n) - (at) - (r) * (V) >= (V) ? ~0u                                              \
          : (n) - (at) <= (r) * (V) ? 0u : (1u << ((n) - (at) - (r) * (V))) - 1))
/* Group r of 4 vectors at p + at, lanes past n holding fill. */
#define ARGV_GROUP_LOAD(S, KT, V, fill, p, n, at, r)                                      \
    ((at) + ((r) + 1) * (V) <= (n) ? ARGV_LOAD_##S((p) + (at) + (r) * (V))                \
                                   : _mm512_mask_loadu_##S(fill, ARGV_PART(KT, V, n, at, r), (p) + (at) + (r) * (V)))
/* NAME(p, n, value) as DEF_ARG's, for 0 < n < 2^31: S the element's
 * operations (ps, pd, epi32, epi64), I the group lanes' (epi32, epi64), DIR
 * MAX or MIN. The lanes start at p[0] (first group 0), which also fills the
 * lanes of a last group past n: it never beats a lane, so a lane that takes
 * that group took it for an element before n. */
#define DEF_ARG_GROUPS(NAME, T, VT, S, KT, I, DIR)                                        \
    static intptr_t NAME(const T *p, intptr_t n, T *value)                               \
    {                                                                                     \
        enum { V = 64 / sizeof(T), G = 4 * V };                                           \
        const VT fill = ARGV_SET1_##S(p[0]);                                              \
        VT ext = fill;                                                                    \
        __m512i first = _mm512_setzero_si512();                                           \
        KT nan = 0;                                                                       \
        for (intptr_t i = 0; i < n; i += G) {                                             \
            VT a, b, c, d;                                                                \
            if (i + G <= n) {                                                             \
                a = ARGV_LOAD_##S(p + i), b = ARGV_LOAD_##S(p + i + V);                   \
                c = ARGV_LOAD_##S(p + i + 2 * V), d = ARGV_LOAD_##S(p + i + 3 * V);       \
            } else {                                                                      \
                a = ARGV_GROUP_LOAD(S, KT, V, fill, p, n, i, 0);                          \
                b = ARGV_GROUP_LOAD(S, KT, V, fill, p, n, i, 1);                          \
                c = ARGV_GROUP_LOAD(S, KT, V, fill, p, n, i, 2);                          \
                d = ARGV_GROUP_LOAD(S, KT, V, fill, p, n, i, 3);                          \
            }                                                                             \
            nan |= ARGV_UNORD_##S(a, b) | ARGV_UNORD_##S(c, d);                           \
            const VT x = ARGV_EXT_##DIR(S, ARGV_EXT_##DIR(S, a, b), ARGV_EXT_##DIR(S, c, d)); \
            const KT raised = ARGV_BEATS_##DIR(S, x, ext);                                \
            ext = ARGV_EXT_##DIR(S, ext, x);                                              \
            first = _mm512_mask_blend_##I(raised, first, _mm512_set1_##I(i));             \
        }                                                                                 \
        if (nan)                                                                          \
            for (intptr_t j = 0;; j++)                                                    \
                if (p[j] != p[j]) { *value = p[j]; return j; }                            \
        const VT best = ARGV_SET1_##S(ARGV_REDUCE_##DIR(S, ext));                         \
        intptr_t at = _mm512_mask_reduce_min_##I(ARGV_EQ_##S(ext, best), first);          \
        uint64_t eq = 0;                                                                  \
        for (int r = 3; r >= 0; r--)                                                      \
            eq = eq << V | (uint64_t)ARGV_EQ_##S(ARGV_GROUP_LOAD(S, KT, V, fill, p, n, at, r), best); \
        at += __builtin_ctzll(eq);                                                        \
        *value = p[at];                                                                   \
        return at;                                                                        \
    }
DEF_ARG_GROUPS_BOTH(f32, float, __m512, ps, __mmask16, epi32)
DEF_ARG_GROUPS_BOTH(f64, double, __m512d, pd, __mmask8, epi64)
DEF_ARG_GROUPS_BOTH(i32, int32_t, __m512i, epi32, __mmask16, epi32)
DEF_ARG_GROUPS_BOTH(i64, int64_t, __m512i, epi64, __mmask8, epi64)
#elif defined(__AVX2__) || defined(__SSE4_2__)
/* The group form on AVX2 and in SSE4.2's 16-byte vectors (Note [First
 * extremes in groups]): the same pass with 8 or 4 lanes (4 or 2 of 8
 * bytes) and masks as vectors; int64 has no max or min instruction (a
 * compare and a blend). The lanes are folded through memory (8 at most)
 * and a last part short of a group is taken an element at a time. */
#include <immintrin.h>
#if defined(__AVX2__)
#define ARGW_BYTES 32
#define ARGW_IVEC __m256i
#define ARGW_ZERO() _mm256_setzero_si256()
#define ARGW_OR(x, y) _mm256_or_si256(x, y)
#define ARGW_BLEND(x, y, m) _mm256_blendv_epi8(x, y, m) /* y where m */
#define ARGW_ANY(m) (!_mm256_testz_si256(m, m))
#define ARGW_VT_ps __m256
#define ARGW_VT_pd __m256d
#define ARGW_VT_epi32 __m256i
#define ARGW_VT_epi64 __m256i
#define ARGW_LOAD_ps(p) _mm256_loadu_ps(p)
#define ARGW_LOAD_pd(p) _mm256_loadu_pd(p)
#define ARGW_LOAD_epi32(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ARGW_LOAD_epi64(p) ARGW_LOAD_epi32(p)
#define ARGW_SET1_ps _mm256_set1_ps
#define ARGW_SET1_pd _mm256_set1_pd
#define ARGW_SET1_epi32 _mm256_set1_epi32
#define ARGW_SET1_epi64(x) _mm256_set1_epi64x((long long)(x))
/* all-ones lanes where x > y, x == y, or either is a NaN */
#define ARGW_GT_ps(x, y) _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_GT_OQ))
#define ARGW_GT_pd(x, y) _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_GT_OQ))
#define ARGW_GT_epi32(x, y) _mm256_cmpgt_epi32(x, y)
#define ARGW_GT_epi64(x, y) _mm256_cmpgt_epi64(x, y)
#define ARGW_EQ_ps(x, y) _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_EQ_OQ))
#define ARGW_EQ_pd(x, y) _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_EQ_OQ))
#define ARGW_EQ_epi32(x, y) _mm256_cmpeq_epi32(x, y)
#define ARGW_EQ_epi64(x, y) _mm256_cmpeq_epi64(x, y)
#define ARGW_UNORD_ps(x, y) _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_UNORD_Q))
#define ARGW_UNORD_pd(x, y) _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_UNORD_Q))
#define ARGW_UNORD_epi32(x, y) _mm256_setzero_si256()
#define ARGW_UNORD_epi64(x, y) _mm256_setzero_si256()
#define ARGW_MAX_ps _mm256_max_ps
#define ARGW_MAX_pd _mm256_max_pd
#define ARGW_MAX_epi32 _mm256_max_epi32
#define ARGW_MAX_epi64(x, y) _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(y, x))
#define ARGW_MIN_ps _mm256_min_ps
#define ARGW_MIN_pd _mm256_min_pd
#define ARGW_MIN_epi32 _mm256_min_epi32
#define ARGW_MIN_epi64(x, y) _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(x, y))
/* a lane mask as one bit a lane */
#define ARGW_BITS_ps(m) (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(m))
#define ARGW_BITS_pd(m) (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(m))
#else /* SSE4.2: SSE4.1's blends, integer max/min and 64-bit ==, SSE4.2's 64-bit > */
#define ARGW_BYTES 16
#define ARGW_IVEC __m128i
#define ARGW_ZERO() _mm_setzero_si128()
#define ARGW_OR(x, y) _mm_or_si128(x, y)
#define ARGW_BLEND(x, y, m) _mm_blendv_epi8(x, y, m)
#define ARGW_ANY(m) (!_mm_testz_si128(m, m))
#define ARGW_VT_ps __m128
#define ARGW_VT_pd __m128d
#define ARGW_VT_epi32 __m128i
#define ARGW_VT_epi64 __m128i
#define ARGW_LOAD_ps(p) _mm_loadu_ps(p)
#define ARGW_LOAD_pd(p) _mm_loadu_pd(p)
#define ARGW_LOAD_epi32(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ARGW_LOAD_epi64(p) ARGW_LOAD_epi32(p)
#define ARGW_SET1_ps _mm_set1_ps
#define ARGW_SET1_pd _mm_set1_pd
#define ARGW_SET1_epi32 _mm_set1_epi32
#define ARGW_SET1_epi64(x) _mm_set1_epi64x((long long)(x))
#define ARGW_GT_ps(x, y) _mm_castps_si128(_mm_cmpgt_ps(x, y))
#define ARGW_GT_pd(x, y) _mm_castpd_si128(_mm_cmpgt_pd(x, y))
#define ARGW_GT_epi32(x, y) _mm_cmpgt_epi32(x, y)
#define ARGW_GT_epi64(x, y) _mm_cmpgt_epi64(x, y)
#define ARGW_EQ_ps(x, y) _mm_castps_si128(_mm_cmpeq_ps(x, y))
#define ARGW_EQ_pd(x, y) _mm_castpd_si128(_mm_cmpeq_pd(x, y))
#define ARGW_EQ_epi32(x, y) _mm_cmpeq_epi32(x, y)
#define ARGW_EQ_epi64(x, y) _mm_cmpeq_epi64(x, y)
#define ARGW_UNORD_ps(x, y) _mm_castps_si128(_mm_cmpunord_ps(x, y))
#define ARGW_UNORD_pd(x, y) _mm_castpd_si128(_mm_cmpunord_pd(x, y))
#define ARGW_UNORD_epi32(x, y) _mm_setzero_si128()
#define ARGW_UNORD_epi64(x, y) _mm_setzero_si128()
#define ARGW_MAX_ps _mm_max_ps
#define ARGW_MAX_pd _mm_max_pd
#define ARGW_MAX_epi32 _mm_max_epi32
#define ARGW_MAX_epi64(x, y) _mm_blendv_epi8(x, y, _mm_cmpgt_epi64(y, x))
#define ARGW_MIN_ps _mm_min_ps
#define ARGW_MIN_pd _mm_min_pd
#define ARGW_MIN_epi32 _mm_min_epi32
#define ARGW_MIN_epi64(x, y) _mm_blendv_epi8(x, y, _mm_cmpgt_epi64(x, y))
#define ARGW_BITS_ps(m) (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(m))
#define ARGW_BITS_pd(m) (uint32_t)_mm_movemask_pd(_mm_castsi128_pd(m))
#endif
#define ARGW_BITS_epi32 ARGW_BITS_ps
#define ARGW_BITS_epi64 ARGW_BITS_pd
#define ARGW_LANE_epi32 int32_t
#define ARGW_LANE_epi64 int64_t
#define ARGW_EXT_MAX(S, x, y) ARGW_MAX_##S(x, y)
#define ARGW_EXT_MIN(S, x, y) ARGW_MIN_##S(x, y)
#define ARGW_BEATS_MAX(S, x, y) ARGW_GT_##S(x, y)
#define ARGW_BEATS_MIN(S, x, y) ARGW_GT_##S(y, x)
/* DEF_ARG_GROUPS of the AVX-512 form above, for 0 < n < 2^31 (KT unused) */
#define DEF_ARG_GROUPS(NAME, T, VT, S, KT, I, DIR)                                        \
    static intptr_t NAME(const T *p, intptr_t n, T *value)                               \
    {                                                                                     \
        enum { V = ARGW_BYTES / sizeof(T), G = 4 * V };                                   \
        intptr_t i = 0, at = 0;                                                           \
        T best = p[0];                                                                    \
        if (n >= G) {                                                                     \
            VT ext = ARGW_SET1_##S(p[0]);                                                 \
            ARGW_IVEC first = ARGW_ZERO(), nan = ARGW_ZERO();                             \
            for (; i + G <= n; i += G) {                                                  \
                const VT a = ARGW_LOAD_##S(p + i), b = ARGW_LOAD_##S(p + i + V);          \
                const VT c = ARGW_LOAD_##S(p + i + 2 * V), d = ARGW_LOAD_##S(p + i + 3 * V); \
                nan = ARGW_OR(nan, ARGW_OR(ARGW_UNORD_##S(a, b), ARGW_UNORD_##S(c, d)));  \
                const VT x = ARGW_EXT_##DIR(S, ARGW_EXT_##DIR(S, a, b),                   \
                                            ARGW_EXT_##DIR(S, c, d));                     \
                const ARGW_IVEC raised = ARGW_BEATS_##DIR(S, x, ext);                     \
                ext = ARGW_EXT_##DIR(S, ext, x);                                          \
                first = ARGW_BLEND(first, ARGW_SET1_##I(i), raised);                      \
            }                                                                             \
            if (ARGW_ANY(nan))                                                            \
                for (intptr_t j = 0;; j++)                                                \
                    if (p[j] != p[j]) { *value = p[j]; return j; }                        \
            T e[V];                                                                       \
            ARGW_LANE_##I f[V];                                                           \
            memcpy(e, &ext, sizeof e);                                                    \
            memcpy(f, &first, sizeof f);                                                  \
            best = e[0];                                                                  \
            for (int k = 1; k < V; k++) best = ARG_GT_##DIR(e[k], best) ? e[k] : best;    \
            at = n;                                                                       \
            for (int k = 0; k < V; k++) at = e[k] == best && f[k] < at ? f[k] : at;       \
            const VT bv = ARGW_SET1_##S(best);                                            \
            uint32_t eq = 0;                                                              \
            for (int r = 3; r >= 0; r--)                                                  \
                eq = eq << V | ARGW_BITS_##S(ARGW_EQ_##S(ARGW_LOAD_##S(p + at + r * V), bv)); \
            at += __builtin_ctz(eq);                                                      \
        }                                                                                 \
        for (; i < n; i++) { /* past the whole groups: the first NaN, or strictly better */ \
            if (p[i] != p[i]) { *value = p[i]; return i; }                                \
            if (i == 0 || ARG_GT_##DIR(p[i], best)) best = p[i], at = i;                  \
        }                                                                                 \
        *value = p[at];                                                                   \
        return at;                                                                        \
    }
DEF_ARG_GROUPS_BOTH(f32, float, ARGW_VT_ps, ps, int, epi32)
DEF_ARG_GROUPS_BOTH(f64, double, ARGW_VT_pd, pd, int, epi64)
DEF_ARG_GROUPS_BOTH(i32, int32_t, ARGW_VT_epi32, epi32, int, epi32)
DEF_ARG_GROUPS_BOTH(i64, int64_t, ARGW_VT_epi64, epi64, int, epi64)
#endif
#if defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE4_2__)
/* The group form of T's run (a C11 selection by the element type), or none
 * where T has none: an unsigned or narrow integer keeps the lane form. */
#define ARG_GROUPS_OF(q)                                                                  \
    _Generic((q), const float *: arg_groups_f32, const double *: arg_groups_f64,         \
             const int32_t *: arg_groups_i32, const int64_t *: arg_groups_i64,            \
             default: arg_groups_none)
#define ARG_GROUPS_FLOATS 1
#else
#define ARG_GROUPS_OF(q) ((void)(q), arg_groups_none)
#define ARG_GROUPS_FLOATS 0
#endif
/* Never called: the marker of "no group form" (a distinct function, so
 * ARG_HAS_GROUPS is a constant the compiler folds, and the lane form of a
 * type that has groups is never compiled into this target). */
static intptr_t arg_groups_none(int is_min, const void *p, intptr_t n, void *value)
{
    (void)is_min, (void)p, (void)n, (void)value;
    return -1;
}
#define ARG_HAS_GROUPS(q) ((void (*)(void))ARG_GROUPS_OF(q) != (void (*)(void))arg_groups_none)

/* The last elements short of a row of lanes (blocks of one), then the
 * answer: the element at `at`, or the first equal to best in [at, at + len)
 * (there is one), searched ARG_ROW(T) elements at a time, each row's least
 * lane holding an equal element taken as a minimum over the lanes (no
 * early exit inside a row, no scan of it after). Two forms that kept a
 * position per lane instead (the row of each lane's extreme in the pass,
 * or of its first equal element in a search of the whole block with no
 * early exit) measured slower: 1.5-1.7x on rows of 512 int32 and float64. */
#define ARG_FINISH(T, POS, GT, ISNAN, SEARCH)                                             \
    for (; b < n; b++) {                                                                  \
        const T x = p[b];                                                                 \
        if (ISNAN(x)) { *value = x; return b; }                                           \
        if (b == 0 || GT(x, best)) best = x, at = b, len = 1;                             \
    }                                                                                     \
    if (ARG_HAS_SEARCH) {                                                                 \
        const intptr_t f = SEARCH(p, at, len, best);                                      \
        *value = p[f];                                                                    \
        return f;                                                                         \
    }                                                                                     \
    enum { R = ARG_ROW(T) };                                                              \
    intptr_t i = at;                                                                      \
    for (; i + R <= at + len; i += R) {                                                   \
        POS pos = R;                                                                      \
        for (int k = 0; k < R; k++) {                                                     \
            const POS c = p[i + k] == best ? (POS)k : (POS)R;                             \
            pos = c < pos ? c : pos;                                                      \
        }                                                                                 \
        if (pos < R) { i += pos; break; }                                                 \
    }                                                                                     \
    while (!(p[i] == best)) i++;                                                          \
    *value = p[i];                                                                        \
    return i;

/* A block's first NaN (its lanes saw one): the answer. */
#define ARG_FIRST_NAN(T, ISNAN)                                                           \
    {                                                                                     \
        intptr_t i = 0;                                                                   \
        while (!ISNAN(q[i])) i++;                                                         \
        *value = q[i];                                                                    \
        return b + i;                                                                     \
    }

/* NAME(p, n, value): the first index of the extreme (GT: beats) of the n > 0
 * elements of T at p, its value at *value. ANY: a lane flag as wide as T,
 * POS an unsigned lane as wide. */
#define DEF_ARG(NAME, T, ANY, POS, GT, ISNAN, SEARCH, FOLD)                               \
    static intptr_t NAME(const T *p, intptr_t n, T *value)                               \
    {                                                                                     \
        enum { L = ARG_LANE_BYTES / sizeof(T), B = ARG_BLOCK / sizeof(T) };              \
        T best = p[0];                                                                    \
        intptr_t at = 0, len = 1, b = 0;                                                  \
        for (; b + L <= n; b += B) {                                                      \
            const intptr_t w = (n - b < B ? n - b : B) / L * L;                           \
            const T *q = p + b;                                                           \
            T m[L];                                                                       \
            ANY nan[L];                                                                   \
            for (int k = 0; k < L; k++) m[k] = q[k], nan[k] = (ANY)ISNAN(q[k]);           \
            for (intptr_t j = L; j < w; j += L)                                           \
                for (int k = 0; k < L; k++) {                                             \
                    const T x = q[j + k];                                                 \
                    m[k] = GT(x, m[k]) ? x : m[k];                                        \
                    nan[k] |= (ANY)ISNAN(x);                                              \
                }                                                                         \
            FOLD(T, L, GT, m, nan)                                                        \
            if (nan[0]) ARG_FIRST_NAN(T, ISNAN)                                           \
            if (b == 0 || GT(m[0], best)) best = m[0], at = b, len = w;                   \
            if (w < B) { b += w; break; }                                                 \
        }                                                                                 \
        ARG_FINISH(T, POS, GT, ISNAN, SEARCH)                                             \
    }

/* One exported kernel per dtype (dispatch_rk_arg_fn): is_min picks the
 * direction. */
#define DEF_ARG_DTYPE(sfx, T, ANY, POS, ISNAN, FOLD)                                      \
    DEF_ARG(arg_max_##sfx, T, ANY, POS, ARG_GT_MAX, ISNAN, arg_search_##sfx, FOLD)        \
    DEF_ARG(arg_min_##sfx, T, ANY, POS, ARG_GT_MIN, ISNAN, arg_search_##sfx, FOLD)        \
    int64_t DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_arg_##sfx)(int is_min, const char *p, \
                                                                   intptr_t n, char *value); \
    int64_t DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_arg_##sfx)(int is_min, const char *p, \
                                                                   intptr_t n, char *value)  \
    {                                                                                     \
        T v;                                                                              \
        const T *q = (const T *)(const void *)p;                                          \
        const intptr_t i = ARG_HAS_GROUPS(q) /* Note [First extremes in groups] */          \
                               ? ARG_GROUPS_OF(q)(is_min, q, n, &v)                         \
                           : is_min ? arg_min_##sfx(q, n, &v) : arg_max_##sfx(q, n, &v);   \
        memcpy(value, &v, sizeof v);                                                      \
        return (int64_t)i;                                                                \
    }

/* a lane flag as wide as the element */
#define ARG_ANY_1 int8_t
#define ARG_ANY_2 int16_t
#define ARG_ANY_4 int32_t
#define ARG_ANY_8 int64_t
/* a lane's position in a row of the search, as wide as the element */
#define ARG_POS_1 uint8_t
#define ARG_POS_2 uint16_t
#define ARG_POS_4 uint32_t
#define ARG_POS_8 uint64_t
#define ARG_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ARG_ROW_##CAT(sfx, T, size)
/* Never called: ARG_FINISH tests ARG_HAS_SEARCH first, and where it holds
 * (AVX-512, AVX2) the floats take the group form, their lane form never compiled. */
#define ARG_SEARCH_NONE(sfx, T)                                                           \
    static inline intptr_t arg_search_##sfx(const T *p, intptr_t at, intptr_t len, T best) \
    {                                                                                     \
        (void)p, (void)len, (void)best;                                                   \
        return at;                                                                        \
    }
_Static_assert(!ARG_HAS_SEARCH || ARG_GROUPS_FLOATS, "the floats' lane form needs a search");
ARG_SEARCH_NONE(f32, float)
ARG_SEARCH_NONE(f64, double)
#if ARG_HAS_SEARCH
#define ARG_SEARCH_OF_(sfx, T, size) DEF_ARG_SEARCH_INT(arg_search_##sfx, T, size)
#else
#define ARG_SEARCH_OF_(sfx, T, size) ARG_SEARCH_NONE(sfx, T)
#endif
/* The integer fold: by lanes for an unsigned byte (ARG_FOLD_LANES), and
 * below AVX-512 for every 1- and 2-byte integer, else as vectors; decided by
 * the type, so a new integer dtype needs nothing here. With AVX2,
 * argmax(dim=1) of (512, 512): int8 38 -> 23 us, int16 34 -> 25 by lanes
 * (NumPy 25, 23); on AVX-512 by lanes took int8 13 -> 14, int16 14 -> 18.
 * Clang (14) folds the lanes one at a time, so under clang uint8 folds as
 * vectors too: its AVX512_SKX build's uint8 max(dim=1) of (512, 512) 42.3 ->
 * 16.8 us (gcc's by lanes 10.5). */
#if defined(__AVX512BW__) && defined(__clang__)
#define ARG_NARROW_BY_LANES(T) 0
#elif defined(__AVX512BW__)
#define ARG_NARROW_BY_LANES(T) ((T)-1 > 0 && sizeof(T) == 1)
#else
#define ARG_NARROW_BY_LANES(T) (sizeof(T) <= 2)
#endif
#define ARG_FOLD_INTEGER(T, L, GT, m, nan)                                                \
    if (ARG_NARROW_BY_LANES(T)) {                                                         \
        ARG_FOLD_LANES(T, L, GT, m, nan)                                                  \
    } else                                                                                \
        ARG_FOLD_INT(T, L, GT, m, nan)
#define ARG_ROW_INT(sfx, T, size)                                                         \
    ARG_SEARCH_OF_(sfx, T, size)                                                          \
    DEF_ARG_DTYPE(sfx, T, ARG_ANY_##size, ARG_POS_##size, ARG_NAN_INT, ARG_FOLD_INTEGER)
#define ARG_ROW_BOOL(sfx, T, size)
#define ARG_ROW_FLOAT(sfx, T, size)
DISPATCH_FORALL_DTYPES(ARG_ROW_)
DEF_ARG_DTYPE(f32, float, int32_t, uint32_t, ARG_NAN_FLOAT, ARG_FOLD_LANES)
DEF_ARG_DTYPE(f64, double, int64_t, uint64_t, ARG_NAN_FLOAT, ARG_FOLD_LANES)

/*
 * Note [Column first extremes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max(dim=0), min(dim=0), argmax(dim=0) and argmin(dim=0) of a row-major
 * matrix: each column's first extreme. Found as the values' column
 * reduction and then a search down the rows for each column's first equal
 * element (Note [Column searches] in sources/iterator/reduce_indices.c),
 * every block of columns with a candidate in a row was scanned a column at
 * a time, and with few rows nearly every block has one: max(dim=0) of
 * (8, 512) float64 took 10 us, its values alone 1.7 (torch 6.4). Here the
 * rows are walked once, in memory order, each column's best value and row
 * kept beside it: per element one compare and two selects, no early exit,
 * so the compiler keeps a row's columns in vectors. A column's best changes
 * only for a strictly better element or a first NaN (the NaN then stays),
 * so the first extreme is kept, with its own bits (a tie of -0.0 and 0.0
 * keeps the first). ARG_COLS_BLOCK columns at a time: their best values
 * and rows stay in L1 down all the rows.
 */
#define ARG_COLS_BLOCK 512
#define DEF_ARG_COLS_ONE(name, T, GT, ISNAN)                                              \
    static void name(const char *p, intptr_t rstride, intptr_t nrows, intptr_t ncols,     \
                     int64_t rstep, T *vals, int64_t *rows)                               \
    {                                                                                     \
        for (intptr_t c0 = 0; c0 < ncols; c0 += ARG_COLS_BLOCK) {                         \
            const intptr_t w = ncols - c0 < ARG_COLS_BLOCK ? ncols - c0 : ARG_COLS_BLOCK; \
            T *restrict v = vals + c0;                                                    \
            int64_t *restrict at = rows + c0;                                             \
            memcpy(v, (const T *)(const void *)p + c0, (size_t)w * sizeof(T));            \
            for (intptr_t j = 0; j < w; j++) at[j] = 0;                                   \
            for (intptr_t r = 1; r < nrows; r++) {                                        \
                const T *restrict row = (const T *)(const void *)(p + r * rstride) + c0;  \
                const int64_t here = (int64_t)r * rstep;                                  \
                for (intptr_t j = 0; j < w; j++) {                                        \
                    const T x = row[j], m = v[j];                                         \
                    const int take = GT(x, m) | (ISNAN(x) & !ISNAN(m));                   \
                    v[j] = take ? x : m;                                                  \
                    at[j] = take ? here : at[j];                                          \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    }
/* The exported ARG_COLS kernel of sfx: arg_cols_min_<sfx> or _max_, its
 * values of storage type T. */
#define ARG_COLS_EXPORT_(sfx, T)                                                          \
    void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_arg_cols_##sfx)(                     \
        int is_min, const char *p, intptr_t rstride, intptr_t nrows, intptr_t ncols,      \
        int64_t rstep, char *vals, int64_t *rows);                                        \
    void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_arg_cols_##sfx)(                     \
        int is_min, const char *p, intptr_t rstride, intptr_t nrows, intptr_t ncols,      \
        int64_t rstep, char *vals, int64_t *rows)                                         \
    {                                                                                     \
        T *v = (T *)(void *)vals;                                                         \
        if (is_min) arg_cols_min_##sfx(p, rstride, nrows, ncols, rstep, v, rows);         \
        else arg_cols_max_##sfx(p, rstride, nrows, ncols, rstep, v, rows);                \
    }
#define DEF_ARG_COLS(sfx, T, ISNAN)                                                       \
    DEF_ARG_COLS_ONE(arg_cols_max_##sfx, T, ARG_GT_MAX, ISNAN)                            \
    DEF_ARG_COLS_ONE(arg_cols_min_##sfx, T, ARG_GT_MIN, ISNAN)                            \
    ARG_COLS_EXPORT_(sfx, T)
#define ARG_COLS_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ARG_COLS_ROW_##CAT(sfx, T)
#define ARG_COLS_ROW_INT(sfx, T) DEF_ARG_COLS(sfx, T, ARG_NAN_INT)
#define ARG_COLS_ROW_BOOL(sfx, T)
#define ARG_COLS_ROW_FLOAT(sfx, T)
DISPATCH_FORALL_DTYPES(ARG_COLS_ROW_)
DEF_ARG_COLS(f32, float, ARG_NAN_FLOAT)
DEF_ARG_COLS(f64, double, ARG_NAN_FLOAT)

/*
 * A narrow float's columns (Note [Narrow floats] in dtype.h), its bits in
 * the unsigned integer UT of its width: compared as the floats they are by
 * a key of the signed ST (a zero of either sign 0, a negative value its bits
 * with the magnitude's flipped, so that ST's order is the floats' order),
 * kept beside each column's best value; NaNs (magnitude bits above
 * ARG_NAN_ABOVE_<NAME>, from the format's row) tested apart, as ISNAN is
 * above. The answers are ARG_COLS' of the values themselves: the first NaN,
 * else the first element no later one beats, with its own bits. The float32
 * copy that max(dim=0) of float16 searched before took 50 us for (512, 512),
 * its values alone 15.
 */
#define ARG_NAN_ABOVE_ROW_(NAME, sfx, E, M, NANS)                                         \
    ARG_NAN_ABOVE_##NAME = (int)DISPATCH_NARROW_NAN_ABOVE_(E, M, DISPATCH_NARROW_##NANS),
enum { DISPATCH_FORALL_NARROW_FLOATS(ARG_NAN_ABOVE_ROW_) };
#define ARG_NKEY_(x, ST, SIGN, MAG) ((ST)(((x) & (MAG)) == 0 ? 0u : ((x) & (SIGN)) ? (x) ^ (MAG) : (x)))
#define DEF_ARG_COLS_NARROW_ONE(name, UT, ST, SIGN, MAG, NAN_ABOVE, GT)                   \
    static void name(const char *p, intptr_t rstride, intptr_t nrows, intptr_t ncols,     \
                     int64_t rstep, UT *vals, int64_t *rows)                              \
    {                                                                                     \
        ST keys[ARG_COLS_BLOCK];                                                          \
        for (intptr_t c0 = 0; c0 < ncols; c0 += ARG_COLS_BLOCK) {                         \
            const intptr_t w = ncols - c0 < ARG_COLS_BLOCK ? ncols - c0 : ARG_COLS_BLOCK; \
            UT *restrict v = vals + c0;                                                   \
            int64_t *restrict at = rows + c0;                                             \
            memcpy(v, (const UT *)(const void *)p + c0, (size_t)w * sizeof *v);           \
            for (intptr_t j = 0; j < w; j++) at[j] = 0, keys[j] = ARG_NKEY_(v[j], ST, SIGN, MAG); \
            for (intptr_t r = 1; r < nrows; r++) {                                        \
                const UT *restrict row = (const UT *)(const void *)(p + r * rstride) + c0; \
                const int64_t here = (int64_t)r * rstep;                                  \
                for (intptr_t j = 0; j < w; j++) {                                        \
                    const UT x = row[j], m = v[j];                                        \
                    const ST kx = ARG_NKEY_(x, ST, SIGN, MAG), km = keys[j];              \
                    const int take = ((m & (MAG)) <= (NAN_ABOVE)) &                       \
                                     (((x & (MAG)) > (NAN_ABOVE)) | GT(kx, km));          \
                    v[j] = take ? x : m;                                                  \
                    keys[j] = take ? kx : km;                                             \
                    at[j] = take ? here : at[j];                                          \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    }
/* The rows of DISPATCH_FORALL_DTYPES whose category is FLOAT and size 1 or 2:
 * the narrow floats (float32 and float64 have theirs above). */
#define ARG_COLS_NARROW_2(NAME, sfx) ARG_COLS_NARROW_(NAME, sfx, uint16_t, int16_t, 0x8000u, 0x7fffu)
#define ARG_COLS_NARROW_1(NAME, sfx) ARG_COLS_NARROW_(NAME, sfx, uint8_t, int8_t, 0x80u, 0x7fu)
#define ARG_COLS_NARROW_4(NAME, sfx)
#define ARG_COLS_NARROW_8(NAME, sfx)
#define ARG_COLS_NARROW_(NAME, sfx, UT, ST, SIGN, MAG)                                    \
    DEF_ARG_COLS_NARROW_ONE(arg_cols_max_##sfx, UT, ST, SIGN, MAG, ARG_NAN_ABOVE_##NAME,  \
                            ARG_GT_MAX)                                                   \
    DEF_ARG_COLS_NARROW_ONE(arg_cols_min_##sfx, UT, ST, SIGN, MAG, ARG_NAN_ABOVE_##NAME,  \
                            ARG_GT_MIN)                                                   \
    ARG_COLS_EXPORT_(sfx, UT)
#define ARG_NARROW_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ARG_NARROW_##CAT(NAME, sfx, size)
#define ARG_NARROW_FLOAT(NAME, sfx, size) ARG_COLS_NARROW_##size(NAME, sfx)
#define ARG_NARROW_INT(NAME, sfx, size)
#define ARG_NARROW_BOOL(NAME, sfx, size)
DISPATCH_FORALL_DTYPES(ARG_NARROW_ROW_)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define ARG_ENTRY_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ARG_ENTRY_##CAT(NAME, sfx)
#define ARG_ENTRY_INT(NAME, sfx)                                                          \
    DISPATCH_KERNELS_REDUCE(ARG, NAME, dispatch_kernel_arg_##sfx, 1)                      \
    DISPATCH_KERNELS_REDUCE(ARG_COLS, NAME, dispatch_kernel_arg_cols_##sfx, 1)
#define ARG_ENTRY_BOOL(NAME, sfx)
#define ARG_ENTRY_FLOAT(NAME, sfx)
/* the narrow floats' ARG_COLS entries: the rows ARG_NARROW_ROW_ defined */
#define ARG_NARROW_ENTRY_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                    \
    ARG_NARROW_ENTRY_##CAT(NAME, sfx, size)
#define ARG_NARROW_ENTRY_INT(NAME, sfx, size)
#define ARG_NARROW_ENTRY_BOOL(NAME, sfx, size)
#define ARG_NARROW_ENTRY_FLOAT(NAME, sfx, size) ARG_NARROW_ENTRY_##size(NAME, sfx)
#define ARG_NARROW_ENTRY_1(NAME, sfx)                                                     \
    DISPATCH_KERNELS_REDUCE(ARG_COLS, NAME, dispatch_kernel_arg_cols_##sfx, 1)
#define ARG_NARROW_ENTRY_2(NAME, sfx) ARG_NARROW_ENTRY_1(NAME, sfx)
#define ARG_NARROW_ENTRY_4(NAME, sfx)
#define ARG_NARROW_ENTRY_8(NAME, sfx)
DISPATCH_KERNELS_EXPORT(argext,
    DISPATCH_FORALL_DTYPES(ARG_ENTRY_)
    DISPATCH_KERNELS_REDUCE(ARG, FLOAT32, dispatch_kernel_arg_f32, 1)
    DISPATCH_KERNELS_REDUCE(ARG, FLOAT64, dispatch_kernel_arg_f64, 1)
    DISPATCH_KERNELS_REDUCE(ARG_COLS, FLOAT32, dispatch_kernel_arg_cols_f32, 1)
    DISPATCH_KERNELS_REDUCE(ARG_COLS, FLOAT64, dispatch_kernel_arg_cols_f64, 1)
    DISPATCH_FORALL_DTYPES(ARG_NARROW_ENTRY_)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "argext.dispatch.h"
DISPATCH_KERNELS_CHOOSER(argext)
#endif
