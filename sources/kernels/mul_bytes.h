/*
 * Products of 8-bit integers on x86 below AVX-512BW, for the generic loops
 * (loop_paths.h's DK_BINARY).
 *
 * Note [Byte products in 16-bit lanes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x86 has no byte multiply. gcc 12 widened both operands to 16 bits,
 * multiplied and packed back (about 10 operations for 32 bytes, half of them
 * shuffles; x.mul_(y) of (512, 512) uint8 1.5x torch's time with AVX2). A
 * 16-bit multiply's low byte is the product of the low bytes (mod 256), so
 * one vpmullw gives every even byte and one of the operands shifted down by
 * 8 the odd ones: two multiplies, three shifts, an and and an or, no
 * shuffle. The product mod 256 is the wrap of both signed and unsigned
 * bytes, so int8 and uint8 share it.
 */
#ifndef DISPATCH_KERNELS_MUL_BYTES_H_
#define DISPATCH_KERNELS_MUL_BYTES_H_

#include <stdint.h>

#include "dispatch/loops.h"

#if defined(__x86_64__) && defined(__SSE2__) && !defined(__AVX512BW__)
#include <immintrin.h>
#define DK_HAS_MUL_BYTES 1

#if defined(__AVX2__)
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

static inline DK_MB_V dk_mul_bytes_v_(DK_MB_V x, DK_MB_V y, DK_MB_V y_odd)
{
    const DK_MB_V even = DK_MB_(mullo_epi16)(x, y);
    const DK_MB_V odd = DK_MB_(mullo_epi16)(DK_MB_(srli_epi16)(x, 8), y_odd);
    return DK_MB_OR(DK_MB_(slli_epi16)(odd, 8), DK_MB_AND(even, DK_MB_(set1_epi16)(0x00ff)));
}

/* o[i] = a[i] * b[i] mod 256 over whole vectors, a or b a scalar where its
 * stride is 0 (not both); returns the elements done. */
static inline intptr_t dk_mul_bytes(uint8_t *o, const uint8_t *a, intptr_t sa, const uint8_t *b,
                                    intptr_t sb, intptr_t n)
{
    const intptr_t w = (intptr_t)sizeof(DK_MB_V);
    intptr_t i = 0;
    if (sa == 0) { /* the product commutes */
        const uint8_t *t = a;
        a = b, b = t, sb = 0;
    }
    if (sb == 0) {
        const DK_MB_V y = DK_MB_(set1_epi8)((char)*b), y_odd = DK_MB_(srli_epi16)(y, 8);
        for (; i + w <= n; i += w) DK_MB_STORE(o + i, dk_mul_bytes_v_(DK_MB_LOAD(a + i), y, y_odd));
    } else {
        for (; i + w <= n; i += w) {
            const DK_MB_V y = DK_MB_LOAD(b + i);
            DK_MB_STORE(o + i, dk_mul_bytes_v_(DK_MB_LOAD(a + i), y, DK_MB_(srli_epi16)(y, 8)));
        }
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
#endif

/* Whether the unit-stride layout s of LOOP on dtype DT takes it. */
#define DK_MUL_BYTES_TAKES(LOOP, DT, s)                                                   \
    (DK_HAS_MUL_BYTES && LOOP == DISPATCH_LOOP_MUL &&                                     \
     (DT == DISPATCH_INT8 || DT == DISPATCH_UINT8) && (s)[0] == 1 &&                      \
     ((s)[1] == 1 || (s)[1] == 0) && ((s)[2] == 1 || (s)[2] == 0) && ((s)[1] | (s)[2]) != 0)

#endif /* DISPATCH_KERNELS_MUL_BYTES_H_ */
