/*
 * A small vector vocabulary for the kernels: one set of names over AVX-512,
 * AVX2, SSE2, AArch64 Advanced SIMD (ASIMD, the aarch64 baseline) and plain
 * scalar C, so a kernel file reads as one algorithm and the target
 * differences live here.
 *
 * Note [Width from the compiler's flags]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A dispatchable source is compiled once per target with that target's
 * flags; the flags define the compiler's own __AVX512F__/__AVX2__/__FMA__
 * macros. We pick the width from those rather than from DISPATCH_HAVE_*: they
 * always agree with what the compiler may emit (the toolkit's macros follow
 * the same flags), and the same source also compiles in a bare `gcc -mavx2`
 * test harness. The baseline build of an x86-64 source gets SSE2, of an
 * aarch64 source ASIMD; any other architecture gets the scalar branch (one
 * lane), which the compiler may still auto-vectorize under its own flags.
 *
 * Note [Same answer on every target]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * + - * / sqrt are correctly rounded on every width, so they agree bit for
 * bit. max/min are defined here, not by the instruction: the result is the
 * first operand if it is NaN, else the second if it is NaN, else the larger
 * (smaller); on a tie (+0 vs -0) the second operand. dv_muladd fuses only
 * where the target has FMA, so polynomial kernels (exp, log) agree across
 * targets only within their documented ulp bound; kernels that promise
 * bit-identical results never call dv_muladd.
 *
 * Tails are handled by copying the last partial vector through a small stack
 * buffer (dv_*_partial), so the tail runs the very same instructions as the
 * body, and no load ever reads past the caller's memory. Loads and stores are
 * unaligned throughout.
 */
#ifndef DISPATCH_KERNELS_SIMD_H_
#define DISPATCH_KERNELS_SIMD_H_

#include <stdint.h>
#include <string.h>

#if defined(__AVX512F__)
    #include <immintrin.h>
    #define DV_WIDTH 64
    #define DV_NAME "avx512f"
    typedef __m512 dv_f32;
    typedef __m512d dv_f64;
    typedef __mmask16 dm_f32;
    typedef __mmask8 dm_f64;
#elif defined(__AVX2__)
    #include <immintrin.h>
    #define DV_WIDTH 32
    #define DV_NAME "avx2"
    typedef __m256 dv_f32;
    typedef __m256d dv_f64;
    typedef __m256 dm_f32;
    typedef __m256d dm_f64;
#elif defined(__SSE2__)
    #include <emmintrin.h>
    #if defined(__SSE4_1__)
        #include <smmintrin.h>
    #endif
    #define DV_WIDTH 16
    #define DV_NAME "sse2"
    typedef __m128 dv_f32;
    typedef __m128d dv_f64;
    typedef __m128 dm_f32;
    typedef __m128d dm_f64;
#elif defined(__aarch64__) && defined(__ARM_NEON)
    #include <arm_neon.h>
    #define DV_WIDTH 16
    #define DV_NEON 1
    #define DV_NAME "asimd"
    typedef float32x4_t dv_f32;
    typedef float64x2_t dv_f64;
    typedef uint32x4_t dm_f32;
    typedef uint64x2_t dm_f64;
#else
    #define DV_WIDTH 0
    #define DV_NAME "scalar"
    typedef float dv_f32;
    typedef double dv_f64;
    typedef int dm_f32;
    typedef int dm_f64;
#endif

#if DV_WIDTH
    #define DV_LANES_F32 (DV_WIDTH / 4)
    #define DV_LANES_F64 (DV_WIDTH / 8)
#else
    #define DV_LANES_F32 1
    #define DV_LANES_F64 1
#endif

#if defined(__FMA__) || defined(__AVX512F__) || defined(DV_NEON)
    #define DV_HAVE_FMA 1
#else
    #define DV_HAVE_FMA 0
#endif

#define DV_INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------------------ */
#if DV_WIDTH == 64

DV_INLINE dv_f32 dv_load_f32(const float *p) { return _mm512_loadu_ps(p); }
DV_INLINE void dv_store_f32(float *p, dv_f32 v) { _mm512_storeu_ps(p, v); }
DV_INLINE dv_f32 dv_set1_f32(float x) { return _mm512_set1_ps(x); }
DV_INLINE dv_f32 dv_add_f32(dv_f32 a, dv_f32 b) { return _mm512_add_ps(a, b); }
DV_INLINE dv_f32 dv_sub_f32(dv_f32 a, dv_f32 b) { return _mm512_sub_ps(a, b); }
DV_INLINE dv_f32 dv_mul_f32(dv_f32 a, dv_f32 b) { return _mm512_mul_ps(a, b); }
DV_INLINE dv_f32 dv_div_f32(dv_f32 a, dv_f32 b) { return _mm512_div_ps(a, b); }
DV_INLINE dv_f32 dv_sqrt_f32(dv_f32 a) { return _mm512_sqrt_ps(a); }
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return _mm512_fmadd_ps(a, b, c); }
DV_INLINE dm_f32 dv_isnan_f32(dv_f32 a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
DV_INLINE dm_f32 dv_lt_f32(dv_f32 a, dv_f32 b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
DV_INLINE dm_f32 dv_eq_f32(dv_f32 a, dv_f32 b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b) { return _mm512_mask_blend_ps(m, b, a); }
DV_INLINE dv_f32 dv_clamp_f32(dv_f32 a, float lo, float hi)
{ return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), a)); }
/* 2^n for t = n + 1.5*2^23 (n an integer in the normal exponent range). */
DV_INLINE dv_f32 dv_pow2_f32(dv_f32 t)
{
    __m512i i = _mm512_slli_epi32(_mm512_castps_si512(t), 23);
    return _mm512_castsi512_ps(_mm512_add_epi32(i, _mm512_set1_epi32(127 << 23)));
}
/* x = m * 2^k with m in [c, 2c), c = 0x1.6a09e6p-1 (~sqrt(1/2)); x normal > 0. */
DV_INLINE dv_f32 dv_addbits_f32(dv_f32 v, int32_t c)
{ return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(c))); }
DV_INLINE dv_f32 dv_orbits_f32(dv_f32 v, int32_t c)
{ return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32(c))); }
DV_INLINE dv_f32 dv_andbits_f32(dv_f32 v, int32_t c)
{ return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(c))); }
DV_INLINE dv_f32 dv_split_f32(dv_f32 x, dv_f32 *k)
{
    const __m512i c = _mm512_set1_epi32(0x3f3504f3);
    __m512i ix = _mm512_sub_epi32(_mm512_castps_si512(x), c);
    *k = _mm512_cvtepi32_ps(_mm512_srai_epi32(ix, 23));
    ix = _mm512_add_epi32(_mm512_and_si512(ix, _mm512_set1_epi32(0x007fffff)), c);
    return _mm512_castsi512_ps(ix);
}

DV_INLINE dv_f64 dv_load_f64(const double *p) { return _mm512_loadu_pd(p); }
DV_INLINE void dv_store_f64(double *p, dv_f64 v) { _mm512_storeu_pd(p, v); }
DV_INLINE dv_f64 dv_set1_f64(double x) { return _mm512_set1_pd(x); }
DV_INLINE dv_f64 dv_add_f64(dv_f64 a, dv_f64 b) { return _mm512_add_pd(a, b); }
DV_INLINE dv_f64 dv_sub_f64(dv_f64 a, dv_f64 b) { return _mm512_sub_pd(a, b); }
DV_INLINE dv_f64 dv_mul_f64(dv_f64 a, dv_f64 b) { return _mm512_mul_pd(a, b); }
DV_INLINE dv_f64 dv_div_f64(dv_f64 a, dv_f64 b) { return _mm512_div_pd(a, b); }
DV_INLINE dv_f64 dv_sqrt_f64(dv_f64 a) { return _mm512_sqrt_pd(a); }
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return _mm512_fmadd_pd(a, b, c); }
DV_INLINE dm_f64 dv_isnan_f64(dv_f64 a) { return _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q); }
DV_INLINE dm_f64 dv_lt_f64(dv_f64 a, dv_f64 b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
DV_INLINE dm_f64 dv_eq_f64(dv_f64 a, dv_f64 b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b) { return _mm512_mask_blend_pd(m, b, a); }
DV_INLINE dv_f64 dv_clamp_f64(dv_f64 a, double lo, double hi)
{ return _mm512_min_pd(_mm512_set1_pd(hi), _mm512_max_pd(_mm512_set1_pd(lo), a)); }
DV_INLINE dv_f64 dv_pow2_f64(dv_f64 t)
{
    __m512i i = _mm512_slli_epi64(_mm512_castpd_si512(t), 52);
    return _mm512_castsi512_pd(_mm512_add_epi64(i, _mm512_set1_epi64(1023LL << 52)));
}
DV_INLINE dv_f64 dv_addbits_f64(dv_f64 v, int64_t c)
{ return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(v), _mm512_set1_epi64(c))); }
DV_INLINE dv_f64 dv_orbits_f64(dv_f64 v, int64_t c)
{ return _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(c))); }
DV_INLINE dv_f64 dv_andbits_f64(dv_f64 v, int64_t c)
{ return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(c))); }
DV_INLINE dv_f64 dv_split_f64(dv_f64 x, dv_f64 *k)
{
    /* See dv_split_f64 in the SSE2 branch for the exponent trick. */
    const __m512i c = _mm512_set1_epi64(0x3fe6a09e667f3bcdLL);
    __m512i ix = _mm512_add_epi64(_mm512_sub_epi64(_mm512_castpd_si512(x), c),
                                  _mm512_set1_epi64(1100LL << 52));
    __m512i e = _mm512_or_si512(_mm512_srli_epi64(ix, 52), _mm512_set1_epi64(0x4330000000000000LL));
    *k = _mm512_sub_pd(_mm512_castsi512_pd(e), _mm512_set1_pd(4503599627370496.0 + 1100.0));
    ix = _mm512_add_epi64(_mm512_and_si512(ix, _mm512_set1_epi64(0x000fffffffffffffLL)), c);
    return _mm512_castsi512_pd(ix);
}

/* ------------------------------------------------------------------------ */
#elif DV_WIDTH == 32

DV_INLINE dv_f32 dv_load_f32(const float *p) { return _mm256_loadu_ps(p); }
DV_INLINE void dv_store_f32(float *p, dv_f32 v) { _mm256_storeu_ps(p, v); }
DV_INLINE dv_f32 dv_set1_f32(float x) { return _mm256_set1_ps(x); }
DV_INLINE dv_f32 dv_add_f32(dv_f32 a, dv_f32 b) { return _mm256_add_ps(a, b); }
DV_INLINE dv_f32 dv_sub_f32(dv_f32 a, dv_f32 b) { return _mm256_sub_ps(a, b); }
DV_INLINE dv_f32 dv_mul_f32(dv_f32 a, dv_f32 b) { return _mm256_mul_ps(a, b); }
DV_INLINE dv_f32 dv_div_f32(dv_f32 a, dv_f32 b) { return _mm256_div_ps(a, b); }
DV_INLINE dv_f32 dv_sqrt_f32(dv_f32 a) { return _mm256_sqrt_ps(a); }
#if DV_HAVE_FMA
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return _mm256_fmadd_ps(a, b, c); }
#else
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
#endif
DV_INLINE dm_f32 dv_isnan_f32(dv_f32 a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
DV_INLINE dm_f32 dv_lt_f32(dv_f32 a, dv_f32 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
DV_INLINE dm_f32 dv_eq_f32(dv_f32 a, dv_f32 b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b) { return _mm256_blendv_ps(b, a, m); }
DV_INLINE dv_f32 dv_clamp_f32(dv_f32 a, float lo, float hi)
{ return _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), a)); }
DV_INLINE dv_f32 dv_pow2_f32(dv_f32 t)
{
    __m256i i = _mm256_slli_epi32(_mm256_castps_si256(t), 23);
    return _mm256_castsi256_ps(_mm256_add_epi32(i, _mm256_set1_epi32(127 << 23)));
}
DV_INLINE dv_f32 dv_addbits_f32(dv_f32 v, int32_t c)
{ return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(c))); }
DV_INLINE dv_f32 dv_orbits_f32(dv_f32 v, int32_t c)
{ return _mm256_castsi256_ps(_mm256_or_si256(_mm256_castps_si256(v), _mm256_set1_epi32(c))); }
DV_INLINE dv_f32 dv_andbits_f32(dv_f32 v, int32_t c)
{ return _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(c))); }
DV_INLINE dv_f32 dv_split_f32(dv_f32 x, dv_f32 *k)
{
    const __m256i c = _mm256_set1_epi32(0x3f3504f3);
    __m256i ix = _mm256_sub_epi32(_mm256_castps_si256(x), c);
    *k = _mm256_cvtepi32_ps(_mm256_srai_epi32(ix, 23));
    ix = _mm256_add_epi32(_mm256_and_si256(ix, _mm256_set1_epi32(0x007fffff)), c);
    return _mm256_castsi256_ps(ix);
}

DV_INLINE dv_f64 dv_load_f64(const double *p) { return _mm256_loadu_pd(p); }
DV_INLINE void dv_store_f64(double *p, dv_f64 v) { _mm256_storeu_pd(p, v); }
DV_INLINE dv_f64 dv_set1_f64(double x) { return _mm256_set1_pd(x); }
DV_INLINE dv_f64 dv_add_f64(dv_f64 a, dv_f64 b) { return _mm256_add_pd(a, b); }
DV_INLINE dv_f64 dv_sub_f64(dv_f64 a, dv_f64 b) { return _mm256_sub_pd(a, b); }
DV_INLINE dv_f64 dv_mul_f64(dv_f64 a, dv_f64 b) { return _mm256_mul_pd(a, b); }
DV_INLINE dv_f64 dv_div_f64(dv_f64 a, dv_f64 b) { return _mm256_div_pd(a, b); }
DV_INLINE dv_f64 dv_sqrt_f64(dv_f64 a) { return _mm256_sqrt_pd(a); }
#if DV_HAVE_FMA
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return _mm256_fmadd_pd(a, b, c); }
#else
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return _mm256_add_pd(_mm256_mul_pd(a, b), c); }
#endif
DV_INLINE dm_f64 dv_isnan_f64(dv_f64 a) { return _mm256_cmp_pd(a, a, _CMP_UNORD_Q); }
DV_INLINE dm_f64 dv_lt_f64(dv_f64 a, dv_f64 b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
DV_INLINE dm_f64 dv_eq_f64(dv_f64 a, dv_f64 b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b) { return _mm256_blendv_pd(b, a, m); }
DV_INLINE dv_f64 dv_clamp_f64(dv_f64 a, double lo, double hi)
{ return _mm256_min_pd(_mm256_set1_pd(hi), _mm256_max_pd(_mm256_set1_pd(lo), a)); }
DV_INLINE dv_f64 dv_pow2_f64(dv_f64 t)
{
    __m256i i = _mm256_slli_epi64(_mm256_castpd_si256(t), 52);
    return _mm256_castsi256_pd(_mm256_add_epi64(i, _mm256_set1_epi64x(1023LL << 52)));
}
DV_INLINE dv_f64 dv_addbits_f64(dv_f64 v, int64_t c)
{ return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(v), _mm256_set1_epi64x(c))); }
DV_INLINE dv_f64 dv_orbits_f64(dv_f64 v, int64_t c)
{ return _mm256_castsi256_pd(_mm256_or_si256(_mm256_castpd_si256(v), _mm256_set1_epi64x(c))); }
DV_INLINE dv_f64 dv_andbits_f64(dv_f64 v, int64_t c)
{ return _mm256_castsi256_pd(_mm256_and_si256(_mm256_castpd_si256(v), _mm256_set1_epi64x(c))); }
DV_INLINE dv_f64 dv_split_f64(dv_f64 x, dv_f64 *k)
{
    const __m256i c = _mm256_set1_epi64x(0x3fe6a09e667f3bcdLL);
    __m256i ix = _mm256_add_epi64(_mm256_sub_epi64(_mm256_castpd_si256(x), c),
                                  _mm256_set1_epi64x(1100LL << 52));
    __m256i e = _mm256_or_si256(_mm256_srli_epi64(ix, 52), _mm256_set1_epi64x(0x4330000000000000LL));
    *k = _mm256_sub_pd(_mm256_castsi256_pd(e), _mm256_set1_pd(4503599627370496.0 + 1100.0));
    ix = _mm256_add_epi64(_mm256_and_si256(ix, _mm256_set1_epi64x(0x000fffffffffffffLL)), c);
    return _mm256_castsi256_pd(ix);
}

/* ------------------------------------------------------------------------ */
#elif DV_WIDTH == 16 && !defined(DV_NEON)

DV_INLINE dv_f32 dv_load_f32(const float *p) { return _mm_loadu_ps(p); }
DV_INLINE void dv_store_f32(float *p, dv_f32 v) { _mm_storeu_ps(p, v); }
DV_INLINE dv_f32 dv_set1_f32(float x) { return _mm_set1_ps(x); }
DV_INLINE dv_f32 dv_add_f32(dv_f32 a, dv_f32 b) { return _mm_add_ps(a, b); }
DV_INLINE dv_f32 dv_sub_f32(dv_f32 a, dv_f32 b) { return _mm_sub_ps(a, b); }
DV_INLINE dv_f32 dv_mul_f32(dv_f32 a, dv_f32 b) { return _mm_mul_ps(a, b); }
DV_INLINE dv_f32 dv_div_f32(dv_f32 a, dv_f32 b) { return _mm_div_ps(a, b); }
DV_INLINE dv_f32 dv_sqrt_f32(dv_f32 a) { return _mm_sqrt_ps(a); }
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
DV_INLINE dm_f32 dv_isnan_f32(dv_f32 a) { return _mm_cmpunord_ps(a, a); }
DV_INLINE dm_f32 dv_lt_f32(dv_f32 a, dv_f32 b) { return _mm_cmplt_ps(a, b); }
DV_INLINE dm_f32 dv_eq_f32(dv_f32 a, dv_f32 b) { return _mm_cmpeq_ps(a, b); }
#if defined(__SSE4_1__)
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b) { return _mm_blendv_ps(b, a, m); }
#else /* SSE2 has no blendv: and/andnot/or. */
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b)
{ return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)); }
#endif
DV_INLINE dv_f32 dv_clamp_f32(dv_f32 a, float lo, float hi)
{ return _mm_min_ps(_mm_set1_ps(hi), _mm_max_ps(_mm_set1_ps(lo), a)); }
DV_INLINE dv_f32 dv_pow2_f32(dv_f32 t)
{
    __m128i i = _mm_slli_epi32(_mm_castps_si128(t), 23);
    return _mm_castsi128_ps(_mm_add_epi32(i, _mm_set1_epi32(127 << 23)));
}
DV_INLINE dv_f32 dv_addbits_f32(dv_f32 v, int32_t c)
{ return _mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(v), _mm_set1_epi32(c))); }
DV_INLINE dv_f32 dv_orbits_f32(dv_f32 v, int32_t c)
{ return _mm_castsi128_ps(_mm_or_si128(_mm_castps_si128(v), _mm_set1_epi32(c))); }
DV_INLINE dv_f32 dv_andbits_f32(dv_f32 v, int32_t c)
{ return _mm_castsi128_ps(_mm_and_si128(_mm_castps_si128(v), _mm_set1_epi32(c))); }
DV_INLINE dv_f32 dv_split_f32(dv_f32 x, dv_f32 *k)
{
    const __m128i c = _mm_set1_epi32(0x3f3504f3);
    __m128i ix = _mm_sub_epi32(_mm_castps_si128(x), c);
    *k = _mm_cvtepi32_ps(_mm_srai_epi32(ix, 23));
    ix = _mm_add_epi32(_mm_and_si128(ix, _mm_set1_epi32(0x007fffff)), c);
    return _mm_castsi128_ps(ix);
}

DV_INLINE dv_f64 dv_load_f64(const double *p) { return _mm_loadu_pd(p); }
DV_INLINE void dv_store_f64(double *p, dv_f64 v) { _mm_storeu_pd(p, v); }
DV_INLINE dv_f64 dv_set1_f64(double x) { return _mm_set1_pd(x); }
DV_INLINE dv_f64 dv_add_f64(dv_f64 a, dv_f64 b) { return _mm_add_pd(a, b); }
DV_INLINE dv_f64 dv_sub_f64(dv_f64 a, dv_f64 b) { return _mm_sub_pd(a, b); }
DV_INLINE dv_f64 dv_mul_f64(dv_f64 a, dv_f64 b) { return _mm_mul_pd(a, b); }
DV_INLINE dv_f64 dv_div_f64(dv_f64 a, dv_f64 b) { return _mm_div_pd(a, b); }
DV_INLINE dv_f64 dv_sqrt_f64(dv_f64 a) { return _mm_sqrt_pd(a); }
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
DV_INLINE dm_f64 dv_isnan_f64(dv_f64 a) { return _mm_cmpunord_pd(a, a); }
DV_INLINE dm_f64 dv_lt_f64(dv_f64 a, dv_f64 b) { return _mm_cmplt_pd(a, b); }
DV_INLINE dm_f64 dv_eq_f64(dv_f64 a, dv_f64 b) { return _mm_cmpeq_pd(a, b); }
#if defined(__SSE4_1__)
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b) { return _mm_blendv_pd(b, a, m); }
#else
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b)
{ return _mm_or_pd(_mm_and_pd(m, a), _mm_andnot_pd(m, b)); }
#endif
DV_INLINE dv_f64 dv_clamp_f64(dv_f64 a, double lo, double hi)
{ return _mm_min_pd(_mm_set1_pd(hi), _mm_max_pd(_mm_set1_pd(lo), a)); }
DV_INLINE dv_f64 dv_pow2_f64(dv_f64 t)
{
    __m128i i = _mm_slli_epi64(_mm_castpd_si128(t), 52);
    return _mm_castsi128_pd(_mm_add_epi64(i, _mm_set1_epi64x(1023LL << 52)));
}
DV_INLINE dv_f64 dv_addbits_f64(dv_f64 v, int64_t c)
{ return _mm_castsi128_pd(_mm_add_epi64(_mm_castpd_si128(v), _mm_set1_epi64x(c))); }
DV_INLINE dv_f64 dv_orbits_f64(dv_f64 v, int64_t c)
{ return _mm_castsi128_pd(_mm_or_si128(_mm_castpd_si128(v), _mm_set1_epi64x(c))); }
DV_INLINE dv_f64 dv_andbits_f64(dv_f64 v, int64_t c)
{ return _mm_castsi128_pd(_mm_and_si128(_mm_castpd_si128(v), _mm_set1_epi64x(c))); }
/*
 * x = m * 2^k, m in [c, 2c). Without a 64-bit arithmetic shift or an
 * int64->double conversion (both AVX-512 only), bias the exponent difference
 * by 1100 so it is non-negative, shift logically, and turn the small integer
 * into a double by OR-ing it under the exponent of 2^52.
 */
DV_INLINE dv_f64 dv_split_f64(dv_f64 x, dv_f64 *k)
{
    const __m128i c = _mm_set1_epi64x(0x3fe6a09e667f3bcdLL);
    __m128i ix = _mm_add_epi64(_mm_sub_epi64(_mm_castpd_si128(x), c), _mm_set1_epi64x(1100LL << 52));
    __m128i e = _mm_or_si128(_mm_srli_epi64(ix, 52), _mm_set1_epi64x(0x4330000000000000LL));
    *k = _mm_sub_pd(_mm_castsi128_pd(e), _mm_set1_pd(4503599627370496.0 + 1100.0));
    ix = _mm_add_epi64(_mm_and_si128(ix, _mm_set1_epi64x(0x000fffffffffffffLL)), c);
    return _mm_castsi128_pd(ix);
}

/* ------------------------------------------------------------------------ */
#elif defined(DV_NEON) /* AArch64 Advanced SIMD: 128 bits, FMA always */

DV_INLINE dv_f32 dv_load_f32(const float *p) { return vld1q_f32(p); }
DV_INLINE void dv_store_f32(float *p, dv_f32 v) { vst1q_f32(p, v); }
DV_INLINE dv_f32 dv_set1_f32(float x) { return vdupq_n_f32(x); }
DV_INLINE dv_f32 dv_add_f32(dv_f32 a, dv_f32 b) { return vaddq_f32(a, b); }
DV_INLINE dv_f32 dv_sub_f32(dv_f32 a, dv_f32 b) { return vsubq_f32(a, b); }
DV_INLINE dv_f32 dv_mul_f32(dv_f32 a, dv_f32 b) { return vmulq_f32(a, b); }
DV_INLINE dv_f32 dv_div_f32(dv_f32 a, dv_f32 b) { return vdivq_f32(a, b); }
DV_INLINE dv_f32 dv_sqrt_f32(dv_f32 a) { return vsqrtq_f32(a); }
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return vfmaq_f32(c, a, b); }
DV_INLINE dm_f32 dv_isnan_f32(dv_f32 a) { return vmvnq_u32(vceqq_f32(a, a)); }
DV_INLINE dm_f32 dv_lt_f32(dv_f32 a, dv_f32 b) { return vcltq_f32(a, b); }
DV_INLINE dm_f32 dv_eq_f32(dv_f32 a, dv_f32 b) { return vceqq_f32(a, b); }
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b) { return vbslq_f32(m, a, b); }
/* vmax/vmin (not vmaxnm) return a NaN operand: NaN stays NaN, as on x86 */
DV_INLINE dv_f32 dv_clamp_f32(dv_f32 a, float lo, float hi)
{ return vminq_f32(vdupq_n_f32(hi), vmaxq_f32(vdupq_n_f32(lo), a)); }
DV_INLINE dv_f32 dv_pow2_f32(dv_f32 t)
{
    uint32x4_t i = vshlq_n_u32(vreinterpretq_u32_f32(t), 23);
    return vreinterpretq_f32_u32(vaddq_u32(i, vdupq_n_u32(127u << 23)));
}
DV_INLINE dv_f32 dv_addbits_f32(dv_f32 v, int32_t c)
{ return vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(v), vdupq_n_s32(c))); }
DV_INLINE dv_f32 dv_orbits_f32(dv_f32 v, int32_t c)
{ return vreinterpretq_f32_s32(vorrq_s32(vreinterpretq_s32_f32(v), vdupq_n_s32(c))); }
DV_INLINE dv_f32 dv_andbits_f32(dv_f32 v, int32_t c)
{ return vreinterpretq_f32_s32(vandq_s32(vreinterpretq_s32_f32(v), vdupq_n_s32(c))); }
DV_INLINE dv_f32 dv_split_f32(dv_f32 x, dv_f32 *k)
{
    const int32x4_t c = vdupq_n_s32(0x3f3504f3);
    int32x4_t ix = vsubq_s32(vreinterpretq_s32_f32(x), c);
    *k = vcvtq_f32_s32(vshrq_n_s32(ix, 23));
    ix = vaddq_s32(vandq_s32(ix, vdupq_n_s32(0x007fffff)), c);
    return vreinterpretq_f32_s32(ix);
}

DV_INLINE dv_f64 dv_load_f64(const double *p) { return vld1q_f64(p); }
DV_INLINE void dv_store_f64(double *p, dv_f64 v) { vst1q_f64(p, v); }
DV_INLINE dv_f64 dv_set1_f64(double x) { return vdupq_n_f64(x); }
DV_INLINE dv_f64 dv_add_f64(dv_f64 a, dv_f64 b) { return vaddq_f64(a, b); }
DV_INLINE dv_f64 dv_sub_f64(dv_f64 a, dv_f64 b) { return vsubq_f64(a, b); }
DV_INLINE dv_f64 dv_mul_f64(dv_f64 a, dv_f64 b) { return vmulq_f64(a, b); }
DV_INLINE dv_f64 dv_div_f64(dv_f64 a, dv_f64 b) { return vdivq_f64(a, b); }
DV_INLINE dv_f64 dv_sqrt_f64(dv_f64 a) { return vsqrtq_f64(a); }
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return vfmaq_f64(c, a, b); }
DV_INLINE dm_f64 dv_isnan_f64(dv_f64 a)
{ return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(a, a)))); }
DV_INLINE dm_f64 dv_lt_f64(dv_f64 a, dv_f64 b) { return vcltq_f64(a, b); }
DV_INLINE dm_f64 dv_eq_f64(dv_f64 a, dv_f64 b) { return vceqq_f64(a, b); }
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b) { return vbslq_f64(m, a, b); }
DV_INLINE dv_f64 dv_clamp_f64(dv_f64 a, double lo, double hi)
{ return vminq_f64(vdupq_n_f64(hi), vmaxq_f64(vdupq_n_f64(lo), a)); }
DV_INLINE dv_f64 dv_pow2_f64(dv_f64 t)
{
    uint64x2_t i = vshlq_n_u64(vreinterpretq_u64_f64(t), 52);
    return vreinterpretq_f64_u64(vaddq_u64(i, vdupq_n_u64(1023ull << 52)));
}
DV_INLINE dv_f64 dv_addbits_f64(dv_f64 v, int64_t c)
{ return vreinterpretq_f64_s64(vaddq_s64(vreinterpretq_s64_f64(v), vdupq_n_s64(c))); }
DV_INLINE dv_f64 dv_orbits_f64(dv_f64 v, int64_t c)
{ return vreinterpretq_f64_s64(vorrq_s64(vreinterpretq_s64_f64(v), vdupq_n_s64(c))); }
DV_INLINE dv_f64 dv_andbits_f64(dv_f64 v, int64_t c)
{ return vreinterpretq_f64_s64(vandq_s64(vreinterpretq_s64_f64(v), vdupq_n_s64(c))); }
DV_INLINE dv_f64 dv_split_f64(dv_f64 x, dv_f64 *k)
{
    const int64x2_t c = vdupq_n_s64(0x3fe6a09e667f3bcdLL);
    int64x2_t ix = vsubq_s64(vreinterpretq_s64_f64(x), c);
    *k = vcvtq_f64_s64(vshrq_n_s64(ix, 52));
    ix = vaddq_s64(vandq_s64(ix, vdupq_n_s64(0x000fffffffffffffLL)), c);
    return vreinterpretq_f64_s64(ix);
}

/* ------------------------------------------------------------------------ */
#else /* scalar */

DV_INLINE dv_f32 dv_load_f32(const float *p) { return *p; }
DV_INLINE void dv_store_f32(float *p, dv_f32 v) { *p = v; }
DV_INLINE dv_f32 dv_set1_f32(float x) { return x; }
DV_INLINE dv_f32 dv_add_f32(dv_f32 a, dv_f32 b) { return a + b; }
DV_INLINE dv_f32 dv_sub_f32(dv_f32 a, dv_f32 b) { return a - b; }
DV_INLINE dv_f32 dv_mul_f32(dv_f32 a, dv_f32 b) { return a * b; }
DV_INLINE dv_f32 dv_div_f32(dv_f32 a, dv_f32 b) { return a / b; }
DV_INLINE dv_f32 dv_sqrt_f32(dv_f32 a) { return __builtin_sqrtf(a); }
DV_INLINE dv_f32 dv_muladd_f32(dv_f32 a, dv_f32 b, dv_f32 c) { return a * b + c; }
DV_INLINE dm_f32 dv_isnan_f32(dv_f32 a) { return a != a; }
DV_INLINE dm_f32 dv_lt_f32(dv_f32 a, dv_f32 b) { return a < b; }
DV_INLINE dm_f32 dv_eq_f32(dv_f32 a, dv_f32 b) { return a == b; }
DV_INLINE dv_f32 dv_select_f32(dm_f32 m, dv_f32 a, dv_f32 b) { return m ? a : b; }
DV_INLINE dv_f32 dv_clamp_f32(dv_f32 a, float lo, float hi)
{ a = a < lo ? lo : a; return a > hi ? hi : a; } /* NaN stays NaN */
DV_INLINE dv_f32 dv_pow2_f32(dv_f32 t)
{
    uint32_t i; memcpy(&i, &t, 4); i = (i << 23) + (127u << 23);
    float r; memcpy(&r, &i, 4); return r;
}
DV_INLINE dv_f32 dv_addbits_f32(dv_f32 v, int32_t c)
{ uint32_t i; memcpy(&i, &v, 4); i += (uint32_t)c; memcpy(&v, &i, 4); return v; }
DV_INLINE dv_f32 dv_orbits_f32(dv_f32 v, int32_t c)
{ uint32_t i; memcpy(&i, &v, 4); i |= (uint32_t)c; memcpy(&v, &i, 4); return v; }
DV_INLINE dv_f32 dv_andbits_f32(dv_f32 v, int32_t c)
{ uint32_t i; memcpy(&i, &v, 4); i &= (uint32_t)c; memcpy(&v, &i, 4); return v; }
DV_INLINE dv_f32 dv_split_f32(dv_f32 x, dv_f32 *k)
{
    int32_t ix; memcpy(&ix, &x, 4); ix -= 0x3f3504f3;
    *k = (float)(ix >> 23);
    ix = (ix & 0x007fffff) + 0x3f3504f3;
    float m; memcpy(&m, &ix, 4); return m;
}

DV_INLINE dv_f64 dv_load_f64(const double *p) { return *p; }
DV_INLINE void dv_store_f64(double *p, dv_f64 v) { *p = v; }
DV_INLINE dv_f64 dv_set1_f64(double x) { return x; }
DV_INLINE dv_f64 dv_add_f64(dv_f64 a, dv_f64 b) { return a + b; }
DV_INLINE dv_f64 dv_sub_f64(dv_f64 a, dv_f64 b) { return a - b; }
DV_INLINE dv_f64 dv_mul_f64(dv_f64 a, dv_f64 b) { return a * b; }
DV_INLINE dv_f64 dv_div_f64(dv_f64 a, dv_f64 b) { return a / b; }
DV_INLINE dv_f64 dv_sqrt_f64(dv_f64 a) { return __builtin_sqrt(a); }
DV_INLINE dv_f64 dv_muladd_f64(dv_f64 a, dv_f64 b, dv_f64 c) { return a * b + c; }
DV_INLINE dm_f64 dv_isnan_f64(dv_f64 a) { return a != a; }
DV_INLINE dm_f64 dv_lt_f64(dv_f64 a, dv_f64 b) { return a < b; }
DV_INLINE dm_f64 dv_eq_f64(dv_f64 a, dv_f64 b) { return a == b; }
DV_INLINE dv_f64 dv_select_f64(dm_f64 m, dv_f64 a, dv_f64 b) { return m ? a : b; }
DV_INLINE dv_f64 dv_clamp_f64(dv_f64 a, double lo, double hi)
{ a = a < lo ? lo : a; return a > hi ? hi : a; } /* NaN stays NaN */
DV_INLINE dv_f64 dv_pow2_f64(dv_f64 t)
{
    uint64_t i; memcpy(&i, &t, 8); i = (i << 52) + (1023ull << 52);
    double r; memcpy(&r, &i, 8); return r;
}
DV_INLINE dv_f64 dv_addbits_f64(dv_f64 v, int64_t c)
{ uint64_t i; memcpy(&i, &v, 8); i += (uint64_t)c; memcpy(&v, &i, 8); return v; }
DV_INLINE dv_f64 dv_orbits_f64(dv_f64 v, int64_t c)
{ uint64_t i; memcpy(&i, &v, 8); i |= (uint64_t)c; memcpy(&v, &i, 8); return v; }
DV_INLINE dv_f64 dv_andbits_f64(dv_f64 v, int64_t c)
{ uint64_t i; memcpy(&i, &v, 8); i &= (uint64_t)c; memcpy(&v, &i, 8); return v; }
DV_INLINE dv_f64 dv_split_f64(dv_f64 x, dv_f64 *k)
{
    int64_t ix; memcpy(&ix, &x, 8); ix -= 0x3fe6a09e667f3bcdLL;
    *k = (double)(ix >> 52);
    ix = (ix & 0x000fffffffffffffLL) + 0x3fe6a09e667f3bcdLL;
    double m; memcpy(&m, &ix, 8); return m;
}

#endif

/* ------------------------------------------------------------------------ */
/* Width-independent helpers. */

/*
 * p * 2^n, n an integer-valued vector with |n| <= 2*125 (f32) / 2*1020 (f64),
 * rounded once. AVX-512 has it as one instruction (vscalef); elsewhere two
 * multiplies by normal powers of two, the first exact, so the second is the
 * only rounding: the same bits as vscalef, including gradual underflow.
 */
#if DV_WIDTH == 64
DV_INLINE dv_f32 dv_ldexp_f32(dv_f32 p, dv_f32 n) { return _mm512_scalef_ps(p, n); }
DV_INLINE dv_f64 dv_ldexp_f64(dv_f64 p, dv_f64 n) { return _mm512_scalef_pd(p, n); }
#else
DV_INLINE dv_f32 dv_ldexp_f32(dv_f32 p, dv_f32 n)
{
    const dv_f32 magic = dv_set1_f32(0x1.8p23f);
    dv_f32 n1 = dv_sub_f32(dv_add_f32(dv_mul_f32(n, dv_set1_f32(0.5f)), magic), magic);
    dv_f32 n2 = dv_sub_f32(n, n1);
    return dv_mul_f32(dv_mul_f32(p, dv_pow2_f32(dv_add_f32(n1, magic))),
                      dv_pow2_f32(dv_add_f32(n2, magic)));
}
DV_INLINE dv_f64 dv_ldexp_f64(dv_f64 p, dv_f64 n)
{
    const dv_f64 magic = dv_set1_f64(0x1.8p52);
    dv_f64 n1 = dv_sub_f64(dv_add_f64(dv_mul_f64(n, dv_set1_f64(0.5)), magic), magic);
    dv_f64 n2 = dv_sub_f64(n, n1);
    return dv_mul_f64(dv_mul_f64(p, dv_pow2_f64(dv_add_f64(n1, magic))),
                      dv_pow2_f64(dv_add_f64(n2, magic)));
}
#endif

/*
 * Note [No denormal arithmetic]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x86 cores take a microcode assist, ~100x the cost of the instruction,
 * when an arithmetic instruction reads a subnormal operand or produces a
 * subnormal or underflowing result (unless MXCSR's DAZ/FTZ modes are on).
 * A kernel that promises data-independent speed therefore (1) runs with
 * DAZ|FTZ set for its duration (dv_fpmode_enter/leave) where the algorithm
 * allows: exp, whose value at a subnormal x is exp(0) = 1 anyway; and (2)
 * builds subnormal *results* with integer operations (dv_ldexp_gradual), so
 * gradual underflow stays exact although FTZ is on. exp takes that path only
 * for a vector with a result below the normal range (a branch that is
 * rarely taken, and predictable on runs of such inputs): such a vector costs
 * about 1.4x an ordinary one, never 100x. log cannot treat a subnormal input
 * as 0; it reads one through integer operations instead.
 */
#if defined(__SSE2__)
DV_INLINE unsigned dv_fpmode_enter(void)
{
    unsigned old = _mm_getcsr();
    _mm_setcsr(old | 0x8040u); /* FTZ (bit 15) | DAZ (bit 6) */
    return old;
}
DV_INLINE void dv_fpmode_leave(unsigned old) { _mm_setcsr(old); }
#elif defined(__aarch64__)
/* FPCR.FZ (bit 24) flushes subnormal inputs and results: x86's DAZ|FTZ. */
DV_INLINE unsigned dv_fpmode_enter(void)
{
    uint64_t old;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(old));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(old | (1ull << 24)));
    return (unsigned)old;
}
DV_INLINE void dv_fpmode_leave(unsigned old)
{ __asm__ __volatile__("msr fpcr, %0" : : "r"((uint64_t)old)); }
#else
DV_INLINE unsigned dv_fpmode_enter(void) { return 0; }
DV_INLINE void dv_fpmode_leave(unsigned old) { (void)old; }
#endif

/* Whether any lane of a is below c (for a rarely taken branch). */
#if DV_WIDTH == 64
DV_INLINE int dv_any_lt_f32(dv_f32 a, float c) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(c), _CMP_LT_OQ) != 0; }
DV_INLINE int dv_any_lt_f64(dv_f64 a, double c) { return _mm512_cmp_pd_mask(a, _mm512_set1_pd(c), _CMP_LT_OQ) != 0; }
#elif DV_WIDTH == 32
DV_INLINE int dv_any_lt_f32(dv_f32 a, float c) { return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(c), _CMP_LT_OQ)) != 0; }
DV_INLINE int dv_any_lt_f64(dv_f64 a, double c) { return _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_set1_pd(c), _CMP_LT_OQ)) != 0; }
#elif defined(DV_NEON)
DV_INLINE int dv_any_lt_f32(dv_f32 a, float c) { return vmaxvq_u32(vcltq_f32(a, vdupq_n_f32(c))) != 0; }
DV_INLINE int dv_any_lt_f64(dv_f64 a, double c)
{ return vmaxvq_u32(vreinterpretq_u32_u64(vcltq_f64(a, vdupq_n_f64(c)))) != 0; }
#elif DV_WIDTH == 16
DV_INLINE int dv_any_lt_f32(dv_f32 a, float c) { return _mm_movemask_ps(_mm_cmplt_ps(a, _mm_set1_ps(c))) != 0; }
DV_INLINE int dv_any_lt_f64(dv_f64 a, double c) { return _mm_movemask_pd(_mm_cmplt_pd(a, _mm_set1_pd(c))) != 0; }
#else
DV_INLINE int dv_any_lt_f32(dv_f32 a, float c) { return a < c; }
DV_INLINE int dv_any_lt_f64(dv_f64 a, double c) { return a < c; }
#endif

/* Correctly rounded p * 2^n for p in [0.5, 2), integer n >= -151 (f32) /
 * -1076 (f64), subnormal results included, without any floating-point
 * instruction producing a subnormal: w = p * 2^(n+149) is a normal number,
 * and when w < 2^23 the result is subnormal with bits round(w), which the
 * addition w + 2^23 rounds (to nearest even, once) into the low bits. */
DV_INLINE dv_f32 dv_ldexp_gradual_f32(dv_f32 p, dv_f32 n)
{
    dv_f32 e = dv_add_f32(n, dv_set1_f32(149.0f));
#if DV_WIDTH != 64
    e = dv_clamp_f32(e, -1.0f, 250.0f); /* the two-step ldexp's range */
#endif
    dv_f32 w = dv_ldexp_f32(p, e);
    dv_f32 sub = dv_addbits_f32(dv_add_f32(w, dv_set1_f32(0x1p23f)), -0x4B000000);
#if DV_WIDTH != 64
    n = dv_clamp_f32(n, -126.0f, 250.0f); /* lanes that take `sub` */
#endif
    return dv_select_f32(dv_lt_f32(w, dv_set1_f32(0x1p23f)), sub, dv_ldexp_f32(p, n));
}
DV_INLINE dv_f64 dv_ldexp_gradual_f64(dv_f64 p, dv_f64 n)
{
    dv_f64 e = dv_add_f64(n, dv_set1_f64(1074.0));
#if DV_WIDTH != 64
    e = dv_clamp_f64(e, -1.0, 2000.0);
#endif
    dv_f64 w = dv_ldexp_f64(p, e);
    dv_f64 sub = dv_addbits_f64(dv_add_f64(w, dv_set1_f64(0x1p52)), -0x4330000000000000LL);
#if DV_WIDTH != 64
    n = dv_clamp_f64(n, -1022.0, 2000.0);
#endif
    return dv_select_f64(dv_lt_f64(w, dv_set1_f64(0x1p52)), sub, dv_ldexp_f64(p, n));
}

/* max/min with the NaN and tie rules of Note [Same answer on every target]. */
DV_INLINE dv_f32 dv_max_f32(dv_f32 a, dv_f32 b)
{
    dv_f32 r = dv_select_f32(dv_lt_f32(b, a), a, b);
    return dv_select_f32(dv_isnan_f32(a), a, r);
}
DV_INLINE dv_f32 dv_min_f32(dv_f32 a, dv_f32 b)
{
    dv_f32 r = dv_select_f32(dv_lt_f32(a, b), a, b);
    return dv_select_f32(dv_isnan_f32(a), a, r);
}
DV_INLINE dv_f64 dv_max_f64(dv_f64 a, dv_f64 b)
{
    dv_f64 r = dv_select_f64(dv_lt_f64(b, a), a, b);
    return dv_select_f64(dv_isnan_f64(a), a, r);
}
DV_INLINE dv_f64 dv_min_f64(dv_f64 a, dv_f64 b)
{
    dv_f64 r = dv_select_f64(dv_lt_f64(a, b), a, b);
    return dv_select_f64(dv_isnan_f64(a), a, r);
}

/* The same rules for one element (strided loops). */
DV_INLINE float dv_smax_f32(float a, float b) { return a != a ? a : (b < a ? a : b); }
DV_INLINE float dv_smin_f32(float a, float b) { return a != a ? a : (a < b ? a : b); }
DV_INLINE double dv_smax_f64(double a, double b) { return a != a ? a : (b < a ? a : b); }
DV_INLINE double dv_smin_f64(double a, double b) { return a != a ? a : (a < b ? a : b); }

/* Load n < lanes elements, the rest filled with `fill`; store n elements. */
DV_INLINE dv_f32 dv_load_partial_f32(const float *p, intptr_t n, float fill)
{
    float buf[DV_LANES_F32];
    for (int i = 0; i < DV_LANES_F32; i++) buf[i] = i < n ? p[i] : fill;
    return dv_load_f32(buf);
}
DV_INLINE void dv_store_partial_f32(float *p, intptr_t n, dv_f32 v)
{
    float buf[DV_LANES_F32];
    dv_store_f32(buf, v);
    for (intptr_t i = 0; i < n; i++) p[i] = buf[i];
}
DV_INLINE dv_f64 dv_load_partial_f64(const double *p, intptr_t n, double fill)
{
    double buf[DV_LANES_F64];
    for (int i = 0; i < DV_LANES_F64; i++) buf[i] = i < n ? p[i] : fill;
    return dv_load_f64(buf);
}
DV_INLINE void dv_store_partial_f64(double *p, intptr_t n, dv_f64 v)
{
    double buf[DV_LANES_F64];
    dv_store_f64(buf, v);
    for (intptr_t i = 0; i < n; i++) p[i] = buf[i];
}

#endif /* DISPATCH_KERNELS_SIMD_H_ */
