/*
 * AArch64 Advanced SIMD (ASIMD), the aarch64 baseline: 16-byte vectors, FMA
 * always, compares into all-ones lanes. Part of simd.h (Note [One template
 * per lane type]).
 */
#ifndef DV_LANE /* ------------------------------------------ the types */

#include <arm_neon.h>
#define DV_WIDTH 16
#define DV_NEON 1
#define DV_NAME "asimd"
typedef float32x4_t dv_f32;
typedef float64x2_t dv_f64;
typedef uint32x4_t dm_f32;
typedef uint64x2_t dm_f64;

#else /* ------------------------------------------- one lane type */

#if DV_LANE == 32
    #define NF_(op) op##_f32                 /* NF_(vaddq): vaddq_f32 */
    #define NS_(op) op##_s32                 /* signed integer lanes of the same width */
    #define NU_(op) op##_u32
    #define N_TO_S vreinterpretq_s32_f32
    #define N_FROM_S vreinterpretq_f32_s32
    #define N_TO_U vreinterpretq_u32_f32
    #define N_FROM_U vreinterpretq_f32_u32
    #define N_SV int32x4_t
    #define N_UV uint32x4_t
    #define N_FROM_SINT vcvtq_f32_s32            /* each lane's integer value */
#else
    #define NF_(op) op##_f64
    #define NS_(op) op##_s64
    #define NU_(op) op##_u64
    #define N_TO_S vreinterpretq_s64_f64
    #define N_FROM_S vreinterpretq_f64_s64
    #define N_TO_U vreinterpretq_u64_f64
    #define N_FROM_U vreinterpretq_f64_u64
    #define N_SV int64x2_t
    #define N_UV uint64x2_t
    #define N_FROM_SINT vcvtq_f64_s64
#endif

DV_INLINE DV_V DV_(load)(const DV_T *p) { return NF_(vld1q)(p); }
/* Lanes p[0], p[2], ..., p[2 * (lanes - 1)]: reads 2 * lanes elements at p, one
 * past the last lane (every other element of a view; the caller keeps that
 * one inside its memory). */
DV_INLINE DV_V DV_(load_even)(const DV_T *p) { return NF_(vuzp1q)(NF_(vld1q)(p), NF_(vld1q)(p + DV_LANES)); }
DV_INLINE void DV_(store)(DV_T *p, DV_V v) { NF_(vst1q)(p, v); }
DV_INLINE DV_V DV_(set1)(DV_T x) { return NF_(vdupq_n)(x); }
DV_INLINE DV_V DV_(add)(DV_V a, DV_V b) { return NF_(vaddq)(a, b); }
DV_INLINE DV_V DV_(sub)(DV_V a, DV_V b) { return NF_(vsubq)(a, b); }
DV_INLINE DV_V DV_(mul)(DV_V a, DV_V b) { return NF_(vmulq)(a, b); }
DV_INLINE DV_V DV_(div)(DV_V a, DV_V b) { return NF_(vdivq)(a, b); }
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return NF_(vsqrtq)(a); }
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return NF_(vfmaq)(c, a, b); }
/* There is no 64-bit vmvnq: the f64 masks are inverted as 32-bit lanes. */
#if DV_LANE == 32
DV_INLINE DV_M DV_(isnan)(DV_V a) { return vmvnq_u32(vceqq_f32(a, a)); }
#else
DV_INLINE DV_M DV_(isnan)(DV_V a)
{ return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(a, a)))); }
#endif
DV_INLINE DV_M DV_(lt)(DV_V a, DV_V b) { return NF_(vcltq)(a, b); }
DV_INLINE DV_M DV_(eq)(DV_V a, DV_V b) { return NF_(vceqq)(a, b); }
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return NF_(vbslq)(m, a, b); }
/* vmax/vmin (not vmaxnm) return a NaN operand: NaN stays NaN, as on x86 */
DV_INLINE DV_V DV_(clamp)(DV_V a, DV_T lo, DV_T hi)
{ return NF_(vminq)(NF_(vdupq_n)(hi), NF_(vmaxq)(NF_(vdupq_n)(lo), a)); }
/* min(a, hi), a NaN a kept (a value clamped from above). */
DV_INLINE DV_V DV_(clamp_hi)(DV_V a, DV_T hi) { return NF_(vminq)(NF_(vdupq_n)(hi), a); }
/* y with x's sign bit or'ed in (y's own sign bit clear): copysign for y >= 0. */
DV_INLINE DV_V DV_(orsign)(DV_V y, DV_V x)
{ return N_FROM_U(NU_(vorrq)(N_TO_U(y), NU_(vandq)(N_TO_U(x), N_TO_U(NF_(vdupq_n)(-(DV_T)0))))); }
/* Whether any lane of a is below c (for a rarely taken branch). */
#if DV_LANE == 32
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c) { return vmaxvq_u32(vcltq_f32(a, vdupq_n_f32(c))) != 0; }
#else
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c)
{ return vmaxvq_u32(vreinterpretq_u32_u64(vcltq_f64(a, vdupq_n_f64(c)))) != 0; }
#endif
/* The lanes of a mask as the low bits of an unsigned, lane 0 the lowest
 * (the first lane that holds: __builtin_ctz of a nonzero answer). */
#if DV_LANE == 32
DV_INLINE unsigned DV_(mask_bits)(DV_M m)
{
    const uint32x4_t w = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(m, w));
}
#else
DV_INLINE unsigned DV_(mask_bits)(DV_M m)
{
    const uint64x2_t w = {1, 2};
    return (unsigned)vaddvq_u64(vandq_u64(m, w));
}
#endif
/* Whether every lane of a is in [lo, hi] (a NaN is not; for a fast path). */
DV_INLINE int DV_(all_within)(DV_V a, DV_T lo, DV_T hi)
{
    DV_M in = NU_(vandq)(NF_(vcgeq)(a, NF_(vdupq_n)(lo)), NF_(vcleq)(a, NF_(vdupq_n)(hi)));
#if DV_LANE == 32
    return vminvq_u32(in) != 0;
#else
    return vminvq_u32(vreinterpretq_u32_u64(in)) != 0;
#endif
}
/* 2^n for t = n + 1.5*2^MANT (n an integer in the normal exponent range). */
DV_INLINE DV_V DV_(pow2)(DV_V t)
{
    N_UV i = NU_(vshlq_n)(N_TO_U(t), DV_MANT);
    return N_FROM_U(NU_(vaddq)(i, NU_(vdupq_n)((DV_UT)DV_BIAS << DV_MANT)));
}
DV_INLINE DV_V DV_(addbits)(DV_V v, DV_IT c) { return N_FROM_S(NS_(vaddq)(N_TO_S(v), NS_(vdupq_n)(c))); }
DV_INLINE DV_V DV_(orbits)(DV_V v, DV_IT c) { return N_FROM_S(NS_(vorrq)(N_TO_S(v), NS_(vdupq_n)(c))); }
DV_INLINE DV_V DV_(andbits)(DV_V v, DV_IT c) { return N_FROM_S(NS_(vandq)(N_TO_S(v), NS_(vdupq_n)(c))); }
/* x = m * 2^k with m in [c, 2c), c = ~sqrt(1/2); x normal > 0. */
DV_INLINE DV_V DV_(split)(DV_V x, DV_V *k)
{
    const N_SV c = NS_(vdupq_n)(DV_SQRT_HALF_BITS);
    N_SV ix = NS_(vsubq)(N_TO_S(x), c);
    *k = N_FROM_SINT(NS_(vshrq_n)(ix, DV_MANT));
    ix = NS_(vaddq)(NS_(vandq)(ix, NS_(vdupq_n)(((DV_IT)1 << DV_MANT) - 1)), c);
    return N_FROM_S(ix);
}

#undef NF_
#undef NS_
#undef NU_
#undef N_TO_S
#undef N_FROM_S
#undef N_TO_U
#undef N_FROM_U
#undef N_SV
#undef N_UV
#undef N_FROM_SINT

#endif
