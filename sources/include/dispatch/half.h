/*
 * binary16 <-> float/double conversions, round to nearest even, in portable
 * C, as inline functions for loops (dtype.h exports the same two as
 * dispatch_half_bits_to_float / dispatch_half_bits_from_double); and below,
 * the same for bfloat16 (dispatch_bfloat16_bits_*).
 */
#ifndef DISPATCH_HALF_H_
#define DISPATCH_HALF_H_

#include <stdint.h>
#include <string.h>

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

#endif /* DISPATCH_HALF_H_ */
