/*
 * Private to the reduction engine (sources/iterator/reduce_*.c): what its
 * files share. The engine is one job per file:
 *   reduce_check.c    the one check of a reduction's arguments: its dims,
 *                     its result's shape, its count (the operators call it
 *                     first, then reduce_plan.c's entry, which does not
 *                     check again)
 *   reduce_plan.c     the entries (dispatch/reduce_engine.h), the choice of a path
 *                     per dtype and layout, the device hook
 *   reduce_float.c    float32/float64: rows, columns, tree splits, gathers
 *   reduce_integer.c  integers, bool, 0-dim and FOLD rows off their kernels:
 *                     exact accumulators, the threaded integer matrix
 *   reduce_half.c     float16 rows and columns read as halves
 *   reduce_indices.c  the first index of each max/min
 *   reduce_copies.c   views no kernel reads (no unit-stride dim) reduced
 *                     through dense copies of them, a slab at a time
 * Which path a reduction takes is its row of the reduction table
 * (dispatch/reduction_table.h): the files ask the row's family, never the id.
 * Names: dispatch_reduce_* are the table's (public); what the engine's
 * files share, declared below, is reduce_* (hidden, as static would be).
 */
#ifndef DISPATCH_REDUCE_INTERNAL_H_
#define DISPATCH_REDUCE_INTERNAL_H_

#include <stdint.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/iterator.h"
#include "dispatch/kernels.h"
#include "dispatch/reduce_engine.h"
#include "dispatch/strided.h"
#include "iterator_internal.h"

#define MAXD DISPATCH_ITER_MAX_DIMS

/* The SIMD kernel of (kind, dtype) from the reduction kernel table
 * (dispatch/reduce_kernel_table.h), the kernels chosen first (as the loops are,
 * once per process); NULL when none is registered. */
static inline dispatch_reduce_kernel_fn reduce_chosen_kernel(int kind, int dtype)
{
    if (dispatch_kernels_simd_init() != 0) return NULL;
    return dispatch_reduce_kernel_get(kind, dtype);
}

/* The chosen kernel of (KIND, DTYPE) as its kind's function type T:
 * CHOSEN_KERNEL(SUM, FLOAT32, dispatch_rk_sum_f32_fn)(p, stride, n). */
#define CHOSEN_KERNEL(KIND, DTYPE, T)                                                      \
    ((T)reduce_chosen_kernel(DISPATCH_RK_##KIND, DISPATCH_##DTYPE))

/* The EXT kernel's max (is_min 0) or min of n >= 1 contiguous float32 or
 * float64 (dtype) elements at p. */
static inline double reduce_ext_contiguous(int dtype, int is_min, const char *p, int64_t n)
{
    return dtype == DISPATCH_FLOAT32
               ? (double)CHOSEN_KERNEL(EXT, FLOAT32, dispatch_rk_ext_f32_fn)(
                     is_min, (const float *)(const void *)p, (intptr_t)n)
               : CHOSEN_KERNEL(EXT, FLOAT64, dispatch_rk_ext_f64_fn)(
                     is_min, (const double *)(const void *)p, (intptr_t)n);
}

/* The EXT_ROWS kernel of dtype (float32 or float64): nrows rows, rstep bytes
 * apart, of n >= 1 elements `step` bytes apart, each row's max (is_min 0)
 * or min to out, ostep bytes apart, in the dtype. */
static inline void reduce_ext_rows(int dtype, int is_min, const char *p, intptr_t rstep,
                                   intptr_t step, int64_t n, int64_t nrows, char *out,
                                   intptr_t ostep)
{
    (dtype == DISPATCH_FLOAT32 ? CHOSEN_KERNEL(EXT_ROWS, FLOAT32, dispatch_rk_ext_rows_fn)
                               : CHOSEN_KERNEL(EXT_ROWS, FLOAT64, dispatch_rk_ext_rows_fn))(
        is_min, p, rstep, step, (intptr_t)n, (intptr_t)nrows, out, ostep);
}

/* The kernel that reduces op down columns two elements apart (x[:, ::2],
 * Note [Columns of every other element] in sources/kernels/sum.dispatch.c)
 * of dtype: COLS_EVEN for float32/float64 sums, means, max and min,
 * FOLD_COLS_EVEN_<NAME> for a FOLD row that registers one (prod: Note
 * [Product columns of every other element]); NULL where there is none.
 * reduce_plan.c keeps such a view from the slab copy by it, and
 * reduce_float.c runs it: one answer for both. */
static inline dispatch_reduce_kernel_fn reduce_cols_even_kernel(int op, int dtype)
{
    if (dtype != DISPATCH_FLOAT32 && dtype != DISPATCH_FLOAT64) return NULL;
    if (dispatch_reduce_is_fold(op))
        return reduce_chosen_kernel(DISPATCH_RK_FOLD_COLS_EVEN_OF(op), dtype);
    if (dispatch_reduce_is_sum(op) || dispatch_reduce_is_extreme(op))
        return reduce_chosen_kernel(DISPATCH_RK_COLS_EVEN, dtype);
    return NULL;
}

/* One float32 or float64 element at p, as a double. */
static inline double reduce_real_at(int dtype, const char *p)
{
    if (dtype == DISPATCH_FLOAT32) {
        float f;
        memcpy(&f, p, sizeof f);
        return (double)f;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

/* A max or min acc so far, then v, the next in order: the first NaN, else
 * the first of equal extremes (Note [Which zero, which NaN] in
 * sources/kernels/sum.dispatch.c). */
static inline double reduce_ext_next(int is_min, double acc, double v)
{
    if (acc != acc) return acc;
    return v != v || (is_min ? v < acc : v > acc) ? v : acc;
}

/* A sum's or mean's result as stored: Note [The NaN and the zero of a sum]
 * in reduce_float.c. */
static inline float sum_store_f32(float v) { return v != v ? __builtin_nanf("") : v + 0.0f; }
static inline double sum_store_f64(double v) { return v != v ? __builtin_nan("") : v + 0.0; }

/* Row-major byte strides of a dense buffer of that shape. */
static inline void reduce_dense_strides(int nd, const int64_t *shape, int64_t itemsize,
                                        int64_t *strides)
{
    for (int d = nd - 1; d >= 0; d--) {
        strides[d] = itemsize;
        itemsize *= shape[d];
    }
}

/* -1 with a MemoryError naming the reduction. Here, not in reduce_plan.c:
 * the files that reduce_plan.c calls use it too, and call nothing back. */
static inline int reduce_out_of_memory(int op)
{
    return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", dispatch_reduce_name(op));
}

/* Row-major and gap-free over its shape (size-1 dims aside): the layout
 * the float16 row and column kernels read and the dense paths write. */
static inline int reduce_is_dense(const dispatch_iter_operand *o)
{
    int64_t expect = (int64_t)dispatch_dtype_itemsize(o->dtype);
    for (int d = o->ndim - 1; d >= 0; d--) {
        if (o->shape[d] == 1) continue;
        if (o->strides[d] != expect) return 0;
        expect *= o->shape[d];
    }
    return 1;
}

/* reduce_indices.c: max or min of in over dim_mask with each value's first
 * index, in one pass where the ARG kernels take the layout (Note [One-pass
 * first extremes] in sources/kernels/argext.dispatch.c): 1 when vals (dense
 * over the kept dims) and idx are written, 0 when the layout or dtype is
 * not theirs (the caller reduces, then searches). */
int reduce_first_extremes(int op, const dispatch_iter_operand *in, uint32_t mask, char *vals,
                          int64_t *idx);

/* reduce_plan.c: the reduction of in over dim_mask into out, its
 * arguments as dispatch_iter_reduce_check (reduce_check.c) answered them
 * (ond dims of oshape, count elements per output): checked no further. */
int reduce_planned(int op, const dispatch_iter_operand *in, uint32_t dim_mask,
                   int keepdim, const dispatch_iter_operand *out, int ond,
                   const int64_t *oshape, int64_t count);

/* reduce_copies.c: in (no unit-stride dim) reduced over mask into out, and
 * into indices (dense over the outputs) when not NULL, through dense copies
 * of it (Note [Gathered reductions by slabs]): 0, 1 when not copied (a
 * stride-0 dim, overlapping elements, no memory: the caller reads in
 * place), -1 on an error. */
int reduce_through_copies(int op, const dispatch_iter_operand *in, uint32_t mask, int keepdim,
                          const dispatch_iter_operand *out, int64_t count, int64_t *indices);
/* reduce_copies.c: acc[i] joined with part[i], the reduction of later
 * elements, n outputs of out_dtype, as op joins them: integer sums and
 * products wrapping, float sums (a mean's too) added; max/min keep acc's
 * NaN, else part's NaN, else the first of equal extremes (Note [Which
 * zero, which NaN] in sources/kernels/sum.dispatch.c). */
void reduce_join_outputs(int op, int out_dtype, char *acc, const char *part, int64_t n);

/* reduce_float.c: float32/float64 of one or more dims into out (any strides). */
int reduce_float(int op, const dispatch_iter_operand *in, uint32_t dim_mask,
                 int keepdim, const dispatch_iter_operand *out, int ond, int64_t count);
/* reduce_float.c: where the column kernels' tree splits n rows (Note
 * [Column reductions] in sources/kernels/sum.dispatch.c: the rows of the
 * first half), 0 for a leaf (REDUCE_COLS_LEAF rows or fewer). */
#define REDUCE_COLS_LEAF 16 /* DISPATCH_COLS_LEAF of sum.dispatch.c */
int64_t reduce_cols_tree_split(int64_t n);
/* reduce_float.c: the narrow SUM kernel's sum (dtype float16 or bfloat16)
 * of n >= 1 elements `stride` bytes apart (0 for a broadcast), its tree's
 * top levels split across the threads. */
float reduce_sum_narrow(int dtype, const char *p, intptr_t stride, int64_t n);

/* reduce_integer.c: every element folded into its output's scalar
 * accumulator, then cast into nout dense outputs of out_dtype. */
int reduce_accumulate(int op, const dispatch_iter_operand *in, uint32_t mask,
                      int64_t count, int64_t nout, char *out, int out_dtype);

/* reduce_half.c: float16 or bfloat16 (dtype) over trailing dims (rows) of
 * a dense input, or down rows `rstride` bytes apart of ncols contiguous
 * columns, into dense narrow outputs. ext_rows: 1 when done, 0 when a row
 * holds a NaN (the caller takes another path). */
void reduce_half_sum_rows(int dtype, const uint16_t *p, int op, int64_t nout, int64_t count,
                          uint16_t *out);
int reduce_half_ext_rows(int dtype, const uint16_t *p, int op, int64_t nout, int64_t count,
                         uint16_t *out);
int reduce_half_cols(int dtype, const char *p, intptr_t rstride, int op, int64_t ncols,
                     int64_t count, uint16_t *out);

/* reduce_narrow.c: a narrow float's reduction read in place, in bounded
 * chunks, with the bits of reducing its dense float32 copy; 1 when the
 * layout or reduction is not one it takes (the caller copies), else 0 or
 * -1 (an error set). */
int reduce_narrow_in_place(int op, const dispatch_iter_operand *in, uint32_t mask,
                           int64_t count, int64_t nout, uint16_t *out);
/* Whether a broadcast's in-place read is too long to take: past 2^34
 * elements (seconds of reading) a view of 2^62 would read for years, so it
 * keeps the copy's answer, a MemoryError naming its shape
 * (tests/test_hostile_sizes.py). */
static inline int reduce_in_place_too_long(int64_t count, int64_t nout)
{
    int64_t total;
    return __builtin_mul_overflow(count, nout, &total) || total > ((int64_t)1 << 34);
}

/* reduce_plan.c: no dim of the input steps by one element (Note [Gathered
 * reductions]). */
int reduce_reads_by_gathers(const dispatch_iter_operand *in);
/* reduce_plan.c: whether in's dense copy is reduced over mask in the
 * columns order (Note [Column reductions] in sum.dispatch.c), not the
 * rows; *last: the innermost reduced dim of more than one element, -1 when
 * none. */
int reduce_copy_takes_columns(const dispatch_iter_operand *in, uint32_t mask, int64_t count,
                              int *last);

/* reduce_narrow.c: a float32/float64 sum, mean, prod, max or min of an
 * input with a broadcast dim whose reduced dims no one stride steps, or of
 * one that no dim steps by one element, read in place in the rows order, a
 * bounded chunk at a time: the bits of its dense copy where the copy takes
 * that order, and never a buffer of the input's size (an overlapping view
 * may read far more elements than its memory holds); one value per output
 * (row-major over the kept dims) into vals; 1 when not taken (the caller
 * copies), else 0 or -1. */
int reduce_float_rows_in_place(int op, const dispatch_iter_operand *in, uint32_t mask,
                               int64_t count, int64_t nout, double *vals);

#endif /* DISPATCH_REDUCE_INTERNAL_H_ */
