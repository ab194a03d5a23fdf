/*
 * Products of 8-bit integers on x86, for the generic loops (loop_paths.h's
 * DK_BINARY, DK_TERNARY).
 *
 * Note [Byte products in 16-bit lanes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x86 has no byte multiply. gcc 12 widened both operands to 16 bits,
 * multiplied and packed back (about 10 operations a vector, half of them
 * shuffles; x.mul_(y) of (512, 512) uint8 1.5x torch's time with AVX2). A
 * 16-bit multiply's low byte is the product of the low bytes (mod 256), so
 * one vpmullw gives every even byte, and x's odd bytes shifted down times
 * y's odd bytes left in place (y & 0xff00) give every odd byte in the high
 * byte, over a zero low byte: two multiplies, a shift, two ands and an or
 * (one vpternlog on AVX-512), no shuffle. The product mod 256 is the wrap
 * of both signed and unsigned bytes, so int8 and uint8 share it.
 * AVX-512BW too: there gcc's form is 512-bit shuffles, all on one port of an
 * Intel core; on a Xeon with AVX512_FP16, 256K uint8 products in a C loop
 * took 16 us by gcc's form, 9.1 by this one (9.0 for a sum).
 */
#ifndef DISPATCH_KERNELS_MUL_BYTES_H_
#define DISPATCH_KERNELS_MUL_BYTES_H_

#include <stdint.h>

#include "dispatch/loops.h"
#include "line_head.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define DK_HAS_MUL_BYTES 1

#if defined(__AVX512BW__)
#define DK_MB_V __m512i
#define DK_MB_(op) _mm512_##op
#define DK_MB_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define DK_MB_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define DK_MB_OR(a, b) _mm512_or_si512(a, b)
#define DK_MB_AND(a, b) _mm512_and_si512(a, b)
#elif defined(__AVX2__)
#define DK_MB_V __m256i
#define DK_MB_(op) _mm256_##op
#define DK_MB_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define DK_MB_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define DK_MB_OR(a, b) _mm256_or_si256(a, b)
#define DK_MB_AND(a, b) _mm256_and_si256(a, b)
#else
#define DK_MB_V __m128i
#define DK_MB_(op) _mm_##op
#define DK_MB_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define DK_MB_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define DK_MB_OR(a, b) _mm_or_si128(a, b)
#define DK_MB_AND(a, b) _mm_and_si128(a, b)
#endif

/* v loaded once, kept in a register: gcc 12 folded each operand's load
 * into both instructions that use it (four vector loads a product where two
 * do) */
#define DK_MB_IN_REGISTER_(v) __asm__("" : "+v"(v))

/* y_odd: y & 0xff00, y's odd bytes in place */
static inline DK_MB_V dk_mul_bytes_v_(DK_MB_V x, DK_MB_V y, DK_MB_V y_odd)
{
    const DK_MB_V even = DK_MB_(mullo_epi16)(x, y);
    const DK_MB_V odd = DK_MB_(mullo_epi16)(DK_MB_(srli_epi16)(x, 8), y_odd);
    return DK_MB_OR(odd, DK_MB_AND(even, DK_MB_(set1_epi16)(0x00ff)));
}

static inline DK_MB_V dk_odd_bytes_(DK_MB_V y)
{
    return DK_MB_AND(y, DK_MB_(set1_epi16)((short)0xff00));
}

/* o[i] = a[i] * b[i] mod 256 over whole vectors, a or b a scalar where its
 * stride is 0 (not both), the elements before o's first line boundary one at
 * a time (Note [Stores on whole lines] in line_head.h: x.mul_(2) of 256K
 * uint8 on NumPy's memory took 3.4 or 5.0 us by where it started); returns
 * the elements done. */
static inline intptr_t dk_mul_bytes(uint8_t *o, const uint8_t *a, intptr_t sa, const uint8_t *b,
                                    intptr_t sb, intptr_t n)
{
    const intptr_t w = (intptr_t)sizeof(DK_MB_V);
    intptr_t i = 0;
    if (sa == 0) { /* the product commutes */
        const uint8_t *t = a;
        a = b, b = t, sb = 0;
    }
    for (const intptr_t h = dk_line_head(o, 1, 64, n); i < h; i++) {
        o[i] = (uint8_t)((unsigned)a[i] * b[sb ? i : 0]);
        DK_OPAQUE_INDEX_(i);
    }
    if (sb == 0) {
        const DK_MB_V y = DK_MB_(set1_epi8)((char)*b), y_odd = dk_odd_bytes_(y);
        for (; i + w <= n; i += w) {
            DK_MB_V x = DK_MB_LOAD(a + i);
            DK_MB_IN_REGISTER_(x);
            DK_MB_STORE(o + i, dk_mul_bytes_v_(x, y, y_odd));
        }
    } else {
        for (; i + w <= n; i += w) {
            DK_MB_V x = DK_MB_LOAD(a + i), y = DK_MB_LOAD(b + i);
            DK_MB_IN_REGISTER_(x);
            DK_MB_IN_REGISTER_(y);
            DK_MB_STORE(o + i, dk_mul_bytes_v_(x, y, dk_odd_bytes_(y)));
        }
    }
    return i;
}

/* addcmul: o[i] = a[i] + k * b[i] * c[i] mod 256 over whole vectors, any
 * of a, b, c a scalar where its stride is 0; returns the elements done. gcc's
 * form paid the widening twice: (512, 512) uint8 1.2x torch's time with
 * AVX-512 on a Xeon. */
static inline intptr_t dk_addcmul_bytes(uint8_t *o, const uint8_t *a, intptr_t sa,
                                        const uint8_t *b, intptr_t sb, const uint8_t *c,
                                        intptr_t sc, uint8_t k, intptr_t n)
{
    const intptr_t w = (intptr_t)sizeof(DK_MB_V);
    /* a scalar operand's vector, read once (the output may be a or b) */
    const DK_MB_V a1 = DK_MB_(set1_epi8)((char)*a), b1 = DK_MB_(set1_epi8)((char)*b);
    const DK_MB_V c1 = DK_MB_(set1_epi8)((char)*c), kv = DK_MB_(set1_epi8)((char)k);
    const DK_MB_V k_odd = dk_odd_bytes_(kv);
    intptr_t i = 0;
    for (; i + w <= n; i += w) {
        const DK_MB_V x = sa ? DK_MB_LOAD(a + i) : a1, y = sb ? DK_MB_LOAD(b + i) : b1;
        const DK_MB_V z = sc ? DK_MB_LOAD(c + i) : c1;
        DK_MB_V p = dk_mul_bytes_v_(y, z, dk_odd_bytes_(z));
        if (k != 1) p = dk_mul_bytes_v_(p, kv, k_odd);
        DK_MB_STORE(o + i, DK_MB_(add_epi8)(x, p));
    }
    return i;
}
#else
#define DK_HAS_MUL_BYTES 0
static inline intptr_t dk_mul_bytes(uint8_t *o, const uint8_t *a, intptr_t sa, const uint8_t *b,
                                    intptr_t sb, intptr_t n)
{
    (void)o, (void)a, (void)sa, (void)b, (void)sb, (void)n;
    return 0; /* never called: DK_HAS_MUL_BYTES is 0 */
}
static inline intptr_t dk_addcmul_bytes(uint8_t *o, const uint8_t *a, intptr_t sa,
                                        const uint8_t *b, intptr_t sb, const uint8_t *c,
                                        intptr_t sc, uint8_t k, intptr_t n)
{
    (void)o, (void)a, (void)sa, (void)b, (void)sb, (void)c, (void)sc, (void)k, (void)n;
    return 0; /* never called: DK_HAS_MUL_BYTES is 0 */
}
#endif

/* Whether the unit-stride layout s of LOOP on dtype DT takes it. */
#define DK_MUL_BYTES_TAKES(LOOP, DT, s)                                                   \
    (DK_HAS_MUL_BYTES && LOOP == DISPATCH_LOOP_MUL &&                                     \
     (DT == DISPATCH_INT8 || DT == DISPATCH_UINT8) && (s)[0] == 1 &&                      \
     ((s)[1] == 1 || (s)[1] == 0) && ((s)[2] == 1 || (s)[2] == 0) && ((s)[1] | (s)[2]) != 0)

/* Whether addcmul's layout s on dtype DT takes it: a contiguous output, each
 * input contiguous or a scalar, at most one a scalar. */
#define DK_ADDCMUL_BYTES_TAKES(LOOP, DT, s)                                               \
    (DK_HAS_MUL_BYTES && LOOP == DISPATCH_LOOP_ADDCMUL &&                                 \
     (DT == DISPATCH_INT8 || DT == DISPATCH_UINT8) && (s)[0] == 1 &&                      \
     ((s)[1] == 1 || (s)[1] == 0) && ((s)[2] == 1 || (s)[2] == 0) &&                      \
     ((s)[3] == 1 || (s)[3] == 0) && (s)[1] + (s)[2] + (s)[3] >= 2)

#endif /* DISPATCH_KERNELS_MUL_BYTES_H_ */
