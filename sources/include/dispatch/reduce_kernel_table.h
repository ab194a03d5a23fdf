#ifndef DISPATCH_REDUCE_KERNEL_TABLE_H_
#define DISPATCH_REDUCE_KERNEL_TABLE_H_

#include <stdint.h>

#include "dispatch/reduction_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The reduction kernel table (sources/core/reduce_kernel_table.c), beside the
 * loop table of loops.h and kept like it: the SIMD kernels the reduction
 * engine (dispatch/reduce_engine.h) runs, by kind and dtype, filled by the kernels' chooser from the `DISPATCH_KERNELS_REDUCE`
 * lines of their exported tables (Note [Exported kernel tables] in
 * sources/kernels/kernels_export.h), as the loop table of loops.h is from
 * their `DISPATCH_KERNELS_LOOP` lines. A kind is a calling shape; each
 * entry is stored as dispatch_reduce_kernel_fn and called as its kind's
 * type below (the float16 kinds read halves and compute in float32: their
 * types are float32's, EXT's is its own). Nothing else names them.
 * Each FOLD row of the reduction table (dispatch/reduction_table.h) has a kind
 * of its own, FOLD_<NAME>: its kernel source registers
 * DISPATCH_KERNELS_REDUCE(FOLD_<NAME>, FLOAT32, ...), and the engine finds it
 * by the reduction's id (DISPATCH_RK_FOLD_OF), with no edit here. A FOLD row
 * may also register FOLD_COLS_<NAME>: the same fold of each of ncols
 * contiguous columns down nrows rows, the bits of FOLD_<NAME> per column
 * (DISPATCH_RK_FOLD_COLS_OF); the engine's outer-dim path runs it, and runs
 * FOLD_<NAME> per output where a dtype has none. FOLD_COLS_EVEN_<NAME>, where
 * registered, is FOLD_COLS_<NAME> of columns two elements apart (x[:, ::2]:
 * column c at p + 2 c itemsize), the odd elements never read
 * (DISPATCH_RK_FOLD_COLS_EVEN_OF).
 */
#define DISPATCH_FORALL_REDUCE_KERNELS(X)                                                   \
    X(SUM)      /* the pairwise sum of n elements `stride` apart */                         \
    X(SUM_ROWS) /* nrows of those sums, row r at p + r * rstep, into out + r * ostep */      \
    X(COLS)     /* sum/max/min down the rows of contiguous columns (Note [Column reductions]) */ \
    X(COLS_EVEN) /* COLS of columns two elements apart (x[:, ::2]), as COLS's types */     \
    X(EXT)      /* max or min of n contiguous elements */                                   \
    X(EXT_ROWS) /* nrows of those, as SUM_ROWS */                                           \
    X(INT)      /* integer and bool sum/max/min into accumulators (Note [Integer reductions]) */ \
    X(DOT)      /* the sum of n products a[i] * b[i] (dot: Note [Dot order] in dot.dispatch.c) */ \
    X(ARG)      /* the first index of the max/min of n contiguous elements, and its value */ \
    X(ARG_COLS) /* ARG of each of ncols contiguous columns down the rows */

enum dispatch_reduce_kernel_kind {
#define DISPATCH_REDUCE_KERNEL_ENUM_(K) DISPATCH_RK_##K,
    DISPATCH_FORALL_REDUCE_KERNELS(DISPATCH_REDUCE_KERNEL_ENUM_)
#undef DISPATCH_REDUCE_KERNEL_ENUM_
    /* FOLD_<NAME>, one per reduction in id order (used by the FOLD rows):
     * the fold of n elements `stride` apart, in float64 (prod: Note
     * [Product order]) */
#define DISPATCH_REDUCE_KERNEL_FOLD_ENUM_(NAME, ...) DISPATCH_RK_FOLD_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_KERNEL_FOLD_ENUM_)
#undef DISPATCH_REDUCE_KERNEL_FOLD_ENUM_
    /* FOLD_COLS_<NAME>, in the same order: the fold of each of ncols
     * contiguous columns, with FOLD_<NAME>'s bits per column */
#define DISPATCH_REDUCE_KERNEL_FOLD_COLS_ENUM_(NAME, ...) DISPATCH_RK_FOLD_COLS_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_KERNEL_FOLD_COLS_ENUM_)
#undef DISPATCH_REDUCE_KERNEL_FOLD_COLS_ENUM_
    /* FOLD_COLS_EVEN_<NAME>, in the same order: FOLD_COLS_<NAME> of columns
     * two elements apart */
#define DISPATCH_REDUCE_KERNEL_FOLD_COLS_EVEN_ENUM_(NAME, ...) DISPATCH_RK_FOLD_COLS_EVEN_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_KERNEL_FOLD_COLS_EVEN_ENUM_)
#undef DISPATCH_REDUCE_KERNEL_FOLD_COLS_EVEN_ENUM_
    DISPATCH_NUM_REDUCE_KERNELS
};
/* The FOLD, FOLD_COLS and FOLD_COLS_EVEN kinds of reduction op. */
#define DISPATCH_RK_FOLD_OF(op) (DISPATCH_RK_FOLD_SUM + (op))
#define DISPATCH_RK_FOLD_COLS_OF(op) (DISPATCH_RK_FOLD_COLS_SUM + (op))
#define DISPATCH_RK_FOLD_COLS_EVEN_OF(op) (DISPATCH_RK_FOLD_COLS_EVEN_SUM + (op))

typedef void (*dispatch_reduce_kernel_fn)(void);
typedef float (*dispatch_rk_sum_f32_fn)(const char *p, intptr_t stride, intptr_t n);
typedef double (*dispatch_rk_sum_f64_fn)(const char *p, intptr_t stride, intptr_t n);
/* FOLD_<NAME>, float32 and float64 alike. */
typedef double (*dispatch_rk_fold_fn)(const char *p, intptr_t stride, intptr_t n);

/*
 * Note [Fold blocks]
 * ~~~~~~~~~~~~~~~~~~
 * The kernels of a FOLD row listed in DISPATCH_FORALL_BLOCK_FOLDS fold at
 * most DISPATCH_FOLD_BLOCK elements in one run (their own order inside:
 * Note [Product order]); a longer range is split at dispatch_fold_split(n),
 * whole blocks, the first half of them rounded up on the left, each half
 * folded the same way and the two halves' results combined by the list's
 * expression (dispatch_reduce_fold_combine: for prod, their product). The
 * order is a fact of n alone, so the engine may fold the top halves on
 * different threads and combine them as the kernel would, with the
 * kernel's bits (a product's threads once ran it whole on one), and the
 * narrow floats' engine fold a block at a time from a buffer of one block.
 * FOLD_COLS kernels split their rows the same way, per column. Any other
 * FOLD row's kernel is called once per output, on the whole run (its
 * partial folds combine by no rule the engine knows: a sum of squares' two
 * halves add, they do not step `a + x * x`).
 */
#define DISPATCH_FORALL_BLOCK_FOLDS(X) X(PROD, a * x)
#define DISPATCH_FOLD_BLOCK 4096

static inline intptr_t dispatch_fold_split(intptr_t n)
{
    return ((n / DISPATCH_FOLD_BLOCK + 1) / 2) * DISPATCH_FOLD_BLOCK;
}

/* 1 when op's FOLD kernels fold in blocks: Note [Fold blocks]. */
static inline int dispatch_fold_in_blocks(int op)
{
    switch (op) {
#define DISPATCH_FOLD_IN_BLOCKS_(NAME, COMBINE) case DISPATCH_REDUCE_##NAME: return 1;
        DISPATCH_FORALL_BLOCK_FOLDS(DISPATCH_FOLD_IN_BLOCKS_)
#undef DISPATCH_FOLD_IN_BLOCKS_
    default: return 0;
    }
}

/* Two blocks' folds (a, then x) combined: Note [Fold blocks]. */
static inline double dispatch_reduce_fold_combine(int op, double a, double x)
{
    switch (op) {
#define DISPATCH_FOLD_COMBINE_(NAME, COMBINE) case DISPATCH_REDUCE_##NAME: return COMBINE;
        DISPATCH_FORALL_BLOCK_FOLDS(DISPATCH_FOLD_COMBINE_)
#undef DISPATCH_FOLD_COMBINE_
    default: (void)x; return a;
    }
}
/* FOLD_COLS_<NAME>: column c is the nrows elements at p + c * itemsize +
 * r * rstride; its fold is written to out[c]: the float64 fold for float32
 * and float64 (the engine rounds it once, as it stores FOLD_<NAME>'s, or
 * combines parts of it), the float32 fold for a narrow float. Given
 * more than DISPATCH_FOLD_COLS_NARROW columns, a kernel reads whole rows in
 * address order (the engine passes that many for inputs it streams: Note
 * [Product columns from whole rows] in sources/kernels/prod.dispatch.c);
 * up to it, blocks of columns down the rows. The same bits either way. */
#define DISPATCH_FOLD_COLS_NARROW 128
typedef void (*dispatch_rk_fold_cols_fn)(const char *p, intptr_t rstride, intptr_t nrows,
                                         intptr_t ncols, void *out);
/* DOT: the n products of a and b (sa, sb bytes apart), summed; *out is a
 * double for a float dtype (the float64 sum, before rounding to the
 * dtype), an int64_t for an integer one (the wrapping sum, congruent to the
 * exact sum modulo 2^bits of the dtype: rounding it to the dtype is exact). */
typedef void (*dispatch_rk_dot_fn)(const char *a, intptr_t sa, const char *b, intptr_t sb,
                                   intptr_t n, void *out);
/* ARG: the first index among the n > 0 contiguous elements at p of their
 * max (is_min 0) or min, a float's first NaN where there is one, the
 * element there copied to value (Note [One-pass first extremes] in
 * argext.dispatch.c). */
typedef int64_t (*dispatch_rk_arg_fn)(int is_min, const char *p, intptr_t n, char *value);
/* ARG_COLS: for each of ncols contiguous columns down nrows > 0 rows (row r
 * at p + r * rstride), the first row r of its max (is_min 0) or min, a
 * float's first NaN where there is one: r * rstep to rows[c], the element
 * there to vals[c] (Note [Column first extremes] in argext.dispatch.c). */
typedef void (*dispatch_rk_arg_cols_fn)(int is_min, const char *p, intptr_t rstride,
                                        intptr_t nrows, intptr_t ncols, int64_t rstep,
                                        char *vals, int64_t *rows);
typedef void (*dispatch_rk_rows_fn)(const char *p, intptr_t rstep, intptr_t stride, intptr_t n,
                                    intptr_t nrows, char *out, intptr_t ostep);
/* op: dispatch_reduce_kernel_op, or'd with DISPATCH_COLS_STREAMS for an input
 * larger than the caches; scratch as dispatch_reduce_cols_scratch. */
typedef void (*dispatch_rk_cols_f32_fn)(int op, const char *p, intptr_t rstride, intptr_t nrows,
                                        intptr_t ncols, float *out, void *scratch);
typedef void (*dispatch_rk_cols_f64_fn)(int op, const char *p, intptr_t rstride, intptr_t nrows,
                                        intptr_t ncols, double *out, void *scratch);
typedef float (*dispatch_rk_ext_f32_fn)(int is_min, const float *p, intptr_t n);
typedef double (*dispatch_rk_ext_f64_fn)(int is_min, const double *p, intptr_t n);
/* 1, or 0 when an element is NaN (*r unset). */
typedef int (*dispatch_rk_ext_f16_fn)(int is_min, const uint16_t *p, intptr_t n, uint16_t *r);
/* EXT_ROWS: nrows rows (rstep bytes apart) of n >= 1 elements `step` bytes
 * apart, each row's max (is_min 0) or min to out (ostep bytes apart): the
 * first NaN, else the first element equal to the extreme (Note [Which zero,
 * which NaN]); read by vectors where step is the element's size or twice it
 * (Note [Extremes of every other element] in sources/kernels/sum.dispatch.c). */
typedef void (*dispatch_rk_ext_rows_fn)(int is_min, const char *p, intptr_t rstep, intptr_t step,
                                        intptr_t n, intptr_t nrows, char *out, intptr_t ostep);
/* op: dispatch_reduce_kernel_op, or'd with DISPATCH_COLS_STREAMS for an input
 * larger than the caches (Note [Integer column streams]). */
typedef int (*dispatch_rk_int_fn)(int op, int dtype, const char *p, intptr_t step, intptr_t n,
                                  char *acc, intptr_t acc_step, intptr_t nouter,
                                  intptr_t outer_step, intptr_t outer_acc_step);

/* Set the kernel of (kind, dtype) (the chooser does, at load and after a
 * re-detection). 0, or -1 for a kind or dtype out of range. */
int dispatch_reduce_kernel_register(int kind, int dtype, dispatch_reduce_kernel_fn fn);
/* The kernel of (kind, dtype); NULL when none is registered (the kernels
 * not chosen yet: dispatch_kernels_simd_init(), or no kernel). */
dispatch_reduce_kernel_fn dispatch_reduce_kernel_get(int kind, int dtype);

/* A COLS kernel's op flag: read whole rows in address order, two ranges of
 * rows at once (Note [Column streams] in sources/kernels/sum.dispatch.c);
 * the same bits. The engines set it for inputs of DISPATCH_COLS_STREAM_BYTES
 * or more, which come from memory rather than a cache. */
#define DISPATCH_COLS_STREAMS 8
#define DISPATCH_COLS_STREAM_BYTES ((int64_t)16 << 20)

/* The op of a COLS call (kop: dispatch_reduce_kernel_op) whose rows span
 * input_bytes in all, and whether that call needs a scratch. */
static inline int dispatch_cols_op(int kop, int64_t input_bytes)
{
    return kop >= 0 && input_bytes >= DISPATCH_COLS_STREAM_BYTES ? kop | DISPATCH_COLS_STREAMS
                                                                 : kop;
}
static inline int dispatch_cols_needs_scratch(int op)
{
    return op >= 0 && (op == 0 || (op & DISPATCH_COLS_STREAMS));
}

/* The scratch of a COLS kernel over nrows rows, in rows of ncols elements:
 * two per level of the column sum's tree (leaves of 16), the two streams'
 * results; max and min need it only with DISPATCH_COLS_STREAMS. */
static inline int dispatch_reduce_cols_scratch(int64_t nrows)
{
    int d = 1;
    for (int64_t n = nrows; n > 16; n = (n / 16 + 1) / 2 * 16) d++;
    return 2 * d;
}

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_REDUCE_KERNEL_TABLE_H_ */
