/* The portable binary16 conversions of narrow_float.h: exhaustive over the 65536
 * halves, and against the compiler's _Float16 where it has one; and the
 * bfloat16 conversions: exhaustive over the 65536 bfloat16s, edges, and a
 * double rounded once (not through float first). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"

static int failures;
#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond) && failures++ < 20) {                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);       \
            printf(__VA_ARGS__);                              \
            printf("\n");                                     \
        }                                                     \
    } while (0)

#if DISPATCH_HALF_NATIVE
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
#endif

/* f as a double, a NaN keeping its sign and payload: RISC-V's fcvt.d.s
 * returns the canonical NaN (positive) for every NaN, so `(double)f` would
 * test the hardware instead of the conversion from double. */
static double widen(float f) {
    if (!isnan(f)) return (double)f;
    uint32_t b;
    memcpy(&b, &f, 4);
    uint64_t d = ((uint64_t)(b >> 31) << 63) | (0x7ffull << 52) | ((uint64_t)(b & 0x7fffffu) << 29);
    double x;
    memcpy(&x, &d, 8);
    return x;
}

static void check_bfloat16(void) {
    /* every bfloat16 survives bfloat16 -> float -> bfloat16, from float and
     * from double; a NaN keeps its sign and comes back quiet */
    for (uint32_t b = 0; b < 0x10000; b++) {
        float f = dispatch_bfloat16_bits_to_float((uint16_t)b);
        uint32_t fb;
        memcpy(&fb, &f, 4);
        CHECK(fb == b << 16, "%04x widens to %08x", b, fb);
        uint16_t back = dispatch_bfloat16_bits_from_float(f), back_d =
            dispatch_bfloat16_bits_from_double(widen(f));
        if (isnan(f)) {
            CHECK(back == (b | 0x40u), "NaN %04x -> %04x", b, back);
            CHECK((back_d & 0xffc0u) == ((b | 0x40u) & 0xffc0u), "NaN %04x -> %04x (double)", b, back_d);
        } else {
            CHECK(back == b && back_d == b, "%04x -> %a -> %04x, %04x", b, (double)f, back, back_d);
        }
    }
    /* edges: ties to even, overflow to inf, the largest finite, subnormals,
     * -0, and doubles that rounding through float first would get wrong */
    struct { double x; uint16_t want; } cases[] = {
        {1.0, 0x3f80}, {1.0 + 0x1p-8, 0x3f80}, {1.0 + 0x3p-8, 0x3f82}, {1.0 + 0x1p-7, 0x3f81},
        {1.0 + 0x1p-8 + 0x1p-40, 0x3f81}, {1.0 + 0x1p-7 + 0x1p-8 - 0x1p-40, 0x3f81},
        {-0.0, 0x8000}, {INFINITY, 0x7f80}, {-INFINITY, 0xff80}, {0x1.fep127, 0x7f7f},
        {0x1.fefffffep127, 0x7f7f}, {0x1.ffp127, 0x7f80}, {1e300, 0x7f80}, {-1e300, 0xff80},
        {0x1p-133, 0x0001}, {0x1p-134, 0x0000}, {0x1p-134 + 0x1p-160, 0x0001},
        {0x1.8p-133, 0x0002}, {0x1p-126, 0x0080}, {-1e-300, 0x8000}, {1e-300, 0x0000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = dispatch_bfloat16_bits_from_double(cases[i].x);
        CHECK(got == cases[i].want, "%a -> %04x, want %04x (bfloat16)", cases[i].x, got,
              cases[i].want);
    }
    /* NaN: quiet, sign kept, never inf (a signaling NaN whose payload is all
     * in the low bits) */
    uint32_t snan = 0xff800001u;
    float f;
    memcpy(&f, &snan, 4);
    CHECK(dispatch_bfloat16_bits_from_float(f) == 0xffc0, "sNaN -> %04x",
          dispatch_bfloat16_bits_from_float(f));
    CHECK((dispatch_bfloat16_bits_from_double(NAN) & 0x7fc0) == 0x7fc0, "NaN (double)");
}

/* narrow_float.h's format algorithm against its float16 and bfloat16 forms
 * (every pattern, random doubles of every magnitude near each range, near
 * ties), and on a finite-only format, float8_e4m3fn (E4, M3, FN), against
 * the definition: every pattern's value, ties to even between neighbours,
 * overflow and inf to NaN with the sign kept. */
static uint64_t narrow_rng = 0x9e3779b97f4a7c15ull;
static uint64_t narrow_next(void) {
    narrow_rng ^= narrow_rng << 13, narrow_rng ^= narrow_rng >> 7, narrow_rng ^= narrow_rng << 17;
    return narrow_rng;
}

static int same_float(float a, float b) { return memcmp(&a, &b, 4) == 0; }

static void check_narrow_formats(void) {
    for (uint32_t b = 0; b < 0x10000; b++) {
        CHECK(same_float(dispatch_narrow_format_to_float(b, 5, 10, DISPATCH_NARROW_IEEE),
                         dispatch_half_to_float_inline((uint16_t)b)), "float16 %04x", b);
        CHECK(same_float(dispatch_narrow_format_to_float(b, 8, 7, DISPATCH_NARROW_IEEE),
                         dispatch_bfloat16_to_float_inline((uint16_t)b)), "bfloat16 %04x", b);
    }
    for (int i = 0; i < 4000000; i++) {
        uint64_t r = narrow_next(), d = narrow_next();
        /* exponents over each format's range and beyond; half of them near a tie */
        int e = (i & 1) ? (int)(r % 48) - 30 : (int)(r % 300) - 150;
        d = (d & 0x800fffffffffffffull) | ((uint64_t)(1023 + e) << 52);
        if (r & (1ull << 40)) d &= ~((1ull << 40) - 1); /* few low bits: exact ties appear */
        double x;
        memcpy(&x, &d, 8);
        uint32_t h = dispatch_narrow_format_from_double(x, 5, 10, DISPATCH_NARROW_IEEE);
        uint32_t g = dispatch_narrow_format_from_double(x, 8, 7, DISPATCH_NARROW_IEEE);
        CHECK(h == dispatch_half_from_double_inline(x), "float16 of %a: %04x", x, h);
        CHECK(g == dispatch_bfloat16_from_double_inline(x), "bfloat16 of %a: %04x", x, g);
    }
    const double specials[] = {INFINITY, -INFINITY, NAN, -NAN, 0.0, -0.0, 1e-320, DBL_MAX};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        double x = specials[i];
        CHECK(dispatch_narrow_format_from_double(x, 5, 10, DISPATCH_NARROW_IEEE) ==
              dispatch_half_from_double_inline(x), "float16 of %a", x);
        CHECK(dispatch_narrow_format_from_double(x, 8, 7, DISPATCH_NARROW_IEEE) ==
              dispatch_bfloat16_from_double_inline(x), "bfloat16 of %a", x);
    }
    /* float8_e4m3fn: bias 7, 0x7f/0xff its NaNs, 448 its largest value */
    double value[256];
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t e = (b >> 3) & 15, f = b & 7;
        double v = e == 0 ? ldexp((double)f, -9) : ldexp(1.0 + f / 8.0, (int)e - 7);
        value[b] = (b & 0x80) ? -v : v;
        float got = dispatch_narrow_format_to_float(b, 4, 3, DISPATCH_NARROW_FN);
        if ((b & 0x7f) == 0x7f) CHECK(isnan(got) && !signbit(got) == !(b & 0x80), "e4m3fn %02x", b);
        else CHECK((double)got == value[b] && !signbit(got) == !(b & 0x80), "e4m3fn %02x: %a", b, got);
    }
    for (uint32_t b = 0; b < 0x7e; b++) {
        for (int sign = 0; sign < 2; sign++) {
            double lo = value[b], hi = value[b + 1], mid = (lo + hi) / 2;
            uint32_t s = sign ? 0x80u : 0u, even = (b & 1) ? b + 1 : b;
            double k = sign ? -1.0 : 1.0;
            CHECK(dispatch_narrow_format_from_double(k * lo, 4, 3, DISPATCH_NARROW_FN) == (s | b),
                  "e4m3fn of %a", k * lo);
            CHECK(dispatch_narrow_format_from_double(k * mid, 4, 3, DISPATCH_NARROW_FN) == (s | even),
                  "e4m3fn of the tie %a", k * mid);
            CHECK(dispatch_narrow_format_from_double(k * nextafter(mid, 0), 4, 3, DISPATCH_NARROW_FN) ==
                  (s | b), "e4m3fn below the tie %a", k * mid);
            CHECK(dispatch_narrow_format_from_double(k * nextafter(mid, INFINITY), 4, 3,
                                                     DISPATCH_NARROW_FN) == (s | (b + 1)),
                  "e4m3fn above the tie %a", k * mid);
        }
    }
    const struct { double x; uint32_t want; } e4m3[] = {
        {448.0, 0x7e}, {464.0, 0x7e}, {464.0000001, 0x7f}, {480.0, 0x7f}, {1e10, 0x7f},
        {INFINITY, 0x7f}, {-INFINITY, 0xff}, {NAN, 0x7f}, {-NAN, 0xff}, {-0.0, 0x80},
        {0x1p-10, 0x00}, {0x1.0000001p-10, 0x01}, {0x1.8p-9, 0x02}, {-1e-300, 0x80},
    };
    for (size_t i = 0; i < sizeof e4m3 / sizeof e4m3[0]; i++) {
        uint32_t got = dispatch_narrow_format_from_double(e4m3[i].x, 4, 3, DISPATCH_NARROW_FN);
        CHECK(got == e4m3[i].want, "e4m3fn of %a: %02x, want %02x", e4m3[i].x, got, e4m3[i].want);
    }
    CHECK(dispatch_dtype_float_max(DISPATCH_FLOAT16) == 65504.0, "float16's largest");
    CHECK(dispatch_dtype_float_max(DISPATCH_BFLOAT16) == 0x1.fep127, "bfloat16's largest");
    CHECK(dispatch_dtype_float_max(DISPATCH_FLOAT32) == FLT_MAX, "float32's largest");
    /* NaN bits (Note [NaN bits on the device]): float NaNs of both signs,
     * every 251st payload and each single payload bit (the cross tests run
     * this under qemu: not all 2^24) */
    const struct { int E, M, nans; } fmt[] = {{5, 10, DISPATCH_NARROW_IEEE}, {8, 7, DISPATCH_NARROW_IEEE},
                                              {4, 3, DISPATCH_NARROW_FN}, {5, 2, DISPATCH_NARROW_IEEE}};
    for (size_t k = 0; k < sizeof fmt / sizeof fmt[0]; k++) {
        int E = fmt[k].E, M = fmt[k].M, nans = fmt[k].nans;
        for (uint64_t j = 1; j < (1ull << 24) / 251 + 48; j++) {
            uint64_t w = j < 48 ? (1ull << (j % 24)) | (j / 24) << 23 : (j - 48) * 251;
            uint32_t u = (uint32_t)(w >> 23) << 31 | 0x7f800000u | (uint32_t)(w & 0x7fffffu);
            if (!(u & 0x7fffffu)) continue; /* inf */
            /* the float widened by its bits: a conversion may not keep a NaN's
             * payload (RISC-V's fcvt.d.s gives the canonical NaN) */
            uint64_t wide = (uint64_t)(u >> 31) << 63 | 0x7ff0000000000000ull |
                            (uint64_t)(u & 0x7fffffu) << 29;
            double x;
            memcpy(&x, &wide, 8);
            uint32_t want = dispatch_narrow_format_from_double(x, E, M, nans);
            uint32_t got = dispatch_narrow_nan_from_float_bits(u, E, M, nans);
            CHECK(got == want, "E%dM%d NaN of float %08x: %x, want %x", E, M, u, got, want);
            /* and the float conversion every caller uses: the same bits on
             * every machine (it widened through double, RISC-V's included) */
            float f;
            memcpy(&f, &u, 4);
            uint32_t via = dispatch_narrow_from_float(f, E, M, nans);
            CHECK(via == want, "E%dM%d NaN of float %08x by from_float: %x, want %x", E, M, u, via, want);
            if (got != want || via != want) break;
        }
    }
    printf("narrow formats: the format algorithm matches float16, bfloat16 and e4m3fn\n");
}

int main(void) {
    /* every half survives half -> float -> half */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = dispatch_half_bits_to_float((uint16_t)h);
        uint16_t back = dispatch_half_bits_from_double(f);
        if (isnan(f)) CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff), "NaN %04x -> %04x", h, back);
        else CHECK(back == h, "%04x -> %a -> %04x", h, (double)f, back);
    }
    /* edges: the largest half, overflow, the subnormal range, ties to even */
    struct { double x; uint16_t want; } cases[] = {
        {65504.0, 0x7bff}, {65519.99, 0x7bff}, {65520.0, 0x7c00}, {-1e300, 0xfc00},
        {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.8p-25, 0x0001}, {0x1.8p-24, 0x0002},
        {0x1p-14, 0x0400}, {0x1.ffcp-15, 0x0400}, {1.0 / 3.0, 0x3555}, {-0.0, 0x8000},
        {1.0 + 0x1p-11, 0x3c00}, {1.0 + 0x1.8p-11, 0x3c01}, {1.0 + 0x1.8p-10, 0x3c02}, {2049.0, 0x6800}, {2051.0, 0x6802},
        {1e-300, 0x0000}, {INFINITY, 0x7c00},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = dispatch_half_bits_from_double(cases[i].x);
        CHECK(got == cases[i].want, "%a -> %04x, want %04x", cases[i].x, got, cases[i].want);
    }
#if DISPATCH_HALF_NATIVE
    /* the compiler's conversions agree, on every half and on random doubles
     * spread over the half range and just beyond */
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t bits = (uint16_t)h;
        _Float16 v;
        memcpy(&v, &bits, 2);
        float a = dispatch_half_bits_to_float(bits), b = (float)v;
        CHECK(memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b)), "%04x: %a vs %a", h, (double)a,
              (double)b);
    }
    for (int i = 0; i < 2000000; i++) {
        uint64_t r = next();
        int e = (int)(r % 48) - 30; /* 2^-30 .. 2^17 */
        double x = ldexp(1.0 + (double)(next() >> 11) * 0x1p-53, e);
        if (r & (1ull << 40)) x = -x;
        if (r & (1ull << 41)) x = ldexp(nearbyint(ldexp(x, 12 - e)), e - 12); /* near ties */
        _Float16 v = (_Float16)x;
        uint16_t want;
        memcpy(&want, &v, 2);
        uint16_t got = dispatch_half_bits_from_double(x);
        CHECK(got == want, "%a -> %04x, _Float16 gives %04x", x, got, want);
    }
    printf("checked against the compiler's _Float16\n");
#else
    printf("no _Float16 in this compiler: exhaustive and edge checks only\n");
#endif
    check_bfloat16();
    check_narrow_formats();
    printf(failures ? "%d failures\n" : "ok\n", failures);
    return failures != 0;
}
