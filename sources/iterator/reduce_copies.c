/*
 * Views that no kernel reads (no dim of unit stride: every other column of
 * a matrix, a stepped view) reduced through dense copies of them (Note
 * [Gathered reductions] in reduce_plan.c says which), a slab at a time
 * where the slabs keep the whole copy's bits.
 *
 * Note [Gathered reductions by slabs]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The copy used to be the whole input, in malloc's fresh pages: amax() of
 * every other column of a (32768, 1024) float64 matrix wrote 128 MiB a
 * call, half of its time the kernel clearing those pages, and read them
 * back: 81 ms, NumPy 8.5 in place. Now the input is copied and reduced
 * COPY_SLAB_BYTES of its outermost dim (of more than one element) at a
 * time, whole slabs, one at least, through one buffer that stays in cache,
 * where that keeps the whole copy's bits:
 *   - the dim is kept (max(dim=1), argmax(dim=1) of a matrix): each output
 *     reads only its own slab, its elements the same in the same order, so
 *     its value and its index are the whole copy's;
 *   - the dim is reduced and the reduction exact in any grouping: sums,
 *     products, max and min of integers and bool (wrapping, so modulo
 *     2^bits in any order), max and min of floats without indices (the
 *     first NaN, else the first of equal extremes, Note [Which zero, which
 *     NaN]: slab by slab in order, each slab's answer joined to the earlier
 *     ones' by that rule, is the first of the whole; those of float32 and
 *     float64 whose elements are two apart along the innermost reduced dim
 *     are read in place instead, Note [Extremes of every other element] in
 *     sources/kernels/sum.dispatch.c). Each slab is reduced
 *     into a buffer of the outputs and joined to those before it. With
 *     indices (max(dim=0), argmax() over all) the same rule picks each
 *     output's value and index together, a slab's indices counted from
 *     its first row (row * the reduced elements a row holds);
 *   - the dim is the one reduced, read in the columns order (sum(dim=0)
 *     and mean(dim=0) of float32/float64: Note [Column reductions] in
 *     sources/kernels/sum.dispatch.c; beside a kept dim of every other
 *     element they are read in place instead, Note [Columns of every other
 *     element] there): the rows are cut along the column
 *     kernels' own tree until a part fits a slab, each part summed by the
 *     engine, and the parts added in the tree's order. A part's stored sum
 *     differs from its raw one only in a zero's sign and a NaN's payload,
 *     which the final store (Note [The NaN and the zero of a sum] in
 *     reduce_float.c) sets alike either way: the whole copy's bits.
 * The slabs (or the tree's parts) go to the threads in contiguous runs, one
 * run a thread, each slab copied and reduced by the thread that reads it
 * (split between the threads instead, every slab's lines crossed between
 * the cores: amax(dim=0) of every other column of (512, 1024) float64
 * took 149 us at 2 threads, 99 at one); a run joins its slabs in order,
 * then the runs are joined in order.
 * Other float sums and products follow a tree of the whole input: those
 * copy the whole input,
 * into a buffer from the CPU allocator, as a tensor's data (Note [CPU
 * allocations] in sources/core/storage.c: huge pages, and a freed large
 * block kept for the next call of its size).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/narrow_float.h"
#include "dispatch/storage.h"
#include "reduce_internal.h"

#define COPY_SLAB_BYTES (512 * 1024)

/* Whether in can be copied dense: no stride-0 dim (its copy would hold
 * every repeat, Note [Broadcast reduced dims]), elements that do not
 * overlap (an as_strided view's copy could be far larger than its storage);
 * *bytes: the copy's size. */
static int dense_copy_fits(const dispatch_iter_operand *in, int64_t *bytes)
{
    const int64_t isz = (int64_t)dispatch_dtype_itemsize(in->dtype);
    int64_t numel = 1, span = isz; /* span: the bytes from its first element to its last */
    for (int d = 0; d < in->ndim; d++) {
        if (in->strides[d] == 0 && in->shape[d] > 1) return 0;
        if (__builtin_mul_overflow(numel, in->shape[d], &numel)) return 0;
        span += (in->shape[d] - 1) * (in->strides[d] < 0 ? -in->strides[d] : in->strides[d]);
    }
    return !__builtin_mul_overflow(numel, isz, bytes) && *bytes <= span &&
           (uint64_t)*bytes < SIZE_MAX;
}

/* in copied into buf, dense in its dtype and shape, as *c (strides: c's,
 * MAXD of them): 0, -1 on an error of the copy. */
static int dense_copy_into(const dispatch_iter_operand *in, char *buf, int64_t *strides,
                           dispatch_iter_operand *c)
{
    reduce_dense_strides(in->ndim, in->shape, (int64_t)dispatch_dtype_itemsize(in->dtype),
                         strides);
    *c = (dispatch_iter_operand){buf, in->ndim, in->shape, strides, in->dtype};
    dispatch_iter_operand ops[2] = {*c, *in};
    return dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, in->dtype, 2, ops, NULL);
}

/* Whether op over dtype gives the same bits in any grouping of its elements
 * (the second case of Note [Gathered reductions by slabs]). */
static int joins_exactly(int op, int dtype)
{
    if (dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT)
        return dispatch_reduce_is_extreme(op);
    return !dispatch_reduce_is_mean(op) && dispatch_reduce_int_kernel_op(op) != DISPATCH_COMBINE_NONE;
}

/* The third case: a float32/float64 sum or mean whose one reduced dim (of
 * more than one element) is d0, with kept columns after it. */
static int sums_columns_by_tree(int op, const dispatch_iter_operand *in, uint32_t mask,
                                int64_t count, int d0, const dispatch_iter_operand *out)
{
    if ((in->dtype != DISPATCH_FLOAT32 && in->dtype != DISPATCH_FLOAT64) ||
        out->dtype != in->dtype || !dispatch_reduce_is_sum(op))
        return 0;
    for (int d = 0; d < in->ndim; d++)
        if (d != d0 && ((mask >> d) & 1u) && in->shape[d] > 1) return 0;
    int last;
    return reduce_copy_takes_columns(in, mask, count, &last);
}

/* Whether part's y replaces acc's x in a max (how DISPATCH_COMBINE_MAX) or
 * min: beyond it; for floats, or NaN where x is not (Note [Which zero,
 * which NaN]: the first NaN, else the first of equal extremes). */
#define TAKES_INT_(how, x, y) ((how) == DISPATCH_COMBINE_MIN ? (y) < (x) : (y) > (x))
#define TAKES_FLOAT_(how, x, y) ((x) == (x) && ((y) != (y) || TAKES_INT_(how, x, y)))
/* reduce_join_outputs' loops (reduce_internal.h), a dtype's each. */
#define JOIN_INTS_(T, U)                                                                   \
    {                                                                                      \
        T *a = (T *)(void *)acc;                                                           \
        const T *b = (const T *)(const void *)part;                                        \
        switch (how) {                                                                     \
        case DISPATCH_COMBINE_ADD:                                                         \
            for (int64_t i = 0; i < n; i++) a[i] = (T)((U)a[i] + (U)b[i]);                 \
            break;                                                                         \
        case DISPATCH_COMBINE_MUL:                                                         \
            for (int64_t i = 0; i < n; i++) a[i] = (T)((U)a[i] * (U)b[i]);                 \
            break;                                                                         \
        case DISPATCH_COMBINE_MAX:                                                         \
            for (int64_t i = 0; i < n; i++)                                                \
                a[i] = TAKES_INT_(DISPATCH_COMBINE_MAX, a[i], b[i]) ? b[i] : a[i];          \
            break;                                                                         \
        default:                                                                           \
            for (int64_t i = 0; i < n; i++)                                                \
                a[i] = TAKES_INT_(DISPATCH_COMBINE_MIN, a[i], b[i]) ? b[i] : a[i];          \
            break;                                                                         \
        }                                                                                  \
    }
/* max/min: acc's value replaced by part's where part's takes (TAKES_*, read
 * through VALUE), and ALSO done then (an index moved with it, or nothing):
 * the first NaN, else the first of equal extremes. */
#define JOIN_TAKEN_(T, VALUE, TAKES, ALSO)                                                 \
    {                                                                                      \
        T *a = (T *)(void *)acc;                                                           \
        const T *b = (const T *)(const void *)part;                                        \
        for (int64_t i = 0; i < n; i++)                                                    \
            if (TAKES(how, VALUE(a[i]), VALUE(b[i]))) {                                    \
                a[i] = b[i];                                                               \
                ALSO;                                                                      \
            }                                                                              \
    }
#define JOIN_FLOATS_(T, VALUE) JOIN_TAKEN_(T, VALUE, TAKES_FLOAT_, (void)0)
/* A sum (the tree's parts): their float sum. */
#define JOIN_SUMS_(T)                                                                      \
    {                                                                                      \
        T *a = (T *)(void *)acc;                                                           \
        const T *b = (const T *)(const void *)part;                                        \
        for (int64_t i = 0; i < n; i++) a[i] = a[i] + b[i];                                \
    }
#define AS_IS_(v) (v)
void reduce_join_outputs(int op, int out_dtype, char *acc, const char *part, int64_t n)
{
    const int is_float = dispatch_dtype_category_of(out_dtype) == DISPATCH_CAT_FLOAT;
    const int how = is_float ? dispatch_reduce_kernel_op(op) : dispatch_reduce_int_kernel_op(op);
    switch (out_dtype) {
    case DISPATCH_BOOL:
    case DISPATCH_UINT8: JOIN_INTS_(uint8_t, uint8_t) break;
    case DISPATCH_INT8: JOIN_INTS_(int8_t, uint8_t) break;
    case DISPATCH_INT16: JOIN_INTS_(int16_t, uint16_t) break;
    case DISPATCH_INT32: JOIN_INTS_(int32_t, uint32_t) break;
    case DISPATCH_INT64: JOIN_INTS_(int64_t, uint64_t) break;
    case DISPATCH_FLOAT16: JOIN_FLOATS_(uint16_t, dispatch_half_to_float_inline) break;
    case DISPATCH_BFLOAT16: JOIN_FLOATS_(uint16_t, dispatch_bfloat16_to_float_inline) break;
    case DISPATCH_FLOAT32:
        if (how == DISPATCH_COMBINE_ADD) JOIN_SUMS_(float) else JOIN_FLOATS_(float, AS_IS_)
        break;
    case DISPATCH_FLOAT64:
        if (how == DISPATCH_COMBINE_ADD) JOIN_SUMS_(double) else JOIN_FLOATS_(double, AS_IS_)
        break;
    default: break;
    }
}

/* max/min with indices: acc's value and index replaced by part's where part's
 * value takes, n outputs of out_dtype. */
#define JOIN_FIRST_(T, VALUE, TAKES) JOIN_TAKEN_(T, VALUE, TAKES, acc_at[i] = part_at[i])
static void join_first_extremes(int op, int out_dtype, char *acc, int64_t *acc_at,
                                const char *part, const int64_t *part_at, int64_t n)
{
    const int how = dispatch_reduce_kernel_op(op);
    switch (out_dtype) {
    case DISPATCH_BOOL:
    case DISPATCH_UINT8: JOIN_FIRST_(uint8_t, AS_IS_, TAKES_INT_) break;
    case DISPATCH_INT8: JOIN_FIRST_(int8_t, AS_IS_, TAKES_INT_) break;
    case DISPATCH_INT16: JOIN_FIRST_(int16_t, AS_IS_, TAKES_INT_) break;
    case DISPATCH_INT32: JOIN_FIRST_(int32_t, AS_IS_, TAKES_INT_) break;
    case DISPATCH_INT64: JOIN_FIRST_(int64_t, AS_IS_, TAKES_INT_) break;
    case DISPATCH_FLOAT16:
        JOIN_FIRST_(uint16_t, dispatch_half_to_float_inline, TAKES_FLOAT_) break;
    case DISPATCH_BFLOAT16:
        JOIN_FIRST_(uint16_t, dispatch_bfloat16_to_float_inline, TAKES_FLOAT_) break;
    case DISPATCH_FLOAT32: JOIN_FIRST_(float, AS_IS_, TAKES_FLOAT_) break;
    case DISPATCH_FLOAT64: JOIN_FIRST_(double, AS_IS_, TAKES_FLOAT_) break;
    default: break;
    }
}

enum { BY_KEPT, BY_JOIN, BY_TREE }; /* the three cases of the Note */

typedef struct slab_job {
    int op, by, keepdim, d0, od;
    const dispatch_iter_operand *in, *out;
    uint32_t mask;
    int64_t count, *indices;
    int64_t rows, row_bytes, step, nunits, nout, outs_per_row;
    int64_t at_per_row; /* BY_JOIN with indices: the reduced elements a row of d0 holds */
    size_t osz;
    int nruns;
    int64_t (*part)[2]; /* BY_TREE: each part's first row and rows, the tree's order */
    int64_t parts_cap;
    char *outs;                    /* BY_JOIN: a set of outputs a run; BY_TREE: a part */
    int64_t *outs_at;              /* BY_JOIN with indices: their indices */
    int64_t ostr[MAXD];
    atomic_int failed;
} slab_job;

/* Where BY_TREE cuts n rows: the column kernels' own split while they are
 * more than a slab, 0 for a part. */
static int64_t tree_cut(const slab_job *j, int64_t n)
{
    return n * j->row_bytes > COPY_SLAB_BYTES ? reduce_cols_tree_split(n) : 0;
}

/* The parts of n rows from row on appended to j->part (j->nunits of them):
 * 0, or 1 when out of memory. */
static int tree_list(slab_job *j, int64_t row, int64_t n)
{
    const int64_t h = tree_cut(j, n);
    if (h) return tree_list(j, row, h) || tree_list(j, row + h, n - h);
    if (j->nunits == j->parts_cap) {
        const int64_t cap = j->parts_cap ? 2 * j->parts_cap : 16;
        int64_t(*grown)[2] = realloc(j->part, (size_t)cap * sizeof *grown);
        if (!grown) return 1;
        j->part = grown, j->parts_cap = cap;
    }
    j->part[j->nunits][0] = row, j->part[j->nunits][1] = n;
    j->nunits++;
    return 0;
}

/* The sum of n rows from part *k on, the parts added in the tree's order
 * into the first one's outputs, which it returns. */
static char *tree_join(slab_job *j, int64_t n, int64_t *k)
{
    const int64_t h = tree_cut(j, n);
    if (h == 0) return j->outs + (size_t)(*k)++ * (size_t)j->nout * j->osz;
    char *a = tree_join(j, h, k);
    const char *b = tree_join(j, n - h, k);
    reduce_join_outputs(j->op, j->out->dtype, a, b, j->nout);
    return a;
}

/* Unit u: its rows of d0, and the outputs it writes (dense for BY_JOIN and
 * BY_TREE: dst, nout of them; BY_JOIN's indices into at). */
static int slab_unit(slab_job *j, int64_t u, char *buf, char *dst, int64_t *at)
{
    const dispatch_iter_operand *in = j->in;
    const int64_t row = j->by == BY_TREE ? j->part[u][0] : u * j->step;
    const int64_t n = j->by == BY_TREE ? j->part[u][1]
                      : j->rows - row < j->step ? j->rows - row : j->step;
    int64_t ishape[MAXD], oshape[MAXD], dstr[MAXD];
    memcpy(ishape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    ishape[j->d0] = n;
    dispatch_iter_operand slab = *in, o = *j->out, c;
    slab.shape = ishape, slab.data += row * in->strides[j->d0];
    if (j->by == BY_KEPT) {
        memcpy(oshape, o.shape, sizeof(int64_t) * (size_t)o.ndim);
        oshape[j->od] = n;
        o.shape = oshape, o.data += row * o.strides[j->od];
    } else {
        o.data = dst, o.strides = j->ostr;
    }
    if (dense_copy_into(&slab, buf, dstr, &c) != 0) return -1;
    if (j->indices && j->by == BY_KEPT)
        return dispatch_iter_reduce_on(DISPATCH_DEVICE_CPU, j->op, &c, j->mask, j->keepdim, &o,
                                       j->indices + row * j->outs_per_row);
    if (j->indices) { /* BY_JOIN: the slab's indices, counted from its first row */
        int rc = dispatch_iter_reduce_on(DISPATCH_DEVICE_CPU, j->op, &c, j->mask, j->keepdim, &o,
                                         at);
        for (int64_t i = 0; rc == 0 && i < j->nout; i++) at[i] += row * j->at_per_row;
        return rc;
    }
    /* a part of a sum or mean: its sum (the mean divides the whole) */
    const int op = j->by == BY_TREE ? DISPATCH_REDUCE_SUM : j->op;
    return reduce_planned(op, &c, j->mask, j->keepdim, &o, o.ndim, o.shape,
                          j->by == BY_KEPT ? j->count : j->count / j->rows * n);
}

/* Runs [begin, end) of the units, each on the thread that copies it. */
static void slab_runs(void *arg, int64_t begin, int64_t end)
{
    slab_job *j = arg;
    const size_t outs_bytes = (size_t)j->nout * j->osz;
    /* the slab, then (BY_JOIN) a set of outputs on a 64-byte boundary: an
     * odd slab of bytes put int64 sums on an odd address */
    const size_t slab_bytes = ((size_t)(j->row_bytes * j->step) + 63) & ~(size_t)63;
    const int at = j->by == BY_JOIN && j->indices; /* and a set of their indices */
    const size_t at_bytes = at ? (size_t)j->nout * sizeof(int64_t) : 0;
    const size_t part_bytes = j->by == BY_JOIN ? ((outs_bytes + 7) & ~(size_t)7) : 0;
    char *buf = malloc(slab_bytes + part_bytes + at_bytes + 1);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    char *part = buf + slab_bytes;
    int64_t *part_at = at ? (int64_t *)(void *)(part + part_bytes) : NULL;
    for (int64_t run = begin; run < end; run++) {
        const int64_t u0 = run * j->nunits / j->nruns, u1 = (run + 1) * j->nunits / j->nruns;
        char *acc = j->by == BY_JOIN ? j->outs + (size_t)run * outs_bytes : NULL;
        int64_t *acc_at = at ? j->outs_at + run * j->nout : NULL;
        for (int64_t u = u0; u < u1 && !atomic_load(&j->failed); u++) {
            char *dst = j->by == BY_TREE ? j->outs + (size_t)u * outs_bytes
                        : u == u0 ? acc : part;
            if (slab_unit(j, u, buf, dst, u == u0 ? acc_at : part_at) != 0)
                atomic_store(&j->failed, 1);
            else if (at && u > u0)
                join_first_extremes(j->op, j->out->dtype, acc, acc_at, part, part_at, j->nout);
            else if (j->by == BY_JOIN && u > u0)
                reduce_join_outputs(j->op, j->out->dtype, acc, part, j->nout);
        }
    }
    free(buf);
}

/* The slabs of the Note's case `by`: 0, 1 when out of memory before
 * anything was written (the caller copies whole or reads in place), -1 on
 * an error. */
static int reduce_by_slabs(slab_job *j)
{
    const size_t outs_bytes = (size_t)j->nout * j->osz;
    int64_t nouts = 0;
    if (j->by == BY_TREE) {
        j->nunits = 0;
        if (tree_list(j, 0, j->rows)) {
            free(j->part);
            return 1;
        }
        nouts = j->nunits;
    } else {
        j->nunits = (j->rows + j->step - 1) / j->step;
    }
    const int threads = dispatch_get_num_threads();
    j->nruns = j->nunits < threads ? (int)j->nunits : threads;
    if (j->by == BY_JOIN) nouts = j->nruns;
    j->outs = nouts ? malloc((size_t)nouts * outs_bytes + 1) : NULL;
    const int at = j->by == BY_JOIN && j->indices;
    j->outs_at = at ? malloc((size_t)nouts * (size_t)j->nout * sizeof(int64_t)) : NULL;
    if (nouts && (!j->outs || (at && !j->outs_at))) {
        free(j->outs), free(j->outs_at), free(j->part);
        return 1;
    }
    dispatch_parallel_for(j->nruns, 1, 1, slab_runs, j);
    int rc = atomic_load(&j->failed) ? reduce_out_of_memory(j->op) : 0;
    if (rc == 0 && j->by != BY_KEPT) {
        char *acc = j->outs;
        if (j->by == BY_JOIN) {
            for (int r = 1; r < j->nruns; r++)
                if (at)
                    join_first_extremes(j->op, j->out->dtype, acc, j->outs_at,
                                        acc + (size_t)r * outs_bytes, j->outs_at + r * j->nout,
                                        j->nout);
                else
                    reduce_join_outputs(j->op, j->out->dtype, acc, acc + (size_t)r * outs_bytes,
                                        j->nout);
            if (at) memcpy(j->indices, j->outs_at, (size_t)j->nout * sizeof(int64_t));
        } else { /* the tree's parts added in its order; the mean's division and the
                  * sum's store as reduce_float.c's cols_store */
            int64_t k = 0;
            acc = tree_join(j, j->rows, &k);
            const int mean = dispatch_reduce_is_mean(j->op);
            for (int64_t i = 0; i < j->nout; i++) {
                if (j->out->dtype == DISPATCH_FLOAT32) {
                    float *v = (float *)(void *)acc + i;
                    *v = sum_store_f32(mean ? *v / (float)j->count : *v);
                } else {
                    double *v = (double *)(void *)acc + i;
                    *v = sum_store_f64(mean ? *v / (double)j->count : *v);
                }
            }
        }
        const dispatch_iter_operand *out = j->out;
        dispatch_iter_operand cp[2] = {*out, {acc, out->ndim, out->shape, j->ostr, out->dtype}};
        rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, cp, NULL);
    }
    free(j->outs), free(j->outs_at), free(j->part);
    return rc;
}

int reduce_through_copies(int op, const dispatch_iter_operand *in, uint32_t mask, int keepdim,
                          const dispatch_iter_operand *out, int64_t count, int64_t *indices)
{
    int64_t bytes;
    if (!dense_copy_fits(in, &bytes) || bytes == 0) return 1;
    int d0 = 0; /* the outermost dim of more than one element, if any */
    while (d0 < in->ndim && in->shape[d0] == 1) d0++;
    if (d0 < in->ndim && bytes > COPY_SLAB_BYTES) {
        slab_job j = {.op = op, .keepdim = keepdim, .d0 = d0, .in = in, .out = out,
                      .mask = mask, .count = count, .indices = indices,
                      .rows = in->shape[d0], .row_bytes = bytes / in->shape[d0], .nout = 1,
                      .osz = dispatch_dtype_itemsize(out->dtype)};
        const int kept = !((mask >> d0) & 1u);
        j.by = kept ? BY_KEPT
               : indices ? (dispatch_reduce_is_extreme(op) ? BY_JOIN : -1)
               : joins_exactly(op, in->dtype) ? BY_JOIN
               : !indices && j.row_bytes <= COPY_SLAB_BYTES / REDUCE_COLS_LEAF &&
                       sums_columns_by_tree(op, in, mask, count, d0, out)
                   ? BY_TREE
                   : -1;
        /* rows a slab holds (BY_TREE: its parts' most, 16 rows at least) */
        j.step = COPY_SLAB_BYTES / j.row_bytes > 1 ? COPY_SLAB_BYTES / j.row_bytes : 1;
        j.od = keepdim ? d0 : d0 - __builtin_popcount(mask & ((1u << d0) - 1u));
        for (int d = 0; d < out->ndim; d++) j.nout *= out->shape[d];
        j.outs_per_row = kept ? j.nout / out->shape[j.od] : 0;
        j.at_per_row = 1;
        for (int d = 0; d < in->ndim; d++)
            if (d != d0 && ((mask >> d) & 1u)) j.at_per_row *= in->shape[d];
        reduce_dense_strides(out->ndim, out->shape, (int64_t)j.osz, j.ostr);
        if (j.by >= 0) {
            int rc = reduce_by_slabs(&j);
            if (rc != 1) return rc;
        }
    }
    /* the whole copy */
    const dispatch_allocator *al = dispatch_allocator_get(DISPATCH_DEVICE_CPU);
    char *buf = al ? al->alloc((size_t)bytes + 1, al->ctx) : NULL;
    if (!buf) return 1;
    int64_t dstr[MAXD];
    dispatch_iter_operand c;
    int rc = dense_copy_into(in, buf, dstr, &c);
    if (rc == 0)
        rc = indices ? dispatch_iter_reduce_on(DISPATCH_DEVICE_CPU, op, &c, mask, keepdim, out, indices)
                     : reduce_planned(op, &c, mask, keepdim, out, out->ndim, out->shape, count);
    al->free(buf, al->ctx);
    return rc;
}
