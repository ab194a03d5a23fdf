/* How many elements of a contiguous output come before its next line
 * boundary: Note [Stores on whole lines]. Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_LINE_HEAD_H_
#define DISPATCH_KERNELS_LINE_HEAD_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
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
 * (the one the compiler vectorizes, four vectors an iteration: at SSE4.2
 * gcc's one-vector loop of int64 minimum, pcmpgtq + pblendvb, took 184-203
 * us on two (512, 512) tensors in every one of 4 processes and the unrolled
 * one 95-109, NumPy 92-107; AVX2's 91-101 unchanged). STMT names the index
 * `i`. */
#define DK_LINE_HEADED(o, n, STMT)                                                        \
    do {                                                                                  \
        const intptr_t h_ = dk_line_head((o), (intptr_t)sizeof *(o), 64, (n));             \
        intptr_t i = 0;                                                                   \
        for (; i < h_; i++) STMT;                                                         \
        _Pragma("GCC unroll 4") /* clang reads it too */                                  \
        for (; i < (n); i++) STMT;                                                        \
    } while (0)

/* The widest integer vector of the target, for the copies and fills below. */
#if defined(__AVX512F__)
#define DK_LINE_VEC_ 64
typedef __m512i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm512_storeu_si512((void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm512_store_si512((void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm512_stream_si512((void *)(p), v)
#define DK_LINE_LOADU_(p) _mm512_loadu_si512((const void *)(p))
#define DK_LINE_SET1_(w, x) _mm512_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm512_set1_epi64(x)
#elif defined(__AVX2__)
#define DK_LINE_VEC_ 32
typedef __m256i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm256_store_si256((__m256i *)(void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm256_stream_si256((__m256i *)(void *)(p), v)
#define DK_LINE_LOADU_(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define DK_LINE_SET1_(w, x) _mm256_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm256_set1_epi64x(x)
#elif defined(__SSE2__)
/* fills only (dk_copy_on_lines keeps memcpy below 32-byte vectors) */
#define DK_LINE_VEC_ 16
typedef __m128i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm_store_si128((__m128i *)(void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm_stream_si128((__m128i *)(void *)(p), v)
#define DK_LINE_LOADU_(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define DK_LINE_SET1_(w, x) _mm_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm_set1_epi64x(x)
#endif
/* A copy of `bytes` from a to o, runs that do not overlap, in vectors stored
 * on o's lines (an unaligned first and last vector where the run starts or
 * ends off a line, rewriting a few bytes with the same values: Note [Fills in
 * vector stores] says why only there). glibc's memcpy runs rep movsb at
 * these sizes: a row of 512 float64 copied into each row of a 2 MB matrix
 * took 33 us that way, torch's vector loop 25, this 25; a clone of 256 KiB
 * of uint8, 1 thread, took 8.2-8.4 us through memcpy, 6.7-6.8 this way
 * (NumPy's copy 5.0-5.3), 1 MiB at 2 threads 17.5-19.3 against 13.5-13.7;
 * a row of 512 int16 into 512 rows at 2 threads (a call a row) 5.3 us with
 * both end vectors always stored, 5.0 without (torch 4.4). Runs of 1 KiB to
 * 1 MiB, an L2's worth: past that memcpy's own choices, non-temporal stores
 * among them, stand (no gain measured at 2 MiB); below it memcpy loads the
 * whole run before it stores (rows of 512 uint8 this way: 3.8 us, memcpy's
 * 3.2). 1 when it copied, 0 when the caller must. */
#define DK_COPY_ON_LINES_MAX (1024 * 1024)
static inline int dk_copy_on_lines(char *o, const char *a, size_t bytes)
{
#if defined(DK_LINE_VEC_) && DK_LINE_VEC_ >= 32
    enum { V = DK_LINE_VEC_ };
    if (bytes < 1024 || bytes > DK_COPY_ON_LINES_MAX || (o < a + bytes && a < o + bytes)) return 0;
    size_t i = (0 - (uintptr_t)o) % V;
    if (i) DK_LINE_STOREU_(o, DK_LINE_LOADU_(a));
    for (; i + 4 * V <= bytes; i += 4 * V) {
        const dk_line_vec_ v0 = DK_LINE_LOADU_(a + i), v1 = DK_LINE_LOADU_(a + i + V);
        const dk_line_vec_ v2 = DK_LINE_LOADU_(a + i + 2 * V), v3 = DK_LINE_LOADU_(a + i + 3 * V);
        DK_LINE_STORE_(o + i, v0);
        DK_LINE_STORE_(o + i + V, v1);
        DK_LINE_STORE_(o + i + 2 * V, v2);
        DK_LINE_STORE_(o + i + 3 * V, v3);
    }
    for (; i + V <= bytes; i += V) DK_LINE_STORE_(o + i, DK_LINE_LOADU_(a + i));
    if (i < bytes) DK_LINE_STOREU_(o + bytes - V, DK_LINE_LOADU_(a + bytes - V));
    return 1;
#else
    (void)o, (void)a, (void)bytes;
    return 0;
#endif
}

/*
 * Note [Fills past the caches]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A fill of more bytes than a core's share of the last-level cache ends in
 * memory whatever it does, and a plain store first reads the line it
 * writes: half the bus is loads nobody uses. Non-temporal (streaming)
 * stores write whole lines without reading them: a C loop filling 128
 * MiB on a 2-vCPU AMD EPYC VM (AVX2) took 14-17 ms with stores, 7.1-7.3
 * with streaming ones, glibc's memset 8-9; x.fill_(v) of 16M int64 12.1-14.2
 * -> 6.4-7.3 ms (NumPy's 12.5-14.1), copy_ of a 0-d int64 tensor the same
 * (one value of another dtype is a cast, its loop per element: not here). Below
 * DK_FILL_STREAM_MIN the plain stores stay: a result that fits a cache is
 * read from it next, and streamed lines would have left it. The threshold
 * is a fixed size, not this machine's cache (a VM's reported L3 is not its
 * share of it): 16 MiB, past every core's share on the x86 CPUs at hand.
 */
#define DK_FILL_STREAM_MIN ((size_t)16 << 20)

/*
 * Note [Fills in vector stores]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * One value written n times (copy_ of a column, fill_, copy_ of one value)
 * was a loop gcc turns into a memset call for bytes: 512 rows of 512 uint8
 * took 4.0 us that way, a call and glibc's stores on each row (torch 3.2).
 * Here the value's bytes fill a vector stored on the output's lines, inline
 * in the loop, with an unaligned first and last store only where the run
 * starts or ends off a line (rewriting a few elements with the same bits;
 * each extra store is a store-buffer entry, and a row of 512 bytes is 8
 * stores on its lines): 3.3 us. Runs of a vector to DK_COPY_ON_LINES_MAX
 * bytes, and from DK_FILL_STREAM_MIN on in streaming stores (Note [Fills
 * past the caches]); between the two, the compiler's loop. Also with SSE2's
 * 16 bytes (x86-64 below AVX2), where the compiler's loop stored one vector
 * an iteration: fill_ of (512, 512) int16 at SSE4.2 took 7.8 us, NumPy's
 * 4.0. 1 when it filled, 0 when the caller must (no vectors, a short run,
 * an output not on its element size, where the pattern would not line up).
 */
static inline int dk_fill_on_lines(void *out, const void *v, size_t z, size_t n)
{
#if defined(DK_LINE_VEC_)
    char *o = (char *)out;
    const size_t bytes = n * z;
    const int stream = bytes >= DK_FILL_STREAM_MIN; /* Note [Fills past the caches] */
    if (bytes < DK_LINE_VEC_ || (bytes > DK_COPY_ON_LINES_MAX && !stream) || (uintptr_t)o % z)
        return 0;
    if (DK_LINE_VEC_ < 32 && z == 1) return 0; /* memset's wider stores beat 16 bytes */
    /* a broadcast of the value's own width: the bytes repeated over a
     * uint64_t first (gather_bits.h's dk_fill_every_other does that once a
     * run) put shifts before each row's first store: 512 rows of uint8 3.2
     * -> 3.5 us */
    dk_line_vec_ x;
    if (z == 1) {
        uint8_t b;
        memcpy(&b, v, 1);
        x = DK_LINE_SET1_(8, (char)b);
    } else if (z == 2) {
        uint16_t h;
        memcpy(&h, v, 2);
        x = DK_LINE_SET1_(16, (short)h);
    } else if (z == 4) {
        uint32_t w;
        memcpy(&w, v, 4);
        x = DK_LINE_SET1_(32, (int)w);
    } else if (z == 8) {
        uint64_t q;
        memcpy(&q, v, 8);
        x = DK_LINE_SET1_64_((long long)q);
    } else {
        return 0;
    }
    /* the head and tail stores only where the run is off a line: each store
     * is a store-buffer entry, and a row of 512 bytes is 8 on its lines */
    size_t i = (0 - (uintptr_t)o) % DK_LINE_VEC_;
    if (i) DK_LINE_STOREU_(o, x);
    if (stream) {
        for (; i + DK_LINE_VEC_ <= bytes; i += DK_LINE_VEC_) DK_LINE_STREAM_(o + i, x);
        if (i < bytes) DK_LINE_STOREU_(o + bytes - DK_LINE_VEC_, x);
        _mm_sfence(); /* the streamed stores ordered before whatever follows (a pool's join) */
        return 1;
    }
    for (; i + 4 * DK_LINE_VEC_ <= bytes; i += 4 * DK_LINE_VEC_) {
        DK_LINE_STORE_(o + i, x);
        DK_LINE_STORE_(o + i + DK_LINE_VEC_, x);
        DK_LINE_STORE_(o + i + 2 * DK_LINE_VEC_, x);
        DK_LINE_STORE_(o + i + 3 * DK_LINE_VEC_, x);
    }
    for (; i + DK_LINE_VEC_ <= bytes; i += DK_LINE_VEC_) DK_LINE_STORE_(o + i, x);
    if (i < bytes) DK_LINE_STOREU_(o + bytes - DK_LINE_VEC_, x);
    return 1;
#else
    (void)out, (void)v, (void)z, (void)n;
    return 0;
#endif
}

/* n copies of the element v (an lvalue of o's type) into the contiguous
 * output o: Note [Fills in vector stores], else the line-headed loop. */
#define DK_FILL_RUN(o, n, v)                                                              \
    do {                                                                                  \
        if (!dk_fill_on_lines((o), &(v), sizeof *(o), (size_t)(n)))                       \
            DK_LINE_HEADED(o, n, o[i] = v);                                               \
    } while (0)

#endif /* DISPATCH_KERNELS_LINE_HEAD_H_ */
