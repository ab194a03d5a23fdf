/*
 * SSE2, the x86-64 baseline (with SSE4.1's blendv where the target has it):
 * 16-byte vectors, no FMA. Part of simd.h (Note [One template per lane
 * type]).
 */
#ifndef DV_LANE /* ------------------------------------------ the types */

#include <emmintrin.h>
#if defined(__SSE4_1__)
    #include <smmintrin.h>
#endif
#define DV_WIDTH 16
#define DV_NAME "sse2"
#define DV_NATIVE_MINMAX 1 /* DV_(max), DV_(min) from maxps/minps */
typedef __m128 dv_f32;
typedef __m128d dv_f64;
typedef __m128 dm_f32;
typedef __m128d dm_f64;

#else /* ------------------------------------------- one lane type */

#if DV_LANE == 32
    #define X_(op) _mm_##op##_ps             /* X_(add): _mm_add_ps */
    #define XI_(op) _mm_##op##_epi32         /* integer lanes of the same width */
    #define X_SET1I _mm_set1_epi32
    #define X_TO_I _mm_castps_si128
    #define X_FROM_I _mm_castsi128_ps
#else
    #define X_(op) _mm_##op##_pd
    #define XI_(op) _mm_##op##_epi64
    #define X_SET1I _mm_set1_epi64x
    #define X_TO_I _mm_castpd_si128
    #define X_FROM_I _mm_castsi128_pd
#endif

DV_INLINE DV_V DV_(load)(const DV_T *p) { return X_(loadu)(p); }
DV_INLINE void DV_(store)(DV_T *p, DV_V v) { X_(storeu)(p, v); }
/* Lanes p[0], p[2], ..., p[2 * (lanes - 1)]: reads 2 * lanes elements at p, one
 * past the last lane (every other element of a view; the caller keeps that
 * one inside its memory). */
#if DV_LANE == 32
DV_INLINE DV_V DV_(load_even)(const DV_T *p)
{ return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 4), _MM_SHUFFLE(2, 0, 2, 0)); }
#else
DV_INLINE DV_V DV_(load_even)(const DV_T *p) { return _mm_shuffle_pd(_mm_loadu_pd(p), _mm_loadu_pd(p + 2), 0); }
#endif
DV_INLINE DV_V DV_(set1)(DV_T x) { return X_(set1)(x); }
DV_INLINE DV_V DV_(add)(DV_V a, DV_V b) { return X_(add)(a, b); }
DV_INLINE DV_V DV_(sub)(DV_V a, DV_V b) { return X_(sub)(a, b); }
DV_INLINE DV_V DV_(mul)(DV_V a, DV_V b) { return X_(mul)(a, b); }
DV_INLINE DV_V DV_(div)(DV_V a, DV_V b) { return X_(div)(a, b); }
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return X_(sqrt)(a); }
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return X_(add)(X_(mul)(a, b), c); }
DV_INLINE DV_M DV_(isnan)(DV_V a) { return X_(cmpunord)(a, a); }
DV_INLINE DV_M DV_(lt)(DV_V a, DV_V b) { return X_(cmplt)(a, b); }
DV_INLINE DV_M DV_(eq)(DV_V a, DV_V b) { return X_(cmpeq)(a, b); }
#if defined(__SSE4_1__)
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return X_(blendv)(b, a, m); }
#else /* SSE2 has no blendv: and/andnot/or. */
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return X_(or)(X_(and)(m, a), X_(andnot)(m, b)); }
#endif
/* max/min of Note [Same answer on every target]: the instruction is the
 * rule's first compare and select (b on a NaN or a +0/-0 tie), then a's NaN
 * (generic-inl.h's DV_NATIVE_MINMAX) */
DV_INLINE DV_V DV_(max)(DV_V a, DV_V b) { return DV_(select)(DV_(isnan)(a), a, X_(max)(a, b)); }
DV_INLINE DV_V DV_(min)(DV_V a, DV_V b) { return DV_(select)(DV_(isnan)(a), a, X_(min)(a, b)); }
DV_INLINE DV_V DV_(clamp)(DV_V a, DV_T lo, DV_T hi)
{ return X_(min)(X_(set1)(hi), X_(max)(X_(set1)(lo), a)); }
/* min(a, hi), a NaN a kept (a value clamped from above). */
DV_INLINE DV_V DV_(clamp_hi)(DV_V a, DV_T hi) { return X_(min)(X_(set1)(hi), a); }
/* y with x's sign bit or'ed in (y's own sign bit clear): copysign for y >= 0. */
DV_INLINE DV_V DV_(orsign)(DV_V y, DV_V x) { return X_(or)(y, X_(and)(x, X_(set1)(-(DV_T)0))); }
/* Whether any lane of a is below c (for a rarely taken branch). */
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c) { return X_(movemask)(X_(cmplt)(a, X_(set1)(c))) != 0; }
/* The lanes of a mask as the low bits of an unsigned, lane 0 the lowest
 * (the first lane that holds: __builtin_ctz of a nonzero answer). */
DV_INLINE unsigned DV_(mask_bits)(DV_M m) { return (unsigned)X_(movemask)(m); }
/* Whether every lane of a is in [lo, hi] (a NaN is not; for a fast path). */
DV_INLINE int DV_(all_within)(DV_V a, DV_T lo, DV_T hi)
{
    DV_V in = X_(and)(X_(cmpge)(a, X_(set1)(lo)), X_(cmple)(a, X_(set1)(hi)));
    return X_(movemask)(in) == (1 << DV_LANES) - 1;
}
/* 2^n for t = n + 1.5*2^MANT (n an integer in the normal exponent range). */
DV_INLINE DV_V DV_(pow2)(DV_V t)
{
    __m128i i = XI_(slli)(X_TO_I(t), DV_MANT);
    return X_FROM_I(XI_(add)(i, X_SET1I((DV_IT)DV_BIAS << DV_MANT)));
}
DV_INLINE DV_V DV_(addbits)(DV_V v, DV_IT c) { return X_FROM_I(XI_(add)(X_TO_I(v), X_SET1I(c))); }
DV_INLINE DV_V DV_(orbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm_or_si128(X_TO_I(v), X_SET1I(c))); }
DV_INLINE DV_V DV_(andbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm_and_si128(X_TO_I(v), X_SET1I(c))); }
/*
 * x = m * 2^k with m in [c, 2c), c = ~sqrt(1/2); x normal > 0. For doubles,
 * without a 64-bit arithmetic shift or an int64->double conversion (both
 * AVX-512 only), bias the exponent difference by 1100 so it is
 * non-negative, shift logically, and turn the small integer into a double by
 * OR-ing it under the exponent of 2^52.
 */
DV_INLINE DV_V DV_(split)(DV_V x, DV_V *k)
{
    const __m128i c = X_SET1I(DV_SQRT_HALF_BITS);
#if DV_LANE == 32
    __m128i ix = XI_(sub)(X_TO_I(x), c);
    *k = _mm_cvtepi32_ps(_mm_srai_epi32(ix, 23));
#else
    __m128i ix = XI_(add)(XI_(sub)(X_TO_I(x), c), X_SET1I(1100LL << 52));
    __m128i e = _mm_or_si128(_mm_srli_epi64(ix, 52), X_SET1I(0x4330000000000000LL));
    *k = _mm_sub_pd(_mm_castsi128_pd(e), _mm_set1_pd(4503599627370496.0 + 1100.0));
#endif
    ix = XI_(add)(_mm_and_si128(ix, X_SET1I(((DV_IT)1 << DV_MANT) - 1)), c);
    return X_FROM_I(ix);
}

#undef X_
#undef XI_
#undef X_SET1I
#undef X_TO_I
#undef X_FROM_I

#endif
