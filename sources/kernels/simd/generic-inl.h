/*
 * What simd.h builds from each target's primitives, written once for every
 * target and both lane types. Part of simd.h (Note [One template per lane
 * type]).
 */
#ifndef DV_LANE /* ------------------------------- no lane type: FP modes */

/*
 * Note [No denormal arithmetic]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x86 cores take a microcode assist, ~100x the cost of the instruction,
 * when an arithmetic instruction reads a subnormal operand or produces a
 * subnormal or underflowing result (unless MXCSR's DAZ/FTZ modes are on).
 * A kernel that promises data-independent speed therefore (1) runs with
 * DAZ|FTZ set for its duration (dv_fpmode_enter/leave) where the algorithm
 * allows: exp, whose value at a subnormal x is exp(0) = 1 anyway, and
 * expm1, log1p and tanh, which return x itself below a threshold before
 * any arithmetic (exp_log.dispatch.c); and (2)
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

#else /* ------------------------------------------- one lane type */

#if DV_LANE == 32
    #define DV_LDEXP_MAX_ 250  /* |n| the two-step ldexp below takes: 2*125 */
#else
    #define DV_LDEXP_MAX_ 2000 /* within 2*1020 */
#endif

/*
 * p * 2^n, n an integer-valued vector with |n| <= DV_LDEXP_MAX_, rounded
 * once. AVX-512 has it as one instruction (vscalef, x86_512-inl.h);
 * elsewhere two multiplies by normal powers of two, the first exact, so the
 * second is the only rounding: the same bits as vscalef, including gradual
 * underflow.
 */
#if !defined(DV_NATIVE_LDEXP)
DV_INLINE DV_V DV_(ldexp)(DV_V p, DV_V n)
{
    const DV_V magic = DV_(set1)((DV_T)1.5 * ((DV_IT)1 << DV_MANT));
    DV_V n1 = DV_(sub)(DV_(add)(DV_(mul)(n, DV_(set1)((DV_T)0.5)), magic), magic);
    DV_V n2 = DV_(sub)(n, n1);
    return DV_(mul)(DV_(mul)(p, DV_(pow2)(DV_(add)(n1, magic))), DV_(pow2)(DV_(add)(n2, magic)));
}
#endif

/* Correctly rounded p * 2^n for p in [0.5, 2), integer n >= -151 (f32) /
 * -1076 (f64), subnormal results included, without any floating-point
 * instruction producing a subnormal: w = p * 2^(n+149) (f32; n+1074 for
 * f64) is a normal number, and when w < 2^MANT the result is subnormal with
 * bits round(w), which the addition w + 2^MANT rounds (to nearest even,
 * once) into the low bits. */
DV_INLINE DV_V DV_(ldexp_gradual)(DV_V p, DV_V n)
{
    const DV_T two_mant = (DV_T)((DV_IT)1 << DV_MANT);
    DV_V e = DV_(add)(n, DV_(set1)((DV_T)(DV_BIAS + DV_MANT - 1)));
#if !defined(DV_NATIVE_LDEXP)
    e = DV_(clamp)(e, (DV_T)-1, (DV_T)DV_LDEXP_MAX_); /* the two-step ldexp's range */
#endif
    DV_V w = DV_(ldexp)(p, e);
    DV_V sub = DV_(addbits)(DV_(add)(w, DV_(set1)(two_mant)), -((DV_IT)(DV_BIAS + DV_MANT) << DV_MANT));
#if !defined(DV_NATIVE_LDEXP)
    n = DV_(clamp)(n, (DV_T)(1 - DV_BIAS), (DV_T)DV_LDEXP_MAX_); /* lanes that take `sub` */
#endif
    return DV_(select)(DV_(lt)(w, DV_(set1)(two_mant)), sub, DV_(ldexp)(p, n));
}

/* The same rules for one element (strided loops). On POWER9 gcc writes the
 * ternaries as xsmaxcdp/xsmincdp, which give b on a tie of +0 and -0 as the
 * ternary does; qemu 7.2 (Debian 12's, where CI proves these targets) gives
 * a, so there the choice is made on the bits, which no emulator can miss. */
#if defined(__POWER9_VECTOR__)
#ifndef DV_PICK_BITS_ /* r = first ? a : b, on the bits (a, b, r of type DV_T) */
#define DV_PICK_BITS_(r, first, a, b)                                                     \
    do {                                                                                  \
        DV_UT ua_, ub_, m_ = (DV_UT)0 - (DV_UT)(first);                                   \
        memcpy(&ua_, &(a), sizeof ua_);                                                   \
        memcpy(&ub_, &(b), sizeof ub_);                                                   \
        ua_ = (ua_ & m_) | (ub_ & ~m_);                                                   \
        memcpy(&(r), &ua_, sizeof ua_);                                                   \
    } while (0)
#endif
DV_INLINE DV_T DV_(smax)(DV_T a, DV_T b)
{
    DV_T r;
    DV_PICK_BITS_(r, (a != a) | (b < a), a, b);
    return r;
}
DV_INLINE DV_T DV_(smin)(DV_T a, DV_T b)
{
    DV_T r;
    DV_PICK_BITS_(r, (a != a) | (a < b), a, b);
    return r;
}
#else
DV_INLINE DV_T DV_(smax)(DV_T a, DV_T b) { return a != a ? a : (b < a ? a : b); }
DV_INLINE DV_T DV_(smin)(DV_T a, DV_T b) { return a != a ? a : (a < b ? a : b); }
#endif

/* max/min with the NaN and tie rules of Note [Same answer on every target]
 * (one lane: the element's forms above). */
#if DV_WIDTH == 0
DV_INLINE DV_V DV_(max)(DV_V a, DV_V b) { return DV_(smax)(a, b); }
DV_INLINE DV_V DV_(min)(DV_V a, DV_V b) { return DV_(smin)(a, b); }
#elif defined(DV_NATIVE_MINMAX)
/* The ISA file has them (x86: maxps/minps are the compare and select below
 * with b on a NaN or a tie: one compare and one blend fewer, the same bits.
 * Timed in L1, 1,024 elements, the AVX2 kernel, best of 9 x 20,000 calls,
 * 3 runs on a Xeon: float32 minimum 208-251 -> 174-180 ns, float64
 * maximum 387-445 -> 326-334 ns; past L2 the loads bound them either way.) */
#else
DV_INLINE DV_V DV_(max)(DV_V a, DV_V b)
{
    DV_V r = DV_(select)(DV_(lt)(b, a), a, b);
    return DV_(select)(DV_(isnan)(a), a, r);
}
DV_INLINE DV_V DV_(min)(DV_V a, DV_V b)
{
    DV_V r = DV_(select)(DV_(lt)(a, b), a, b);
    return DV_(select)(DV_(isnan)(a), a, r);
}
#endif


/* Load n < lanes elements, the rest filled with `fill`; store n elements. */
DV_INLINE DV_V DV_(load_partial)(const DV_T *p, intptr_t n, DV_T fill)
{
    DV_T buf[DV_LANES];
    for (int i = 0; i < DV_LANES; i++) buf[i] = i < n ? p[i] : fill;
    return DV_(load)(buf);
}
DV_INLINE void DV_(store_partial)(DV_T *p, intptr_t n, DV_V v)
{
    DV_T buf[DV_LANES];
    DV_(store)(buf, v);
    for (intptr_t i = 0; i < n; i++) p[i] = buf[i];
}

#undef DV_LDEXP_MAX_

#endif
