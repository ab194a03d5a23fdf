/*@targets baseline sse42 (avx2 fma3) avx512_skx sve rvv */
/*
 * The integer and bool reductions (Note [Integer reductions] below): sum,
 * prod, max and min for the reduction engine, plain C loops the compiler
 * vectorizes under each target's flags. A source of their own, apart from
 * int_arith.dispatch.c's elementwise loops, because the two want different
 * code placement: the elementwise loops are short and start on a 32-byte
 * fetch block (Note [Loops on a fetch window] in meson.build), the column
 * blocks here are long and ran slower padded that way (int64 sum(dim=0) of
 * (512, 512): 27 -> 39 us). An AVX-512 target of 256-bit vectors: Note
 * [Integer reductions on AVX-512].
 */
/*
 * Note [Integer reductions on AVX-512]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Unlike the elementwise loops (Note [Streaming arithmetic stops at AVX2]
 * in arith.dispatch.c), a reduction reads one stream and writes nothing,
 * and AVX-512 brings the instructions AVX2 lacks for 8-byte lanes: vpmaxsq
 * and vpminsq (AVX2 compares and blends, two operations for one) and
 * vpmullq (AVX2 builds a 64-bit product from three 32-bit multiplies). The
 * same plain C, compiled with them, on a Zen 4 at 1 thread, (512, 512)
 * in bench_matrix.py: every integer prod 42-76 -> 19-34 us, int64
 * amax(dim=0) 32 -> 26 (NumPy 40), int32 sum(dim=1) 22 -> 19. At 512-bit
 * width the same loops held half the independent vectors and spent more
 * on each row's horizontal fold: 1- and 2-byte max/min over a dim took
 * 1.1-1.6x their AVX2 time, bool's over dim 1 of every other column 1.7x.
 * So GCC is told to prefer 256-bit vectors here (the EVEX instructions
 * above on ymm registers): over sum, prod, amax, amin, max and min of every
 * integer dtype and layout of bench_matrix.py, ours/before 0.87 at 1
 * thread and 0.85 at 2. Clang has no such pragma or attribute and keeps
 * its 512-bit vectors: its build's variant took 0.90 of its own AVX2
 * variant's time over those rows (Note [Clang gathers the lanes] first),
 * and -mprefer-vector-width=256 for this source moved that to 0.90 as well
 * (some rows faster, as many slower), so it is not set. Exact, so no bit
 * changes.
 */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("prefer-vector-width=256")
#endif
#include <stdint.h>
#include <string.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/dtype.h"
#include "kernels_export.h"

/*
 * Note [Integer reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * sum, max and min of bool and the integer types, for the reduction engine
 * (reduce_integer.c hands a matrix over in one call, or the strided engine's inner
 * runs one at a time): op 0 sums into int64 wrapping (in uint64, never
 * undefined behaviour), as torch's and NumPy's int64 sums, into int64
 * accumulators; 8 and 16-bit inputs add in int32 lanes a bounded block at
 * a time first (4x the lanes of int64); 3 multiplies into int64 wrapping
 * alike (prod: a product modulo 2^64 is the same in any order, so it takes
 * independent lanes and any split between threads, where the float
 * products keep Note [Product order]); 1 max, 2 min, into accumulators of
 * the input's own type (32 int8 lanes on AVX2). acc_step 0 folds a run
 * into one accumulator (the reduced dim is the inner one); otherwise
 * element i goes to the accumulator acc_step bytes further (an outer-dim
 * reduction), and the rows of a matrix over dim 0 go in column blocks held
 * in registers down leaves of rows. The loops are plain unit-stride C the
 * compiler vectorizes under each target's flags; integer results are
 * exact, so every target gives the same bits. Before: the engine converted
 * every element to int64 and branched per element (1.1-1.5 ms for 1M).
 */
/*
 * Note [Clang gathers the lanes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The loops below hold K lanes in a fixed-count inner loop (m[k] for
 * k < K) inside a loop over the run or the rows. Clang unrolls the inner
 * loop whole, then vectorizes the outer one: lane k of consecutive
 * iterations is K elements apart, so every load becomes a gather. Its
 * AVX2 cost model declines that; its AVX-512 one takes it (a clang 14
 * build's AVX512_SKX variant held 1096 vpgather, int32 amax() 2.4x and
 * every-other-element int32/int64 sums and extremes 2.5-3x its own AVX2
 * variant's time). INT_LANES_LOOP marks such outer loops not to be
 * vectorized under AVX-512, so the unrolled lanes become whole-vector
 * loads and operations (SLP), as under gcc: int32 amax() of 256K 100 ->
 * 11.6 us. Not under the other targets, where clang's outer loop, when
 * it takes it, reads by shuffles, not gathers (the pragma on its AVX2
 * variant cost max/min and sums of int32 1.3-1.5x). It changes which
 * instructions, not which values: integer results are exact.
 */
#if defined(__clang__) && defined(__AVX512F__)
#define INT_LANES_LOOP _Pragma("clang loop vectorize(disable)")
#else
#define INT_LANES_LOOP
#endif

/*
 * Note [Plain reductions under clang]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Clang (14) keeps the lane arrays of the sums and products below (s[k]
 * for k < KS, a chain each, carried through the loop) as scalars and does
 * not pack them into vectors: one load and one add a lane, where gcc
 * packs them whole; its builds took 2.8-4x gcc's time on int32 and int64
 * sum() and prod() and 3x on the max and min of every other int32. Clang
 * vectorizes the plain loop, one accumulator carried through it, as a
 * reduction of its own (vector accumulators, interleaved), so under clang
 * those runs take the plain loop. Integer results are exact (sums and
 * products modulo 2^64): the same values in any grouping.
 */
#if defined(__clang__)
#define INT_PLAIN 1
#else
#define INT_PLAIN 0
#endif

/* Ops 0 (sum) and 3 (product) accumulate in int64; max and min in T. */
#define INT_WIDE(op) ((op) == 0 || (op) == 3)

/*
 * Note [Bool extremes stop early]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max of bool is True once any element is, min False once any is: a run
 * of bool is folded a block of BOOL_BLOCK elements at a time, and the fold
 * stops at the first block that settles it (NumPy's stops at the first
 * True: its max of 256K random bools took 1.0 us, ours 3 reading them all).
 * The block's own fold has no early exit, so it stays vectorized. The value
 * is the same as the whole fold's: any later element could only keep it.
 */
#define BOOL_BLOCK 4096
#define INT_IS_BOOL_BOOL 1
#define INT_IS_BOOL_INT 0

/*
 * Note [Every other integer]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A run of elements two apart (a row of x[:, ::2]) folded into one
 * accumulator: sum, max or min. The loads of a[2 * i] in lanes are plain C
 * with a constant step, which the compiler vectorizes by loads and
 * shuffles (a variable step gave it only gathers, or one element at a
 * time: the 0.6 ns an element of the loop below, so such views were first
 * copied dense, int64 amax() of a (512, 1024) matrix's every other column
 * 89 us against NumPy's 48). bool's max and min stop early as the
 * contiguous run's (Note [Bool extremes stop early]). Exact, so the lanes
 * change no bit.
 */
/* Max (CMP >) or min (<) of a[2 * i] into the KM lanes m, then r; LOOP:
 * INT_LANES_LOOP or nothing (Note [Clang gathers the lanes]). */
#define INT_EVEN_EXT_LANES(LOOP, CMP)                                                    \
    LOOP for (; i + KM <= n; i += KM)                                                    \
        for (int k = 0; k < KM; k++)                                                     \
            m[k] = a[2 * (i + k)] CMP m[k] ? a[2 * (i + k)] : m[k];                      \
    for (; i < n; i++) m[0] = a[2 * i] CMP m[0] ? a[2 * i] : m[0];                       \
    for (int k = 0; k < KM; k++) r = m[k] CMP r ? m[k] : r;

#define INT_REDUCE_EVEN_T(SFX, T, CAT)                                                   \
    static void reduce_even_##SFX(int op, const T *a, intptr_t n, char *acc)             \
    {                                                                                    \
        enum { KS = 16, KM = 64 / sizeof(T) };                                           \
        intptr_t i = 0;                                                                  \
        if (op == 0 && INT_PLAIN) { /* Note [Plain reductions under clang] */           \
            uint64_t t;                                                                  \
            memcpy(&t, acc, sizeof t);                                                   \
            for (; i < n; i++) t += (uint64_t)(int64_t)a[2 * i];                         \
            memcpy(acc, &t, sizeof t);                                                   \
            return;                                                                      \
        }                                                                                \
        if (op == 0) {                                                                   \
            uint64_t s[KS] = {0}, t;                                                     \
            INT_LANES_LOOP for (; i + KS <= n; i += KS)                                  \
                for (int k = 0; k < KS; k++) s[k] += (uint64_t)(int64_t)a[2 * (i + k)];  \
            memcpy(&t, acc, sizeof t);                                                   \
            for (int k = 0; k < KS; k++) t += s[k];                                      \
            for (; i < n; i++) t += (uint64_t)(int64_t)a[2 * i];                         \
            memcpy(acc, &t, sizeof t);                                                   \
            return;                                                                      \
        }                                                                                \
        T r;                                                                             \
        memcpy(&r, acc, sizeof r);                                                       \
        if (INT_IS_BOOL_##CAT) { /* Note [Bool extremes stop early] */                   \
            for (; i < n && (op == 1 ? r == 0 : r != 0); i += BOOL_BLOCK) {              \
                const intptr_t end = n - i < BOOL_BLOCK ? n : i + BOOL_BLOCK;            \
                T m = r;                                                                 \
                if (op == 1)                                                             \
                    for (intptr_t j = i; j < end; j++) m = a[2 * j] > m ? a[2 * j] : m;  \
                else                                                                     \
                    for (intptr_t j = i; j < end; j++) m = a[2 * j] < m ? a[2 * j] : m;  \
                r = m;                                                                   \
            }                                                                            \
            memcpy(acc, &r, sizeof r);                                                   \
            return;                                                                      \
        }                                                                                \
        /* lanes from a constant, as the contiguous run's (a store forward) */           \
        const T lowest = DISPATCH_INT_IS_SIGNED(T) ? (T)((uint64_t)1 << (8 * sizeof(T) - 1)) : (T)0; \
        _Alignas(64) T m[KM];                                                            \
        for (int k = 0; k < KM; k++) m[k] = op == 1 ? lowest : (T)~lowest;               \
        /* 1 and 2 bytes have no gathers: clang's vectorized outer loop    \
         * (pairs of vectors shuffled) is its faster form for them */        \
        if (sizeof(T) <= 2 && op == 1) {                                                 \
            INT_EVEN_EXT_LANES(, >)                                                      \
        } else if (sizeof(T) <= 2) {                                                     \
            INT_EVEN_EXT_LANES(, <)                                                      \
        } else if (INT_PLAIN && op == 1) { /* Note [Plain reductions under clang] */     \
            for (; i < n; i++) r = a[2 * i] > r ? a[2 * i] : r;                          \
        } else if (INT_PLAIN) {                                                          \
            for (; i < n; i++) r = a[2 * i] < r ? a[2 * i] : r;                          \
        } else if (op == 1) {                                                            \
            INT_EVEN_EXT_LANES(INT_LANES_LOOP, >)                                        \
        } else {                                                                         \
            INT_EVEN_EXT_LANES(INT_LANES_LOOP, <)                                        \
        }                                                                                \
        memcpy(acc, &r, sizeof r);                                                       \
    }

#define INT_REDUCE_T(SFX, T, CAT)                                                        \
    INT_REDUCE_EVEN_T(SFX, T, CAT)                                                       \
    static void reduce_##SFX(int op, const char *p, intptr_t step, intptr_t n, char *acc, \
                             intptr_t acc_step)                                         \
    {                                                                                    \
        const intptr_t sz = (intptr_t)sizeof(T);                                         \
        if (n <= 0) return;                                                              \
        if (INT_IS_BOOL_##CAT && (op == 1 || op == 2) && acc_step == 0 && step == sz) {  \
            const T *a = (const T *)(const void *)p; /* Note [Bool extremes stop early] */ \
            T r;                                                                         \
            memcpy(&r, acc, sizeof r);                                                   \
            for (intptr_t i = 0; i < n && (op == 1 ? r == 0 : r != 0); i += BOOL_BLOCK) { \
                const intptr_t end = n - i < BOOL_BLOCK ? n : i + BOOL_BLOCK;            \
                T m = r;                                                                 \
                if (op == 1)                                                             \
                    for (intptr_t j = i; j < end; j++) m = a[j] > m ? a[j] : m;          \
                else                                                                     \
                    for (intptr_t j = i; j < end; j++) m = a[j] < m ? a[j] : m;          \
                r = m;                                                                   \
            }                                                                            \
            memcpy(acc, &r, sizeof r);                                                   \
            return;                                                                      \
        }                                                                                \
        if (acc_step == 0 && step == sz) {                                               \
            const T *a = (const T *)(const void *)p;                                     \
            /* K independent lanes (four vectors on AVX2): no one dependency  \
             * chain through the loop; then the lanes, then the tail. */            \
            enum { KS = 16, KM = 128 / sizeof(T) };                                      \
            intptr_t i = 0;                                                              \
            if (op == 0 && sizeof(T) <= 2) {                                             \
                /* 8 and 16-bit: blocks of 2^16 summed in int32 lanes (a lane   \
                 * holds at most 2^16 * 2^15 = 2^31 in magnitude), then int64. */   \
                enum { K32 = 32, BLOCK = 1 << 16 };                                      \
                uint64_t t;                                                              \
                memcpy(&t, acc, sizeof t);                                               \
                while (i < n) {                                                          \
                    const intptr_t end = n - i < BLOCK ? n : i + BLOCK;                  \
                    int32_t s32[K32] = {0};                                              \
                    INT_LANES_LOOP for (; i + K32 <= end; i += K32)                      \
                        for (int k = 0; k < K32; k++) s32[k] += (int32_t)a[i + k];       \
                    for (; i < end; i++) s32[0] += (int32_t)a[i];                        \
                    for (int k = 0; k < K32; k++) t += (uint64_t)(int64_t)s32[k];        \
                }                                                                        \
                memcpy(acc, &t, sizeof t);                                               \
                return;                                                                  \
            }                                                                            \
            if ((op == 0 || op == 3) && INT_PLAIN) { /* Note [Plain reductions under clang] */ \
                uint64_t t;                                                              \
                memcpy(&t, acc, sizeof t);                                               \
                if (op == 0)                                                             \
                    for (; i < n; i++) t += (uint64_t)(int64_t)a[i];                     \
                else                                                                     \
                    for (; i < n; i++) t *= (uint64_t)(int64_t)a[i];                     \
                memcpy(acc, &t, sizeof t);                                               \
                return;                                                                  \
            }                                                                            \
            if (op == 0) {                                                               \
                uint64_t s[KS] = {0}, t, a0;                                             \
                INT_LANES_LOOP for (; i + KS <= n; i += KS)                              \
                    for (int k = 0; k < KS; k++) s[k] += (uint64_t)(int64_t)a[i + k];    \
                memcpy(&t, acc, sizeof t);                                               \
                for (int k = 0; k < KS; k++) t += s[k];                                  \
                for (; i < n; i++) t += (uint64_t)(int64_t)a[i];                         \
                a0 = t;                                                                  \
                memcpy(acc, &a0, sizeof a0);                                             \
                return;                                                                  \
            }                                                                            \
            if (op == 3) { /* KP lanes: a multiply's latency spread over them */    \
                enum { KP = 32 };                                                        \
                uint64_t s[KP], t;                                                       \
                for (int k = 0; k < KP; k++) s[k] = 1;                                   \
                INT_LANES_LOOP for (; i + KP <= n; i += KP)                              \
                    for (int k = 0; k < KP; k++) s[k] *= (uint64_t)(int64_t)a[i + k];    \
                memcpy(&t, acc, sizeof t);                                               \
                for (int k = 0; k < KP; k++) t *= s[k];                                  \
                for (; i < n; i++) t *= (uint64_t)(int64_t)a[i];                         \
                memcpy(acc, &t, sizeof t);                                               \
                return;                                                                  \
            }                                                                            \
            /* The lanes start from a constant (the type's lowest value for   \
             * max, highest for min), not r broadcast nor the row's first      \
             * elements copied: gcc wrote those in 16-byte halves and reloaded \
             * them as 32-byte vectors, a failed store forward costing a       \
             * quarter of amax(dim=1) of (2048, 512) int8 (perf annotate). */   \
            const T lowest = DISPATCH_INT_IS_SIGNED(T) ? (T)((uint64_t)1 << (8 * sizeof(T) - 1)) : (T)0; \
            _Alignas(64) T m[KM];                                                        \
            T r;                                                                         \
            memcpy(&r, acc, sizeof r);                                                   \
            if (n >= KM) {                                                               \
                /* The tail is one more block ending at n: max and min take   \
                 * an element twice alike (a scalar tail of up to 127 int8    \
                 * per row cost amax(dim=1) of (2048, 500) 3x its time). */    \
                if (op == 1) {                                                           \
                    for (int k = 0; k < KM; k++) m[k] = lowest;                          \
                    INT_LANES_LOOP for (; i + KM <= n; i += KM)                          \
                        for (int k = 0; k < KM; k++) m[k] = a[i + k] > m[k] ? a[i + k] : m[k]; \
                    if (i < n)                                                           \
                        for (int k = 0; k < KM; k++)                                     \
                            m[k] = a[n - KM + k] > m[k] ? a[n - KM + k] : m[k];          \
                    for (int k = 0; k < KM; k++) r = m[k] > r ? m[k] : r;                \
                } else {                                                                 \
                    for (int k = 0; k < KM; k++) m[k] = (T)~lowest;                      \
                    INT_LANES_LOOP for (; i + KM <= n; i += KM)                          \
                        for (int k = 0; k < KM; k++) m[k] = a[i + k] < m[k] ? a[i + k] : m[k]; \
                    if (i < n)                                                           \
                        for (int k = 0; k < KM; k++)                                     \
                            m[k] = a[n - KM + k] < m[k] ? a[n - KM + k] : m[k];          \
                    for (int k = 0; k < KM; k++) r = m[k] < r ? m[k] : r;                \
                }                                                                        \
                i = n;                                                                   \
            }                                                                            \
            if (op == 1)                                                                 \
                for (; i < n; i++) r = a[i] > r ? a[i] : r;                              \
            else                                                                         \
                for (; i < n; i++) r = a[i] < r ? a[i] : r;                              \
            memcpy(acc, &r, sizeof r);                                                   \
            return;                                                                      \
        }                                                                                \
        if (acc_step == 0 && step == 2 * sz && op != 3) {                                \
            reduce_even_##SFX(op, (const T *)(const void *)p, n, acc);                   \
            return;                                                                      \
        }                                                                                \
        if (step == sz && acc_step == (INT_WIDE(op) ? 8 : sz)) { /* one row of columns */ \
            cols_##SFX(op, 0, p, 0, 1, n, acc);                                          \
            return;                                                                      \
        }                                                                                \
        for (intptr_t i = 0; i < n; i++) { /* any other strides */                      \
            T x;                                                                         \
            memcpy(&x, p + i * step, sizeof x);                                          \
            char *slot = acc + i * acc_step;                                             \
            if (INT_WIDE(op)) {                                                          \
                uint64_t a;                                                              \
                memcpy(&a, slot, sizeof a);                                              \
                a = op == 0 ? a + (uint64_t)(int64_t)x : a * (uint64_t)(int64_t)x;       \
                memcpy(slot, &a, sizeof a);                                              \
            } else {                                                                     \
                T a;                                                                     \
                memcpy(&a, slot, sizeof a);                                              \
                if (op == 1 ? x > a : x < a) memcpy(slot, &x, sizeof x);                 \
            }                                                                            \
        }                                                                                \
    }
/* Max (op 1) or min of K columns at ac + c held in registers down the rows
 * [r0, r1) of a leaf (q: row r0), while K columns remain. */
#define INT_COLS_EXT_BLOCK(T, K)                                                         \
    for (; c + (K) <= ncols; c += (K)) {                                                 \
        T m[K];                                                                          \
        memcpy(m, ac + c, sizeof m);                                                     \
        INT_LANES_LOOP for (intptr_t r = r0; r < r1; r++) {                              \
            const T *a = (const T *)(const void *)(q + (r - r0) * rstride) + c;          \
            if (op == 1)                                                                 \
                for (int k = 0; k < (K); k++) m[k] = a[k] > m[k] ? a[k] : m[k];          \
            else                                                                         \
                for (int k = 0; k < (K); k++) m[k] = a[k] < m[k] ? a[k] : m[k];          \
        }                                                                                \
        memcpy(ac + c, m, sizeof m);                                                     \
    }

/* Sum (STEP +=) or product (*=) in uint64 of the columns c.. of a leaf of
 * rows [r0, r1) (q: row r0) into their int64 accumulators ac: CS columns
 * held in registers down the leaf, then one column at a time. */
#define INT_COLS_WIDE_LEAF(T, STEP)                                                      \
    uint64_t *ac = (uint64_t *)(void *)acc;                                              \
    for (; c + CS <= ncols; c += CS) {                                                   \
        uint64_t s[CS];                                                                  \
        memcpy(s, ac + c, sizeof s);                                                     \
        INT_LANES_LOOP for (intptr_t r = r0; r < r1; r++) {                              \
            const T *a = (const T *)(const void *)(q + (r - r0) * rstride) + c;          \
            for (int k = 0; k < CS; k++) s[k] STEP (uint64_t)(int64_t)a[k];              \
        }                                                                                \
        memcpy(ac + c, s, sizeof s);                                                     \
    }                                                                                    \
    for (; c < ncols; c++)                                                               \
        INT_LANES_LOOP for (intptr_t r = r0; r < r1; r++)                                \
            ac[c] STEP (uint64_t)(int64_t)((const T *)(const void *)(q + (r - r0) * rstride))[c];

/* a[k] = max (op 1) or min of a[k] and x[k], k < w: one row folded whole. */
#define INT_EXT_ROW(op, a, x, w)                                                         \
    if ((op) == 1)                                                                       \
        for (intptr_t k = 0; k < (w); k++) (a)[k] = (x)[k] > (a)[k] ? (x)[k] : (a)[k];    \
    else                                                                                 \
        for (intptr_t k = 0; k < (w); k++) (a)[k] = (x)[k] < (a)[k] ? (x)[k] : (a)[k];

/*
 * Note [Wide integer rows]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * Columns held in registers down a leaf read 128 bytes of each of 32 rows
 * in turn: rows of 2 or 4 KB (512 int32 or int64 columns) put every read
 * of a leaf in the same few L1 sets, and amin(dim=0) of (512, 512) int64
 * took 70 us, NumPy's row-by-row minimum 38. Rows of 4- and 8-byte
 * elements with 64 columns or more are folded across all the columns into
 * their accumulators (in L1, read in address order): 40 us. Four rows at a
 * time, one pass over the accumulators for the four: a row at a time
 * loaded and stored every accumulator once per row, and on an Intel Xeon
 * (AVX-512, int_reduce's AVX2 variant then) that bound the loop: (512, 512) at 1
 * thread, int32 amax(dim=0) 51 -> 31 us (torch 37), sum(dim=0) 84 -> 56,
 * int64 amax 158 -> 119, sum 125 -> 86 (torch 93); 2 threads, int64 sum
 * 98 -> 40. Integer results are exact (sums and products wrap modulo 2^64
 * in any order), so the grouping changes no bits. From memory (an input
 * the engine streams, DISPATCH_COLS_STREAMS, whose rows span INT_ONE_ROW_MIN
 * bytes or more: past a 32 MiB L3) 4-byte rows go one at a time instead:
 * four rows a pass read four streams 2 KB apart, which a Zen 4 core served
 * at 15 GB/s where one row a pass (NumPy's form) reads at 22. int32 over
 * dim 0, 1 thread: (32768, 512) amin 4.7 -> 1.8 ms, prod 6.3 -> 3.4 (NumPy's
 * amin 2.7); (65536, 512) amin 8.8 -> 4.8 (NumPy 4.4-4.8); (16384, 512)
 * amin 1.9-2.0 -> 1.1-1.3. In the cache the four stay faster ((8192, 512),
 * 16 MiB: amin 0.37 against 0.51-0.63 one row at a time), and so do 8-byte
 * rows (a C harness over (32768, 512) int64, sum: 6.6 ms against 8.1).
 */
#define INT_ONE_ROW_MIN ((intptr_t)32 << 20)
#define INT_COLS_BY_ROWS(T)                                                              \
    intptr_t r = r0;                                                                     \
    const int one_row = streams && sizeof(T) == 4 && nrows * rstride >= INT_ONE_ROW_MIN; \
    for (; !one_row && r + 4 <= r1; r += 4) { /* four rows per pass over the accumulators */ \
        const T *a0 = (const T *)(const void *)(q + (r - r0) * rstride);                 \
        const T *a1 = (const T *)(const void *)(q + (r + 1 - r0) * rstride);             \
        const T *a2 = (const T *)(const void *)(q + (r + 2 - r0) * rstride);             \
        const T *a3 = (const T *)(const void *)(q + (r + 3 - r0) * rstride);             \
        if (op == 0 || op == 3) {                                                        \
            uint64_t *ac = (uint64_t *)(void *)acc;                                      \
            if (op == 0)                                                                 \
                for (intptr_t k = 0; k < ncols; k++)                                     \
                    ac[k] += ((uint64_t)(int64_t)a0[k] + (uint64_t)(int64_t)a1[k]) +     \
                             ((uint64_t)(int64_t)a2[k] + (uint64_t)(int64_t)a3[k]);      \
            else                                                                         \
                for (intptr_t k = 0; k < ncols; k++)                                     \
                    ac[k] *= ((uint64_t)(int64_t)a0[k] * (uint64_t)(int64_t)a1[k]) *     \
                             ((uint64_t)(int64_t)a2[k] * (uint64_t)(int64_t)a3[k]);      \
        } else {                                                                         \
            T *ac = (T *)(void *)acc;                                                    \
            if (op == 1)                                                                 \
                for (intptr_t k = 0; k < ncols; k++) {                                   \
                    const T m01 = a1[k] > a0[k] ? a1[k] : a0[k];                         \
                    const T m23 = a3[k] > a2[k] ? a3[k] : a2[k];                         \
                    const T m = m23 > m01 ? m23 : m01;                                   \
                    ac[k] = m > ac[k] ? m : ac[k];                                       \
                }                                                                        \
            else                                                                         \
                for (intptr_t k = 0; k < ncols; k++) {                                   \
                    const T m01 = a1[k] < a0[k] ? a1[k] : a0[k];                         \
                    const T m23 = a3[k] < a2[k] ? a3[k] : a2[k];                         \
                    const T m = m23 < m01 ? m23 : m01;                                   \
                    ac[k] = m < ac[k] ? m : ac[k];                                       \
                }                                                                        \
        }                                                                                \
    }                                                                                    \
    for (; r < r1; r++) {                                                                \
        const T *a = (const T *)(const void *)(q + (r - r0) * rstride);                  \
        if (op == 0 || op == 3) {                                                        \
            uint64_t *ac = (uint64_t *)(void *)acc;                                      \
            if (op == 0)                                                                 \
                for (intptr_t k = 0; k < ncols; k++) ac[k] += (uint64_t)(int64_t)a[k];   \
            else                                                                         \
                for (intptr_t k = 0; k < ncols; k++) ac[k] *= (uint64_t)(int64_t)a[k];   \
        } else {                                                                         \
            T *ac = (T *)(void *)acc;                                                    \
            INT_EXT_ROW(op, ac, a, ncols)                                                \
        }                                                                                \
    }

/*
 * Note [Integer column streams]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max and min over the rows of 1- and 2-byte columns from an input larger
 * than the caches (DISPATCH_COLS_STREAMS, as Note [Column streams] in
 * sum.dispatch.c): the register form reads 128 bytes of each of a leaf's
 * rows in turn, which memory serves at half its rate; here rows [0, n/2)
 * fold into the accumulators and rows [n/2, n) into a copy of them, whole
 * rows (4 KB of columns at a time) in address order, the two halves read
 * at once, and the copy folds in last. amax(dim=0) of (32768, 512) int16:
 * 2.0 -> 1.0 ms (NumPy 1.4); (65536, 512) int8 2.1 -> 0.8 (NumPy 1.9).
 * One stream of whole rows alone gave 1.3 and 1.1; wider types read whole
 * rows already (Note [Wide integer rows]), and two streams made them
 * slower (int64: 4.0 -> 5.3 ms). max and min are exact: the same bits.
 */
#define INT_COLS_STREAMS_T(SFX, T)                                                       \
    static void cols_streams_##SFX(int op, const char *p, intptr_t rstride, intptr_t nrows, \
                                   intptr_t ncols, T *ac)                                \
    {                                                                                    \
        enum { CHUNK = 4096 / sizeof(T) };                                               \
        T bc[CHUNK];                                                                     \
        const intptr_t h = nrows / 2;                                                    \
        for (intptr_t c0 = 0; c0 < ncols; c0 += CHUNK) {                                 \
            const intptr_t w = ncols - c0 < CHUNK ? ncols - c0 : CHUNK;                  \
            T *a = ac + c0;                                                              \
            memcpy(bc, a, (size_t)w * sizeof(T));                                        \
            for (intptr_t r = 0; r < nrows - h; r++) {                                   \
                if (r < h) {                                                             \
                    const T *x = (const T *)(const void *)(p + r * rstride) + c0;        \
                    INT_EXT_ROW(op, a, x, w)                                             \
                }                                                                        \
                const T *y = (const T *)(const void *)(p + (h + r) * rstride) + c0;      \
                INT_EXT_ROW(op, bc, y, w)                                                \
            }                                                                            \
            INT_EXT_ROW(op, a, bc, w)                                                    \
        }                                                                                \
    }

/* Columns: nrows rows of ncols contiguous elements, rstride bytes apart,
 * each column folded into its accumulator (contiguous: int64 for sums and products, T
 * for max/min). A block of columns (128 bytes of accumulators: four
 * vectors of 256 bits, two of 512) stays in registers down a leaf of rows,
 * every load a full vector of a contiguous row; a leaf is finished across
 * all columns before the next, so memory is read in address order. */
#define INT_COLS_T(SFX, T)                                                               \
    INT_COLS_STREAMS_T(SFX, T)                                                           \
    static void cols_##SFX(int op, int streams, const char *p, intptr_t rstride,          \
                           intptr_t nrows, intptr_t ncols, char *acc)                     \
    {                                                                                    \
        enum { LEAF = 32, CS = 16, CM = 128 / sizeof(T) };                              \
        if (streams && (op == 1 || op == 2) && sizeof(T) <= 2) {                         \
            cols_streams_##SFX(op, p, rstride, nrows, ncols, (T *)(void *)acc);          \
            return;                                                                      \
        }                                                                                \
        for (intptr_t r0 = 0; r0 < nrows; r0 += LEAF) {                                  \
            const intptr_t r1 = nrows - r0 < LEAF ? nrows : r0 + LEAF;                   \
            const char *q = p + r0 * rstride;                                            \
            intptr_t c = 0;                                                              \
            if (sizeof(T) >= 4 && ncols >= 64) { /* Note [Wide integer rows] */          \
                INT_COLS_BY_ROWS(T)                                                      \
                continue;                                                                \
            }                                                                            \
            if (op == 0 && sizeof(T) <= 2) { /* a leaf's column sums fit int32 */    \
                uint64_t *ac = (uint64_t *)(void *)acc;                                  \
                enum { C32 = 32 };                                                       \
                for (; c + C32 <= ncols; c += C32) {                                     \
                    int32_t s32[C32] = {0};                                              \
                    INT_LANES_LOOP for (intptr_t r = r0; r < r1; r++) {                  \
                        const T *a = (const T *)(const void *)(q + (r - r0) * rstride) + c; \
                        for (int k = 0; k < C32; k++) s32[k] += (int32_t)a[k];           \
                    }                                                                    \
                    for (int k = 0; k < C32; k++) ac[c + k] += (uint64_t)(int64_t)s32[k]; \
                }                                                                        \
            }                                                                            \
            if (op == 0) {                                                               \
                INT_COLS_WIDE_LEAF(T, +=)                                                \
                continue;                                                                \
            }                                                                            \
            if (op == 3) {                                                               \
                INT_COLS_WIDE_LEAF(T, *=)                                                \
                continue;                                                                \
            }                                                                            \
            T *ac = (T *)(void *)acc;                                                    \
            /* Blocks of 128 bytes, then of one 32-byte vector: a remainder    \
             * of up to 127 int8 columns went down every row one element at a  \
             * time (amax(dim=0) of (2048, 500) int8 took 20x the time of 512). */ \
            INT_COLS_EXT_BLOCK(T, CM)                                                    \
            INT_COLS_EXT_BLOCK(T, CM / 4)                                                \
            if (c < ncols && ncols >= CM / 4) { /* the last vector again: max and */    \
                c = ncols - CM / 4;             /* min take a column twice alike */     \
                INT_COLS_EXT_BLOCK(T, CM / 4)                                            \
            }                                                                            \
            for (; c < ncols; c++)                                                       \
                INT_LANES_LOOP for (intptr_t r = r0; r < r1; r++) {                      \
                    T x = ((const T *)(const void *)(q + (r - r0) * rstride))[c];        \
                    if (op == 1 ? x > ac[c] : x < ac[c]) ac[c] = x;                      \
                }                                                                        \
        }                                                                                \
    }

#define INT_REDUCE_2D(SFX, T, CAT)                                                       \
    INT_COLS_T(SFX, T)                                                                   \
    INT_REDUCE_T(SFX, T, CAT)                                                            \
    static void reduce2d_##SFX(int op, int streams, const char *p, intptr_t step, intptr_t n, \
                               char *acc, intptr_t acc_step, intptr_t nouter,            \
                               intptr_t outer_step, intptr_t outer_acc_step)             \
    {                                                                                    \
        if (nouter > 1 && outer_acc_step == 0 && step == (intptr_t)sizeof(T) &&          \
            acc_step == (INT_WIDE(op) ? 8 : (intptr_t)sizeof(T))) {                      \
            cols_##SFX(op, streams, p, outer_step, nouter, n, acc);                      \
            return;                                                                      \
        }                                                                                \
        for (intptr_t o = 0; o < nouter; o++)                                            \
            reduce_##SFX(op, p + o * outer_step, step, n, acc + o * outer_acc_step, acc_step); \
    }
/* One per bool (0 or 1, as uint8_t) and integer row of the dtype list, over
 * its storage type (Note [Integer facts] in dtype.h); none for a float. */
#define INT_REDUCE_BOOL(SFX, T) INT_REDUCE_2D(SFX, T, BOOL)
#define INT_REDUCE_INT(SFX, T) INT_REDUCE_2D(SFX, T, INT)
#define INT_REDUCE_FLOAT(SFX, T)
#define INT_REDUCE_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) INT_REDUCE_##CAT(sfx, T)
DISPATCH_FORALL_DTYPES(INT_REDUCE_ROW_)

/* nouter runs of n elements (outer_step bytes apart in the input,
 * outer_acc_step in the accumulators), each run as described above; runs
 * of columns folded into the same accumulators take the column blocks.
 * Returns -1 for a dtype that is not bool or an integer type. */
int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_int_reduce)(
    int op, int dtype, const char *p, intptr_t step, intptr_t n, char *acc, intptr_t acc_step,
    intptr_t nouter, intptr_t outer_step, intptr_t outer_acc_step);
int DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_int_reduce)(
    int op, int dtype, const char *p, intptr_t step, intptr_t n, char *acc, intptr_t acc_step,
    intptr_t nouter, intptr_t outer_step, intptr_t outer_acc_step)
{
#define INT_REDUCE_CASE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) INT_REDUCE_CASE_##CAT(NAME, sfx)
#define INT_REDUCE_CASE_BOOL(NAME, SFX) INT_REDUCE_CASE_INT(NAME, SFX)
#define INT_REDUCE_CASE_INT(NAME, SFX)                                                   \
    case DISPATCH_##NAME:                                                                \
        reduce2d_##SFX(op, streams, p, step, n, acc, acc_step, nouter, outer_step,          \
                       outer_acc_step);                                                  \
        return 0;
#define INT_REDUCE_CASE_FLOAT(NAME, SFX)
    const int streams = op & DISPATCH_COLS_STREAMS; /* Note [Integer column streams] */
    op &= ~DISPATCH_COLS_STREAMS;
    switch (dtype) {
    DISPATCH_FORALL_DTYPES(INT_REDUCE_CASE_)
    default: return -1;
    }
}

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
/* The integer reductions: an entry per bool and integer row (bool's traced). */
#define INT_REDUCE_ENTRY_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) INT_REDUCE_ENTRY_##CAT(NAME)
#define INT_REDUCE_ENTRY_BOOL(NAME) DISPATCH_KERNELS_REDUCE(INT, NAME, dispatch_kernel_int_reduce, 1)
#define INT_REDUCE_ENTRY_INT(NAME) DISPATCH_KERNELS_REDUCE(INT, NAME, dispatch_kernel_int_reduce, 0)
#define INT_REDUCE_ENTRY_FLOAT(NAME)
DISPATCH_KERNELS_EXPORT(int_reduce,
    DISPATCH_FORALL_DTYPES(INT_REDUCE_ENTRY_)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "int_reduce.dispatch.h"
DISPATCH_KERNELS_CHOOSER(int_reduce)
#endif
