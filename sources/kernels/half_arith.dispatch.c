/*@targets baseline (avx2 fma3) avx512_skx avx512_spr asimdhp */
/*
 * add, sub, mul, div, maximum, minimum, sqrt and addcmul for float16, and
 * for bfloat16 on x86 from AVX2 (Note [bfloat16 beside float16]).
 *
 * Note [float16 on every target]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The reference (and NumPy) computes float16 in float and rounds the result
 * to float16 once. Each variant here gives those same bits:
 *   - baseline: the same, through narrow_vector.h's branch-free
 *     conversions (dk_h2f, dk_f2h), which the compiler builds in lanes: for
 *     the float32 scalar kernels; its arithmetic loops and casts are not
 *     compiled (the narrow loops' vectorized chunks and cast_loops' casts
 *     are faster: HALF_HAS_F16 and the casts below);
 *   - AVX2 (with F16C): 8 halves widened to float (vcvtph2ps), the float
 *     operation, and one rounding back (vcvtps2ph, to nearest even);
 *   - AVX512_SKX (AVX-512 without FP16: Skylake-X, Ice Lake, Zen 4): the
 *     same in 8 or 16 lanes, and strided outputs written by masked stores
 *     (gather_bits.h): x[:, ::2].add_(y) of 256K float16 104 -> 46 us,
 *     mul_ 102 -> 44 (torch 515, 216); float16 times a (1, 512) row went
 *     18.6 -> 21.2 us with it (torch 32);
 *   - AVX512_SPR (32 lanes) and aarch64's ASIMDHP (8 lanes): the native
 *     float16 instructions. They round
 *     the exact result once; rounding it to float first and then to float16
 *     gives the same value for + - * / and sqrt, because float carries
 *     24 >= 2 * 11 + 2 significand bits (double rounding is innocuous, Figueroa
 *     1995). a + alpha * b with alpha != 1 is two operations, so it takes
 *     the float path like AVX2 does; so do sqrt, where vsqrtph ran at half
 *     the speed of widening to vsqrtps (tools/bench, 64K elements), and
 *     div: on a Xeon with AVX512_FP16, 256K quotients took 110 us by
 *     vdivph and 69 widened to vdivps (the same bits), torch 78-89.
 * addcmul, a + (value * b) * c, is three operations in float, as the
 * reference rounds each: the float path on every target (ASIMDHP's in 4
 * float lanes), one rounding to float16 at the end. Fused here, where the
 * narrow floats' generic loop widened three chunk buffers, called the
 * float32 kernel and rounded a fourth (addcmul of (512, 512): 1.3-1.5x
 * torch's time).
 * maximum/minimum propagate NaN and return b on equal values (+0 vs -0),
 * as the reference's FMAX/FMIN do.
 *
 * Note [bfloat16 beside float16]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * bfloat16 takes the float path of every target above with its own
 * conversions (no target has bfloat16 arithmetic that rounds as the
 * reference does): widening is a shift, narrowing narrow_float.h's integer
 * addition to nearest even by lanes, a NaN its upper bits with the quiet
 * bit. On AVX-512, 32 at a time as two vectors of floats (bf_path32), on
 * AVX2 16 the same way (bf_path16: against 8 zero-extended and packed, add
 * 52 -> 35 us, mul 48 -> 30, div 55 -> 37 for (512, 512), torch's AVX2
 * loops 51, 49, 55). Its
 * pairs are registered on AVX2 and up only: elsewhere the narrow loops'
 * chunks (narrow_loops.dispatch.c), which the compiler vectorizes, beat
 * scalar_run. Against those chunks, (512, 512) bfloat16, 1 thread: add
 * 46 -> 29 us, div 52 -> 34, minimum 59 -> 30, addcmul 69 -> 34, sqrt 50 ->
 * 46 (torch 54, 56, 55, 59, 53); x[:, ::2] + y, one operand strided, 596 ->
 * 39 (the chunks' fused path takes equal strides only).
 */
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"
#include "gather_bits.h"
#include "narrow_vector.h"
#include "clang_loops.h"
#include "kernels_export.h"
#include "simd.h"

#if defined(__AVX2__) || defined(__AVX512FP16__)
#include <immintrin.h>
#endif
#if defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <arm_neon.h>
#define HALF_NEON 1
#endif
/* Where this target has the vector form of a format's loops (float16: F16C,
 * AVX512FP16 or ASIMDHP; bfloat16: AVX2), they are compiled and registered;
 * elsewhere the narrow loops' chunks (narrow_loops.dispatch.c), whose
 * conversions the compiler vectorizes, beat an element at a time: float16
 * add of (512, 512) on SSE4.2 took 1578 us through scalar_run, 442 through
 * the chunks. */
#if (defined(__AVX2__) && defined(__F16C__)) || defined(__AVX512FP16__) || defined(HALF_NEON)
#define HALF_HAS_F16 1
#else
#define HALF_HAS_F16 0
#endif
#if defined(__AVX2__) && defined(__F16C__)
#define HALF_HAS_BF16 1
#else
#define HALF_HAS_BF16 0
#endif

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_SQRT, OP_ADDCMUL };
#define CHUNK 256 /* elements gathered per strided chunk */

#if defined(HALF_NEON) /* what its vectors leave: add and sub by alpha */
/* One element in float: the reference's arithmetic (alpha: addcmul's value). */
static float scalar_op(int op, float a, float b, float c, float alpha)
{
    switch (op) {
    case OP_ADDCMUL: {
        const float vb = alpha * b, vbc = vb * c;
        return a + vbc;
    }
    case OP_ADD: return a + alpha * b;
    case OP_SUB: return a - alpha * b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_MAX: return dv_smax_f32(a, b); /* simd.h's NaN and tie rules */
    case OP_MIN: return dv_smin_f32(a, b);
    default: return __builtin_sqrtf(a);
    }
}

static void scalar_run(int op, uint16_t *o, const uint16_t *a, const uint16_t *b,
                       const uint16_t *c, intptr_t n, float alpha)
{
    for (intptr_t i = 0; i < n; i++) {
        float x = dispatch_half_to_float_inline(a[i]);
        float y = op == OP_SQRT ? 0.0f : dispatch_half_to_float_inline(b[i]);
        float z = op == OP_ADDCMUL ? dispatch_half_to_float_inline(c[i]) : 0.0f;
        o[i] = dispatch_half_from_double_inline(scalar_op(op, x, y, z, alpha));
    }
}
#endif

#if defined(__AVX2__) && defined(__F16C__)
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* op in float lanes of the vector type V (intrinsics prefix P), the
 * reference's arithmetic: max_ps and min_ps return b on a NaN or equal
 * operands, and KEEP_NAN puts a's NaN back. vec8 for 8 lanes, vec16 for 16
 * (bfloat16 on AVX-512, below). */
#define HALF_VEC_OPS(NAME, V, P, KEEP_NAN)                                            \
    static inline V NAME(int op, V a, V b, V c, V alpha)                              \
    {                                                                                 \
        switch (op) {                                                                 \
        case OP_ADDCMUL: return P##_add_ps(a, P##_mul_ps(P##_mul_ps(alpha, b), c));   \
        case OP_ADD: return P##_add_ps(a, P##_mul_ps(alpha, b));                      \
        case OP_SUB: return P##_sub_ps(a, P##_mul_ps(alpha, b));                      \
        case OP_MUL: return P##_mul_ps(a, b);                                         \
        case OP_DIV: return P##_div_ps(a, b);                                         \
        case OP_MAX: return KEEP_NAN(P##_max_ps(a, b), a);                            \
        case OP_MIN: return KEEP_NAN(P##_min_ps(a, b), a);                            \
        default: return P##_sqrt_ps(a);                                               \
        }                                                                             \
    }
/* a's NaN lanes, from their bits (Note [NaN tests before widening]: a is
 * often float16 widened, and clang turned a float compare of it into one
 * element at a time: float16 maximum of (512, 512) 375 us, gcc's 25) */
static inline __m256 nan_lanes8(__m256 a)
{
    const __m256i mag = _mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32(0x7fffffff));
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000)));
}
#define HALF_KEEP_NAN8(r, a) _mm256_blendv_ps(r, a, nan_lanes8(a))
HALF_VEC_OPS(vec8, __m256, _mm256, HALF_KEEP_NAN8)

/* 8 narrow floats at p widened, exactly: float16 by F16C, bfloat16 (bf) a
 * shift into the upper half of each float. */
static inline __m256 widen8(int bf, const uint16_t *p)
{
    const __m128i h = _mm_loadu_si128((const __m128i *)p);
    return bf ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
              : _mm256_cvtph_ps(h);
}

/* 8 floats rounded once to nearest even: float16 by F16C, bfloat16 by
 * narrow_vector.h's dk_f2bf_8_ (narrow_float.h's integer addition, a NaN its
 * upper bits with the quiet bit, by lanes). */
static inline __m128i narrow8(int bf, __m256 v)
{
    if (!bf) return _mm256_cvtps_ph(v, ROUND_NEAREST);
    const __m256i b = dk_f2bf_8_(v); /* each lane below 2^16 */
    return _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* NAME: the whole blocks of N bfloat16 (returns the elements done) as
 * two vectors of N / 2 floats: the odd elements are the upper halves of the
 * 32-bit lanes (a mask away), the even the lower (a shift away), each
 * computed as floats (VEC) and rounded in place (ROUND), and put back where
 * they came from (PUT of the even lanes shifted down and the odd). P is the
 * intrinsics' prefix, SI its integer vector's suffix (si512, si256). Two
 * instructions a side where zero-extending and packing took four (each a
 * pair of halves on Zen 4): bfloat16 minimum of (512, 512) on AVX-512, 59
 * us by the narrow loops' chunks, 42 by 16 zero-extended lanes, 31 this
 * way (float16's 8 lanes: 26). */
#define BF_PATH(NAME, N, VI, P, SI, VEC, ROUND, PUT)                                      \
    DV_INLINE intptr_t NAME(int op, uint16_t *o, const uint16_t *a, const uint16_t *b,    \
                            const uint16_t *c, intptr_t n, float alpha, int b_one)        \
    {                                                                                     \
        const __typeof__(P##_set1_ps(0.0f)) va = P##_set1_ps(alpha);                      \
        const VI hi = P##_set1_epi32((int)0xffff0000u);                                   \
        const VI yone = P##_set1_epi32((int)(b[0] * 0x10001u)); /* b[0] in each half */   \
        intptr_t i = 0;                                                                   \
        for (; i + N <= n; i += N) {                                                      \
            const VI x = P##_loadu_##SI((const VI *)(const void *)(a + i));               \
            const VI y = op == OP_SQRT ? x                                                \
                         : b_one       ? yone                                             \
                                       : P##_loadu_##SI((const VI *)(const void *)(b + i)); \
            const VI z = op != OP_ADDCMUL ? x : P##_loadu_##SI((const VI *)(const void *)(c + i)); \
            const VI even = ROUND(VEC(op, P##_cast##SI##_ps(P##_slli_epi32(x, 16)),       \
                                      P##_cast##SI##_ps(P##_slli_epi32(y, 16)),           \
                                      P##_cast##SI##_ps(P##_slli_epi32(z, 16)), va));     \
            const VI odd = ROUND(VEC(op, P##_cast##SI##_ps(P##_and_##SI(x, hi)),          \
                                     P##_cast##SI##_ps(P##_and_##SI(y, hi)),              \
                                     P##_cast##SI##_ps(P##_and_##SI(z, hi)), va));        \
            P##_storeu_##SI((VI *)(void *)(o + i), PUT(P##_srli_epi32(even, 16), odd));   \
        }                                                                                 \
        return i;                                                                         \
    }
#if defined(__AVX512F__)
/* bfloat16 in 16 float lanes on AVX-512 (float16 keeps 8: Note [float16 on
 * every target]), its conversions integer operations: the same operations
 * as vec8 and narrow8, by lanes, so the same bits. */
#define HALF_KEEP_NAN16(r, a) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), r, a)
HALF_VEC_OPS(vec16, __m512, _mm512, HALF_KEEP_NAN16)

/* rounded in place by narrow_vector.h's dk_f2bf_hi_16_ (narrow8's rounding,
 * the bfloat16 in each lane's upper half) */
#define BF_PUT32(even, odd) _mm512_mask_blend_epi16(0xaaaaaaaau, even, odd)
BF_PATH(bf_path32, 32, __m512i, _mm512, si512, vec16, dk_f2bf_hi_16_, BF_PUT32)
#endif

#if !defined(__AVX512F__)
/* BF_PATH in 8 float lanes, for AVX2: 16 bfloat16 a vector, rounded by
 * dk_f2bf_hi_8_ (a NaN by a blend, AVX2 has no masks), put back by one
 * 16-bit blend, where widen8/narrow8 zero-extend and pack 8 at a time
 * (Note [bfloat16 beside float16]). */
#define BF_PUT16(even, odd) _mm256_blend_epi16(even, odd, 0xaa)
BF_PATH(bf_path16, 16, __m256i, _mm256, si256, vec8, dk_f2bf_hi_8_, BF_PUT16)
#endif

static void float_path8(int op, int bf, uint16_t *o, const uint16_t *a, const uint16_t *b,
                        const uint16_t *c, intptr_t n, float alpha);

/* b_one: b is one value (b[0]) for every element, widened once (by a
 * column or a number: Note [One value widened once]). Inlined into two
 * functions, float_path8 and float_path8_one, each with b_one a constant:
 * one function taking it as an argument kept bfloat16's op a runtime switch
 * in the loop on AVX2 (sub_ by a row 36 -> 58 us). */
DV_INLINE void float_path8_(int op, int bf, uint16_t *o, const uint16_t *a, const uint16_t *b,
                            const uint16_t *c, intptr_t n, float alpha, int b_one)
{
    const __m256 va = _mm256_set1_ps(alpha);
    const uint16_t b8[8] = {b[0], b[0], b[0], b[0], b[0], b[0], b[0], b[0]};
    const __m256 yone = widen8(bf, b8);
    intptr_t i = 0;
#if defined(__AVX512F__)
    if (bf) i = bf_path32(op, o, a, b, c, n, alpha, b_one);
#else
    if (bf) i = bf_path16(op, o, a, b, c, n, alpha, b_one);
#endif
    for (; i + 8 <= n; i += 8) {
        __m256 x = widen8(bf, a + i);
        __m256 y = op == OP_SQRT ? x : b_one ? yone : widen8(bf, b + i);
        __m256 z = op != OP_ADDCMUL ? x : widen8(bf, c + i);
        _mm_storeu_si128((__m128i *)(o + i), narrow8(bf, vec8(op, x, y, z, va)));
    }
    if (i < n) { /* the tail through a padded block: the same instructions */
        uint16_t ta[8] = {0}, tb[8] = {0}, tc[8] = {0}, to[8];
        memcpy(ta, a + i, (size_t)(n - i) * 2);
        if (op != OP_SQRT) memcpy(tb, b_one ? b8 : b + i, (size_t)(n - i) * 2);
        if (op == OP_ADDCMUL) memcpy(tc, c + i, (size_t)(n - i) * 2);
        float_path8(op, bf, to, ta, tb, tc, 8, alpha);
        memcpy(o + i, to, (size_t)(n - i) * 2);
    }
}

/* CALL(op, bf) with op and bf constants under clang (Note [Constant
 * operations under clang] in clang_loops.h); as given under gcc. */
#if DK_UNSWITCH_BY_HAND
#define HALF_CONSTANT_OP_(K, CALL)                                                        \
    case K:                                                                               \
        if (bf) CALL(K, 1);                                                               \
        else CALL(K, 0);                                                                  \
        return;
#define HALF_WITH_CONSTANTS(CALL)                                                         \
    switch (op) {                                                                         \
    HALF_CONSTANT_OP_(OP_ADD, CALL) HALF_CONSTANT_OP_(OP_SUB, CALL)                       \
    HALF_CONSTANT_OP_(OP_MUL, CALL) HALF_CONSTANT_OP_(OP_DIV, CALL)                       \
    HALF_CONSTANT_OP_(OP_MAX, CALL) HALF_CONSTANT_OP_(OP_MIN, CALL)                       \
    HALF_CONSTANT_OP_(OP_SQRT, CALL) HALF_CONSTANT_OP_(OP_ADDCMUL, CALL)                  \
    default: CALL(op, bf);                                                                \
    }
#else
#define HALF_WITH_CONSTANTS(CALL) CALL(op, bf);
#endif

static void float_path8(int op, int bf, uint16_t *o, const uint16_t *a, const uint16_t *b,
                        const uint16_t *c, intptr_t n, float alpha)
{
#define HALF_PATH8_(K, BF) float_path8_(K, BF, o, a, b, c, n, alpha, 0)
    HALF_WITH_CONSTANTS(HALF_PATH8_)
#undef HALF_PATH8_
}

/* op with b[0] for every element of b (c unused: not addcmul) */
static void float_path8_one(int op, int bf, uint16_t *o, const uint16_t *a, const uint16_t *b,
                            intptr_t n, float alpha)
{
#define HALF_PATH8_ONE_(K, BF) float_path8_(K, BF, o, a, b, a, n, alpha, 1)
    HALF_WITH_CONSTANTS(HALF_PATH8_ONE_)
#undef HALF_PATH8_ONE_
}
#endif

#if defined(__AVX512FP16__)
static __m512h vec32(int op, __m512h a, __m512h b)
{
    switch (op) {
    case OP_ADD: return _mm512_add_ph(a, b);
    case OP_SUB: return _mm512_sub_ph(a, b);
    case OP_MUL: return _mm512_mul_ph(a, b);
    case OP_DIV: return _mm512_div_ph(a, b);
    case OP_MAX:
        return _mm512_mask_blend_ph(_mm512_cmp_ph_mask(a, a, _CMP_UNORD_Q), _mm512_max_ph(a, b), a);
    default: /* OP_MIN; sqrt takes the float path */
        return _mm512_mask_blend_ph(_mm512_cmp_ph_mask(a, a, _CMP_UNORD_Q), _mm512_min_ph(a, b), a);
    }
}

/* Whether float16's op runs in its own lanes: sqrt and div measured slower
 * by vsqrtph and vdivph than widened to float (Note [float16 on every
 * target]); addcmul and a scaled add or sub round once from float. */
static inline int native_f16(int op, float alpha)
{
    return op != OP_SQRT && op != OP_DIV && op != OP_ADDCMUL &&
           (alpha == 1.0f || (op != OP_ADD && op != OP_SUB));
}

static void native_path32(int op, uint16_t *o, const uint16_t *a, const uint16_t *b, intptr_t n)
{
    intptr_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512h x = _mm512_loadu_ph(a + i);
        __m512h y = _mm512_loadu_ph(b + i);
        _mm512_storeu_ph(o + i, vec32(op, x, y));
    }
    if (i < n) { /* masked tail: lanes past n are neither read nor written */
        __mmask32 m = (__mmask32)((1ull << (n - i)) - 1);
        __m512h x = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, a + i));
        __m512h y = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, b + i));
        _mm512_mask_storeu_epi16(o + i, m, _mm512_castph_si512(vec32(op, x, y)));
    }
}
#endif

#if defined(HALF_NEON)
static float16x8_t neon8(int op, float16x8_t a, float16x8_t b)
{
    uint16x8_t a_nan = vmvnq_u16(vceqq_f16(a, a));
    switch (op) {
    case OP_ADD: return vaddq_f16(a, b);
    case OP_SUB: return vsubq_f16(a, b);
    case OP_MUL: return vmulq_f16(a, b);
    case OP_DIV: return vdivq_f16(a, b);
    case OP_MAX: /* b unless a > b; a where a is NaN: the reference's rule */
        return vbslq_f16(a_nan, a, vbslq_f16(vcltq_f16(b, a), a, b));
    case OP_MIN:
        return vbslq_f16(a_nan, a, vbslq_f16(vcltq_f16(a, b), a, b));
    default: return vsqrtq_f16(a);
    }
}

/* addcmul in 4 float lanes: widened, a + (value * b) * c unfused, rounded once. */
static void addcmul_float4(uint16_t *o, const uint16_t *a, const uint16_t *b, const uint16_t *c,
                           intptr_t n, float alpha)
{
    const float32x4_t va = vdupq_n_f32(alpha);
    intptr_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t x = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(a + i)));
        float32x4_t y = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(b + i)));
        float32x4_t z = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(c + i)));
        float32x4_t r = vaddq_f32(x, vmulq_f32(vmulq_f32(va, y), z));
        vst1_u16(o + i, vreinterpret_u16_f16(vcvt_f16_f32(r)));
    }
    if (i < n) { /* the tail through a padded block: the same instructions */
        uint16_t ta[4] = {0}, tb[4] = {0}, tc[4] = {0}, to[4];
        memcpy(ta, a + i, (size_t)(n - i) * 2);
        memcpy(tb, b + i, (size_t)(n - i) * 2);
        memcpy(tc, c + i, (size_t)(n - i) * 2);
        addcmul_float4(to, ta, tb, tc, 4, alpha);
        memcpy(o + i, to, (size_t)(n - i) * 2);
    }
}

static void native_path8(int op, uint16_t *o, const uint16_t *a, const uint16_t *b, intptr_t n)
{
    intptr_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float16x8_t x = vreinterpretq_f16_u16(vld1q_u16(a + i));
        float16x8_t y = vreinterpretq_f16_u16(vld1q_u16(b + i));
        vst1q_u16(o + i, vreinterpretq_u16_f16(neon8(op, x, y)));
    }
    if (i < n) { /* the tail through a padded block: the same instructions */
        uint16_t ta[8] = {0}, tb[8] = {0}, to[8];
        memcpy(ta, a + i, (size_t)(n - i) * 2);
        memcpy(tb, b + i, (size_t)(n - i) * 2);
        native_path8(op, to, ta, tb, 8);
        memcpy(o + i, to, (size_t)(n - i) * 2);
    }
}
#endif

/* op on n contiguous elements (b unused for sqrt, c but for addcmul; alpha
 * 1 means none, addcmul's value) of float16, or of bfloat16 (bf: always in
 * float, no target has bfloat16 arithmetic to match the reference's). */
#if HALF_HAS_F16 || HALF_HAS_BF16
static void contiguous(int op, int bf, uint16_t *o, const uint16_t *a, const uint16_t *b,
                       const uint16_t *c, intptr_t n, float alpha)
{
#if HALF_HAS_BF16
    if (bf) {
        float_path8(op, 1, o, a, b, c, n, alpha);
        return;
    }
#else
    (void)bf; /* bfloat16's loops exist where float_path8 does */
#endif
#if defined(__AVX512FP16__)
    if (native_f16(op, alpha)) {
        native_path32(op, o, a, b, n);
        return;
    }
#endif
#if defined(HALF_NEON)
    if (op == OP_ADDCMUL) {
        addcmul_float4(o, a, b, c, n, alpha);
        return;
    }
    if (alpha == 1.0f || (op != OP_ADD && op != OP_SUB)) {
        native_path8(op, o, a, b, n); /* sqrt too: correctly rounded */
        return;
    }
#endif
#if defined(__AVX2__) && defined(__F16C__)
    float_path8(op, 0, o, a, b, c, n, alpha);
#else
    scalar_run(op, o, a, b, c, n, alpha);
#endif
}

/*
 * Note [One value widened once]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x * column and x * number: b is one value for the whole row. Through the
 * chunks below it was a buffer of 256 copies filled each row and widened 8
 * at a time: (512, 512) float16 times a (512, 1) column took 25-33 us, the
 * contiguous product 19 (torch 23). Widened once into a vector (float_path8's
 * b_one), the row is the contiguous loop with one load fewer: 18.4 us;
 * in place 24.3 -> 17.3 (torch 21.3); bfloat16 by a column 31.8 -> 26.3,
 * by a number 28.3 -> 24.2. Where float16 has lanes of its own
 * (AVX512_FP16), those keep the chunks.
 */

/* The loop of loops.h: any strides (0 included) through chunk buffers. */
static void run(int op, int bf, char **data, const intptr_t *s, intptr_t n, void *ctx)
{
    float alpha = 1.0f;
    if (ctx) { /* in the operands' dtype */
        uint16_t bits;
        memcpy(&bits, ctx, 2);
        alpha = bf ? dispatch_bfloat16_to_float_inline(bits) : dispatch_half_bits_to_float(bits);
    }
    int nin = op == OP_SQRT ? 1 : op == OP_ADDCMUL ? 3 : 2;
    if (s[0] == 2 && s[1] == 2 && (nin < 2 || s[2] == 2) && (nin < 3 || s[3] == 2)) {
        const uint16_t *a = (const uint16_t *)data[1];
        contiguous(op, bf, (uint16_t *)data[0], a, nin >= 2 ? (const uint16_t *)data[2] : a,
                   nin == 3 ? (const uint16_t *)data[3] : a, n, alpha);
        return;
    }
#if defined(__AVX2__) && defined(__F16C__)
#if defined(__AVX512FP16__)
    const int float_lanes = bf || !native_f16(op, alpha);
#else
    const int float_lanes = 1;
#endif
    if (nin == 2 && s[0] == 2 && s[1] == 2 && s[2] == 0 && float_lanes) {
        /* Note [One value widened once] */
        float_path8_one(op, bf, (uint16_t *)data[0], (const uint16_t *)data[1],
                        (const uint16_t *)data[2], n, alpha);
        return;
    }
#endif
    /* Each input contiguous (read in place), broadcast (a buffer of its one
     * value, filled once) or strided (gathered per chunk); the output
     * written in place where contiguous. */
    uint16_t bo[CHUNK], buf[3][CHUNK];
    for (int k = 0; k < nin; k++) {
        if (s[1 + k] != 0) continue;
        uint16_t v;
        memcpy(&v, data[1 + k], 2);
        for (int j = 0; j < CHUNK; j++) buf[k][j] = v;
    }
    for (intptr_t i = 0; i < n; i += CHUNK) {
        intptr_t m = n - i < CHUNK ? n - i : CHUNK;
        const uint16_t *in[3];
        for (int k = 0; k < nin; k++) {
            const char *p = data[1 + k] + i * s[1 + k];
            if (s[1 + k] == 2) {
                in[k] = (const uint16_t *)p;
                continue;
            }
            if (s[1 + k] != 0) dk_gather_bits(buf[k], p, s[1 + k], 2, m);
            in[k] = buf[k];
        }
        uint16_t *out = s[0] == 2 ? (uint16_t *)(data[0] + i * 2) : bo;
        contiguous(op, bf, out, in[0], nin >= 2 ? in[1] : in[0], nin == 3 ? in[2] : in[0], m, alpha);
        if (s[0] != 2) dk_scatter_bits(data[0] + i * s[0], s[0], bo, 2, m);
    }
}

#define HALF_LOOP(NAME, OP, BF, NOPS)                                                 \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                             \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,        \
                                           intptr_t n, void *ctx);                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,        \
                                           intptr_t n, void *ctx)                     \
    {                                                                                 \
        run(OP, BF, data, steps, n, ctx);                                             \
    }                                                                                 \
    DISPATCH_KERNELS_LOOP2D(NAME, NOPS)
#endif /* HALF_HAS_F16 || HALF_HAS_BF16 */
/* Each loop for float16 (f16) and bfloat16 (bf16), where the target has
 * their vector forms; an entry of the table below for each, untraced: the
 * trace names a function with every target of its source, and these are not
 * in every target's table (HALF_MUL_F32SCALAR, in all of them, traces the
 * source). */
#if HALF_HAS_F16
#define HALF_F16_LOOP(name, OP, NOPS) HALF_LOOP(dispatch_kernel_##name##_f16, OP, 0, NOPS)
#define HALF_F16_ENTRY(LOOP, name) DISPATCH_KERNELS_LOOP_WITH_2D(LOOP, FLOAT16, dispatch_kernel_##name##_f16, 0)
#else
#define HALF_F16_LOOP(name, OP, NOPS)
#define HALF_F16_ENTRY(LOOP, name)
#endif
#if HALF_HAS_BF16
#define HALF_BF16_LOOP(name, OP, NOPS) HALF_LOOP(dispatch_kernel_##name##_bf16, OP, 1, NOPS)
#define HALF_BF16_ENTRY(LOOP, name) DISPATCH_KERNELS_LOOP_WITH_2D(LOOP, BFLOAT16, dispatch_kernel_##name##_bf16, 0)
#else
#define HALF_BF16_LOOP(name, OP, NOPS)
#define HALF_BF16_ENTRY(LOOP, name)
#endif
#define HALF_LOOPS(name, OP, NOPS) HALF_F16_LOOP(name, OP, NOPS) HALF_BF16_LOOP(name, OP, NOPS)
#define HALF_ENTRIES(LOOP, name) HALF_F16_ENTRY(LOOP, name) HALF_BF16_ENTRY(LOOP, name)

HALF_LOOPS(add, OP_ADD, 3)
HALF_LOOPS(sub, OP_SUB, 3)
HALF_LOOPS(mul, OP_MUL, 3)
HALF_LOOPS(div, OP_DIV, 3)
HALF_LOOPS(maximum, OP_MAX, 3)
HALF_LOOPS(minimum, OP_MIN, 3)
HALF_LOOPS(sqrt, OP_SQRT, 2)
HALF_LOOPS(addcmul, OP_ADDCMUL, 4)

/*
 * float16 by a float32 scalar: out = x * s, x / s or s / x, computed in
 * float and rounded once to float16, as PyTorch's CPU float16 mul/div by a
 * scalar (Note [float16 with a scalar] in sources/dispatcher/operators_elementwise.c).
 * data = {out, x}, float16; ctx: const float *s. Every target widens x to
 * float exactly and rounds the float result to nearest even, so all give
 * the same bits.
 */
enum { SOP_MUL, SOP_DIV, SOP_RDIV };

static void scalar_contiguous(int op, uint16_t *o, const uint16_t *a, intptr_t n, float s)
{
    intptr_t i = 0;
#if defined(__AVX512F__)
    const __m512 ws = _mm512_set1_ps(s);
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512 r = op == SOP_MUL   ? _mm512_mul_ps(x, ws)
                   : op == SOP_DIV ? _mm512_div_ps(x, ws)
                                   : _mm512_div_ps(ws, x);
        _mm256_storeu_si256((__m256i *)(o + i), _mm512_cvtps_ph(r, ROUND_NEAREST));
    }
#endif
#if defined(__AVX2__) && defined(__F16C__)
    const __m256 vs = _mm256_set1_ps(s);
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256 r = op == SOP_MUL   ? _mm256_mul_ps(x, vs)
                   : op == SOP_DIV ? _mm256_div_ps(x, vs)
                                   : _mm256_div_ps(vs, x);
        _mm_storeu_si128((__m128i *)(o + i), _mm256_cvtps_ph(r, ROUND_NEAREST));
    }
#endif
    /* the tail, and every element below F16C: narrow_vector.h's branch-free
     * conversions (the float result rounded once, as from its exact double),
     * a loop per op that the compiler builds in lanes where an element at a
     * time took 931 us for (512, 512) on SSE4.2 */
#define SCALAR_TAIL_(EXPR)                                                                \
    for (; i < n; i++) {                                                                  \
        const float x = dk_h2f(a[i]);                                                     \
        o[i] = dk_f2h(EXPR);                                                              \
    }
    if (op == SOP_MUL) SCALAR_TAIL_(x * s)
    else if (op == SOP_DIV) SCALAR_TAIL_(x / s)
    else SCALAR_TAIL_(s / x)
#undef SCALAR_TAIL_
}

static void scalar_loop(int op, char **data, const intptr_t *st, intptr_t n, const void *ctx)
{
    float s;
    memcpy(&s, ctx, sizeof s);
    if (st[0] == 2 && st[1] == 2) {
        scalar_contiguous(op, (uint16_t *)data[0], (const uint16_t *)data[1], n, s);
        return;
    }
    uint16_t bo[CHUNK], ba[CHUNK];
    for (intptr_t i = 0; i < n; i += CHUNK) {
        intptr_t m = n - i < CHUNK ? n - i : CHUNK;
        dk_gather_bits(ba, data[1] + i * st[1], st[1], 2, m);
        scalar_contiguous(op, bo, ba, m, s);
        dk_scatter_bits(data[0] + i * st[0], st[0], bo, 2, m);
    }
}

#define HALF_SCALAR_LOOP(NAME, OP)                                                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,        \
                                           intptr_t n, void *ctx);                    \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,        \
                                           intptr_t n, void *ctx)                     \
    {                                                                                 \
        scalar_loop(OP, data, steps, n, ctx);                                         \
    }

HALF_SCALAR_LOOP(dispatch_kernel_mul_f16_f32scalar, SOP_MUL)
HALF_SCALAR_LOOP(dispatch_kernel_div_f16_f32scalar, SOP_DIV)
HALF_SCALAR_LOOP(dispatch_kernel_rdiv_f16_f32scalar, SOP_RDIV)

/* ---------------------------------------------------------------- casts
 * float16 <-> float32, registered as the cast loops of loops.h (copy_,
 * .to(), and float16 reductions, which reduce a float32 copy): both exact or
 * rounded once to nearest even, so every target gives the reference's bits,
 * NaN payloads included: vcvtps2ph keeps the upper payload bits and sets the
 * quiet bit, as dispatch_half_from_double_inline does; vcvtph2ps would quiet
 * a signaling NaN that the reference (and NumPy) keeps, so a block with a NaN
 * is converted one element at a time (a rare branch). Contiguous runs take
 * 8 (AVX2 + F16C) or 16 (AVX-512) lanes, strided ones packed runs. Only
 * where F16C is: elsewhere cast_loops' vector casts stand
 * (kernels_chooser.c), which beat an element at a time. */

/*
 * Note [NaN tests before widening]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A block's NaN test reads the float16 bits (a NaN's magnitude is above
 * 0x7c00), not the widened floats: clang (14) writes _mm512_cvtph_ps as a
 * generic widening, folds "the widened value is unordered" back into a
 * compare of float16 values, and, with no float16 arithmetic on the
 * target, scalarizes it: every element widened and compared alone, the
 * clang build's float16 -> float32 cast of (512, 512) 419 us against
 * gcc's 22 (and every float16 reduction, which reduces a float32 copy).
 * The integer test is what both compilers keep as vector instructions.
 */

#if defined(__AVX2__) && defined(__F16C__)
/* n elements one at a time, strides in bytes: the reference's bits. */
static void half_to_float_strided(char *o, intptr_t so, const char *a, intptr_t sa, intptr_t n)
{
    for (intptr_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, a + i * sa, 2);
        float f = dispatch_half_to_float_inline(h);
        memcpy(o + i * so, &f, 4);
    }
}

void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f16_f32)(char **data, const intptr_t *s,
                                                              intptr_t n, void *ctx);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f16_f32)(char **data, const intptr_t *s,
                                                              intptr_t n, void *ctx)
{
    (void)ctx;
    intptr_t i = 0;
    if ((s[0] != 4 || s[1] != 2) && n > 16) {
        /* packed runs (gather_bits.h): one element at a time took 0.7 ns an
         * element (x[:, ::2].copy_(y) of 256K float32 into float16: 191 us) */
        dk_run_packed(DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f16_f32), 2, 4, data, s, n);
        return;
    }
    if (s[0] == 4 && s[1] == 2) {
        float *o = (float *)(void *)data[0];
        const uint16_t *a = (const uint16_t *)(void *)data[1];
        /* a NaN found in the halves' bits, magnitude above infinity's
         * (Note [NaN tests before widening]) */
        const __m256i mag = _mm256_set1_epi16(0x7fff), inf = _mm256_set1_epi16(0x7c00);
#if defined(__AVX512F__)
        for (; i + 16 <= n; i += 16) {
            const __m256i h = _mm256_loadu_si256((const __m256i *)(a + i));
            if (_mm256_movemask_epi8(_mm256_cmpgt_epi16(_mm256_and_si256(h, mag), inf))) break;
            _mm512_storeu_ps(o + i, _mm512_cvtph_ps(h));
        }
#endif
        for (; i + 8 <= n; i += 8) {
            const __m128i h = _mm_loadu_si128((const __m128i *)(a + i));
            if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, _mm256_castsi256_si128(mag)),
                                                  _mm256_castsi256_si128(inf)))) {
                half_to_float_strided((char *)(o + i), 4, (const char *)(a + i), 2, 8);
                continue;
            }
            _mm256_storeu_ps(o + i, _mm256_cvtph_ps(h));
        }
    }
    half_to_float_strided(data[0] + i * s[0], s[0], data[1] + i * s[1], s[1], n - i);
}

void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f32_f16)(char **data, const intptr_t *s,
                                                              intptr_t n, void *ctx);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f32_f16)(char **data, const intptr_t *s,
                                                              intptr_t n, void *ctx)
{
    (void)ctx;
    intptr_t i = 0;
    if ((s[0] != 2 || s[1] != 4) && n > 16) {
        /* packed runs, as the cast above */
        dk_run_packed(DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_cast_f32_f16), 4, 2, data, s, n);
        return;
    }
    if (s[0] == 2 && s[1] == 4) {
        uint16_t *o = (uint16_t *)(void *)data[0];
        const float *a = (const float *)(void *)data[1];
#if defined(__AVX512F__)
        for (; i + 16 <= n; i += 16)
            _mm256_storeu_si256((__m256i *)(o + i),
                                _mm512_cvtps_ph(_mm512_loadu_ps(a + i), ROUND_NEAREST));
#endif
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(o + i), _mm256_cvtps_ph(_mm256_loadu_ps(a + i), ROUND_NEAREST));
    }
    for (; i < n; i++) {
        float f;
        memcpy(&f, data[1] + i * s[1], 4);
        uint16_t h = (uint16_t)_cvtss_sh(f, ROUND_NEAREST);
        memcpy(data[0] + i * s[0], &h, 2);
    }
}
#endif /* F16C: elsewhere cast_loops' float16 casts, by vector, stand */

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#if defined(__AVX2__) && defined(__F16C__)
#define HALF_CAST_ENTRIES                                                             \
    DISPATCH_KERNELS_NAMED(CAST_F16_F32, dispatch_kernel_cast_f16_f32, 0)             \
    DISPATCH_KERNELS_NAMED(CAST_F32_F16, dispatch_kernel_cast_f32_f16, 0)
#else
#define HALF_CAST_ENTRIES
#endif
DISPATCH_KERNELS_EXPORT(half_arith,
    HALF_ENTRIES(ADD, add) HALF_ENTRIES(SUB, sub) HALF_ENTRIES(MUL, mul)
    HALF_ENTRIES(DIV, div) HALF_ENTRIES(MAXIMUM, maximum) HALF_ENTRIES(MINIMUM, minimum)
    HALF_ENTRIES(SQRT, sqrt) HALF_ENTRIES(ADDCMUL, addcmul)
    DISPATCH_KERNELS_NAMED(HALF_MUL_F32SCALAR, dispatch_kernel_mul_f16_f32scalar, 1) /* traced: in every target */
    DISPATCH_KERNELS_NAMED(HALF_DIV_F32SCALAR, dispatch_kernel_div_f16_f32scalar, 0)
    DISPATCH_KERNELS_NAMED(HALF_RDIV_F32SCALAR, dispatch_kernel_rdiv_f16_f32scalar, 0)
    HALF_CAST_ENTRIES
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "half_arith.dispatch.h"
DISPATCH_KERNELS_CHOOSER(half_arith)
#endif
