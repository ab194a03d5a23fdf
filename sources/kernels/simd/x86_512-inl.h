/*
 * AVX-512F: 64-byte vectors, compares into mask registers, FMA, and vscalef
 * for dv_ldexp. Part of simd.h (Note [One template per lane type]).
 */
#ifndef DV_LANE /* ------------------------------------------ the types */

#include <immintrin.h>
#define DV_WIDTH 64
#define DV_NAME "avx512f"
#define DV_NATIVE_MINMAX 1 /* DV_(max), DV_(min) from maxps/minps */
#define DV_NATIVE_LDEXP 1
typedef __m512 dv_f32;
typedef __m512d dv_f64;
typedef __mmask16 dm_f32;
typedef __mmask8 dm_f64;

#else /* ------------------------------------------- one lane type */

#if DV_LANE == 32
    #define X_(op) _mm512_##op##_ps          /* X_(add): _mm512_add_ps */
    #define XK_(op) _mm512_##op##_ps_mask   /* a compare into a mask register */
    #define XI_(op) _mm512_##op##_epi32      /* integer lanes of the same width */
    #define X_TO_I _mm512_castps_si512
    #define X_FROM_I _mm512_castsi512_ps
#else
    #define X_(op) _mm512_##op##_pd
    #define XK_(op) _mm512_##op##_pd_mask
    #define XI_(op) _mm512_##op##_epi64
    #define X_TO_I _mm512_castpd_si512
    #define X_FROM_I _mm512_castsi512_pd
#endif

DV_INLINE DV_V DV_(load)(const DV_T *p) { return X_(loadu)(p); }
/* Lanes p[0], p[2], ..., p[2 * (lanes - 1)]: reads 2 * lanes elements at p, one
 * past the last lane (every other element of a view; the caller keeps that
 * one inside its memory). */
#if DV_LANE == 32
DV_INLINE DV_V DV_(load_even)(const DV_T *p)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
}
#else
DV_INLINE DV_V DV_(load_even)(const DV_T *p)
{
    const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_pd(_mm512_loadu_pd(p), even, _mm512_loadu_pd(p + 8));
}
#endif
DV_INLINE void DV_(store)(DV_T *p, DV_V v) { X_(storeu)(p, v); }
DV_INLINE DV_V DV_(set1)(DV_T x) { return X_(set1)(x); }
DV_INLINE DV_V DV_(add)(DV_V a, DV_V b) { return X_(add)(a, b); }
DV_INLINE DV_V DV_(sub)(DV_V a, DV_V b) { return X_(sub)(a, b); }
DV_INLINE DV_V DV_(mul)(DV_V a, DV_V b) { return X_(mul)(a, b); }
DV_INLINE DV_V DV_(div)(DV_V a, DV_V b) { return X_(div)(a, b); }
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return X_(sqrt)(a); }
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return X_(fmadd)(a, b, c); }
DV_INLINE DV_M DV_(isnan)(DV_V a) { return XK_(cmp)(a, a, _CMP_UNORD_Q); }
DV_INLINE DV_M DV_(lt)(DV_V a, DV_V b) { return XK_(cmp)(a, b, _CMP_LT_OQ); }
DV_INLINE DV_M DV_(eq)(DV_V a, DV_V b) { return XK_(cmp)(a, b, _CMP_EQ_OQ); }
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return X_(mask_blend)(m, b, a); }
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
DV_INLINE DV_V DV_(orsign)(DV_V y, DV_V x)
{ return X_FROM_I(_mm512_or_si512(X_TO_I(y), _mm512_and_si512(X_TO_I(x), X_TO_I(X_(set1)(-(DV_T)0))))); }
/* Whether any lane of a is below c (for a rarely taken branch). */
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c) { return XK_(cmp)(a, X_(set1)(c), _CMP_LT_OQ) != 0; }
/* The lanes of a mask as the low bits of an unsigned, lane 0 the lowest
 * (the first lane that holds: __builtin_ctz of a nonzero answer). */
DV_INLINE unsigned DV_(mask_bits)(DV_M m) { return (unsigned)m; }
/* Whether every lane of a is in [lo, hi] (a NaN is not; for a fast path). */
DV_INLINE int DV_(all_within)(DV_V a, DV_T lo, DV_T hi)
{
    DV_M in = XK_(mask_cmp)(XK_(cmp)(a, X_(set1)(lo), _CMP_GE_OQ), a, X_(set1)(hi), _CMP_LE_OQ);
    return in == (DV_M)((1u << DV_LANES) - 1);
}
/* 2^n for t = n + 1.5*2^MANT (n an integer in the normal exponent range). */
DV_INLINE DV_V DV_(pow2)(DV_V t)
{
    __m512i i = XI_(slli)(X_TO_I(t), DV_MANT);
    return X_FROM_I(XI_(add)(i, XI_(set1)((DV_IT)DV_BIAS << DV_MANT)));
}
DV_INLINE DV_V DV_(addbits)(DV_V v, DV_IT c) { return X_FROM_I(XI_(add)(X_TO_I(v), XI_(set1)(c))); }
DV_INLINE DV_V DV_(orbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm512_or_si512(X_TO_I(v), XI_(set1)(c))); }
DV_INLINE DV_V DV_(andbits)(DV_V v, DV_IT c) { return X_FROM_I(_mm512_and_si512(X_TO_I(v), XI_(set1)(c))); }
/* x = m * 2^k with m in [c, 2c), c = ~sqrt(1/2); x normal > 0. */
DV_INLINE DV_V DV_(split)(DV_V x, DV_V *k)
{
    const __m512i c = XI_(set1)(DV_SQRT_HALF_BITS);
#if DV_LANE == 32
    __m512i ix = XI_(sub)(X_TO_I(x), c);
    *k = _mm512_cvtepi32_ps(_mm512_srai_epi32(ix, 23));
#else /* as in x86_128-inl.h: AVX-512F has no int64->double conversion */
    __m512i ix = XI_(add)(XI_(sub)(X_TO_I(x), c), XI_(set1)(1100LL << 52));
    __m512i e = _mm512_or_si512(_mm512_srli_epi64(ix, 52), XI_(set1)(0x4330000000000000LL));
    *k = _mm512_sub_pd(_mm512_castsi512_pd(e), _mm512_set1_pd(4503599627370496.0 + 1100.0));
#endif
    ix = XI_(add)(_mm512_and_si512(ix, XI_(set1)(((DV_IT)1 << DV_MANT) - 1)), c);
    return X_FROM_I(ix);
}
/* p * 2^n in one instruction (the other targets build it in generic-inl.h). */
DV_INLINE DV_V DV_(ldexp)(DV_V p, DV_V n) { return X_(scalef)(p, n); }

#undef X_
#undef XK_
#undef XI_
#undef X_TO_I
#undef X_FROM_I

#endif
