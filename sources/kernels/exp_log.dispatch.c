/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * exp, log, expm1, log1p and tanh, float32 and float64, as branch-free vector
 * polynomials.
 *
 * Note [exp/log algorithms and their bounds]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * exp(x): n = round(x / ln2) with the 1.5*2^p "magic number" (the sum also
 * carries n in its low bits, which dv_pow2 shifts into an exponent);
 * r = x - n*ln2 in two steps (Cody-Waite: ln2_hi has few enough bits that
 * n*ln2_hi is exact, so the first subtraction is exact); e^r = 1 + r +
 * r^2 Q(r) with Q a Chebyshev fit on |r| <= ln2/2; the result is scaled by
 * 2^n in two halves, 2^n1 * 2^n2, so every scale factor is a normal number
 * and the only rounding of a subnormal or overflowing result is the last
 * multiply (gradual underflow is correct, overflow gives inf); AVX-512 does
 * the same with one vscalef (dv_ldexp in simd.h). x is clamped to [lo, hi]
 * first so n stays in range; the clamp lets NaN through.
 *
 * log(x): x = m 2^k with m in [sqrt(1/2), sqrt(2)) read from the bits
 * (subnormals are first scaled by 2^23 / 2^52); f = m - 1 (exact);
 * log(1+f) = 2 atanh(s), s = f/(2+f), written as f - (f^2/2 - s(f^2/2 + R))
 * so the large term f is exact and the rounded part is small; R = z P(z),
 * z = s^2, P a Chebyshev fit; k ln2 is added as k*ln2_hi (exact) plus
 * k*ln2_lo folded into the small part. Special values by selection: log(0) =
 * -inf, log(x<0) = NaN, log(inf) = inf, log(NaN) = NaN.
 *
 * Speed depends on the values by little: no arithmetic on subnormals (Note
 * [No denormal arithmetic] in simd/generic-inl.h): exp runs with DAZ|FTZ
 * and builds subnormal results with integer operations (dv_ldexp_gradual,
 * on the vectors that have one), log reads subnormal inputs as integers;
 * the only branches on data choose a vector's path, never a lane's result
 * (exp's subnormal results, Note [log's common case]).
 *
 * Coefficients: `python3 tools/bench/fit_coefficients.py`.
 *
 * Bounds, in ulps of the correctly rounded result, documented / largest seen
 * (3 million inputs per function and target against np.longdouble, spot
 * checks with mpmath; tests/test_kernels_accuracy.py enforces the documented
 * bound on every target):
 *   exp f32: 1.5 / 1.05 (FMA targets), 1.03 (SSE targets)
 *   exp f64: 1.5 / 1.07 (FMA), 1.03 (SSE)
 *   log f32: 1.0 / 0.80       log f64: 1.0 / 0.83
 * The error budget of exp: 0.5 ulp for the final 1 + (r + r^2 Q) rounding,
 * about 0.35 ulp from the rounding of r in the second reduction step, and
 * 0.13 ulp (f32) / 0.11 ulp (f64) of fit error. The FMA and SSE targets
 * differ in the last bit on some inputs (tests/test_kernels_targets.py
 * checks they stay within 1 ulp of each other).
 *
 * Note [Polynomials by Estrin]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * exp's Q is evaluated in pairs, a0 + a1 r, a2 + a3 r, ..., joined by r^2,
 * r^4, r^8 (Estrin's scheme), not by Horner's rule: Horner's ten dependent
 * multiply-adds of float64 were the kernel's critical path, and where one is
 * a multiply and an add (SSE targets: no FMA) a vector waited about 60
 * cycles on them, more than the out-of-order window hides at 2 lanes
 * (float64 exp at SSE4.2 took 2.8 ns an element). The pairs have no
 * dependence on each other; the depth is 4 steps for 10 coefficients. Q
 * enters the result as r^2 Q with |r^2 Q| < 0.07, so the scheme's few ulps
 * of Q are hundredths of an ulp of exp: the largest errors seen below
 * moved by at most 0.04 ulp (1.00 -> 1.03 on SSE for float32). float64
 * log's P (8 coefficients in z = s^2, inside the small part) likewise:
 * 0.82 -> 0.83 ulp at most seen.
 *
 * Note [One scale]
 * ~~~~~~~~~~~~~~~~
 * Without a native ldexp (every target but AVX-512's vscalef), p * 2^n is
 * two multiplies by powers of two built from halves of n, so that each is a
 * normal number near the range's ends. Where every lane's n is within the
 * normal exponents (all but |x| near the overflow and underflow limits),
 * 2^n itself is normal and both products are exact: one power, built from
 * t, which already carries n in its low bits, and one multiply give the
 * same bits with 8 fewer operations a vector.
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"
#include "kernels_loops.h"
#include "narrow_vector.h"

/* ---------------------------------------------------------------- polynomials */
/* e^r = 1 + r + r^2 Q(r) on |r| <= ln2/2 (exp, expm1), Q by Estrin's
 * scheme (Note [Polynomials by Estrin]). */
DV_INLINE dv_f32 exp_q_f32(dv_f32 r)
{
    const dv_f32 r2 = dv_mul_f32(r, r);
    const dv_f32 p01 = dv_muladd_f32(dv_set1_f32(0x1.5554dep-3f), r, dv_set1_f32(0.5f));
    const dv_f32 p23 = dv_muladd_f32(dv_set1_f32(0x1.120b62p-7f), r, dv_set1_f32(0x1.55551ap-5f));
    const dv_f32 p24 = dv_muladd_f32(dv_set1_f32(0x1.6d10fcp-10f), r2, p23);
    return dv_muladd_f32(p24, r2, p01);
}
DV_INLINE dv_f64 exp_q_f64(dv_f64 r)
{
    const dv_f64 r2 = dv_mul_f64(r, r), r4 = dv_mul_f64(r2, r2), r8 = dv_mul_f64(r4, r4);
    const dv_f64 p01 = dv_muladd_f64(dv_set1_f64(0x1.5555555555556p-3), r, dv_set1_f64(0x1.0000000000001p-1));
    const dv_f64 p23 = dv_muladd_f64(dv_set1_f64(0x1.11111111109b5p-7), r, dv_set1_f64(0x1.5555555553d68p-5));
    const dv_f64 p45 = dv_muladd_f64(dv_set1_f64(0x1.a01a01a7c2efep-13), r, dv_set1_f64(0x1.6c16c17889ef1p-10));
    const dv_f64 p67 = dv_muladd_f64(dv_set1_f64(0x1.71de0db2f6b19p-19), r, dv_set1_f64(0x1.a019b9149a41cp-16));
    const dv_f64 p89 = dv_muladd_f64(dv_set1_f64(0x1.af389ecfc4b9cp-26), r, dv_set1_f64(0x1.28917c89a43a7p-22));
    const dv_f64 p03 = dv_muladd_f64(p23, r2, p01), p47 = dv_muladd_f64(p67, r2, p45);
    return dv_muladd_f64(p89, r8, dv_muladd_f64(p47, r4, p03));
}
/* log(1+f) = f - (f^2/2 - s (f^2/2 + z P(z))), s = f/(2+f), z = s^2 (log, log1p). */
DV_INLINE dv_f32 log_p_f32(dv_f32 z)
{
    dv_f32 pz = dv_set1_f32(0x1.ddced8p-3f);
    pz = dv_muladd_f32(pz, z, dv_set1_f32(0x1.245c44p-2f));
    pz = dv_muladd_f32(pz, z, dv_set1_f32(0x1.9999ecp-2f));
    pz = dv_muladd_f32(pz, z, dv_set1_f32(0x1.555556p-1f));
    return pz;
}
DV_INLINE dv_f64 log_p_f64(dv_f64 z) /* Note [Polynomials by Estrin] */
{
    const dv_f64 z2 = dv_mul_f64(z, z), z4 = dv_mul_f64(z2, z2);
    const dv_f64 p01 = dv_muladd_f64(dv_set1_f64(0x1.9999999999a38p-2), z, dv_set1_f64(0x1.5555555555555p-1));
    const dv_f64 p23 = dv_muladd_f64(dv_set1_f64(0x1.c71c720159177p-3), z, dv_set1_f64(0x1.2492492476cccp-2));
    const dv_f64 p45 = dv_muladd_f64(dv_set1_f64(0x1.3b1c355a8f7a2p-3), z, dv_set1_f64(0x1.745cf9048dd95p-3));
    const dv_f64 p67 = dv_muladd_f64(dv_set1_f64(0x1.0c039c49989c6p-3), z, dv_set1_f64(0x1.0fbe95d71602p-3));
    return dv_muladd_f64(dv_muladd_f64(p67, z2, p45), z4, dv_muladd_f64(p23, z2, p01));
}

/* ---------------------------------------------------------------- exp f32 */
DV_INLINE dv_f32 exp_vec_f32(dv_f32 x)
{
    const dv_f32 magic = dv_set1_f32(0x1.8p23f);
    dv_f32 xc = dv_clamp_f32(x, -104.0f, 89.0f);
    dv_f32 t = dv_muladd_f32(xc, dv_set1_f32(0x1.715476p0f), magic);
    dv_f32 n = dv_sub_f32(t, magic);
    dv_f32 r = dv_muladd_f32(n, dv_set1_f32(-0x1.62e4p-1f), xc);
    r = dv_muladd_f32(n, dv_set1_f32(-0x1.7f7d1cp-20f), r);
    dv_f32 p = dv_add_f32(dv_set1_f32(1.0f), dv_muladd_f32(exp_q_f32(r), dv_mul_f32(r, r), r));
#if !defined(DV_NATIVE_LDEXP)
    if (dv_all_within_f32(n, -125.0f, 127.0f)) return dv_mul_f32(p, dv_pow2_f32(t)); /* Note [One scale] */
#endif
    if (dv_any_lt_f32(n, -125.0f)) return dv_ldexp_gradual_f32(p, n); /* subnormal results */
    return dv_ldexp_f32(p, n);
}

/* ---------------------------------------------------------------- exp f64 */
DV_INLINE dv_f64 exp_vec_f64(dv_f64 x)
{
    const dv_f64 magic = dv_set1_f64(0x1.8p52);
    dv_f64 xc = dv_clamp_f64(x, -746.0, 710.0);
    dv_f64 t = dv_muladd_f64(xc, dv_set1_f64(0x1.71547652b82fep0), magic);
    dv_f64 n = dv_sub_f64(t, magic);
    dv_f64 r = dv_muladd_f64(n, dv_set1_f64(-0x1.62e42fefa38p-1), xc);
    r = dv_muladd_f64(n, dv_set1_f64(-0x1.ef35793c7673p-45), r);
    dv_f64 p = dv_add_f64(dv_set1_f64(1.0), dv_muladd_f64(exp_q_f64(r), dv_mul_f64(r, r), r));
#if !defined(DV_NATIVE_LDEXP)
    if (dv_all_within_f64(n, -1021.0, 1023.0)) return dv_mul_f64(p, dv_pow2_f64(t)); /* Note [One scale] */
#endif
    if (dv_any_lt_f64(n, -1021.0)) return dv_ldexp_gradual_f64(p, n);
    return dv_ldexp_f64(p, n);
}

/* ---------------------------------------------------------------- log */
/*
 * Note [log's common case]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * A vector whose lanes are all normal, positive and finite (what log is
 * given almost always) skips the subnormal scaling and the four selections
 * of special values: one two-sided compare decides, and the lanes take the
 * same instructions as in the full path, so the results are the same bits
 * either way (tests/test_log_common_case.py). The full path stays
 * branch-free for any mix of lanes. 256K contiguous elements, one thread,
 * alternating processes: float64 log 294-302 -> 182-185 us (NumPy 198),
 * float32 118-121 -> 68-69, float16 77-78 -> 59-62 (NumPy 61); log1p, which
 * keeps its tiny-|x| selection, float32 116-118 -> 93-97.
 */
/* log_mk: log(m 2^k) for m in [sqrt(1/2), sqrt(2)) (dv_split's), the Note's
 * algorithm; log_vec: log(x), a subnormal x = j * 2^-(SUBK) read as the
 * integer j (MAGIC_BITS / MAGIC: 2^23 or 2^52, exact in the float type), so
 * no arithmetic touches the subnormal (Note [No denormal arithmetic]), and
 * special values by selection (see the Note). */
#define DEFINE_LOG(S, T, MIN_NORMAL, MAX, ABSMASK, MAGIC_BITS, MAGIC, SUBK, LN2HI, LN2LO, QUIET) \
DV_INLINE dv_##S log_mk_##S(dv_##S m, dv_##S k)                                          \
{                                                                                    \
    dv_##S f = dv_sub_##S(m, dv_set1_##S((T)1));                                     \
    dv_##S s = dv_div_##S(f, dv_add_##S(dv_set1_##S((T)2), f));                      \
    dv_##S z = dv_mul_##S(s, s);                                                     \
    dv_##S pz = log_p_##S(z);                                                        \
    dv_##S hfsq = dv_mul_##S(dv_set1_##S((T)0.5), dv_mul_##S(f, f));                 \
    dv_##S small = dv_muladd_##S(s, dv_muladd_##S(z, pz, hfsq),                      \
                                 dv_mul_##S(k, dv_set1_##S(LN2LO)));                 \
    return dv_add_##S(dv_mul_##S(k, dv_set1_##S(LN2HI)),                            \
                      dv_sub_##S(f, dv_sub_##S(hfsq, small)));                       \
}                                                                                    \
DV_INLINE dv_##S log_vec_##S(dv_##S x)                                              \
{                                                                                    \
    dv_##S k, m;                                                                     \
    if (dv_all_within_##S(x, MIN_NORMAL, MAX)) { /* Note [log's common case] */       \
        m = dv_split_##S(x, &k);                                                     \
        return log_mk_##S(m, k);                                                     \
    }                                                                                \
    dm_##S tiny = dv_lt_##S(x, dv_set1_##S(MIN_NORMAL));                             \
    dv_##S j = dv_sub_##S(dv_orbits_##S(dv_andbits_##S(x, ABSMASK), MAGIC_BITS),     \
                          dv_set1_##S(MAGIC));                                       \
    m = dv_split_##S(dv_select_##S(tiny, j, x), &k);                                 \
    k = dv_select_##S(tiny, dv_sub_##S(k, dv_set1_##S(SUBK)), k);                    \
    dv_##S y = log_mk_##S(m, k);                                                     \
    y = dv_select_##S(dv_eq_##S(x, dv_set1_##S((T)0)), dv_set1_##S(-(T)__builtin_inf()), y); \
    y = dv_select_##S(dv_lt_##S(x, dv_set1_##S((T)0)), dv_set1_##S((T)__builtin_nan("")), y); \
    y = dv_select_##S(dv_eq_##S(x, dv_set1_##S((T)__builtin_inf())), x, y);         \
    return dv_select_##S(dv_isnan_##S(x), dv_orbits_##S(x, QUIET), y); /* quiet NaN */ \
}
DEFINE_LOG(f32, float, 0x1p-126f, 0x1.fffffep127f, 0x7fffffff, 0x4B000000, 0x1p23f, 149.0f,
           0x1.62e4p-1f, 0x1.7f7d1cp-20f, 0x00400000)
DEFINE_LOG(f64, double, 0x1p-1022, 0x1.fffffffffffffp1023, 0x7fffffffffffffffLL,
           0x4330000000000000LL, 0x1p52, 1074.0, 0x1.62e42fefa38p-1, 0x1.ef35793c7673p-45,
           0x0008000000000000LL)

/*
 * Note [expm1, log1p and tanh]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * expm1(x): exp's reduction x = n ln2 + r, r = r_hi + r_lo (r_hi = x - n
 * ln2_hi exact), and exp's Q: expm1(r) = r + r^2 Q(r). For n up to 24 (f32)
 * / 53 (f64), where 2^n - 1 is exact, the result is (2^n - 1) + 2^n r_hi,
 * added with Fast2Sum (both terms exact, the larger first, its error kept),
 * plus 2^n (r_lo + r^2 Q(r)): no cancellation is rounded, so n = +-1 (x near
 * +-ln2/2, where a plain 2^n expm1(r) + (2^n - 1) loses up to 2 ulp) stays
 * at 1.5 ulp. Above that the -1 is below a quarter ulp: 2^n (1 + expm1(r)).
 * log1p(x): u = 1 + x rounded, c = (x - (u - 1)) / u the first-order
 * correction for that rounding, then log's algorithm on u with c added to
 * the small part (u is never subnormal: near -1 the spacing of x keeps
 * 1 + x >= 2^-24 / 2^-53). tanh(x), float64: t = expm1(2|x|) (2|x| exact),
 * tanh|x| = t / (t + 2), |x| clamped where tanh rounds to 1, the sign put
 * back by selection (float32: Note [tanh float32]). All three run with DAZ|FTZ (no arithmetic on subnormals: Note
 * [No denormal arithmetic] in simd/generic-inl.h) and return x itself below a threshold
 * where the function rounds to x (this keeps -0, subnormals and their speed);
 * NaN comes back quiet, special values by selection as NumPy gives them:
 * expm1(-inf) = -1, expm1(inf) = inf, log1p(-1) = -inf, log1p(x < -1) = NaN,
 * tanh(+-inf) = +-1.
 *
 * Bounds, documented / largest seen (7 million inputs per function, dtype
 * and target, SSE2, AVX2+FMA, AVX-512, against np.longdouble;
 * tests/test_kernels_accuracy.py enforces the documented bound on every
 * target): expm1 1.5 / 1.44 (f32), 1.45 (f64); log1p 1.0 / 0.86, 0.86;
 * tanh 2.5 / 2.34 (f64), 1.5 / 1.06 (f32 on FMA targets, 1.11 on SSE;
 * every float32 in [2^-14, 10) on each target, with its sign). float64 tanh's error is the
 * relative error of t carried into a result that may sit at the other end of
 * its binade (glibc's tanh documents 2 ulp). float16 computes in float32 and
 * rounds once.
 */

/* ---------------------------------------------------------------- expm1 */
/* See Note [expm1, log1p and tanh]. big's p * 2^n by one multiply by s
 * where every lane's n is a normal exponent (Note [One scale]): n >= -87. */
#if defined(DV_NATIVE_LDEXP)
#define EXPM1_SCALE_f32(p, n, s) dv_ldexp_f32(p, n)
#define EXPM1_SCALE_f64(p, n, s) dv_ldexp_f64(p, n)
#else
#define EXPM1_SCALE_f32(p, n, s) \
    (dv_all_within_f32(n, -125.0f, 127.0f) ? dv_mul_f32(p, s) : dv_ldexp_f32(p, n))
#define EXPM1_SCALE_f64(p, n, s) \
    (dv_all_within_f64(n, -1021.0, 1023.0) ? dv_mul_f64(p, s) : dv_ldexp_f64(p, n))
#endif
#define DEFINE_EXPM1(S, T, LO, HI, MAGIC, INVLN2, LN2HI, LN2LO, NMAX, TINY, ABSMASK, QUIET) \
DV_INLINE dv_##S expm1_core_##S(dv_##S x)                                           \
{                                                                                    \
    const dv_##S magic = dv_set1_##S(MAGIC), one = dv_set1_##S((T)1);                \
    dv_##S xc = dv_clamp_##S(x, LO, HI);                                             \
    dv_##S t = dv_muladd_##S(xc, dv_set1_##S(INVLN2), magic);                        \
    dv_##S n = dv_sub_##S(t, magic);                                                 \
    dv_##S rhi = dv_muladd_##S(n, dv_set1_##S(-(LN2HI)), xc); /* exact */              \
    dv_##S rlo = dv_mul_##S(n, dv_set1_##S(-(LN2LO)));                               \
    dv_##S r = dv_add_##S(rhi, rlo);                                                 \
    dv_##S q = exp_q_##S(r);                                                         \
    dv_##S r2 = dv_mul_##S(r, r);                                                    \
    dv_##S em = dv_muladd_##S(q, r2, r);                                             \
    dv_##S tail = dv_muladd_##S(q, r2, rlo);                                         \
    dv_##S s = dv_pow2_##S(t); /* past NMAX not a number's bits: that lane is big's */ \
    dv_##S sm1 = dv_sub_##S(s, one), srhi = dv_mul_##S(s, rhi); /* both exact */     \
    dv_##S hi = dv_add_##S(sm1, srhi);                                               \
    dv_##S err = dv_sub_##S(srhi, dv_sub_##S(hi, sm1)); /* Fast2Sum: |sm1| >= |srhi| or sm1 = 0 */ \
    dv_##S small = dv_add_##S(hi, dv_muladd_##S(s, tail, err));                      \
    dv_##S big = EXPM1_SCALE_##S(dv_add_##S(one, em), n, s);                        \
    return dv_select_##S(dv_lt_##S(dv_set1_##S(NMAX), n), big, small);              \
}                                                                                    \
DV_INLINE dv_##S expm1_vec_##S(dv_##S x)                                            \
{                                                                                    \
    dv_##S y = expm1_core_##S(x);                                                    \
    y = dv_select_##S(dv_lt_##S(dv_andbits_##S(x, ABSMASK), dv_set1_##S(TINY)), x, y); \
    return dv_select_##S(dv_isnan_##S(x), dv_orbits_##S(x, QUIET), y);              \
}
DEFINE_EXPM1(f32, float, -30.0f, 89.0f, 0x1.8p23f, 0x1.715476p0f, 0x1.62e4p-1f, 0x1.7f7d1cp-20f,
             24.0f, 0x1p-25f, 0x7fffffff, 0x00400000)
DEFINE_EXPM1(f64, double, -60.0, 710.0, 0x1.8p52, 0x1.71547652b82fep0, 0x1.62e42fefa38p-1,
             0x1.ef35793c7673p-45, 53.0, 0x1p-54, 0x7fffffffffffffffLL, 0x0008000000000000LL)

/* ---------------------------------------------------------------- tanh */

#define DEFINE_TANH(S, T, CLAMP, TINY, ABSMASK, QUIET)                               \
DV_INLINE dv_##S tanh_vec_##S(dv_##S x)                                             \
{                                                                                    \
    dv_##S ax = dv_clamp_##S(dv_andbits_##S(x, ABSMASK), (T)0, CLAMP);              \
    dv_##S t = expm1_core_##S(dv_add_##S(ax, ax));                                   \
    dv_##S y = dv_div_##S(t, dv_add_##S(t, dv_set1_##S((T)2)));                      \
    y = dv_select_##S(dv_lt_##S(x, dv_set1_##S((T)0)), dv_sub_##S(dv_set1_##S((T)0), y), y); \
    y = dv_select_##S(dv_lt_##S(dv_andbits_##S(x, ABSMASK), dv_set1_##S(TINY)), x, y); \
    return dv_select_##S(dv_isnan_##S(x), dv_orbits_##S(x, QUIET), y);              \
}
DEFINE_TANH(f64, double, 20.0, 0x1p-27, 0x7fffffffffffffffLL, 0x0008000000000000LL)

/* tanh(x) = x + x^3 P(x^2) on |x| < 0.75 (Note [tanh float32]). */
DV_INLINE dv_f32 tanh_p_f32(dv_f32 z)
{
    dv_f32 p = dv_set1_f32(0x1.f4908ap-10f);
    p = dv_muladd_f32(p, z, dv_set1_f32(-0x1.03f99ap-7f));
    p = dv_muladd_f32(p, z, dv_set1_f32(0x1.622538p-6f));
    p = dv_muladd_f32(p, z, dv_set1_f32(-0x1.b9d7aep-5f));
    p = dv_muladd_f32(p, z, dv_set1_f32(0x1.111042p-3f));
    p = dv_muladd_f32(p, z, dv_set1_f32(-0x1.555554p-2f));
    return p;
}

/*
 * Note [tanh float32]
 * ~~~~~~~~~~~~~~~~~~~
 * float32 tanh needs no expm1 (whose exact -1 is most of its cost): below
 * |x| = 0.75 an odd polynomial, x + x^3 P(x^2) (P a Chebyshev fit of degree
 * 5, under 0.15 ulp of the result; the x^3 P term is under a fifth of it, so its
 * roundings shrink by that much); from 0.75 on, 1 - 2/(e^2|x| + 1), where the
 * subtracted term is at most 0.58x the result, so exp's error reaches the
 * result shrunk. e^v is exp's reduction and polynomial (as one Horner chain,
 * 1 + r(1 + r Q(r))) with v = 2|x| clamped to 20 (tanh rounds to 1 from |x| =
 * 9.02), scaled by 2^n (n <= 29, a normal power of two). Both halves run on
 * |x|, on every lane, and a select keeps one: no branch on the data; x's
 * sign bit is or'ed in last, so a NaN (which fails `0.75 < |x|` and comes
 * back quiet from the polynomial) keeps its sign and payload. Where FMA
 * fuses, r = v - n ln2 is one rounding of the exact difference, so one step
 * (ln2 rounded to float: n ln2 is off by n * 2^-29, at most 0.06 ulp of e^r
 * for n <= 29, where the shrink is far below 1); without FMA the two-step
 * Cody-Waite of exp keeps n ln2_hi exact. AVX-512 scales by vscalef.
 * Against the expm1 form (still float64's): 1.06 ulp instead of 2.40 at
 * most. 256K float32 in [0.5, 2), AVX-512: 121 -> 101 us (one step, the
 * Horner chain, vscalef, a degree lower P, the sign or'ed: 35 -> 30
 * operations a vector; NumPy's 95, from interval tables).
 */
DV_INLINE dv_f32 tanh_vec_f32(dv_f32 x)
{
    const dv_f32 one = dv_set1_f32(1.0f), magic = dv_set1_f32(0x1.8p23f);
    dv_f32 ax = dv_andbits_f32(x, 0x7fffffff);
    dv_f32 z = dv_mul_f32(ax, ax);
    dv_f32 small = dv_muladd_f32(dv_mul_f32(ax, z), tanh_p_f32(z), ax);
    dv_f32 v = dv_clamp_hi_f32(dv_add_f32(ax, ax), 20.0f); /* a NaN stays NaN */
    dv_f32 t = dv_muladd_f32(v, dv_set1_f32(0x1.715476p0f), magic);
    dv_f32 n = dv_sub_f32(t, magic);
#if DV_HAVE_FMA
    dv_f32 r = dv_muladd_f32(n, dv_set1_f32(-0x1.62e430p-1f), v);
#else
    dv_f32 r = dv_muladd_f32(n, dv_set1_f32(-0x1.62e4p-1f), v);
    r = dv_muladd_f32(n, dv_set1_f32(-0x1.7f7d1cp-20f), r);
#endif
    dv_f32 e = dv_muladd_f32(dv_muladd_f32(exp_q_f32(r), r, one), r, one);
#if defined(DV_NATIVE_LDEXP)
    e = dv_ldexp_f32(e, n); /* e^v */
#else
    e = dv_mul_f32(e, dv_pow2_f32(t));
#endif
    dv_f32 big = dv_sub_f32(one, dv_div_f32(dv_set1_f32(2.0f), dv_add_f32(e, one)));
    /* A NaN fails 0.75 < |x| and takes the polynomial, which returns it quiet. */
    dv_f32 y = dv_orsign_f32(dv_select_f32(dv_lt_f32(dv_set1_f32(0.75f), ax), big, small), x);
    return dv_select_f32(dv_lt_f32(ax, dv_set1_f32(0x1p-13f)), x, y); /* x itself: -0, subnormals */
}

/* ---------------------------------------------------------------- log1p */

#define DEFINE_LOG1P(S, T, LN2HI, LN2LO, TINY, ABSMASK, QUIET, ABOVE_M1, MAX)    \
DV_INLINE dv_##S log1p_core_##S(dv_##S x)                                           \
{                                                                                    \
    const dv_##S one = dv_set1_##S((T)1);                                            \
    dv_##S u = dv_add_##S(one, x);                                                   \
    dv_##S c = dv_div_##S(dv_sub_##S(x, dv_sub_##S(u, one)), u);                     \
    dv_##S k;                                                                        \
    dv_##S m = dv_split_##S(u, &k);                                                  \
    dv_##S f = dv_sub_##S(m, one);                                                   \
    dv_##S s = dv_div_##S(f, dv_add_##S(dv_set1_##S((T)2), f));                      \
    dv_##S z = dv_mul_##S(s, s);                                                     \
    dv_##S pz = log_p_##S(z);                                                        \
    dv_##S hfsq = dv_mul_##S(dv_set1_##S((T)0.5), dv_mul_##S(f, f));                 \
    dv_##S small = dv_muladd_##S(s, dv_muladd_##S(z, pz, hfsq),                      \
                                 dv_muladd_##S(k, dv_set1_##S(LN2LO), c));           \
    dv_##S y = dv_add_##S(dv_mul_##S(k, dv_set1_##S(LN2HI)),                         \
                          dv_sub_##S(f, dv_sub_##S(hfsq, small)));                   \
    return dv_select_##S(dv_lt_##S(dv_andbits_##S(x, ABSMASK), dv_set1_##S(TINY)), x, y); \
}                                                                                    \
DV_INLINE dv_##S log1p_vec_##S(dv_##S x)                                            \
{                                                                                    \
    /* x in (-1, MAX]: no special value (Note [log's common case]) */                \
    if (dv_all_within_##S(x, ABOVE_M1, MAX)) return log1p_core_##S(x);               \
    const dv_##S u = dv_add_##S(dv_set1_##S((T)1), x);                              \
    dv_##S y = log1p_core_##S(x);                                                    \
    y = dv_select_##S(dv_eq_##S(u, dv_set1_##S((T)0)), dv_set1_##S(-(T)__builtin_inf()), y); \
    y = dv_select_##S(dv_lt_##S(u, dv_set1_##S((T)0)), dv_set1_##S((T)__builtin_nan("")), y); \
    y = dv_select_##S(dv_eq_##S(x, dv_set1_##S((T)__builtin_inf())), x, y);         \
    return dv_select_##S(dv_isnan_##S(x), dv_orbits_##S(x, QUIET), y);              \
}
DEFINE_LOG1P(f32, float, 0x1.62e4p-1f, 0x1.7f7d1cp-20f, 0x1p-25f, 0x7fffffff, 0x00400000,
             -0x1.fffffep-1f, 0x1.fffffep127f)
DEFINE_LOG1P(f64, double, 0x1.62e42fefa38p-1, 0x1.ef35793c7673p-45, 0x1p-54, 0x7fffffffffffffffLL,
             0x0008000000000000LL, -0x1.fffffffffffffp-1, 0x1.fffffffffffffp1023)

/*
 * Note [float16 log]
 * ~~~~~~~~~~~~~~~~~~
 * float16's log needs 11 bits, not float's 24: its input widened to float
 * (a float16 subnormal is a normal float, so nothing reads subnormals), m
 * and k split as log's, log(1+f) = f P(f) with P a degree-6 fit of
 * log1p(f)/f on [sqrt(1/2) - 1, sqrt(2) - 1] (relative error 2^-18.5), y =
 * k ln2 + f P(f), rounded once to float16: no division, where float's log
 * (its s = f/(2+f)) rounded to float16 took 137 us for 256K, NumPy's float16
 * log 62. Within 1 ulp of the correctly rounded log, the documented bound of
 * the narrow exp family (tests/test_float16_exp_family.py checks every float16).
 * Special values by selection, as log's. expm1 of float16 the same way,
 * below: 138 -> 65 us (NumPy 86).
 */
DV_INLINE dv_f32 log_f16_vec_f32(dv_f32 x)
{
    dv_f32 k;
    dv_f32 m = dv_split_f32(x, &k);
    dv_f32 f = dv_sub_f32(m, dv_set1_f32(1.0f));
    dv_f32 p = dv_set1_f32(0x1.e2b0aep-4f);
    p = dv_muladd_f32(p, f, dv_set1_f32(-0x1.79f9bap-3f));
    p = dv_muladd_f32(p, f, dv_set1_f32(0x1.a2ed5p-3f));
    p = dv_muladd_f32(p, f, dv_set1_f32(-0x1.fe8e66p-3f));
    p = dv_muladd_f32(p, f, dv_set1_f32(0x1.552cf6p-2f));
    p = dv_muladd_f32(p, f, dv_set1_f32(-0x1.0000f6p-1f));
    p = dv_muladd_f32(p, f, dv_set1_f32(0x1.00000cp+0f));
    dv_f32 y = dv_muladd_f32(f, p, dv_mul_f32(k, dv_set1_f32(0x1.62e43p-1f)));
    if (dv_all_within_f32(x, 0x1p-126f, 0x1.fffffep127f)) return y; /* Note [log's common case] */
    y = dv_select_f32(dv_eq_f32(x, dv_set1_f32(0.0f)), dv_set1_f32(-__builtin_inff()), y);
    y = dv_select_f32(dv_lt_f32(x, dv_set1_f32(0.0f)), dv_set1_f32(__builtin_nanf("")), y);
    y = dv_select_f32(dv_eq_f32(x, dv_set1_f32(__builtin_inff())), x, y);
    return dv_select_f32(dv_isnan_f32(x), dv_orbits_f32(x, 0x00400000), y);
}

/* expm1(r) of float16's reduction (Note [float16 log]'s way): n = round(x /
 * ln2), r = x - n ln2 in one step, expm1(r) = r + r^2 Q(r) with a cubic Q;
 * n into *n. x is clamped by the caller. exp and expm1 of float16 share it. */
DV_INLINE dv_f32 expm1_f16_reduced_f32(dv_f32 xc, dv_f32 *n)
{
    const dv_f32 magic = dv_set1_f32(0x1.8p23f);
    *n = dv_sub_f32(dv_muladd_f32(xc, dv_set1_f32(0x1.715476p0f), magic), magic);
    dv_f32 r = dv_muladd_f32(*n, dv_set1_f32(-0x1.62e43p-1f), xc);
    dv_f32 q = dv_set1_f32(0x1.11f408p-7f);
    q = dv_muladd_f32(q, r, dv_set1_f32(0x1.5687ccp-5f));
    q = dv_muladd_f32(q, r, dv_set1_f32(0x1.5554f6p-3f));
    q = dv_muladd_f32(q, r, dv_set1_f32(0x1.ffff88p-2f));
    return dv_muladd_f32(dv_mul_f32(r, r), q, r);
}

/* expm1 of float16: 2^n expm1(r) + (2^n - 1), x clamped to [-17, 12] (the
 * result rounds to -1 below, overflows above), zero kept with its sign. */
DV_INLINE dv_f32 expm1_f16_vec_f32(dv_f32 x)
{
    dv_f32 n;
    dv_f32 p = expm1_f16_reduced_f32(dv_clamp_f32(x, -17.0f, 12.0f), &n);
    dv_f32 s = dv_ldexp_f32(dv_set1_f32(1.0f), n);
    dv_f32 y = dv_muladd_f32(s, p, dv_sub_f32(s, dv_set1_f32(1.0f)));
    y = dv_select_f32(dv_eq_f32(x, dv_set1_f32(0.0f)), x, y);
    return dv_select_f32(dv_isnan_f32(x), dv_orbits_f32(x, 0x00400000), y);
}

/* exp of float16: 2^n (1 + expm1(r)), x clamped to [-18, 12] (the result
 * rounds to 0 below half the smallest subnormal, 2^-25, and overflows
 * above); float's exp (degree-5 Q, two-step reduction) rounded to float16
 * took 56 us for 256K, NumPy's 46 (Sapphire Rapids). */
DV_INLINE dv_f32 exp_f16_vec_f32(dv_f32 x)
{
    dv_f32 n;
    dv_f32 p = expm1_f16_reduced_f32(dv_clamp_f32(x, -18.0f, 12.0f), &n);
    dv_f32 y = dv_ldexp_f32(dv_add_f32(dv_set1_f32(1.0f), p), n);
    return dv_select_f32(dv_isnan_f32(x), dv_orbits_f32(x, 0x00400000), y);
}

/* tanh of float16: float's way (Note [tanh float32]) with the degrees
 * float16's 11 bits need: below |x| = 0.75, x + x^3 P(x^2) with a cubic P
 * (tools/bench/fit_coefficients.py's tanh_f16; its error is under 2^-17 of
 * the result); above, 1 - 2/(e^2|x| + 1) with e^v as exp's above, v = 2|x|
 * clamped to 12 (tanh rounds to 1 in float16 from |x| = 4.5). A NaN takes
 * the polynomial and comes back quiet, its sign or'ed in as float's. */
DV_INLINE dv_f32 tanh_f16_vec_f32(dv_f32 x)
{
    const dv_f32 one = dv_set1_f32(1.0f);
    dv_f32 ax = dv_andbits_f32(x, 0x7fffffff);
    dv_f32 z = dv_mul_f32(ax, ax);
    dv_f32 pz = dv_set1_f32(0x1.d64266p-7f);
    pz = dv_muladd_f32(pz, z, dv_set1_f32(-0x1.a665eep-5f));
    pz = dv_muladd_f32(pz, z, dv_set1_f32(0x1.10886cp-3f));
    pz = dv_muladd_f32(pz, z, dv_set1_f32(-0x1.555424p-2f));
    dv_f32 small = dv_muladd_f32(dv_mul_f32(ax, z), pz, ax);
    dv_f32 n;
    dv_f32 p = expm1_f16_reduced_f32(dv_clamp_hi_f32(dv_add_f32(ax, ax), 12.0f), &n);
    dv_f32 e = dv_ldexp_f32(dv_add_f32(one, p), n);
    dv_f32 big = dv_sub_f32(one, dv_div_f32(dv_set1_f32(2.0f), dv_add_f32(e, one)));
    return dv_orsign_f32(dv_select_f32(dv_lt_f32(dv_set1_f32(0.75f), ax), big, small), x);
}

/* NAME: a float16 loop of VEC, n contiguous elements a chunk at a time
 * through float (the chunks of any other layout: DISPATCH_KERNELS_UNARY_CHUNKED).
 * Widening, computing and narrowing each vector in registers (AVX-512F,
 * F16C) took the same time within the noise on Sapphire Rapids. */
#define DEFINE_F16_UNARY(NAME, VEC)                                                       \
    static void NAME##_contig_(uint16_t *dst, const uint16_t *src, intptr_t n)            \
    {                                                                                     \
        float w[DISPATCH_KERNELS_CHUNK];                                                  \
        const intptr_t L = DV_LANES_F32;                                                  \
        for (intptr_t i = 0; i < n; i += DISPATCH_KERNELS_CHUNK) {                        \
            const intptr_t m = n - i < DISPATCH_KERNELS_CHUNK ? n - i : DISPATCH_KERNELS_CHUNK; \
            dk_f16_to_f32_n(w, src + i, m);                                               \
            intptr_t j = 0;                                                               \
            for (; j + L <= m; j += L) dv_store_f32(w + j, VEC(dv_load_f32(w + j)));      \
            if (j < m)                                                                    \
                dv_store_partial_f32(w + j, m - j, VEC(dv_load_partial_f32(w + j, m - j, 1.0f))); \
            dk_f32_to_f16_n(dst + i, w, m);                                               \
        }                                                                                 \
    }                                                                                     \
    DISPATCH_KERNELS_UNARY_CHUNKED(NAME, uint16_t, 0)

DEFINE_F16_UNARY(dispatch_kernel_log_f16, log_f16_vec_f32)
DEFINE_F16_UNARY(dispatch_kernel_expm1_f16, expm1_f16_vec_f32)
DEFINE_F16_UNARY(dispatch_kernel_exp_f16, exp_f16_vec_f32)
DEFINE_F16_UNARY(dispatch_kernel_tanh_f16, tanh_f16_vec_f32)

/* exp runs with DAZ|FTZ (Note [No denormal arithmetic] in simd/generic-inl.h); log cannot. */
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_exp_f32, float, f32, exp_vec_f32, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_exp_f64, double, f64, exp_vec_f64, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_log_f32, float, f32, log_vec_f32, 0)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_log_f64, double, f64, log_vec_f64, 0)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_expm1_f32, float, f32, expm1_vec_f32, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_expm1_f64, double, f64, expm1_vec_f64, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_log1p_f32, float, f32, log1p_vec_f32, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_log1p_f64, double, f64, log1p_vec_f64, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_tanh_f32, float, f32, tanh_vec_f32, 1)
DISPATCH_KERNELS_UNARY_LOOP(dispatch_kernel_tanh_f64, double, f64, tanh_vec_f64, 1)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(exp_log,
    DISPATCH_KERNELS_LOOP_WITH_2D(EXP, FLOAT32, dispatch_kernel_exp_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(EXP, FLOAT64, dispatch_kernel_exp_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(EXP, FLOAT16, dispatch_kernel_exp_f16, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(LOG, FLOAT32, dispatch_kernel_log_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(LOG, FLOAT64, dispatch_kernel_log_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(LOG, FLOAT16, dispatch_kernel_log_f16, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(EXPM1, FLOAT32, dispatch_kernel_expm1_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(EXPM1, FLOAT64, dispatch_kernel_expm1_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(EXPM1, FLOAT16, dispatch_kernel_expm1_f16, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(LOG1P, FLOAT32, dispatch_kernel_log1p_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(LOG1P, FLOAT64, dispatch_kernel_log1p_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(TANH, FLOAT32, dispatch_kernel_tanh_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(TANH, FLOAT64, dispatch_kernel_tanh_f64, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(TANH, FLOAT16, dispatch_kernel_tanh_f16, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "exp_log.dispatch.h"
DISPATCH_KERNELS_CHOOSER(exp_log)
#endif
