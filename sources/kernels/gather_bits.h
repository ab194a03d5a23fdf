/* Strided elements packed into a chunk and back, by their bits. Included
 * by *.dispatch.c sources, so its loops vectorize under each target. */
#ifndef DISPATCH_KERNELS_GATHER_BITS_H_
#define DISPATCH_KERNELS_GATHER_BITS_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/loops.h"
#if defined(__AVX512BW__)
#include <immintrin.h>
#endif

/*
 * m elements of z bytes at byte stride s packed into dst (dk_gather_bits),
 * and back (dk_scatter_bits): the chunks the narrow floats, the casts and
 * float16's arithmetic run their contiguous paths on. Elements of 1, 2, 4 or 8 bytes at whole-
 * element strides move as unsigned integers of their size at element
 * strides (every other one a constant), which the compiler vectorizes; a
 * loop of one-element memcpys ran at 0.6 ns an element and, its stores
 * beside strided loads, at twice that in some builds (the cast in
 * `x[:, ::2] / x[:, ::2]` of int64: 117 or 187 us from one build to the next).
 */
#define DK_GATHER_(U)                                                                     \
    do {                                                                                  \
        U *o_ = dst;                                                                      \
        const U *p_ = (const U *)(const void *)src;                                       \
        if (e == 2) for (intptr_t j = 0; j < m; j++) o_[j] = p_[2 * j];                   \
        else for (intptr_t j = 0; j < m; j++) o_[j] = p_[j * e];                          \
    } while (0)
#define DK_SCATTER_(U)                                                                    \
    do {                                                                                  \
        U *o_ = (U *)(void *)dst;                                                         \
        const U *p_ = src;                                                                \
        if (e == 2) for (intptr_t j = 0; j < m; j++) o_[2 * j] = p_[j];                   \
        else for (intptr_t j = 0; j < m; j++) o_[j * e] = p_[j];                          \
    } while (0)
static inline void dk_gather_bits(void *dst, const char *src, intptr_t s, intptr_t z, intptr_t m)
{
    const intptr_t e = s / z;
    if (s % z == 0 && (uintptr_t)src % (uintptr_t)z == 0) {
        switch (z) {
        case 1: DK_GATHER_(uint8_t); return;
        case 2: DK_GATHER_(uint16_t); return;
        case 4: DK_GATHER_(uint32_t); return;
        case 8: DK_GATHER_(uint64_t); return;
        default: break;
        }
    }
    for (intptr_t j = 0; j < m; j++) memcpy((char *)dst + j * z, src + j * s, (size_t)z);
}
static inline int dk_spread_every_other(char *o, const char *a, intptr_t z, intptr_t n,
                                         int far);
static inline void dk_scatter_bits(char *dst, intptr_t s, const void *src, intptr_t z, intptr_t m)
{
    const intptr_t e = s / z;
    if (s == 2 * z && dk_spread_every_other(dst, (const char *)src, z, m, 0)) return;
    if (s % z == 0 && (uintptr_t)dst % (uintptr_t)z == 0) {
        switch (z) {
        case 1: DK_SCATTER_(uint8_t); return;
        case 2: DK_SCATTER_(uint16_t); return;
        case 4: DK_SCATTER_(uint32_t); return;
        case 8: DK_SCATTER_(uint64_t); return;
        default: break;
        }
    }
    for (intptr_t j = 0; j < m; j++) memcpy(dst + j * s, (const char *)src + j * z, (size_t)z);
}

/* A loop `self` over operands {out, in} of osz and isz bytes an element (8
 * at most) at any element strides: runs of DK_PACKED_CHUNK packed by their
 * bits, run by self's contiguous path, and unpacked. The casts' strided
 * layouts (cast_loops, float16's own casts in half_arith). */
#define DK_PACKED_CHUNK 512
static inline void dk_run_packed(dispatch_loop_fn self, intptr_t isz, intptr_t osz, char **data,
                                 const intptr_t *s, intptr_t n)
{
    uint64_t in[DK_PACKED_CHUNK], out[DK_PACKED_CHUNK];
    const intptr_t st[2] = {osz, isz};
    for (intptr_t i = 0; i < n; i += DK_PACKED_CHUNK) {
        const intptr_t m = n - i < DK_PACKED_CHUNK ? n - i : DK_PACKED_CHUNK;
        char *src = data[1] + i * s[1], *dst = data[0] + i * s[0];
        char *d[2] = {s[0] == osz ? dst : (char *)out, s[1] == isz ? src : (char *)in};
        if (s[1] != isz) dk_gather_bits(in, src, s[1], isz, m);
        self(d, st, m, NULL);
        if (s[0] != osz) dk_scatter_bits(dst, s[0], out, osz, m);
    }
}

/*
 * Note [Masked accesses ask for their lines]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A store under a byte mask (the every-other loops below) to a line in no
 * cache waits for that line, where plain stores overlap their misses: on an
 * AMD Zen 5 (EPYC, AVX-512), a C loop of x[:, ::2].fill_ over 1M float64
 * elements whose 16 MiB had left the caches took 1263 us in masked stores,
 * 547 in plain element stores, and 474-523 in masked stores with the line
 * 2 KiB ahead asked for by a prefetch (prefetcht0, what gcc emits for a
 * write prefetch on a target without PRFCHW, timed the same as prefetchw).
 * Lines already cached pay for the extra instruction (a 1 MiB span in L2:
 * 5.8 -> 6.6 us; 4 MiB in L3: 34.8 -> 35.7 at best, 35.2 -> 42.2 median),
 * so the loops ask only where `far`: the call's stores walk DK_FAR_MIN
 * bytes or more (a quarter of that machine's 32 MiB L3), which fill's and
 * copy's loops reckon over all the rows of a 2-D call. A cast's chunks
 * (dk_scatter_bits) do not know their call's size and never ask. A masked
 * load waits for its line the same way: the copy between two every-other
 * views asks for its source's lines too (1M float64, the caches emptied
 * before each call: 1225 -> 885-924 us, torch 950-1012), and so does dot's
 * every-other float64 leaf (dot.dispatch.c), for every size, on the CPUs
 * where that pays (Note [Reads asked for ahead, by CPU family] in
 * read_ahead.h): its loads gained from the L3 too.
 */
#define DK_FAR_MIN ((size_t)8 << 20)
#define DK_AHEAD_BYTES 2048 /* how far ahead a line is asked for */
/* Whether a call whose stores walk `bytes` asks for its lines ahead. */
static inline int dk_far(size_t bytes) { return bytes >= DK_FAR_MIN; }
/* The line DK_AHEAD_BYTES past p, asked for to read (rw 0) or write (rw 1). */
#define DK_ASK_AHEAD(p, rw) __builtin_prefetch((const char *)(p) + DK_AHEAD_BYTES, rw, 3)

#if defined(__AVX512BW__)
/* The bytes of the even elements of z bytes in 64 (z = 1, 2, 4 or 8), and of
 * those among the first `left` elements (left < 32 / z), for the last vector. */
static inline __mmask64 dk_even_bytes(intptr_t z)
{
    return z == 1 ? 0x5555555555555555ull : z == 2 ? 0x3333333333333333ull
         : z == 4 ? 0x0F0F0F0F0F0F0F0Full : 0x00FF00FF00FF00FFull;
}
static inline __mmask64 dk_even_bytes_of(intptr_t z, intptr_t left)
{
    return dk_even_bytes(z) & (((__mmask64)1 << ((2 * left - 1) * z)) - 1);
}
#endif

/*
 * Note [Every other element by mask]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A copy between two views of every other element (x[:, ::2].copy_(y[:, ::2]))
 * moves n elements of z bytes at a stride of 2z on both sides. An element
 * loop does one load and one store an element, and a vector of whole
 * elements cannot be stored without writing the ones between, which belong
 * to someone else. AVX-512 stores and loads under a byte mask: each 64 bytes
 * of the source land in the destination with the mask of the even elements,
 * the elements between untouched and never read. 256K elements of
 * (512, 1024) views: int8 73 -> 12 us, int16 73 -> 26, int32 74 -> 51 (NumPy
 * 73 for each); float64 stays at 100 (NumPy 88), its 8 MB of cache lines past
 * L2 either way. Where the two runs overlap the element loop stays, in its
 * forward order. 1 when it copied, 0 when the caller's loop must.
 */
static inline int dk_copy_every_other(char *o, const char *a, intptr_t z, intptr_t n,
                                       int far)
{
#if defined(__AVX512BW__)
    const intptr_t span = (2 * n - 1) * z, per = 32 / z; /* elements per 64 bytes */
    if (z > 8 || 32 % z || n < per || (o < a + span && a < o + span)) return 0;
    const __mmask64 even = dk_even_bytes(z);
    intptr_t i = 0;
    for (; i + per <= n; i += per) {
        /* Note [Masked accesses ask for their lines]: the source's line and the
         * destination's */
        if (far) DK_ASK_AHEAD(a + 2 * i * z, 0);
        __m512i v = _mm512_maskz_loadu_epi8(even, a + 2 * i * z);
        if (far) DK_ASK_AHEAD(o + 2 * i * z, 1);
        _mm512_mask_storeu_epi8(o + 2 * i * z, even, v);
    }
    if (i < n) { /* the last n - i elements: fewer than 64 bytes of both runs */
        const __mmask64 m = dk_even_bytes_of(z, n - i);
        _mm512_mask_storeu_epi8(o + 2 * i * z, m, _mm512_maskz_loadu_epi8(m, a + 2 * i * z));
    }
    return 1;
#else
    (void)o, (void)a, (void)z, (void)n, (void)far;
    return 0;
#endif
}

/* Contiguous elements into every other element of o (o[2i] = a[i]), the
 * same way: 32 bytes of the contiguous run widened to 64 (each element
 * zero-extended to twice its width, the upper half where the mask stores
 * nothing; 8-byte elements moved by a permutation) and stored under the
 * even elements' mask. x[:, ::2].copy_(y) of 256K elements: uint8 87 ->
 * 8.4 us, int16 86 -> 18, float32 57 -> 33, float64 73 -> 66 (NumPy 72-75).
 * The other way (o[i] = a[2i]) needs nothing: the compiler's shuffles
 * already run it at these speeds. Overlapping runs keep the caller's
 * element loop (its forward order). 1 when it copied, 0 when the caller's
 * loop must. */
#if defined(__AVX512BW__) && defined(__AVX512VL__)
#define DK_EVERY_OTHER_BY_WIDTH 1
static inline __m512i dk_widen_even_(const char *a, intptr_t z, __mmask32 m)
{
    const __m256i v = _mm256_maskz_loadu_epi8(m, a);
    switch (z) {
    case 1: return _mm512_cvtepu8_epi16(v);
    case 2: return _mm512_cvtepu16_epi32(v);
    case 4: return _mm512_cvtepu32_epi64(v);
    default:
        return _mm512_permutexvar_epi64(_mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0),
                                        _mm512_castsi256_si512(v));
    }
}
#endif
static inline int dk_spread_every_other(char *o, const char *a, intptr_t z, intptr_t n,
                                         int far)
{
#if defined(DK_EVERY_OTHER_BY_WIDTH)
    const intptr_t per = 32 / z;
    if (z > 8 || 32 % z || n < per || (o < a + n * z && a < o + (2 * n - 1) * z)) return 0;
    const __mmask64 even = dk_even_bytes(z);
    intptr_t i = 0;
    for (; i + per <= n; i += per) {
        if (far) DK_ASK_AHEAD(o + 2 * i * z, 1);
        _mm512_mask_storeu_epi8(o + 2 * i * z, even, dk_widen_even_(a + i * z, z, ~0u));
    }
    if (i < n) {
        const __mmask32 in = (__mmask32)(((uint64_t)1 << ((n - i) * z)) - 1);
        _mm512_mask_storeu_epi8(o + 2 * i * z, dk_even_bytes_of(z, n - i),
                                dk_widen_even_(a + i * z, z, in));
    }
    return 1;
#else
    /* No byte-masked store: a word of 8 source bytes at a time, its elements
     * stored one by one from a general register (the empty asm keeps it
     * there: vectorized, gcc 12 moved the bytes through vector extracts and
     * the stack, slower than an element loop). x[:, ::2].copy_(y) of 256K
     * uint8 with AVX2: 114 -> 37 us (NumPy 73). Plain stores: `far` asks nothing. */
    (void)far;
    if ((z != 1 && z != 2 && z != 4) || (o < a + n * z && a < o + (2 * n - 1) * z)) return 0;
    const intptr_t per = 8 / z;
    intptr_t i = 0;
    for (; i + per <= n; i += per) {
        uint64_t w;
        memcpy(&w, a + i * z, 8);
        __asm__("" : "+r"(w));
        char *p = o + 2 * i * z;
        for (intptr_t k = 0; k < per; k++) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            const uint64_t e = w >> (64 - 8 * z * (k + 1)); /* element k in its low bits */
#else
            const uint64_t e = w >> (8 * z * k);
#endif
            if (z == 1) p[2 * k] = (char)e;
            else if (z == 2) { const uint16_t h = (uint16_t)e; memcpy(p + 4 * k, &h, 2); }
            else { const uint32_t u = (uint32_t)e; memcpy(p + 8 * k, &u, 4); }
        }
    }
    for (; i < n; i++) memcpy(o + 2 * i * z, a + i * z, (size_t)z);
    return 1;
#endif
}
/* fill_ of every other element, the same way: value's z bytes repeated
 * across a vector, stored under the even elements' mask (256K elements of
 * a (512, 1024) view: int16 72 -> 12 us, float32 72 -> 28, float64 73 ->
 * 55; NumPy 72-73). 1 when it filled, 0 when the caller's loop must. */
static inline int dk_fill_every_other(char *o, const void *value, intptr_t z, intptr_t n,
                                       int far)
{
#if defined(__AVX512BW__)
    const intptr_t per = 32 / z;
    if (z > 8 || 32 % z || n < per) return 0;
    uint64_t u = 0;
    memcpy(&u, value, (size_t)z);
    for (intptr_t w = z; w < 8; w *= 2) u |= u << (8 * w); /* z bytes over all 8 */
    const __m512i v = _mm512_set1_epi64((long long)u);
    const __mmask64 even = dk_even_bytes(z);
    intptr_t i = 0;
    for (; i + per <= n; i += per) {
        if (far) DK_ASK_AHEAD(o + 2 * i * z, 1);
        _mm512_mask_storeu_epi8(o + 2 * i * z, even, v);
    }
    if (i < n) _mm512_mask_storeu_epi8(o + 2 * i * z, dk_even_bytes_of(z, n - i), v);
    return 1;
#else
    (void)o, (void)value, (void)z, (void)n, (void)far;
    return 0;
#endif
}

#endif /* DISPATCH_KERNELS_GATHER_BITS_H_ */
