/*
 * The conversions of any narrow float of DISPATCH_FORALL_NARROW_FLOATS (Note
 * [Narrow floats] in dtype.h) from its format alone: E exponent bits, M
 * stored mantissa bits, and whether the all-ones exponent means inf and NaN
 * (DISPATCH_NARROW_IEEE) or the format is finite with one NaN of all ones
 * (DISPATCH_NARROW_FN, as float8_e4m3fn). Called with the row's constants,
 * the compiler folds the format away. dispatch_narrow_format_* are the
 * format's algorithm; dispatch_narrow_* take half.h's specialised forms for
 * float16's and bfloat16's formats (on the host), which give the same bits
 * (sources/core/test_narrow_float.c checks every pattern and random doubles), so a
 * new dtype is converted by code already proven on two.
 *
 * Round to nearest, ties to even, once from the double. IEEE: overflow gives
 * inf, a NaN keeps its sign and top payload bits and is made quiet. FN: inf
 * and overflow give NaN (its sign kept), as PyTorch's float8_e4m3fn. Formats
 * narrower than float32 (E <= 8, M <= 22).
 */
#ifndef DISPATCH_NARROW_FLOAT_H_
#define DISPATCH_NARROW_FLOAT_H_

#include <stdint.h>
#include <string.h>

#if !defined(__CUDACC__)
#include "dispatch/half.h"
#endif

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

/* The same, through half.h's forms for float16's and bfloat16's formats
 * (constant conditions: one branch remains). */
#if defined(__CUDACC__)
#define DISPATCH_NARROW_IS_(E, M, nans, e, m) 0 /* half.h is host code */
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

/* From a float: rounded once too (the float widens to double exactly). */
DISPATCH_NARROW_FN_ uint32_t dispatch_narrow_from_float(float x, int E, int M, int nans) {
#if !defined(__CUDACC__)
    if (DISPATCH_NARROW_IS_(E, M, nans, 8, 7)) return dispatch_bfloat16_from_float_inline(x);
#endif
    return dispatch_narrow_from_double((double)x, E, M, nans);
}

#undef DISPATCH_NARROW_IS_
#undef DISPATCH_NARROW_FN_
#endif /* DISPATCH_NARROW_FLOAT_H_ */
