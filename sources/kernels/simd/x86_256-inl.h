/*
 * AVX2, with FMA where the target has it (FMA3__AVX2) and without (a bare
 * -mavx2): 32-byte vectors, compares into all-ones lanes. Part of simd.h
 * (Note [One template per lane type]).
 */
#ifndef DV_LANE /* ------------------------------------------ the types */

#include <immintrin.h>
#define DV_WIDTH 32
#define DV_NAME "avx2"
#define DV_NATIVE_MINMAX 1 /* DV_(max), DV_(min) from maxps/minps */
typedef __m256 dv_f32;
typedef __m256d dv_f64;
typedef __m256 dm_f32;
typedef __m256d dm_f64;

#else /* ------------------------------------------- one lane type */

#if DV_LANE == 32
    #define X_(op) _mm256_##op##_ps          /* X_(add): _mm256_add_ps */
    #define XI_(op) _mm256_##op##_epi32      /* integer lanes of the same width */
    #define X_SET1I _mm256_set1_epi32
    #define X_TO_I _mm256_castps_si256
    #define X_FROM_I _mm256_castsi256_ps
#else
    #define X_(op) _mm256_##op##_pd
    #define XI_(op) _mm256_##op##_epi64
    #define X_SET1I _mm256_set1_epi64x
    #define X_TO_I _mm256_castpd_si256
    #define X_FROM_I _mm256_castsi256_pd
#endif

DV_INLINE DV_V DV_(load)(const DV_T *p) { return X_(loadu)(p); }
/* Lanes p[0], p[2], ..., p[2 * (lanes - 1)]: reads 2 * lanes elements at p, one
 * past the last lane (every other element of a view; the caller keeps that
 * one inside its memory). */
#if DV_LANE == 32
DV_INLINE DV_V DV_(load_even)(const DV_T *p)
{   /* p0 p2 p8 p10 | p4 p6 p12 p14, then its 64-bit quarters 0 2 1 3 */
    const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xd8));
}
#else
DV_INLINE DV_V DV_(load_even)(const DV_T *p)
{   /* p0 p4 p2 p6, then its quarters 0 2 1 3 */
    return _mm256_permute4x64_pd(_mm256_unpacklo_pd(_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)),
                                 0xd8);
}
#endif
DV_INLINE void DV_(store)(DV_T *p, DV_V v) { X_(storeu)(p, v); }
DV_INLINE DV_V DV_(set1)(DV_T x) { return X_(set1)(x); }
DV_INLINE DV_V DV_(add)(DV_V a, DV_V b) { return X_(add)(a, b); }
DV_INLINE DV_V DV_(sub)(DV_V a, DV_V b) { return X_(sub)(a, b); }
DV_INLINE DV_V DV_(mul)(DV_V a, DV_V b) { return X_(mul)(a, b); }
DV_INLINE DV_V DV_(div)(DV_V a, DV_V b) { return X_(div)(a, b); }
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return X_(sqrt)(a); }
#if DV_HAVE_FMA
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return X_(fmadd)(a, b, c); }
#else
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return X_(add)(X_(mul)(a, b), c); }
#endif
DV_INLINE DV_M DV_(isnan)(DV_V a) { return X_(cmp)(a, a, _CMP_UNORD_Q); }
DV_INLINE DV_M DV_(lt)(DV_V a, DV_V b) { return X_(cmp)(a, b, _CMP_LT_OQ); }
DV_INLINE DV_M DV_(eq)(DV_V a, DV_V b) { return X_(cmp)(a, b, _CMP_EQ_OQ); }
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return X_(blendv)(b, a, m); }
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
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c) { return X_(movemask)(X_(cmp)(a, X_(set1)(c), _CMP_LT_OQ)) != 0; }
/* The lanes of a mask as the low bits of an unsigned, lane 0 the lowest
 * (the first lane that holds: __builtin_ctz of a nonzero answer). */
DV_INLINE unsigned DV_(mask_bits)(DV_M m) { return (unsigned)X_(movemask)(m); }
/* Whether every lane of a is in [lo, hi] (a NaN is not; for a fast path). */
DV_INLINE int DV_(all_within)(DV_V a, DV_T lo, DV_T hi)
{
    DV_V in = X_(and)(X_(cmp)(a, X_(set1)(lo), _CMP_GE_OQ), X_(cmp)(a, X_(set1)(hi), _CMP_LE_OQ));
    return X_(movemask)(in) == (1 << DV_LANES) - 1;
}
/* 2^n for t = n + 1.5*2^MANT (n an integer in the normal exponent range). */
DV_INLINE DV_V DV_(pow2)(DV_V t)
{
    __m256i i = XI_(slli)(X_TO_I(t), DV_MANT);
    return X_FROM_I(XI_(add)(i, X_SET1I((DV_IT)DV_BIAS << DV_MANT)));
}
DV_INLINE DV_V DV_(addbits)(DV_V v, DV_IT c) { return X_FROM_I(XI_(add)(X_TO_I(v), X_SET1I(c))); }
DV_INLINE DV_V DV_(orbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm256_or_si256(X_TO_I(v), X_SET1I(c))); }
DV_INLINE DV_V DV_(andbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm256_and_si256(X_TO_I(v), X_SET1I(c))); }
/* x = m * 2^k with m in [c, 2c), c = ~sqrt(1/2); x normal > 0. */
DV_INLINE DV_V DV_(split)(DV_V x, DV_V *k)
{
    const __m256i c = X_SET1I(DV_SQRT_HALF_BITS);
#if DV_LANE == 32
    __m256i ix = XI_(sub)(X_TO_I(x), c);
    *k = _mm256_cvtepi32_ps(_mm256_srai_epi32(ix, 23));
#else /* as in x86_128-inl.h: no 64-bit arithmetic shift, no int64->double */
    __m256i ix = XI_(add)(XI_(sub)(X_TO_I(x), c), X_SET1I(1100LL << 52));
    __m256i e = _mm256_or_si256(_mm256_srli_epi64(ix, 52), X_SET1I(0x4330000000000000LL));
    *k = _mm256_sub_pd(_mm256_castsi256_pd(e), _mm256_set1_pd(4503599627370496.0 + 1100.0));
#endif
    ix = XI_(add)(_mm256_and_si256(ix, X_SET1I(((DV_IT)1 << DV_MANT) - 1)), c);
    return X_FROM_I(ix);
}

#undef X_
#undef XI_
#undef X_SET1I
#undef X_TO_I
#undef X_FROM_I

#endif
