/* How many elements of a contiguous output come before its next line
 * boundary: Note [Stores on whole lines]. Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_LINE_HEAD_H_
#define DISPATCH_KERNELS_LINE_HEAD_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cpu_family.h"
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
 * memory 32 -> 23 us, float64 sub_ 43 -> 25. Inside L2 it shows too, as two
 * speeds by where the array starts: x.add_(1) in place on 256K int8 (AVX-512,
 * this Zen 4) took 2.9 us on arrays 32 bytes into a line and 4.0 on those
 * 16 bytes in (NumPy's own loop the same: 3.0 and 4.1-4.3), int16 5.4 and
 * 7.6; with loop_paths.h's unit-stride loops headed too, 2.7 and 5.1-5.3 on
 * every start.
 *
 * Note [A head pays on long runs]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The head runs one element at a time, up to align / z of them, and saves
 * a split store per line of the run: it pays where the run has at least as
 * many lines as the head can have elements (n * z / align >= align / z), and
 * at least 8 lines. A 2-D loop pays it on every row: x.add_(col) of
 * (512, 512) int8 16 bytes into a line, each row of 512 bytes a head of 48
 * elements, took 13.5 us against 5.1 with no head (torch 6.7), int16 rows
 * of 1 KiB the same way. So 1-byte outputs take a head from 4096 elements,
 * 2-byte ones from 1024, 4-byte ones from 256 (a float32 row of 512 is
 * headed, and that row stays below torch's time at every start).
 */
static inline intptr_t dk_line_head(const void *o, intptr_t z, intptr_t align, intptr_t n)
{
    /* Note [A head pays on long runs] */
    if (n * z < 8 * align || n * z < align * align / z || (uintptr_t)o % (uintptr_t)z) return 0;
    return (intptr_t)((0 - (uintptr_t)o) % (uintptr_t)align) / z;
}

/* The index i kept from the compiler's analysis (an empty asm that may
 * change it): a loop over it is neither vectorized nor unrolled. */
#if defined(__GNUC__) || defined(__clang__)
#define DK_OPAQUE_INDEX_(i) __asm__("" : "+r"(i))
#else
#define DK_OPAQUE_INDEX_(i) ((void)0)
#endif

/* The elements of a contiguous output `o` before its first 64-byte
 * boundary, one at a time: under a line, where the vectorizer's own loop,
 * prologue and epilogue for them made int_loops' objects 1.36x as large and
 * their compile about a third longer. Declares i, the index of the first
 * element left. */
#define DK_LINE_HEAD_(o, n, STMT)                                                         \
    const intptr_t h_ = dk_line_head((o), (intptr_t)sizeof *(o), 64, (n));                 \
    intptr_t i = 0;                                                                       \
    for (; i < h_; i++) {                                                                 \
        STMT;                                                                             \
        DK_OPAQUE_INDEX_(i);                                                              \
    }

/* Four vectors an iteration: gcc unrolls its vector loop by the GCC pragma.
 * Clang reads that pragma as an unroll count of the scalar loop, and with
 * it its vectorizer left int_arith's loops scalar (the clang build's int32
 * mul of (512, 512) 102 us against gcc's 32); its own pragma asks the
 * vectorizer for four vectors an iteration instead. */
#if defined(__clang__)
#define DK_UNROLL_4_ _Pragma("clang loop interleave_count(4)")
#else
#define DK_UNROLL_4_ _Pragma("GCC unroll 4")
#endif

/* for (i = 0; i < n; i++) STMT over an output `o` of contiguous elements, as
 * two loops: the elements before its first 64-byte boundary, then the rest
 * (the one the compiler vectorizes, four vectors an iteration: at SSE4.2
 * gcc's one-vector loop of int64 minimum, pcmpgtq + pblendvb, took 184-203
 * us on two (512, 512) tensors in every one of 4 processes and the unrolled
 * one 95-109, NumPy 92-107; AVX2's 91-101 unchanged). STMT names the index
 * `i`. */
#define DK_LINE_HEADED(o, n, STMT)                                                        \
    do {                                                                                  \
        DK_LINE_HEAD_(o, n, STMT)                                                         \
        DK_UNROLL_4_                                                                      \
        for (; i < (n); i++) STMT;                                                        \
    } while (0)

/* The same with the compiler's own loop after the head, not unrolled: for
 * loop_paths.h's many (loop, dtype, layout) loops, where the unroll (and a
 * vectorized head) made int_loops' objects 1.57x as large. */
#define DK_LINE_HEADED_ROLLED(o, n, STMT)                                                 \
    do {                                                                                  \
        DK_LINE_HEAD_(o, n, STMT)                                                         \
        for (; i < (n); i++) STMT;                                                        \
    } while (0)

/* The widest integer vector of the target, for the copies and fills below. */
#if defined(__AVX512F__)
#define DK_LINE_VEC_ 64
typedef __m512i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm512_storeu_si512((void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm512_store_si512((void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm512_stream_si512((void *)(p), v)
#define DK_STREAM_FENCE_() _mm_sfence()
#define DK_LINE_LOADU_(p) _mm512_loadu_si512((const void *)(p))
#define DK_LINE_SET1_(w, x) _mm512_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm512_set1_epi64(x)
#elif defined(__AVX2__)
#define DK_LINE_VEC_ 32
typedef __m256i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm256_store_si256((__m256i *)(void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm256_stream_si256((__m256i *)(void *)(p), v)
#define DK_STREAM_FENCE_() _mm_sfence()
#define DK_LINE_LOADU_(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define DK_LINE_SET1_(w, x) _mm256_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm256_set1_epi64x(x)
#elif defined(__SSE2__)
/* fills, and copies that stream (below 32-byte vectors dk_copy_on_lines
 * leaves the others to memcpy) */
#define DK_LINE_VEC_ 16
typedef __m128i dk_line_vec_;
#define DK_LINE_STOREU_(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define DK_LINE_STORE_(p, v) _mm_store_si128((__m128i *)(void *)(p), v)
#define DK_LINE_STREAM_(p, v) _mm_stream_si128((__m128i *)(void *)(p), v)
#define DK_STREAM_FENCE_() _mm_sfence()
#define DK_LINE_LOADU_(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define DK_LINE_SET1_(w, x) _mm_set1_epi##w(x)
#define DK_LINE_SET1_64_(x) _mm_set1_epi64x(x)
#else
#define DK_STREAM_FENCE_() ((void)0)
#endif
/*
 * Note [Stores past the caches]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * An output of more bytes than a core's share of the last-level cache ends
 * in memory whatever a loop does, and a plain store first reads the line it
 * writes: half a fill's traffic, a third of a copy's, is loads nobody uses.
 * Non-temporal (streaming) stores write whole lines without reading them.
 * On a 2-vCPU AMD EPYC VM (AVX2), a C loop filling 128 MiB took 14-17 ms
 * with stores, 7.1-7.3 with streaming ones, glibc's memset 8-9; a copy of
 * 128 MiB 23-30 ms through glibc's memcpy (plain stores at that size
 * there), 16-19 streamed. So fill_, copy_ (contiguous, of a row or a column
 * into a matrix, of one value), clone and contiguous() stream where one
 * call of their loop writes DK_STREAM_MIN bytes or more (a 2-D loop's rows
 * all together: a matrix copied row by row streams as one run would; a
 * thread's part of a split output counts alone): 16M elements, 1 thread,
 * x.fill_(v) of int64 12.1-14.2 -> 6.4-7.3 ms (NumPy 12.5-14.1),
 * x.copy_(y) of int64 21-25 -> 11-13, a row copied into every row of int64
 * 13.5-15.3 -> 6.4-6.9. Below the threshold the plain stores stay: a
 * result that fits a cache is read from it next, and streamed lines would
 * have left it. The threshold is a fixed size by CPU family, not this
 * machine's cache size (a VM's reported L3 is not its share of it: a 2-vCPU
 * Zen 4 VM's glibc reports 320 MiB, the whole socket's, where its core
 * shares 32 MiB): DK_STREAM_MIN, 16 MiB, past every core's share on the x86
 * CPUs at hand when it was chosen (on a 2-vCPU AVX2 EPYC, 16 MiB of uint8
 * written again and again from a column took 0.64-1.8 ms in plain stores
 * between processes, as much of it stayed in the L3 or not, 0.78-0.87
 * streamed). A loop that reads as much as it writes (a copy, a cast of one
 * width, a row copied into every row, which copies the output's own blocks)
 * streams from there on every CPU; a fill (fill_, and a copy of one value
 * or of a column into a matrix, each row one value) streams from
 * DK_FILL_STREAM_MIN_ZEN3, 64 MiB, on AMD's family 0x19 (Zen 4 measured;
 * Zen 3 not, with the same 32 MiB of L3 a core complex; Zen 5, also 32 MiB,
 * keeps 16 until measured). On a 2-vCPU Zen 4, 1 thread, 16M elements
 * (docs/performance.md, Round 31): fill_ of uint8 618-628 -> 223-232 us
 * (torch 238-591), of int16/float16/bfloat16 1229-1242 -> 878-901, a copy_
 * of one value alike, where contiguous copies of 16 and 32 MiB took 1.3-1.6x
 * as long in plain stores and a row into every row 1.2-1.4x: they keep 16.
 * Plain fills (torch's loop) against our streamed ones there: 0.58 against
 * 0.90 ms at 24 MiB, 0.82 against 1.19 at 32, 1.51 against 1.80 at 48, 2.41
 * against 2.39 at 64 and 5.63 against 4.81 at 128.
 * Within a streamed call runs from DK_STREAM_RUN_MIN bytes stream, whole
 * lines only (DK_STREAM_LINES_). The loop orders its streamed stores by one
 * fence at its end (DK_STREAM_FENCE_), before a pool's join hands the
 * output on.
 */
#define DK_STREAM_MIN ((size_t)16 << 20)
#define DK_FILL_STREAM_MIN_ZEN3 ((size_t)64 << 20)
#define DK_STREAM_RUN_MIN ((size_t)4096)

/* The bytes from which a call streams on a CPU of this AMD family (0: any
 * other CPU), for a loop that reads a run as long as it writes or not (a
 * fill): Note [Stores past the caches]. */
static inline size_t dk_stream_min(unsigned amd_family, int reads)
{
    return !reads && amd_family == 0x19 ? DK_FILL_STREAM_MIN_ZEN3 : DK_STREAM_MIN;
}

/* Whether a call of a loop writing `bytes` streams (Note [Stores past the
 * caches]); never on targets without the vector stores below. */
static inline int dk_streams(size_t bytes, int reads)
{
#if defined(DK_LINE_VEC_)
    return bytes >= dk_stream_min(dk_this_amd_family(), reads);
#else
    (void)bytes, (void)reads;
    return 0;
#endif
}

#if defined(DK_LINE_VEC_)
/* The streamed run of `bytes` at o (Note [Stores past the caches]): whole
 * 64-byte lines in streaming stores, LINE(o, i, SRC) storing the one at
 * offset i, and the partial lines at either end by memcpy: from `head` (the
 * run's first bytes) and from the bytes that end at `tail_end`. A line
 * written by plain stores and streamed too loses the stream's whole-line
 * write: a copy_ of a uint8 column into 4096 rows of 4 KiB, each starting
 * 16 bytes into a line, took 3.3 ms with a plain vector at each row's
 * start and end beside the streamed ones, 0.64-1.8 in plain stores alone,
 * 0.78-0.87 streamed on whole lines. */
#define DK_STREAM_LINES_(o, bytes, head, tail_end, LINE, SRC)                           \
    do {                                                                                \
        const size_t h_ = (0 - (uintptr_t)(o)) % 64, e_ = h_ + ((bytes) - h_) / 64 * 64; \
        memcpy((o), (head), h_);                                                        \
        for (size_t i_ = h_; i_ < e_; i_ += 64) LINE(o, i_, SRC);                       \
        memcpy((o) + e_, (tail_end) - ((bytes) - e_), (bytes) - e_);                    \
    } while (0)
/* a line of a copy from a, of a fill of the vector x */
#define DK_STREAM_COPY_LINE_(o, i, a)                                                   \
    do {                                                                                \
        for (size_t k_ = 0; k_ < 64; k_ += DK_LINE_VEC_)                                \
            DK_LINE_STREAM_((o) + (i) + k_, DK_LINE_LOADU_((a) + (i) + k_));             \
    } while (0)
#define DK_STREAM_FILL_LINE_(o, i, x)                                                   \
    do {                                                                                \
        for (size_t k_ = 0; k_ < 64; k_ += DK_LINE_VEC_) DK_LINE_STREAM_((o) + (i) + k_, x); \
    } while (0)
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
 * 1 MiB, an L2's worth (past that memcpy's own choices stand: no gain
 * measured at 2 MiB); below it memcpy loads the whole run before it stores
 * (rows of 512 uint8 this way: 3.8 us, memcpy's 3.2). With `stream`
 * (dk_streams of the call's bytes) runs of DK_STREAM_RUN_MIN or more go to
 * streaming stores, SSE2's 16 bytes too (Note [Stores past the caches]; the
 * caller fences). 1 when it copied, 0 when the caller must. */
#define DK_COPY_ON_LINES_MAX (1024 * 1024)
static inline int dk_copy_on_lines(char *o, const char *a, size_t bytes, int stream)
{
#if defined(DK_LINE_VEC_)
    enum { V = DK_LINE_VEC_ };
    if (o < a + bytes && a < o + bytes) return 0;
    if (stream && bytes >= DK_STREAM_RUN_MIN) {
        DK_STREAM_LINES_(o, bytes, a, a + bytes, DK_STREAM_COPY_LINE_, a);
        return 1;
    }
    if (V < 32 || bytes < 1024 || bytes > DK_COPY_ON_LINES_MAX) return 0;
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
    (void)o, (void)a, (void)bytes, (void)stream;
    return 0;
#endif
}

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
 * bytes, and with `stream` (dk_streams of the call's bytes) runs of
 * DK_STREAM_RUN_MIN or more in streaming stores (Note [Stores past the
 * caches]; the caller fences); otherwise the compiler's loop. Also with SSE2's
 * 16 bytes (x86-64 below AVX2), where the compiler's loop stored one vector
 * an iteration: fill_ of (512, 512) int16 at SSE4.2 took 7.8 us, NumPy's
 * 4.0. 1 when it filled, 0 when the caller must (no vectors, a short run,
 * an output not on its element size, where the pattern would not line up).
 */
static inline int dk_fill_on_lines(void *out, const void *v, size_t z, size_t n, int stream)
{
#if defined(DK_LINE_VEC_)
    char *o = (char *)out;
    const size_t bytes = n * z;
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
    if (stream && bytes >= DK_STREAM_RUN_MIN) {
        char line[64]; /* the pattern, for the partial lines at the ends (each
                        * starts on an element, and 64 bytes hold whole ones) */
        for (size_t k = 0; k < 64; k += DK_LINE_VEC_) DK_LINE_STOREU_(line + k, x);
        DK_STREAM_LINES_(o, bytes, line, line + 64, DK_STREAM_FILL_LINE_, x);
        return 1;
    }
    size_t i = (0 - (uintptr_t)o) % DK_LINE_VEC_;
    if (i) DK_LINE_STOREU_(o, x);
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
    (void)out, (void)v, (void)z, (void)n, (void)stream;
    return 0;
#endif
}

/* n copies of the element v (an lvalue of o's type) into the contiguous
 * output o: Note [Fills in vector stores], else the line-headed loop;
 * streamed where `stream` (the caller fences). */
#define DK_FILL_RUN(o, n, v, stream)                                                      \
    do {                                                                                  \
        if (!dk_fill_on_lines((o), &(v), sizeof *(o), (size_t)(n), (stream)))             \
            DK_LINE_HEADED(o, n, o[i] = v);                                               \
    } while (0)

#endif /* DISPATCH_KERNELS_LINE_HEAD_H_ */
