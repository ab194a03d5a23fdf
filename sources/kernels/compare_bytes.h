/*
 * Comparisons of 8-byte elements (float64, int64) written as bool bytes, on
 * AVX2 (loop_paths.h's comparisons take it first on their unit-stride
 * layouts; every other target keeps the compiler's loop).
 *
 * Note [Wide comparisons to bytes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A comparison of four doubles is a vector of four 64-bit masks, and bool
 * wants one byte each: 64 to 1. GCC 12 narrowed its vectorized loop in
 * pairs of 128-bit halves (vperm2i128, vpshufd and vpunpcklqdq for every
 * two vectors, then three packs with masks: 55 instructions for 32
 * elements), 37 us for `x == 0.5` of 256K float64 against NumPy's 26. Here
 * 16 at a time: two packs with signed saturation leave each mask a byte,
 * doubled and with the 128-bit halves interleaved; one byte shuffle keeps
 * every other byte and one 16-bit unpack of the two halves puts them in
 * order (12 instructions for 16). AVX-512 compares into mask registers and
 * keeps the compiler's loop.
 */
#ifndef DISPATCH_KERNELS_COMPARE_BYTES_H_
#define DISPATCH_KERNELS_COMPARE_BYTES_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/loops.h"

#if defined(__AVX2__) && !defined(__AVX512F__)
#include <immintrin.h>
#define DK_HAS_COMPARE_BYTES8 1

/* Four vectors of four 64-bit masks as 16 bytes of 0 or 1, in order. */
static inline __m128i dk_masks64_to_bytes16(__m256i m0, __m256i m1, __m256i m2, __m256i m3)
{
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(m0, m1), _mm256_packs_epi32(m2, m3));
    const __m256i even = _mm256_shuffle_epi8(
        b, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                            0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    return _mm_and_si128(_mm_unpacklo_epi16(_mm256_castsi256_si128(even),
                                            _mm256_extracti128_si256(even, 1)),
                         _mm_set1_epi8(1));
}

/* The masks of loop (a comparison) on four lanes: doubles (is_float) or
 * int64. A NaN compares false, ne true, as C's operators. */
static inline __m256i dk_compare4_(int loop, int is_float, __m256i a, __m256i b)
{
    if (is_float) {
        const __m256d x = _mm256_castsi256_pd(a), y = _mm256_castsi256_pd(b);
        switch (loop) {
        case DISPATCH_LOOP_EQ: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_EQ_OQ));
        case DISPATCH_LOOP_NE: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_NEQ_UQ));
        case DISPATCH_LOOP_LT: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_LT_OQ));
        case DISPATCH_LOOP_LE: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_LE_OQ));
        case DISPATCH_LOOP_GT: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_GT_OQ));
        default: return _mm256_castpd_si256(_mm256_cmp_pd(x, y, _CMP_GE_OQ));
        }
    }
    const __m256i ones = _mm256_set1_epi64x(-1);
    switch (loop) {
    case DISPATCH_LOOP_EQ: return _mm256_cmpeq_epi64(a, b);
    case DISPATCH_LOOP_NE: return _mm256_xor_si256(_mm256_cmpeq_epi64(a, b), ones);
    case DISPATCH_LOOP_LT: return _mm256_cmpgt_epi64(b, a);
    case DISPATCH_LOOP_LE: return _mm256_xor_si256(_mm256_cmpgt_epi64(a, b), ones);
    case DISPATCH_LOOP_GT: return _mm256_cmpgt_epi64(a, b);
    default: return _mm256_xor_si256(_mm256_cmpgt_epi64(b, a), ones);
    }
}

/* Whole blocks of 16 of o[i] = a[i] loop b[i], a and b 8-byte elements,
 * each contiguous (its stride 8) or one value (stride 0); returns how many
 * it wrote, the caller's loop does the rest. */
static inline intptr_t dk_compare8_bytes(int loop, int is_float, uint8_t *o, const char *pa,
                                         intptr_t sa, const char *pb, intptr_t sb, intptr_t n)
{
    int64_t va, vb;
    memcpy(&va, pa, 8);
    memcpy(&vb, pb, 8);
    const __m256i ka = _mm256_set1_epi64x(va), kb = _mm256_set1_epi64x(vb);
#define DK_LOAD8_(p, st, k, j) \
    ((st) ? _mm256_loadu_si256((const __m256i *)(const void *)((p) + 8 * (i + (j)))) : (k))
#define DK_CMP4_(j) dk_compare4_(loop, is_float, DK_LOAD8_(pa, sa, ka, j), DK_LOAD8_(pb, sb, kb, j))
    intptr_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(void *)(o + i),
                         dk_masks64_to_bytes16(DK_CMP4_(0), DK_CMP4_(4), DK_CMP4_(8), DK_CMP4_(12)));
#undef DK_CMP4_
#undef DK_LOAD8_
    return i;
}
#else
#define DK_HAS_COMPARE_BYTES8 0
static inline intptr_t dk_compare8_bytes(int loop, int is_float, uint8_t *o, const char *pa,
                                         intptr_t sa, const char *pb, intptr_t sb, intptr_t n)
{
    (void)loop, (void)is_float, (void)o, (void)pa, (void)sa, (void)pb, (void)sb, (void)n;
    return 0; /* never called: DK_HAS_COMPARE_BYTES8 is 0 */
}
#endif

/* Whether the unit-stride layout s of LOOP on T into OT takes it. */
#define DK_COMPARE8_TAKES(LOOP, T, OT, s)                                                 \
    (DK_HAS_COMPARE_BYTES8 && sizeof(T) == 8 && sizeof(OT) == 1 &&                        \
     (LOOP == DISPATCH_LOOP_EQ || LOOP == DISPATCH_LOOP_NE || LOOP == DISPATCH_LOOP_LT ||  \
      LOOP == DISPATCH_LOOP_LE || LOOP == DISPATCH_LOOP_GT || LOOP == DISPATCH_LOOP_GE) && \
     (s)[0] == 1 && ((s)[1] == 8 || (s)[1] == 0) && ((s)[2] == 8 || (s)[2] == 0) &&       \
     ((s)[1] | (s)[2]) != 0)
#define DK_IS_FLOAT_TYPE(T) _Generic((T)0, float: 1, double: 1, default: 0)

#endif /* DISPATCH_KERNELS_COMPARE_BYTES_H_ */
