/* How many elements of a contiguous output come before its next line
 * boundary: Note [Stores on whole lines]. Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_LINE_HEAD_H_
#define DISPATCH_KERNELS_LINE_HEAD_H_

#include <stddef.h>
#include <stdint.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

/*
 * Note [Stores on whole lines]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * NumPy's arrays start 16 bytes into a cache line (its allocator's
 * alignment), so every other 32-byte vector store of an output straddles
 * two lines, and then even the order of a loop's two stores matters: in
 * place on 256K float64 (2 MB, past L2), storing the upper vector of a pair
 * before the lower took 40.7 us and the other order 29 (a C loop on this
 * Zen 4), and gcc picks the order (sub_ got the slow one: 43 us beside
 * add_'s 31, torch 28-35). Stores on whole vectors of the output take 21 us
 * in either order. So the contiguous paths first run the few elements (in
 * their scalar form, the same bits) up to the output's boundary of `align`
 * bytes, for runs long enough to pay: x.add_(1) of 256K int64 on NumPy's
 * memory 32 -> 23 us, float64 sub_ 43 -> 25.
 */
static inline intptr_t dk_line_head(const void *o, intptr_t z, intptr_t align, intptr_t n)
{
    if (n < 8 * align / z || (uintptr_t)o % (uintptr_t)z) return 0;
    return (intptr_t)((0 - (uintptr_t)o) % (uintptr_t)align) / z;
}

/* for (i = 0; i < n; i++) STMT over an output `o` of contiguous elements, as
 * two loops: the elements before its first 64-byte boundary, then the rest
 * (the one the compiler vectorizes). STMT names the index `i`. */
#define DK_LINE_HEADED(o, n, STMT)                                                        \
    do {                                                                                  \
        const intptr_t h_ = dk_line_head((o), (intptr_t)sizeof *(o), 64, (n));             \
        intptr_t i = 0;                                                                   \
        for (; i < h_; i++) STMT;                                                         \
        for (; i < (n); i++) STMT;                                                        \
    } while (0)

/* A copy of `bytes` from a to o, runs that do not overlap, in 64-byte vectors
 * stored on o's lines (the first and last vectors unaligned, rewriting a
 * few bytes with the same values). glibc's memcpy runs rep movsb at these
 * sizes: a row of 512 float64 copied into each row of a 2 MB matrix took
 * 33 us that way, torch's vector loop 25, this 25; a clone of 256 KiB of
 * uint8, 1 thread, took 8.2-8.4 us through memcpy, 6.7-6.8 this way (NumPy's
 * copy 5.0-5.3), 1 MiB at 2 threads 17.5-19.3 against 13.5-13.7. Runs of
 * 1 KiB to 1 MiB, an L2's worth (past that memcpy's own choices,
 * non-temporal stores among them, stand: no gain measured at 2 MiB). 1 when
 * it copied, 0 when the caller must. */
#define DK_COPY_ON_LINES_MAX (1024 * 1024)
static inline int dk_copy_on_lines(char *o, const char *a, size_t bytes)
{
#if defined(__AVX512F__)
    if (bytes < 1024 || bytes > DK_COPY_ON_LINES_MAX || (o < a + bytes && a < o + bytes)) return 0;
    _mm512_storeu_si512(o, _mm512_loadu_si512(a));
    size_t i = (0 - (uintptr_t)o) % 64;
    for (; i + 256 <= bytes; i += 256) {
        const __m512i v0 = _mm512_loadu_si512(a + i), v1 = _mm512_loadu_si512(a + i + 64);
        const __m512i v2 = _mm512_loadu_si512(a + i + 128), v3 = _mm512_loadu_si512(a + i + 192);
        _mm512_store_si512(o + i, v0);
        _mm512_store_si512(o + i + 64, v1);
        _mm512_store_si512(o + i + 128, v2);
        _mm512_store_si512(o + i + 192, v3);
    }
    for (; i + 64 <= bytes; i += 64) _mm512_store_si512(o + i, _mm512_loadu_si512(a + i));
    _mm512_storeu_si512(o + bytes - 64, _mm512_loadu_si512(a + bytes - 64));
    return 1;
#else
    (void)o, (void)a, (void)bytes;
    return 0;
#endif
}

#endif /* DISPATCH_KERNELS_LINE_HEAD_H_ */
