/*
 * The conversions of the narrow floats (Note [Narrow floats] in dtype.h),
 * round to nearest even, in portable C:
 * - float16's and bfloat16's own forms, which their loops use (dtype.h
 *   exports them as dispatch_half_bits_* and dispatch_bfloat16_bits_*);
 * - any row of DISPATCH_FORALL_NARROW_FLOATS from its format alone: E
 *   exponent bits, M stored mantissa bits, and whether the all-ones exponent
 *   means inf and NaN (DISPATCH_NARROW_IEEE) or the format is finite with
 *   one NaN of all ones (DISPATCH_NARROW_FN, as float8_e4m3fn). Called with
 *   the row's constants, the compiler folds the format away.
 *   dispatch_narrow_format_* are the format's algorithm (host and CUDA
 *   device); dispatch_narrow_* take the forms of float16 and bfloat16 for
 *   their formats on the host, which give the same bits
 *   (sources/core/test_narrow_float.c checks every pattern and random
 *   doubles), so a new dtype is converted by code already proven on two.
 *
 * Rounded once from the double. IEEE: overflow gives inf, a NaN keeps its
 * sign and top payload bits and is made quiet. FN: inf and overflow give
 * NaN (its sign kept), as PyTorch's float8_e4m3fn. Formats narrower than
 * float32 (E <= 8, M <= 22).
 */
#ifndef DISPATCH_NARROW_FLOAT_H_
#define DISPATCH_NARROW_FLOAT_H_

#include <stdint.h>
#include <string.h>

/* float16 and bfloat16 -----------------------------------------------------
 * Their own forms, for loops (dtype.h exports them as dispatch_half_bits_* and
 * dispatch_bfloat16_bits_*): binary16 <-> float/double, round to nearest even,
 * in portable C; host code. */
static inline float dispatch_half_to_float_inline(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, f = h & 0x3ffu, bits;
    if (e == 0x1f) {
        bits = sign | 0x7f800000u | (f << 13); /* inf, NaN (payload kept) */
    } else if (e == 0) {
        float v = (float)f * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -v : v;
    } else {
        bits = sign | ((e + 112u) << 23) | (f << 13); /* rebias 15 -> 127 */
    }
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline uint16_t dispatch_half_from_double_inline(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
    uint64_t abs = b & 0x7fffffffffffffffull;
    if (abs >= 0x7ff0000000000000ull) { /* inf or NaN; a NaN stays quiet NaN */
        return abs == 0x7ff0000000000000ull ? (uint16_t)(sign | 0x7c00u)
                                            : (uint16_t)(sign | 0x7e00u | ((abs >> 42) & 0x1ffu));
    }
    int e = (int)(abs >> 52) - 1023;
    if (e >= 16) return (uint16_t)(sign | 0x7c00u); /* >= 2^16: beyond 65504 + half ulp */
    if (e < -26) return sign; /* below 2^-26 < half the smallest subnormal (or a double subnormal) */
    uint64_t m = (abs & 0xfffffffffffffull) | (1ull << 52);
    /* Keep 11 bits for a normal half, fewer for a subnormal (fixed ulp 2^-24). */
    int shift = 42 + (e < -14 ? -14 - e : 0);
    uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
    q += rem + (q & 1) > halfway; /* to nearest, ties to even; no branch to mispredict */
    /* Normal: exponent field (e + 15) plus the mantissa, whose implicit bit
     * adds the one missing from (e + 14); a carry out of the mantissa rolls
     * into the exponent, and a subnormal rounding up to 2^-14 becomes the
     * smallest normal, all by the same addition. */
    uint32_t bits = e < -14 ? (uint32_t)q : ((uint32_t)(e + 14) << 10) + (uint32_t)q;
    if (bits >= 0x7c00u) bits = 0x7c00u;
    return (uint16_t)(sign | bits);
}

/* bfloat16 ------------------------------------------------------------------
 * The upper 16 bits of a binary32: widening is a shift; narrowing rounds the
 * lower 16 bits away, to nearest even, by one integer addition (a carry out
 * of the mantissa rolls into the exponent, up to inf for the largest finite
 * floats). A NaN keeps its sign and upper payload bits and gets the quiet
 * bit, so it never rounds to inf. */
static inline float dispatch_bfloat16_to_float_inline(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline uint16_t dispatch_bfloat16_from_float_bits_inline(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u); /* NaN */
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

static inline uint16_t dispatch_bfloat16_from_float_inline(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return dispatch_bfloat16_from_float_bits_inline(bits);
}

/* A double is rounded once: first to float rounding to odd (the float's
 * last bit set when the conversion was inexact), which keeps the sticky
 * information; then to bfloat16, to nearest even. Rounding to odd through a
 * format of at least p + 2 bits (24 >= 8 + 2) is exact (Boldo & Melquiond,
 * "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd"), also across the float overflow (a double beyond
 * FLT_MAX becomes FLT_MAX, odd, which rounds to inf as it must) and
 * underflow (a double below the float subnormals becomes the smallest
 * subnormal, which rounds to zero). */
static inline uint16_t dispatch_bfloat16_from_double_inline(double x) {
    if (x != x) {
        /* A NaN from its own bits (sign, quiet, the top payload bits, as x86
         * and ARM narrow it): RISC-V's fcvt.s.d gives the canonical NaN. */
        uint64_t d;
        memcpy(&d, &x, sizeof d);
        return (uint16_t)(((d >> 48) & 0x8000u) | 0x7fc0u | ((d >> 45) & 0x3fu));
    }
    float f = (float)x; /* to nearest; may be inf for a finite x */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((double)f != x) {
        double af = (double)f < 0 ? -(double)f : (double)f, ax = x < 0 ? -x : x;
        if (af > ax) bits -= 1; /* toward zero: one float ulp down in magnitude */
        bits |= 1u;
    }
    return dispatch_bfloat16_from_float_bits_inline(bits);
}

/* Any narrow float, from its format ---------------------------------------- */
#if defined(__CUDACC__)
#define DISPATCH_NARROW_FN_ static inline __host__ __device__
#else
#define DISPATCH_NARROW_FN_ static inline
#endif

#define DISPATCH_NARROW_IEEE 0 /* all-ones exponent: inf (mantissa 0) or a NaN */
#define DISPATCH_NARROW_FN 1   /* finite: no inf, the one NaN has every bit set */

/* The format's bits of value 1 in its top (sign) bit and the largest finite
 * magnitude's bits. */
#define DISPATCH_NARROW_SIGN_(E, M) (1u << ((E) + (M)))
#define DISPATCH_NARROW_INF_(E, M) (((1u << (E)) - 1u) << (M))
/* The magnitude bits (sign dropped) above which a value is a NaN: IEEE's
 * infinity, FN's largest finite value (its one NaN has every bit set). A
 * constant expression, for enums and loops that test bits. */
#define DISPATCH_NARROW_NAN_ABOVE_(E, M, nans)                                               \
    ((nans) == DISPATCH_NARROW_FN ? (1u << ((E) + (M))) - 2u : DISPATCH_NARROW_INF_(E, M))

DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_max_bits(int E, int M, int nans) {
    return nans == DISPATCH_NARROW_FN ? (1u << (E + M)) - 2u : DISPATCH_NARROW_INF_(E, M) - 1u;
}

/* bits -> float: exact (every narrow value is a float). */
DISPATCH_NARROW_FN_ float dispatch_narrow_format_to_float(uint32_t bits, int E, int M, int nans) {
    const int bias = (1 << (E - 1)) - 1;
    const uint32_t sign = (bits & DISPATCH_NARROW_SIGN_(E, M)) ? 0x80000000u : 0u;
    const uint32_t e = (bits >> M) & ((1u << E) - 1u), f = bits & ((1u << M) - 1u);
    uint32_t out;
    if (e == (1u << E) - 1u && (nans == DISPATCH_NARROW_IEEE || f == (1u << M) - 1u)) {
        /* IEEE: inf, or a NaN with its payload; FN: its NaN, quiet */
        out = nans == DISPATCH_NARROW_FN ? 0x7fc00000u : 0x7f800000u | (f << (23 - M));
    } else if (e == 0 && E < 8) {
        /* zero or subnormal: f ulps of 2^(1 - bias - M), a normal float built
         * from its bits (a constant every compiler folds), exact */
        const uint32_t ulp_bits = (uint32_t)(128 - bias - M) << 23;
        float ulp;
        memcpy(&ulp, &ulp_bits, sizeof ulp);
        float v = (float)f * ulp;
        return sign ? -v : v;
    } else {
        /* normal (and, for E == 8, subnormal: the float's own encoding) */
        out = ((e + 127u - (uint32_t)bias) << 23) | (f << (23 - M));
    }
    out |= sign;
    float v;
    memcpy(&v, &out, sizeof v);
    return v;
}

/* double -> bits, rounded once to nearest even. */
DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_format_from_double(double x, int E, int M, int nans) {
    const int bias = (1 << (E - 1)) - 1, emin = 1 - bias;
    const int emax = (nans == DISPATCH_NARROW_FN ? (1 << E) - 1 : (1 << E) - 2) - bias;
    const uint32_t inf = DISPATCH_NARROW_INF_(E, M);
    const uint32_t nan = nans == DISPATCH_NARROW_FN ? (1u << (E + M)) - 1u : inf | (1u << (M - 1));
    const uint32_t over = nans == DISPATCH_NARROW_FN ? nan : inf; /* what overflow gives */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    const uint32_t sign = (b >> 63) ? DISPATCH_NARROW_SIGN_(E, M) : 0u;
    const uint64_t abs = b & 0x7fffffffffffffffull;
    if (abs > 0x7ff0000000000000ull) /* a NaN: IEEE keeps the top payload bits */
        return sign | nan |
               (nans == DISPATCH_NARROW_FN ? 0u : (uint32_t)(abs >> (52 - M)) & ((1u << M) - 1u));
    const int e = (int)(abs >> 52) - 1023;
    if (e > emax) return sign | over; /* inf too: >= 2^(emax + 1) */
    if (e < emin - M - 1) return sign; /* below half the smallest subnormal */
    const uint64_t m = (abs & 0xfffffffffffffull) | (1ull << 52);
    /* Keep M + 1 bits for a normal value, fewer for a subnormal (a fixed
     * ulp of 2^(emin - M)); ties to even by one addition. */
    const int shift = 52 - M + (e < emin ? emin - e : 0);
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    q += rem + (q & 1) > half;
    /* A normal value's exponent field plus its mantissa, whose implicit bit
     * adds the one missing from (e + bias - 1): a carry out of the mantissa
     * rolls into the exponent, a subnormal rounding up becomes the smallest
     * normal, and the largest finite value rounding up passes max_bits. */
    uint32_t r = e < emin ? (uint32_t)q : ((uint32_t)(e + bias - 1) << M) + (uint32_t)q;
    if (r > dispatch_narrow_max_bits(E, M, nans)) r = over;
    return sign | r;
}

/* Note [NaN bits on the device]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A NaN in the format, from a float NaN given as its bits: what
 * dispatch_narrow_format_from_double gives for it widened (IEEE: its sign,
 * the quiet bit and its top payload bits; FN: the one NaN, sign kept; a
 * double NaN: that function itself, which reads its bits). In bits,
 * because a device's own conversions may give one NaN for every NaN: CUDA's
 * __float2half_rn and __float2bfloat16_rn give 0x7fff, where the CPU's keep
 * the payload, so the max of a float16 tensor holding NaNs differed from
 * the CPU's (seen on an H200). max and min select a NaN without arithmetic:
 * with these, its bits are the CPU's (sources/cuda/cuda_device_types.cuh). */
DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_nan_from_float_bits(uint32_t u, int E, int M, int nans) {
    const uint32_t sign = (u >> 31) ? DISPATCH_NARROW_SIGN_(E, M) : 0u;
    if (nans == DISPATCH_NARROW_FN) return sign | ((1u << (E + M)) - 1u);
    return sign | DISPATCH_NARROW_INF_(E, M) | (1u << (M - 1)) | ((u >> (23 - M)) & ((1u << M) - 1u));
}

/* The same, through the forms above for float16's and bfloat16's formats
 * (constant conditions: one branch remains). */
#if defined(__CUDACC__)
#define DISPATCH_NARROW_IS_(E, M, nans, e, m) 0 /* those forms are host code */
#else
#define DISPATCH_NARROW_IS_(E, M, nans, e, m) ((E) == (e) && (M) == (m) && (nans) == DISPATCH_NARROW_IEEE)
#endif
DISPATCH_NARROW_FN_ float dispatch_narrow_to_float(uint32_t bits, int E, int M, int nans) {
#if !defined(__CUDACC__)
    if (DISPATCH_NARROW_IS_(E, M, nans, 5, 10)) return dispatch_half_to_float_inline((uint16_t)bits);
    if (DISPATCH_NARROW_IS_(E, M, nans, 8, 7)) return dispatch_bfloat16_to_float_inline((uint16_t)bits);
#endif
    return dispatch_narrow_format_to_float(bits, E, M, nans);
}

DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_from_double(double x, int E, int M, int nans) {
#if !defined(__CUDACC__)
    if (DISPATCH_NARROW_IS_(E, M, nans, 5, 10)) return dispatch_half_from_double_inline(x);
    if (DISPATCH_NARROW_IS_(E, M, nans, 8, 7)) return dispatch_bfloat16_from_double_inline(x);
#endif
    return dispatch_narrow_format_from_double(x, E, M, nans);
}

/* From a float: rounded once too (the float widens to double exactly); a
 * NaN by its bits, since a float -> double conversion need not keep its
 * payload (RISC-V's fcvt.d.s gives the canonical NaN: float8 and float16
 * NaNs from floats lost their payloads there, and only there). */
DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_from_float(float x, int E, int M, int nans) {
#if !defined(__CUDACC__)
    if (DISPATCH_NARROW_IS_(E, M, nans, 8, 7)) return dispatch_bfloat16_from_float_inline(x);
#endif
    if (x != x) {
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        return dispatch_narrow_nan_from_float_bits(u, E, M, nans);
    }
    return dispatch_narrow_from_double((double)x, E, M, nans);
}

#undef DISPATCH_NARROW_IS_
#undef DISPATCH_NARROW_FN_
#endif /* DISPATCH_NARROW_FLOAT_H_ */
