/*
 * binary16 <-> float/double conversions, round to nearest even, in portable
 * C, as inline functions for loops (dtype.h exports the same two as
 * dispatch_half_bits_to_float / dispatch_half_bits_from_double).
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

#endif /* DISPATCH_HALF_H_ */
