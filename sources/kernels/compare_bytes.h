/*
 * Comparisons written as bool bytes on x86 from SSE2 to AVX-512: loop_paths.h's
 * comparisons take these first on their unit-stride layouts (both operands
 * contiguous, or one of them a number). AVX-512 compares into mask registers
 * and keeps the compiler's loop for 1- to 4-byte elements, as every other
 * architecture does; 8-byte elements take the AVX2 form there too (the Note).
 *
 * Note [Wide comparisons to bytes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A comparison of w-byte elements is a vector of w-byte masks (all ones or
 * zero) and bool wants one byte each, 0 or 1. GCC 12 narrowed those masks
 * poorly: on AVX2 four doubles went through pairs of 128-bit halves
 * (vperm2i128, vpshufd and vpunpcklqdq for every two vectors, then three
 * packs with masks: 55 instructions for 32 elements, `x == 0.5` of 256K
 * float64 37 us against NumPy's 26); in SSE lanes it masked every 32-bit
 * lane with 1, twice, before its packs (17 operations for 16 floats where 8
 * do). Here the masks are narrowed by packs with signed saturation, which
 * keep all ones all ones and zero zero: two packs take four vectors of
 * 32-bit masks to 16 bytes (8-byte masks first give up their high halves to
 * one float shuffle of two vectors; 256-bit packs work in 128-bit halves, so
 * one dword permute or byte shuffle puts the bytes in order), and one and
 * with 1 at the end makes them bools. Integers have only == and > (unsigned
 * bytes compare by == of their max or min), so != and the other two orders
 * are the complement of a mask: the bools are xor'd with 1 after the and
 * (also where the loop's own bools are complemented: Note [Comparisons by
 * three bodies] in loop_paths.h), and the lanes never hold a negated mask.
 * A float comparison with a NaN is false (!=: true) in the vector
 * predicates chosen, as in C.
 *
 * Taken: float32/float64/int16/int32/int64/int8/uint8/bool in SSE lanes
 * (int64 needs SSE4.2's pcmpgtq, so the SSE2 baseline leaves it to the
 * compiler) and float32/float64/int32/int64 on AVX2, where the compiler's
 * loops of 1- and 2-byte elements were already as fast as NumPy's. Each
 * loop does 32 results an iteration in SSE lanes (one 16-byte store per
 * block kept the 1-byte loop on its loop overhead), 32 or 16 on AVX2.
 * The AVX-512 variants take the AVX2 form for int64 and float64: the
 * compiler's loop there compared into mask registers, expanded each mask
 * to a vector and narrowed it by permutes (35 instructions for 64 results)
 * and `a < b` of 256K int64 took 55 us against NumPy's 47 (its 128-bit
 * packs); the AVX2 form 46 (bench_matrix.py --ops lt gt eq: every 8-byte
 * row at 0.94-1.02x NumPy's time, 1.10-1.18x before). Compares into masks
 * joined by kunpck (20 instructions) did no better than 50 us; 1- to
 * 4-byte elements keep the compiler's loop, at NumPy's time already.
 */
#ifndef DISPATCH_KERNELS_COMPARE_BYTES_H_
#define DISPATCH_KERNELS_COMPARE_BYTES_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/loops.h"

/* How an element compares: its kind, from its C type. */
enum { DK_CMP_SIGNED, DK_CMP_UNSIGNED, DK_CMP_FLOAT };
#define DK_CMP_KIND(T)                                                                     \
    _Generic((T)0, float: DK_CMP_FLOAT, double: DK_CMP_FLOAT,                             \
             default: DISPATCH_INT_IS_SIGNED(T) ? DK_CMP_SIGNED : DK_CMP_UNSIGNED)

#if defined(__SSE2__)
#include <immintrin.h>

/* Every step is inlined into one loop per layout (a call would pass the
 * vectors through memory). */
#define DK_CMP_INLINE_ static inline __attribute__((always_inline))

/* The element sizes and kinds this target takes (the Note above). */
#if defined(__AVX512F__)
#define DK_HAS_COMPARE_BYTES(size, kind) ((size) == 8)
#elif defined(__AVX2__)
#define DK_HAS_COMPARE_BYTES(size, kind) ((size) == 4 || (size) == 8)
#elif defined(__SSE4_2__)
#define DK_HAS_COMPARE_BYTES(size, kind) \
    ((size) == 1 || ((kind) != DK_CMP_UNSIGNED && ((size) == 2 || (size) == 4 || (size) == 8)))
#else
#define DK_HAS_COMPARE_BYTES(size, kind)                                              \
    ((size) == 1 || ((kind) != DK_CMP_UNSIGNED && ((size) == 2 || (size) == 4)) ||    \
     ((kind) == DK_CMP_FLOAT && (size) == 8))
#endif

/* Whether the bools are the complement of the mask (the Note above). */
static inline int dk_cmp_negated_(int loop, int kind)
{
    if (kind == DK_CMP_FLOAT) return 0;
    if (loop == DISPATCH_LOOP_NE) return 1;
    if (kind == DK_CMP_UNSIGNED) return loop == DISPATCH_LOOP_LT || loop == DISPATCH_LOOP_GT;
    return loop == DISPATCH_LOOP_LE || loop == DISPATCH_LOOP_GE;
}

/* Integers: whether the mask is b > a (<, >=) rather than a > b (>, <=). */
static inline int dk_cmp_swapped_(int loop)
{
    return loop == DISPATCH_LOOP_LT || loop == DISPATCH_LOOP_GE;
}

/* The mask of loop on two 16-byte vectors of `size`-byte elements. */
DK_CMP_INLINE_ __m128i dk_cmp_mask16_(int loop, int kind, int size, __m128i a, __m128i b)
{
    if (kind == DK_CMP_FLOAT && size == 4) {
        const __m128 x = _mm_castsi128_ps(a), y = _mm_castsi128_ps(b);
        switch (loop) {
        case DISPATCH_LOOP_EQ: return _mm_castps_si128(_mm_cmpeq_ps(x, y));
        case DISPATCH_LOOP_NE: return _mm_castps_si128(_mm_cmpneq_ps(x, y));
        case DISPATCH_LOOP_LT: return _mm_castps_si128(_mm_cmplt_ps(x, y));
        case DISPATCH_LOOP_LE: return _mm_castps_si128(_mm_cmple_ps(x, y));
        case DISPATCH_LOOP_GT: return _mm_castps_si128(_mm_cmpgt_ps(x, y));
        default: return _mm_castps_si128(_mm_cmpge_ps(x, y));
        }
    }
    if (kind == DK_CMP_FLOAT) {
        const __m128d x = _mm_castsi128_pd(a), y = _mm_castsi128_pd(b);
        switch (loop) {
        case DISPATCH_LOOP_EQ: return _mm_castpd_si128(_mm_cmpeq_pd(x, y));
        case DISPATCH_LOOP_NE: return _mm_castpd_si128(_mm_cmpneq_pd(x, y));
        case DISPATCH_LOOP_LT: return _mm_castpd_si128(_mm_cmplt_pd(x, y));
        case DISPATCH_LOOP_LE: return _mm_castpd_si128(_mm_cmple_pd(x, y));
        case DISPATCH_LOOP_GT: return _mm_castpd_si128(_mm_cmpgt_pd(x, y));
        default: return _mm_castpd_si128(_mm_cmpge_pd(x, y));
        }
    }
    if (kind == DK_CMP_UNSIGNED) { /* bytes: a >= b where max(a, b) == a */
        if (loop == DISPATCH_LOOP_EQ || loop == DISPATCH_LOOP_NE) return _mm_cmpeq_epi8(a, b);
        return _mm_cmpeq_epi8(dk_cmp_swapped_(loop) ? _mm_max_epu8(a, b) : _mm_min_epu8(a, b), a);
    }
    const int eq = loop == DISPATCH_LOOP_EQ || loop == DISPATCH_LOOP_NE;
    const __m128i x = dk_cmp_swapped_(loop) ? b : a, y = dk_cmp_swapped_(loop) ? a : b;
    switch (size) {
    case 1: return eq ? _mm_cmpeq_epi8(a, b) : _mm_cmpgt_epi8(x, y);
    case 2: return eq ? _mm_cmpeq_epi16(a, b) : _mm_cmpgt_epi16(x, y);
    case 4: return eq ? _mm_cmpeq_epi32(a, b) : _mm_cmpgt_epi32(x, y);
#if defined(__SSE4_2__)
    default: return eq ? _mm_cmpeq_epi64(a, b) : _mm_cmpgt_epi64(x, y);
#else
    default: return a; /* never: DK_HAS_COMPARE_BYTES leaves int64 out */
#endif
    }
}

#if defined(__AVX2__)
/* The mask of loop on two 32-byte vectors of 4- or 8-byte elements. */
DK_CMP_INLINE_ __m256i dk_cmp_mask32_(int loop, int kind, int size, __m256i a, __m256i b)
{
    if (kind == DK_CMP_FLOAT && size == 4) {
        const __m256 x = _mm256_castsi256_ps(a), y = _mm256_castsi256_ps(b);
        switch (loop) {
        case DISPATCH_LOOP_EQ: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_EQ_OQ));
        case DISPATCH_LOOP_NE: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_NEQ_UQ));
        case DISPATCH_LOOP_LT: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_LT_OQ));
        case DISPATCH_LOOP_LE: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_LE_OQ));
        case DISPATCH_LOOP_GT: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_GT_OQ));
        default: return _mm256_castps_si256(_mm256_cmp_ps(x, y, _CMP_GE_OQ));
        }
    }
    if (kind == DK_CMP_FLOAT) {
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
    const int eq = loop == DISPATCH_LOOP_EQ || loop == DISPATCH_LOOP_NE;
    const __m256i x = dk_cmp_swapped_(loop) ? b : a, y = dk_cmp_swapped_(loop) ? a : b;
    if (size == 4) return eq ? _mm256_cmpeq_epi32(a, b) : _mm256_cmpgt_epi32(x, y);
    return eq ? _mm256_cmpeq_epi64(a, b) : _mm256_cmpgt_epi64(x, y);
}
#endif

/* The operands of one call: each a contiguous run (its stride `size`) or one
 * value (stride 0), broadcast once into k. */
typedef struct {
    const char *p;
    intptr_t st;
#if defined(__AVX2__)
    __m256i k;
#else
    __m128i k;
#endif
} dk_cmp_operand_;

DK_CMP_INLINE_ dk_cmp_operand_ dk_cmp_operand_of_(int size, const char *p, intptr_t st)
{
    dk_cmp_operand_ r = {p, st, {0}};
    uint64_t v = 0;
    if (!st) memcpy(&v, p, (size_t)size); /* (a run may be empty, its pointer anything) */
#if defined(__AVX2__)
    r.k = size == 4 ? _mm256_set1_epi32((int32_t)v) : _mm256_set1_epi64x((int64_t)v);
#else
    switch (size) {
    case 1: r.k = _mm_set1_epi8((char)v); break;
    case 2: r.k = _mm_set1_epi16((short)v); break;
    case 4: r.k = _mm_set1_epi32((int32_t)v); break;
    default: r.k = _mm_set1_epi64x((int64_t)v); break;
    }
#endif
    return r;
}

#if defined(__AVX2__)
/* Operand element i on, one 32-byte vector. */
#define DK_CMP_LOAD_(op, size, i) \
    ((op).st ? _mm256_loadu_si256((const __m256i *)(const void *)((op).p + (size) * (i))) : (op).k)

/* 32 results of 4-byte elements at i as 32 mask bytes, in order. */
DK_CMP_INLINE_ __m256i dk_cmp_block32_(int loop, int kind, dk_cmp_operand_ a,
                                       dk_cmp_operand_ b, intptr_t i)
{
#define DK_M_(j) \
    dk_cmp_mask32_(loop, kind, 4, DK_CMP_LOAD_(a, 4, i + (j)), DK_CMP_LOAD_(b, 4, i + (j)))
    const __m256i w = _mm256_packs_epi16(_mm256_packs_epi32(DK_M_(0), DK_M_(8)),
                                         _mm256_packs_epi32(DK_M_(16), DK_M_(24)));
#undef DK_M_
    return _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* 16 results of 8-byte elements at i as 16 mask bytes, in order: the packs
 * leave each mask two bytes with the halves interleaved; one byte shuffle
 * keeps every other byte and one 16-bit unpack of the halves orders them. */
DK_CMP_INLINE_ __m128i dk_cmp_block16_(int loop, int kind, dk_cmp_operand_ a,
                                       dk_cmp_operand_ b, intptr_t i)
{
#define DK_M_(j) \
    dk_cmp_mask32_(loop, kind, 8, DK_CMP_LOAD_(a, 8, i + (j)), DK_CMP_LOAD_(b, 8, i + (j)))
    const __m256i w = _mm256_packs_epi16(_mm256_packs_epi32(DK_M_(0), DK_M_(4)),
                                         _mm256_packs_epi32(DK_M_(8), DK_M_(12)));
#undef DK_M_
    const __m256i even = _mm256_shuffle_epi8(
        w, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                            0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    return _mm_unpacklo_epi16(_mm256_castsi256_si128(even), _mm256_extracti128_si256(even, 1));
}
#else
/* Operand element i on, one 16-byte vector. */
#define DK_CMP_LOAD_(op, size, i) \
    ((op).st ? _mm_loadu_si128((const __m128i *)(const void *)((op).p + (size) * (i))) : (op).k)

/* 16 results at i as 16 mask bytes, in order. */
DK_CMP_INLINE_ __m128i dk_cmp_block16_(int loop, int kind, int size, dk_cmp_operand_ a,
                                       dk_cmp_operand_ b, intptr_t i)
{
#define DK_M_(j) \
    dk_cmp_mask16_(loop, kind, size, DK_CMP_LOAD_(a, size, i + (j)), DK_CMP_LOAD_(b, size, i + (j)))
/* two vectors of 8-byte masks as one of 4-byte masks: their low halves */
#define DK_Q_(j)                                                             \
    _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(DK_M_(j)),              \
                                    _mm_castsi128_ps(DK_M_((j) + 2)), 0x88))
    switch (size) {
    case 1: return DK_M_(0);
    case 2: return _mm_packs_epi16(DK_M_(0), DK_M_(8));
    case 4:
        return _mm_packs_epi16(_mm_packs_epi32(DK_M_(0), DK_M_(4)),
                               _mm_packs_epi32(DK_M_(8), DK_M_(12)));
    default:
        return _mm_packs_epi16(_mm_packs_epi32(DK_Q_(0), DK_Q_(4)),
                               _mm_packs_epi32(DK_Q_(8), DK_Q_(12)));
    }
#undef DK_Q_
#undef DK_M_
}
#endif

/* Mask bytes as bools, xor'd with neg: bytes of 1 where the bools are the
 * mask's complement (an xor, not an and-not, as neg is known only at run
 * time: Note [Comparisons by three bodies] in loop_paths.h). */
#define DK_CMP_BOOLS16_(neg, m) _mm_xor_si128(_mm_and_si128((m), _mm_set1_epi8(1)), (neg))
#define DK_CMP_BOOLS32_(neg, m) _mm256_xor_si256(_mm256_and_si256((m), _mm256_set1_epi8(1)), (neg))

/* The blocks of one layout: sa and sb constants where it is inlined. */
DK_CMP_INLINE_ intptr_t dk_compare_bytes_run_(int loop, int kind, int size, unsigned flip,
                                              uint8_t *o, const char *pa, intptr_t sa,
                                              const char *pb, intptr_t sb, intptr_t n)
{
    const dk_cmp_operand_ a = dk_cmp_operand_of_(size, pa, sa);
    const dk_cmp_operand_ b = dk_cmp_operand_of_(size, pb, sb);
    const __m128i neg = _mm_set1_epi8((char)(dk_cmp_negated_(loop, kind) ^ (flip & 1)));
    intptr_t i = 0;
#if defined(__AVX2__)
    if (size == 4) {
        const __m256i neg32 = _mm256_broadcastb_epi8(neg);
        for (; i + 32 <= n; i += 32)
            _mm256_storeu_si256((__m256i *)(void *)(o + i),
                                DK_CMP_BOOLS32_(neg32, dk_cmp_block32_(loop, kind, a, b, i)));
    } else {
        for (; i + 16 <= n; i += 16)
            _mm_storeu_si128((__m128i *)(void *)(o + i),
                             DK_CMP_BOOLS16_(neg, dk_cmp_block16_(loop, kind, a, b, i)));
    }
#else
    for (; i + 32 <= n; i += 32) {
        _mm_storeu_si128((__m128i *)(void *)(o + i),
                         DK_CMP_BOOLS16_(neg, dk_cmp_block16_(loop, kind, size, a, b, i)));
        _mm_storeu_si128((__m128i *)(void *)(o + i + 16),
                         DK_CMP_BOOLS16_(neg, dk_cmp_block16_(loop, kind, size, a, b, i + 16)));
    }
#endif
    return i;
}

/* Whole blocks of o[i] = (a[i] loop b[i]) ^ flip, a and b `size`-byte
 * elements of `kind`, each contiguous (its stride `size`) or one value
 * (stride 0), not both one value; flip 0 or 1; returns how many it wrote,
 * the caller's loop does the rest. */
DK_CMP_INLINE_ intptr_t dk_compare_bytes(int loop, int kind, int size, unsigned flip, uint8_t *o,
                                         const char *pa, intptr_t sa, const char *pb,
                                         intptr_t sb, intptr_t n)
{
    if (sa && sb) return dk_compare_bytes_run_(loop, kind, size, flip, o, pa, size, pb, size, n);
    if (sb) return dk_compare_bytes_run_(loop, kind, size, flip, o, pa, 0, pb, size, n);
    return dk_compare_bytes_run_(loop, kind, size, flip, o, pa, size, pb, 0, n);
}
#undef DK_CMP_LOAD_
#else
#define DK_HAS_COMPARE_BYTES(size, kind) 0
static inline intptr_t dk_compare_bytes(int loop, int kind, int size, unsigned flip, uint8_t *o,
                                        const char *pa, intptr_t sa, const char *pb, intptr_t sb,
                                        intptr_t n)
{
    (void)loop, (void)kind, (void)size, (void)flip, (void)o, (void)pa, (void)sa, (void)pb,
        (void)sb, (void)n;
    return 0; /* never called: DK_HAS_COMPARE_BYTES is 0 */
}
#endif

/* Whether the unit-stride layout s of LOOP on T into OT takes it. */
#define DK_COMPARE_BYTES_TAKES(LOOP, T, OT, s)                                            \
    (DK_HAS_COMPARE_BYTES((int)sizeof(T), DK_CMP_KIND(T)) && sizeof(OT) == 1 &&           \
     (LOOP == DISPATCH_LOOP_EQ || LOOP == DISPATCH_LOOP_NE || LOOP == DISPATCH_LOOP_LT ||  \
      LOOP == DISPATCH_LOOP_LE || LOOP == DISPATCH_LOOP_GT || LOOP == DISPATCH_LOOP_GE) && \
     (s)[0] == 1 && ((s)[1] == (intptr_t)sizeof(T) || (s)[1] == 0) &&                     \
     ((s)[2] == (intptr_t)sizeof(T) || (s)[2] == 0) && ((s)[1] | (s)[2]) != 0)

#endif /* DISPATCH_KERNELS_COMPARE_BYTES_H_ */
