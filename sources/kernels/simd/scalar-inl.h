/*
 * One lane of plain C, for an architecture with none of the others (the
 * compiler may still auto-vectorize the loops under its own flags). A mask
 * is an int. Part of simd.h (Note [One template per lane type]).
 */
#ifndef DV_LANE /* ------------------------------------------ the types */

#define DV_WIDTH 0
#define DV_NAME "scalar"
typedef float dv_f32;
typedef double dv_f64;
typedef int dm_f32;
typedef int dm_f64;

#else /* ------------------------------------------- one lane type */

DV_INLINE DV_V DV_(load)(const DV_T *p) { return *p; }
/* Every other element's lanes: the one lane p[0] (reads only it). */
DV_INLINE DV_V DV_(load_even)(const DV_T *p) { return *p; }
DV_INLINE void DV_(store)(DV_T *p, DV_V v) { *p = v; }
DV_INLINE DV_V DV_(set1)(DV_T x) { return x; }
DV_INLINE DV_V DV_(add)(DV_V a, DV_V b) { return a + b; }
DV_INLINE DV_V DV_(sub)(DV_V a, DV_V b) { return a - b; }
DV_INLINE DV_V DV_(mul)(DV_V a, DV_V b) { return a * b; }
DV_INLINE DV_V DV_(div)(DV_V a, DV_V b) { return a / b; }
#if DV_LANE == 32
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return __builtin_sqrtf(a); }
#else
DV_INLINE DV_V DV_(sqrt)(DV_V a) { return __builtin_sqrt(a); }
#endif
DV_INLINE DV_V DV_(muladd)(DV_V a, DV_V b, DV_V c) { return a * b + c; }
DV_INLINE DV_M DV_(isnan)(DV_V a) { return a != a; }
DV_INLINE DV_M DV_(lt)(DV_V a, DV_V b) { return a < b; }
DV_INLINE DV_M DV_(eq)(DV_V a, DV_V b) { return a == b; }
DV_INLINE DV_V DV_(select)(DV_M m, DV_V a, DV_V b) { return m ? a : b; }
DV_INLINE DV_V DV_(clamp)(DV_V a, DV_T lo, DV_T hi)
{ a = a < lo ? lo : a; return a > hi ? hi : a; } /* NaN stays NaN */
/* min(a, hi), a NaN a kept (a value clamped from above). */
DV_INLINE DV_V DV_(clamp_hi)(DV_V a, DV_T hi) { return a > hi ? hi : a; }
/* y with x's sign bit or'ed in (y's own sign bit clear): copysign for y >= 0. */
DV_INLINE DV_V DV_(orsign)(DV_V y, DV_V x)
{
    DV_UT i, j; memcpy(&i, &y, sizeof i); memcpy(&j, &x, sizeof j);
    i |= j & ((DV_UT)1 << (sizeof(DV_UT) * 8 - 1)); memcpy(&y, &i, sizeof y); return y;
}
DV_INLINE int DV_(any_lt)(DV_V a, DV_T c) { return a < c; }
/* The lanes of a mask as the low bits of an unsigned, lane 0 the lowest
 * (the first lane that holds: __builtin_ctz of a nonzero answer). */
DV_INLINE unsigned DV_(mask_bits)(DV_M m) { return m != 0; }
DV_INLINE int DV_(all_within)(DV_V a, DV_T lo, DV_T hi) { return a >= lo && a <= hi; }
/* 2^n for t = n + 1.5*2^MANT (n an integer in the normal exponent range). */
DV_INLINE DV_V DV_(pow2)(DV_V t)
{
    DV_UT i; memcpy(&i, &t, sizeof i); i = (i << DV_MANT) + ((DV_UT)DV_BIAS << DV_MANT);
    DV_T r; memcpy(&r, &i, sizeof r); return r;
}
DV_INLINE DV_V DV_(addbits)(DV_V v, DV_IT c)
{ DV_UT i; memcpy(&i, &v, sizeof i); i += (DV_UT)c; memcpy(&v, &i, sizeof v); return v; }
DV_INLINE DV_V DV_(orbits)(DV_V v, DV_IT c)
{ DV_UT i; memcpy(&i, &v, sizeof i); i |= (DV_UT)c; memcpy(&v, &i, sizeof v); return v; }
DV_INLINE DV_V DV_(andbits)(DV_V v, DV_IT c)
{ DV_UT i; memcpy(&i, &v, sizeof i); i &= (DV_UT)c; memcpy(&v, &i, sizeof v); return v; }
/* x = m * 2^k with m in [c, 2c), c = ~sqrt(1/2); x normal > 0. */
DV_INLINE DV_V DV_(split)(DV_V x, DV_V *k)
{
    DV_IT ix; memcpy(&ix, &x, sizeof ix); ix -= DV_SQRT_HALF_BITS;
    *k = (DV_T)(ix >> DV_MANT);
    ix = (ix & (((DV_IT)1 << DV_MANT) - 1)) + DV_SQRT_HALF_BITS;
    DV_T m; memcpy(&m, &ix, sizeof m); return m;
}

#endif
