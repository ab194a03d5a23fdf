/* The portable binary16 conversions of half.c: exhaustive over the 65536
 * halves, and against the compiler's _Float16 where it has one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/dtype.h"

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
    printf(failures ? "%d failures\n" : "ok\n", failures);
    return failures != 0;
}
