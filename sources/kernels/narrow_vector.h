/*
 * Narrow floats widened and narrowed by vector, for the dispatched loops and
 * casts (narrow_loops.dispatch.c, cast_loops.dispatch.c): a run of n values
 * at a time, never a library call per element.
 *
 * Note [Narrow floats by vector]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Each conversion gives the bits of narrow_float.h's (the reference's), which
 * round once to nearest even:
 *   - float16: F16C's vcvtph2ps/vcvtps2ph (x86 targets from AVX2, which
 *     implies F16C; 16 lanes with AVX512F), aarch64's fcvtl/fcvtn, else the
 *     branch-free bit forms below, written out in SSE4.1 lanes on x86
 *     without F16C, elsewhere vectorized by the compiler (selects, no
 *     branches): widening rebiases the exponent (a subnormal is its
 *     integer mantissa times 2^-24, exact in float); narrowing rounds by an
 *     integer addition (normal) or by adding 0.5f, whose ulp is float16's
 *     subnormal ulp 2^-24, so the float addition rounds to nearest even;
 *   - bfloat16: shifts and one integer addition (narrow_float.h's form);
 *   - from a double: rounded to float by rounding to odd (the last bit set
 *     when inexact), then to the narrow format: one correct rounding, since
 *     float keeps at least 2 bits more than float16 or bfloat16 (the
 *     argument of dispatch_bfloat16_from_double_inline). A NaN is made from
 *     the double's own bits, as the reference does. With AVX512F the
 *     rounding to odd is a truncating conversion with the last bit set
 *     where it was inexact (16 lanes);
 *   - from an int32: the same, as from its exact double; with AVX512F a
 *     truncating int32 -> float conversion, exact back to int32, so the
 *     inexact lanes are those that differ;
 *   - any other narrow format (a row added to DISPATCH_FORALL_BITS_FLOATS):
 *     narrow_float.h's format functions, one element at a time, inline.
 * A NaN may differ from the reference's only in its quiet bit (F16C and
 * fcvtl quiet a signalling NaN that the bit form keeps): still a NaN of the
 * same sign and payload.
 */
#ifndef DISPATCH_KERNELS_NARROW_VECTOR_H_
#define DISPATCH_KERNELS_NARROW_VECTOR_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__SSE4_1__)
#include <smmintrin.h>
#define DK_SSE_F16 1 /* float16 by SSE4.1 lanes: no F16C (x86-64 levels 1-2) */
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define DK_NEON_F16 1
#endif

/* Bits <-> values through a union: memcpy here kept gcc 12 from
 * vectorizing the loops that use them ("no vectype"). */
static inline float dk_bits_f32(uint32_t b) { union { uint32_t u; float f; } v = {.u = b}; return v.f; }
static inline uint32_t dk_f32_bits(float f) { union { float f; uint32_t u; } v = {.f = f}; return v.u; }
static inline uint64_t dk_f64_bits(double f) { union { double f; uint64_t u; } v = {.f = f}; return v.u; }

/* All ones where a >= b (signed: SSE2 and SSE4.2 compare signed lanes
 * only), and a select by such a mask: gcc 12 keeps a loop of `?:` on
 * unsigned compares scalar there ("control flow in loop"). */
static inline uint32_t dk_ge_(int32_t a, int32_t b) { return 0u - (uint32_t)(a >= b); }
static inline uint32_t dk_sel_(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

/* float16 -> float, exact. em13 is the exponent and mantissa at float's
 * places: a normal value rebiased by 127 - 15, inf and NaN (exponent 31) by
 * twice that (exponent 255, the payload kept); a subnormal m * 2^-24 is
 * 2^-14 + m * 2^-24 (em13 under float exponent 113) less 2^-14, exact, and
 * never a float subnormal, so DAZ/FTZ set by another library change nothing. */
static inline float dk_h2f(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, em13 = (w & 0x7fff0000u) >> 3;
    const uint32_t normal = em13 + 0x38000000u + (dk_ge_((int32_t)em13, 0x0f800000) & 0x38000000u);
    const uint32_t sub = dk_f32_bits(dk_bits_f32(em13 | 0x38800000u) - 0x1p-14f);
    return dk_bits_f32(sign | dk_sel_(dk_ge_((int32_t)em13, 0x00800000), normal, sub));
}

/* float -> float16, to nearest even; overflow gives inf. */
static inline uint16_t dk_f2h(float f) {
    const uint32_t x = dk_f32_bits(f), a = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
    const uint32_t nan = 0x7e00u | ((a >> 13) & 0x1ffu);
    const uint32_t normal = (a + 0x0fffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
    /* (float): no excess precision (Note [Excess precision] in cpu_loops_reference.c) */
    const uint32_t sub = dk_f32_bits((float)(dk_bits_f32(a) + 0.5f)) - 0x3f000000u;
    uint32_t r = dk_sel_(dk_ge_((int32_t)a, 0x38800000), normal, sub); /* >= 2^-14: normal */
    r = dk_sel_(dk_ge_((int32_t)a, 0x477ff000), 0x7c00u, r);           /* >= 65520: inf */
    r = dk_sel_(dk_ge_((int32_t)a, 0x7f800001), nan, r);
    return (uint16_t)(sign | r);
}

static inline float dk_bf2f(uint16_t b) { return dk_bits_f32((uint32_t)b << 16); }

/* bfloat16 widened in the lanes, 4, 8 or 16 at p: each the top half of its
 * float lane (exact). SSE2: under zeros by punpcklwd (element by element
 * through memory, sum of 256K bfloat16 took 49-96 us at SSE4.2 where the
 * AVX2 loop took 16); AVX2 and AVX512F: zero-extended, then a shift. */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline __m128 dk_bf16_widen_4(const uint16_t *p)
{
    const __m128i h = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h));
}
#endif
#if defined(__AVX2__)
#include <immintrin.h>
static inline __m256 dk_bf16_widen_8(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)), 16));
}
#endif
#if defined(__AVX512F__)
static inline __m512 dk_bf16_widen_16(const uint16_t *p)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p)), 16));
}
#endif

static inline uint16_t dk_f2bf(float f) {
    const uint32_t x = dk_f32_bits(f);
    const uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)dk_sel_(dk_ge_((int32_t)(x & 0x7fffffffu), 0x7f800001), (x >> 16) | 0x0040u, r);
}

/* A double rounded to float to odd (x not a NaN). Masks, not selects: with
 * selects gcc 12 saw control flow and left the loops scalar. */
static inline float dk_d2f_odd(double x) {
    const float f = (float)x;
    const double back = (double)f;
    const uint32_t b = dk_f32_bits(f);
    const uint32_t down = __builtin_fabs(back) > __builtin_fabs(x);
    const uint32_t inexact = back != x;
    return dk_bits_f32((b - (down & inexact)) | inexact);
}

/* x's NaN (already narrowed) where x is a NaN, else the rounded value. */
static inline uint16_t dk_nan_or_(double x, uint16_t nan, uint16_t value) {
    const uint16_t m = (uint16_t)(0u - (uint32_t)(x != x));
    return (uint16_t)((nan & m) | (value & (uint16_t)~m));
}

static inline uint16_t dk_d2h(double x) {
    const uint64_t d = dk_f64_bits(x);
    const uint16_t nan = (uint16_t)(((d >> 48) & 0x8000u) | 0x7e00u | ((d >> 42) & 0x1ffu));
    return dk_nan_or_(x, nan, dk_f2h(dk_d2f_odd(x)));
}

static inline uint16_t dk_d2bf(double x) {
    const uint64_t d = dk_f64_bits(x);
    const uint16_t nan = (uint16_t)(((d >> 48) & 0x8000u) | 0x7fc0u | ((d >> 45) & 0x3fu));
    return dk_nan_or_(x, nan, dk_f2bf(dk_d2f_odd(x)));
}

#if defined(DK_SSE_F16)
/* dk_h2f and dk_f2h in SSE4.1 lanes, written out: gcc 12 built dk_f2h's
 * loop narrowing each intermediate to 16 bits (7 packs for 8 values).
 * dk_h2f_4_ takes each float16 in the high half of a 32-bit lane. */
static inline __m128 dk_h2f_4_(__m128i w) {
    const __m128i sign = _mm_and_si128(w, _mm_set1_epi32((int)0x80000000u));
    const __m128i em13 = _mm_srli_epi32(_mm_slli_epi32(w, 1), 4);
    const __m128i rebias = _mm_set1_epi32(0x38000000);
    __m128i normal = _mm_add_epi32(em13, rebias);
    normal = _mm_add_epi32(normal, _mm_and_si128(_mm_cmpgt_epi32(em13, _mm_set1_epi32(0x0f7fffff)), rebias));
    const __m128 sub = _mm_sub_ps(_mm_castsi128_ps(_mm_or_si128(em13, _mm_set1_epi32(0x38800000))),
                                  _mm_set1_ps(0x1p-14f));
    const __m128i is_normal = _mm_cmpgt_epi32(em13, _mm_set1_epi32(0x007fffff));
    return _mm_castsi128_ps(_mm_or_si128(sign, _mm_blendv_epi8(_mm_castps_si128(sub), normal, is_normal)));
}
/* dk_f2h's cases: 65536 and above clamped to it (the normal rounding then
 * gives inf), below 2^-14 by the float addition, NaN from its bits. */
static inline __m128i dk_f2h_4_(__m128 f) {
    const __m128i x = _mm_castps_si128(f);
    const __m128i a = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
    const __m128i sign = _mm_and_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(0x8000));
    const __m128i c = _mm_min_epi32(a, _mm_set1_epi32(0x47800000));
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(c, 13), _mm_set1_epi32(1));
    const __m128i normal = _mm_srli_epi32(
        _mm_add_epi32(_mm_add_epi32(c, lsb), _mm_set1_epi32((int)(0x0fffu - 0x38000000u))), 13);
    const __m128i sub = _mm_sub_epi32(_mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_set1_ps(0.5f))),
                                      _mm_set1_epi32(0x3f000000));
    __m128i r = _mm_blendv_epi8(sub, normal, _mm_cmpgt_epi32(a, _mm_set1_epi32(0x387fffff)));
    const __m128i nan = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(a, 13), _mm_set1_epi32(0x1ff)),
                                     _mm_set1_epi32(0x7e00));
    r = _mm_blendv_epi8(r, nan, _mm_cmpgt_epi32(a, _mm_set1_epi32(0x7f800000)));
    return _mm_or_si128(r, sign);
}
#endif

/* Runs of n: float16. */
static inline void dk_f16_to_f32_n(float *dst, const uint16_t *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#elif defined(DK_NEON_F16)
    for (; i + 4 <= n; i += 4)
        vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm_storeu_ps(dst + i, dk_h2f_4_(_mm_unpacklo_epi16(_mm_setzero_si128(), h)));
        _mm_storeu_ps(dst + i + 4, dk_h2f_4_(_mm_unpackhi_epi16(_mm_setzero_si128(), h)));
    }
#endif
    for (; i < n; i++) dst[i] = dk_h2f(src[i]);
}

static inline void dk_f32_to_f16_n(uint16_t *dst, const float *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(DK_NEON_F16)
    for (; i + 4 <= n; i += 4)
        vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm_packus_epi32(dk_f2h_4_(_mm_loadu_ps(src + i)), dk_f2h_4_(_mm_loadu_ps(src + i + 4))));
#endif
    for (; i < n; i++) dst[i] = dk_f2h(src[i]);
}

#if defined(__AVX512F__)
/* 16 float bits rounded to nearest even at bit 16 (dk_f2bf's integer
 * addition, no NaN lane): each lane's upper half is the bfloat16, the lower
 * left over. half_arith's bfloat16 lanes use that upper half in place. */
static inline __m512i dk_bf_round_hi_16_(__m512i b) {
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb);
}

/* dk_bf_round_hi_16_ of 16 floats, a NaN lane its own upper bits with the
 * quiet bit (dk_f2bf's NaN). */
static inline __m512i dk_f2bf_hi_16_(__m512 x) {
    const __m512i b = _mm512_castps_si512(x);
    return _mm512_mask_or_epi32(dk_bf_round_hi_16_(b), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), b,
                                _mm512_set1_epi32(0x00400000));
}

/* 16 float bits (odd: rounded to odd) to bfloat16 bits, to nearest even: an
 * odd float is never a tie, so the integer rounding of dk_f2bf is exact. */
static inline __m256i dk_odd_to_bf16_16_(__m512i b) {
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(dk_bf_round_hi_16_(b), 16));
}

/* 8 doubles rounded to float to odd (truncation, the last bit set where
 * inexact); a NaN lane gives x's NaN quieted (sign and leading payload
 * bits kept), its last bit set. */
static inline __m256i dk_d2f_odd_8_(__m512d x) {
    const __m256 t = _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact = _mm512_cmp_pd_mask(_mm512_cvtps_pd(t), x, _CMP_NEQ_UQ);
    return _mm256_mask_or_epi32(_mm256_castps_si256(t), inexact, _mm256_castps_si256(t),
                                _mm256_set1_epi32(1));
}

/* 16 int32 rounded to float to odd: truncation, exact back to int32 (no
 * larger in magnitude than x), the last bit set where it differs. */
static inline __m512i dk_i2f_odd_16_(__m512i x) {
    const __m512 t = _mm512_cvt_roundepi32_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 inexact = _mm512_cmpneq_epi32_mask(_mm512_cvttps_epi32(t), x);
    return _mm512_mask_or_epi32(_mm512_castps_si512(t), inexact, _mm512_castps_si512(t),
                                _mm512_set1_epi32(1));
}
#endif

#if defined(__AVX512F__)
/* 8 doubles rounded to float to odd wherever the truncation is a normal
 * float or zero: the last bit set where one of the 29 mantissa bits that
 * float drops is set; one test in place of dk_d2f_odd_8_'s widening back and
 * comparison. Where truncation drops more (a float denormal, |x| < 2^-126)
 * the bit may be missing: float16 rounds x and its truncation to the same
 * zero there (both below 2^-25, half its least denormal), bfloat16 takes
 * dk_d2f_odd_8_ for such a block. Above FLT_MAX, truncation gives FLT_MAX,
 * which rounds to infinity as x does. */
static inline __m256i dk_d2f_odd_quick_8_(__m512d x) {
    const __m256 t = _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact =
        _mm512_test_epi64_mask(_mm512_castpd_si512(x), _mm512_set1_epi64(0x1fffffff));
    return _mm256_mask_or_epi32(_mm256_castps_si256(t), inexact, _mm256_castps_si256(t),
                                _mm256_set1_epi32(1));
}
#endif

#if defined(__AVX2__)
/* 8 float bits rounded to nearest even at bit 16 (dk_f2bf's integer
 * addition, no NaN lane): each lane's upper half is the bfloat16. Also on
 * AVX-512 targets: half_arith's 8-lane tails. */
static inline __m256i dk_bf_round_hi_8_(__m256i b) {
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7fff)), lsb);
}

/* dk_bf_round_hi_8_ of 8 floats, a NaN lane its own upper bits with the
 * quiet bit (dk_f2bf's NaN). */
static inline __m256i dk_f2bf_hi_8_(__m256 x) {
    const __m256i b = _mm256_castps_si256(x);
    return _mm256_blendv_epi8(dk_bf_round_hi_8_(b), _mm256_or_si256(b, _mm256_set1_epi32(0x00400000)),
                              _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
}

/* 8 floats to bfloat16 bits, a 32-bit lane each: dk_f2bf's, a NaN quieted
 * (dk_f2bf_8_), or with no NaN among them (dk_f2bf_8_no_nan_). */
static inline __m256i dk_f2bf_8_(__m256 x) { return _mm256_srli_epi32(dk_f2bf_hi_8_(x), 16); }
static inline __m256i dk_f2bf_8_no_nan_(__m256 x) {
    return _mm256_srli_epi32(dk_bf_round_hi_8_(_mm256_castps_si256(x)), 16);
}
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
/* 4 doubles to float, rounded to odd (AVX2 has no rounding mode per
 * instruction): the 29 mantissa bits float drops are cleared and the
 * float's last bit (the double's bit 29) set where one of them was (their
 * sum with 0x1fffffff carries into bit 29 exactly then), so vcvtpd2ps is
 * exact wherever the result is a normal float or zero. A NaN stays a NaN
 * (that bit or its own upper ones), converted as the AVX-512 path's are;
 * from 2^128 up it gives infinity where rounding to odd gives FLT_MAX, and
 * float16 and bfloat16 round both to infinity. Below 2^-126 (a float
 * denormal) the conversion rounds to nearest: float16 rounds that and x to
 * the same zero (both below half its least denormal, 2^-25); bfloat16's
 * caller takes the exact form for such a block. */
static inline __m128 dk_d2f_odd_quick_4_(__m256d x) {
    const __m256i b = _mm256_castpd_si256(x);
    const __m256i low = _mm256_set1_epi64x(0x1fffffff);
    const __m256i sticky = _mm256_and_si256(_mm256_add_epi64(_mm256_and_si256(b, low), low),
                                            _mm256_set1_epi64x(0x20000000));
    return _mm256_cvtpd_ps(
        _mm256_castsi256_pd(_mm256_or_si256(_mm256_andnot_si256(low, b), sticky)));
}

static inline __m256 dk_d2f_odd_quick_8_(const double *src) {
    return _mm256_set_m128(dk_d2f_odd_quick_4_(_mm256_loadu_pd(src + 4)),
                           dk_d2f_odd_quick_4_(_mm256_loadu_pd(src)));
}

/* 8 int32 rounded to float to odd: to nearest (vcvtdq2ps), back by
 * truncation (exact: a float of at most 2^31 in magnitude is an integer),
 * one step toward zero where the float is larger in magnitude, the last
 * bit set where it differs. The difference back - x is taken modulo 2^32:
 * it has x's sign exactly where the float is larger, also for the one
 * float out of int32's range (2^31, whose truncation is INT32_MIN). */
static inline __m256 dk_i2f_odd_8_(const int32_t *src) {
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)src);
    const __m256 t = _mm256_cvtepi32_ps(x);
    const __m256i d = _mm256_sub_epi32(_mm256_cvttps_epi32(t), x);
    const __m256i inexact = _mm256_xor_si256(_mm256_cmpeq_epi32(d, _mm256_setzero_si256()),
                                             _mm256_set1_epi32(-1));
    const __m256i larger = _mm256_andnot_si256(_mm256_srai_epi32(_mm256_xor_si256(d, x), 31),
                                               inexact);
    const __m256i b = _mm256_add_epi32(_mm256_castps_si256(t), larger); /* -1 where larger */
    return _mm256_castsi256_ps(_mm256_or_si256(b, _mm256_srli_epi32(inexact, 31)));
}

/* 16 bfloat16 (two vectors of dk_f2bf_8_) stored in order: the pack works
 * within 128-bit halves, the permutation puts the quarters back. */
static inline void dk_store_bf16_16_(uint16_t *dst, __m256i lo, __m256i hi) {
    _mm256_storeu_si256((__m256i *)(void *)dst,
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8));
}

/* Whether some float lane is a nonzero denormal. */
static inline int dk_any_denormal_8_(__m256 f) {
    const __m256i b = _mm256_castps_si256(f);
    const __m256i exp0 = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7f800000)),
                                            _mm256_setzero_si256());
    const __m256i zero = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff)),
                                            _mm256_setzero_si256());
    return !_mm256_testc_si256(zero, exp0); /* some lane has exp0 and not zero */
}
#endif

#if defined(DK_SSE_F16)
/* The AVX2 forms above in SSE4.1's 4 lanes (x86 without F16C): the same
 * arguments hold lane by lane; the unsigned pack keeps lane order, so
 * 8 results are one packus. */
static inline __m128 dk_d2f_odd_quick_2_(__m128d x) { /* in the low two lanes */
    const __m128i b = _mm_castpd_si128(x);
    const __m128i low = _mm_set1_epi64x(0x1fffffff);
    const __m128i sticky = _mm_and_si128(_mm_add_epi64(_mm_and_si128(b, low), low),
                                         _mm_set1_epi64x(0x20000000));
    return _mm_cvtpd_ps(_mm_castsi128_pd(_mm_or_si128(_mm_andnot_si128(low, b), sticky)));
}
static inline __m128 dk_d2f_odd_quick_4_(const double *src) {
    return _mm_movelh_ps(dk_d2f_odd_quick_2_(_mm_loadu_pd(src)),
                         dk_d2f_odd_quick_2_(_mm_loadu_pd(src + 2)));
}
static inline __m128 dk_i2f_odd_4_(const int32_t *src) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)src);
    const __m128 t = _mm_cvtepi32_ps(x);
    const __m128i d = _mm_sub_epi32(_mm_cvttps_epi32(t), x);
    const __m128i inexact = _mm_xor_si128(_mm_cmpeq_epi32(d, _mm_setzero_si128()), _mm_set1_epi32(-1));
    const __m128i larger = _mm_andnot_si128(_mm_srai_epi32(_mm_xor_si128(d, x), 31), inexact);
    const __m128i b = _mm_add_epi32(_mm_castps_si128(t), larger); /* -1 where larger */
    return _mm_castsi128_ps(_mm_or_si128(b, _mm_srli_epi32(inexact, 31)));
}
static inline __m128i dk_bf_round_hi_4_(__m128i b) {
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(b, 16), _mm_set1_epi32(1));
    return _mm_add_epi32(_mm_add_epi32(b, _mm_set1_epi32(0x7fff)), lsb);
}
static inline __m128i dk_f2bf_4_(__m128 x) {
    const __m128i b = _mm_castps_si128(x);
    return _mm_srli_epi32(_mm_blendv_epi8(dk_bf_round_hi_4_(b), _mm_or_si128(b, _mm_set1_epi32(0x00400000)),
                                          _mm_castps_si128(_mm_cmpunord_ps(x, x))), 16);
}
static inline __m128i dk_f2bf_4_no_nan_(__m128 x) {
    return _mm_srli_epi32(dk_bf_round_hi_4_(_mm_castps_si128(x)), 16);
}
static inline int dk_any_denormal_4_(__m128 f) {
    const __m128i b = _mm_castps_si128(f);
    const __m128i exp0 = _mm_cmpeq_epi32(_mm_and_si128(b, _mm_set1_epi32(0x7f800000)), _mm_setzero_si128());
    const __m128i zero = _mm_cmpeq_epi32(_mm_and_si128(b, _mm_set1_epi32(0x7fffffff)), _mm_setzero_si128());
    return !_mm_testc_si128(zero, exp0);
}
static inline void dk_store_16_8_(uint16_t *dst, __m128i lo, __m128i hi) {
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_packus_epi32(lo, hi));
}
#endif

/* Runs of n: float64 -> float16. With AVX512F, 8 lanes: rounding to odd
 * is truncation (vcvtpd2ps toward zero) with the last bit set where it was
 * inexact, then vcvtps2ph to nearest even. A NaN lane needs nothing more:
 * both x86 conversions keep the sign and the payload's leading bits and set
 * the quiet bit, which is dk_d2h's NaN (sign, 0x7e00, the double's bits
 * 42-50). */
static inline void dk_f64_to_f16_n(uint16_t *dst, const double *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_castsi256_ps(dk_d2f_odd_quick_8_(
                                             _mm512_loadu_pd(src + i))),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__AVX2__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(dk_d2f_odd_quick_8_(src + i),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8)
        dk_store_16_8_(dst + i, dk_f2h_4_(dk_d2f_odd_quick_4_(src + i)),
                       dk_f2h_4_(dk_d2f_odd_quick_4_(src + i + 4)));
#endif
    for (; i < n; i++) dst[i] = dk_d2h(src[i]);
}

/* Runs of n: float -> bfloat16, dk_f2bf's bits; with AVX512F 16 lanes, a
 * NaN lane quieted by its mask as dk_f2bf does. */
static inline void dk_f32_to_bf16_run(uint16_t *dst, const float *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) {
        const __m512i r = _mm512_srli_epi32(dk_f2bf_hi_16_(_mm512_loadu_ps(src + i)), 16);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi32_epi16(r));
    }
#elif defined(__AVX2__)
    for (; i + 16 <= n; i += 16)
        dk_store_bf16_16_(dst + i, dk_f2bf_8_(_mm256_loadu_ps(src + i)),
                          dk_f2bf_8_(_mm256_loadu_ps(src + i + 8)));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8)
        dk_store_16_8_(dst + i, dk_f2bf_4_(_mm_loadu_ps(src + i)), dk_f2bf_4_(_mm_loadu_ps(src + i + 4)));
#endif
    for (; i < n; i++) dst[i] = dk_f2bf(src[i]);
}

/* Runs of n: float64 -> bfloat16, by dk_d2bf's rounding (to odd, then to
 * nearest even). With AVX512F 16 lanes: the sticky bit from the 29
 * mantissa bits float drops (dk_d2f_odd_quick_8_), exact wherever the
 * truncation is a normal float or zero; a block with a float denormal (|x|
 * below 2^-126, where truncation drops more and bfloat16 still has values)
 * takes dk_d2f_odd_8_'s exact comparison. A NaN lane is its truncation's
 * upper half with the quiet bit: dk_d2bf's NaN (vcvtpd2ps keeps the sign
 * and the payload's leading bits). 256K contiguous: 61 -> 55 us (torch 48,
 * rounding twice). */
static inline void dk_f64_to_bf16_run(uint16_t *dst, const double *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) {
        const __m512d x0 = _mm512_loadu_pd(src + i), x1 = _mm512_loadu_pd(src + i + 8);
        __m512i odd = _mm512_inserti64x4(_mm512_castsi256_si512(dk_d2f_odd_quick_8_(x0)),
                                         dk_d2f_odd_quick_8_(x1), 1);
        const __mmask16 denormal =
            _mm512_testn_epi32_mask(odd, _mm512_set1_epi32(0x7f800000)) &
            _mm512_test_epi32_mask(odd, _mm512_set1_epi32(0x7ffffffe));
        if (denormal)
            odd = _mm512_inserti64x4(_mm512_castsi256_si512(dk_d2f_odd_8_(x0)),
                                     dk_d2f_odd_8_(x1), 1);
        const __m512i r = _mm512_srli_epi32(dk_f2bf_hi_16_(_mm512_castsi512_ps(odd)), 16);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi32_epi16(r));
    }
#elif defined(__AVX2__)
    for (; i + 16 <= n; i += 16) {
        const __m256 lo = dk_d2f_odd_quick_8_(src + i), hi = dk_d2f_odd_quick_8_(src + i + 8);
        if (dk_any_denormal_8_(lo) || dk_any_denormal_8_(hi)) { /* rare: exact, one by one */
            for (intptr_t j = i; j < i + 16; j++) dst[j] = dk_d2bf(src[j]);
            continue;
        }
        dk_store_bf16_16_(dst + i, dk_f2bf_8_(lo), dk_f2bf_8_(hi));
    }
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8) {
        const __m128 lo = dk_d2f_odd_quick_4_(src + i), hi = dk_d2f_odd_quick_4_(src + i + 4);
        if (dk_any_denormal_4_(lo) || dk_any_denormal_4_(hi)) { /* rare: exact, one by one */
            for (intptr_t j = i; j < i + 8; j++) dst[j] = dk_d2bf(src[j]);
            continue;
        }
        dk_store_16_8_(dst + i, dk_f2bf_4_(lo), dk_f2bf_4_(hi));
    }
#endif
    for (; i < n; i++) dst[i] = dk_d2bf(src[i]);
}

/* Runs of n: int32 -> float16 / bfloat16, rounded once (as from its exact
 * double: to odd in float, then to nearest even). With AVX512F 16 lanes,
 * all in registers; else through double, as the reference. */
static inline void dk_i32_to_bf16_run(uint16_t *dst, const int32_t *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            dk_odd_to_bf16_16_(dk_i2f_odd_16_(_mm512_loadu_si512(src + i))));
#elif defined(__AVX2__)
    for (; i + 16 <= n; i += 16)
        dk_store_bf16_16_(dst + i, dk_f2bf_8_no_nan_(dk_i2f_odd_8_(src + i)),
                          dk_f2bf_8_no_nan_(dk_i2f_odd_8_(src + i + 8)));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8)
        dk_store_16_8_(dst + i, dk_f2bf_4_no_nan_(dk_i2f_odd_4_(src + i)),
                       dk_f2bf_4_no_nan_(dk_i2f_odd_4_(src + i + 4)));
#endif
    for (; i < n; i++) dst[i] = dk_d2bf((double)src[i]);
}

static inline void dk_i32_to_f16_run(uint16_t *dst, const int32_t *src, intptr_t n) {
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm512_cvtps_ph(_mm512_castsi512_ps(dk_i2f_odd_16_(
                                                _mm512_loadu_si512(src + i))),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__AVX2__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(dk_i2f_odd_8_(src + i),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(DK_SSE_F16)
    for (; i + 8 <= n; i += 8)
        dk_store_16_8_(dst + i, dk_f2h_4_(dk_i2f_odd_4_(src + i)), dk_f2h_4_(dk_i2f_odd_4_(src + i + 4)));
#endif
    for (; i < n; i++) dst[i] = dk_d2h((double)src[i]);
}

/* One value and runs of n: any narrow float of the bits list, by its format (E, M, NANS). */
#define DK_IS_BF16_(E, M, NANS) ((E) == 8 && (M) == 7 && DISPATCH_NARROW_##NANS == DISPATCH_NARROW_IEEE)
#define DK_BITS_RUNS_(NAME, sfx, T, E, M, NANS)                                           \
    static inline float dk_##sfx##_to_f32(T v) {                                          \
        return DK_IS_BF16_(E, M, NANS) ? dk_bf2f((uint16_t)v)                             \
                                       : dispatch_narrow_to_float(v, E, M, DISPATCH_NARROW_##NANS); \
    }                                                                                     \
    static inline T dk_f32_to_##sfx(float x) {                                            \
        return DK_IS_BF16_(E, M, NANS)                                                    \
                   ? (T)dk_f2bf(x)                                                        \
                   : (T)dispatch_narrow_from_float(x, E, M, DISPATCH_NARROW_##NANS);      \
    }                                                                                     \
    static inline void dk_##sfx##_to_f32_n(float *dst, const T *src, intptr_t n) {        \
        if (DK_IS_BF16_(E, M, NANS)) {                                                    \
            for (intptr_t i = 0; i < n; i++) dst[i] = dk_bf2f((uint16_t)src[i]);          \
        } else {                                                                          \
            for (intptr_t i = 0; i < n; i++)                                              \
                dst[i] = dispatch_narrow_to_float(src[i], E, M, DISPATCH_NARROW_##NANS);  \
        }                                                                                 \
    }                                                                                     \
    static inline void dk_f32_to_##sfx##_n(T *dst, const float *src, intptr_t n) {        \
        if (DK_IS_BF16_(E, M, NANS) && sizeof(T) == 2) {                                  \
            dk_f32_to_bf16_run((uint16_t *)(void *)dst, src, n);                          \
        } else {                                                                          \
            for (intptr_t i = 0; i < n; i++)                                              \
                dst[i] = (T)dispatch_narrow_from_float(src[i], E, M, DISPATCH_NARROW_##NANS); \
        }                                                                                 \
    }                                                                                     \
    static inline T dk_f64_to_##sfx(double x) {                                           \
        return DK_IS_BF16_(E, M, NANS)                                                    \
                   ? (T)dk_d2bf(x)                                                        \
                   : (T)dispatch_narrow_from_double(x, E, M, DISPATCH_NARROW_##NANS);     \
    }                                                                                     \
    static inline void dk_f64_to_##sfx##_n(T *dst, const double *src, intptr_t n) {       \
        if (DK_IS_BF16_(E, M, NANS) && sizeof(T) == 2) {                                  \
            dk_f64_to_bf16_run((uint16_t *)(void *)dst, src, n);                          \
            return;                                                                       \
        }                                                                                 \
        for (intptr_t i = 0; i < n; i++) dst[i] = dk_f64_to_##sfx(src[i]);                \
    }                                                                                     \
    static inline void dk_i32_to_##sfx##_n(T *dst, const int32_t *src, intptr_t n) {      \
        if (DK_IS_BF16_(E, M, NANS) && sizeof(T) == 2) {                                  \
            dk_i32_to_bf16_run((uint16_t *)(void *)dst, src, n);                          \
            return;                                                                       \
        }                                                                                 \
        for (intptr_t i = 0; i < n; i++) dst[i] = dk_f64_to_##sfx((double)src[i]);        \
    }
DISPATCH_FORALL_BITS_FLOATS(DK_BITS_RUNS_)

/* float16 by the same name as the bits list's (f16 is its sfx). */
static inline uint16_t dk_f64_to_f16(double x) { return dk_d2h(x); }
static inline void dk_i32_to_f16_n(uint16_t *dst, const int32_t *src, intptr_t n) {
    dk_i32_to_f16_run(dst, src, n);
}

#endif /* DISPATCH_KERNELS_NARROW_VECTOR_H_ */
