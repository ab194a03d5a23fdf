/*
 * The reduction engine's narrow-float paths (float16 and bfloat16: "half"
 * below means either): the rows and columns of a dense input read as they
 * are, accumulated in float32 by the narrow kernels (the bits of the float32
 * copy's reduction that the general path computes, without writing the
 * copy), rounded once. Chosen by reduce_plan.c; other layouts go to
 * reduce_narrow.c.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "reduce_internal.h"

/* The float16 row loops' shared state: rows of `count` halves at p, one
 * result each at out. */
typedef struct half_rows_job {
    int dtype; /* float16 or bfloat16 */
    const uint16_t *p;
    int64_t count;
    int op; /* the reduction: a sum, mean, max or min */
    uint16_t *out;
    atomic_int nan; /* max/min: a row held a NaN */
} half_rows_job;

static void half_sum_rows_range(void *arg, int64_t b, int64_t e) {
    half_rows_job *j = arg;
    dispatch_loop_fn narrow = dispatch_cast_loop_get(DISPATCH_FLOAT32, j->dtype);
    enum { CHUNK = 256 }; /* rows summed per kernel call, into float32 */
    float s[CHUNK];
    for (int64_t r = b; r < e; r += CHUNK) {
        intptr_t n = (intptr_t)(e - r < CHUNK ? e - r : CHUNK);
        ((dispatch_rk_rows_fn)reduce_chosen_kernel(DISPATCH_RK_SUM_ROWS, j->dtype))(
            (const char *)(j->p + r * j->count), (intptr_t)j->count * 2, 2, (intptr_t)j->count,
            n, (char *)s, sizeof(float));
        int mean = dispatch_reduce_is_mean(j->op);
        for (intptr_t k = 0; k < n; k++)
            s[k] = sum_store_f32(mean ? s[k] / (float)j->count : s[k]);
        char *data[2] = {(char *)(j->out + r), (char *)s};
        intptr_t steps[2] = {2, 4};
        narrow(data, steps, n, NULL);
    }
}

/* float16 sum (or mean) of a contiguous input over its trailing dims into
 * nout contiguous halves: each row of `count` halves summed in float32
 * straight from the halves (the float16 SUM kernel: the bits of summing
 * a float32 copy, as the general path does, without writing the copy; the
 * mean divided in float32 as the float32 path divides), rounded once to
 * float16. */
void reduce_half_sum_rows(int dtype, const uint16_t *p, int op, int64_t nout, int64_t count,
                          uint16_t *out)
{
    half_rows_job j = {.dtype = dtype, .p = p, .count = count, .op = op, .out = out};
    int mean = dispatch_reduce_is_mean(op);
    if (nout == 1) { /* one row: its tree's top levels split across the threads */
        float s = reduce_sum_narrow(dtype, (const char *)p, 2, count);
        if (mean) s = s / (float)count;
        s = sum_store_f32(s);
        char *data[2] = {(char *)out, (char *)&s};
        intptr_t steps[2] = {2, 4};
        dispatch_cast_loop_get(DISPATCH_FLOAT32, dtype)(data, steps, 1, NULL);
    } else {
        dispatch_parallel_for(nout, dispatch_parallel_grain(count), 1, half_sum_rows_range, &j);
    }
}

static void half_ext_rows_range(void *arg, int64_t b, int64_t e) {
    half_rows_job *j = arg;
    for (int64_t r = b; r < e && !atomic_load_explicit(&j->nan, memory_order_relaxed); r++)
        if (!((dispatch_rk_ext_f16_fn)reduce_chosen_kernel(DISPATCH_RK_EXT, j->dtype))(
                dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN, j->p + r * j->count,
                (intptr_t)j->count, &j->out[r]))
            atomic_store(&j->nan, 1);
}

/* float16 max or min of a contiguous input over its trailing dims into
 * nout contiguous halves: each row of `count` halves by the integer-keyed
 * kernel (Note [float16 max and min as integers] in
 * sources/kernels/sum.dispatch.c), with no float32 copy. 1 when done; 0
 * when a row holds a NaN (the caller takes the float32 path, which
 * propagates it, and writes every output again). */
int reduce_half_ext_rows(int dtype, const uint16_t *p, int kind, int64_t nout, int64_t count,
                         uint16_t *out)
{
    dispatch_rk_ext_f16_fn ext = (dispatch_rk_ext_f16_fn)reduce_chosen_kernel(DISPATCH_RK_EXT, dtype);
    int is_min = dispatch_reduce_kernel_op(kind) == DISPATCH_COMBINE_MIN;
    half_rows_job j = {.dtype = dtype, .p = p, .count = count, .op = kind, .out = out};
    atomic_init(&j.nan, 0);
    int threads = dispatch_get_num_threads();
    if (nout == 1 && threads > 1 && count >= 2 * DISPATCH_ITER_GRAIN) {
        /* One row cut into parts, one per thread (the extreme of any split
         * is the same element), their extremes then taken by the kernel. */
        enum { MAX_PARTS = 64 };
        uint16_t part[MAX_PARTS];
        int64_t nparts = count / DISPATCH_ITER_GRAIN;
        if (nparts > threads) nparts = threads;
        if (nparts > MAX_PARTS - 1) nparts = MAX_PARTS - 1; /* room for the remainder */
        half_rows_job pj = {.dtype = dtype, .p = j.p, .count = count / nparts, .op = kind, .out = part};
        atomic_init(&pj.nan, 0);
        dispatch_parallel_for(nparts, 1, 1, half_ext_rows_range, &pj);
        int64_t done = pj.count * nparts; /* the remainder (< nparts halves) joins last */
        return !atomic_load(&pj.nan) &&
               (done == count ||
                ext(is_min, j.p + done, (intptr_t)(count - done), &part[nparts++])) &&
               ext(is_min, part, (intptr_t)nparts, &j.out[0]);
    }
    dispatch_parallel_for(nout, dispatch_parallel_grain(count), 1, half_ext_rows_range, &j);
    return !atomic_load(&j.nan);
}


typedef struct half_cols_job {
    int dtype;
    const char *p;
    intptr_t rstride; /* bytes between rows: 0 for a broadcast */
    int64_t count, ncols;
    int kop;
    dispatch_rk_fold_cols_fn fold; /* a FOLD row's narrow column kernel, else NULL */
    float *vals;
    atomic_int failed; /* a range could not have its scratch */
} half_cols_job;

enum { HALF_COLS_BLOCK = 1024 }; /* columns per kernel call, as the iterator takes them */

/* Columns [b, e), a block at a time, each range with its own scratch. */
static void half_cols_range(void *arg, int64_t b, int64_t e) {
    half_cols_job *j = arg;
    if (j->fold) { /* float32 results of the widened columns: Note [Product columns] */
        /* in blocks of columns down the rows: whole rows (more columns a call)
         * measured slower for a narrow float, from a cache and from memory */
        for (int64_t c0 = b; c0 < e; c0 += DISPATCH_FOLD_COLS_NARROW) {
            int64_t w = e - c0 < DISPATCH_FOLD_COLS_NARROW ? e - c0 : DISPATCH_FOLD_COLS_NARROW;
            j->fold(j->p + c0 * 2, j->rstride, (intptr_t)j->count, (intptr_t)w, j->vals + c0);
        }
        return;
    }
    int64_t bw = e - b < HALF_COLS_BLOCK ? e - b : HALF_COLS_BLOCK;
    float *scratch = NULL;
    if (dispatch_cols_needs_scratch(j->kop) &&
        (scratch = malloc((size_t)dispatch_reduce_cols_scratch(j->count) * (size_t)bw *
                          sizeof *scratch)) == NULL) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t c0 = b; c0 < e; c0 += HALF_COLS_BLOCK) {
        int64_t w = e - c0 < HALF_COLS_BLOCK ? e - c0 : HALF_COLS_BLOCK;
        ((dispatch_rk_cols_f32_fn)reduce_chosen_kernel(DISPATCH_RK_COLS, j->dtype))(
            j->kop, j->p + c0 * 2, j->rstride, (intptr_t)j->count, (intptr_t)w,
            j->vals + c0, scratch);
    }
    free(scratch);
}

/* float16 and bfloat16 sum, mean, max, min of a contiguous input over its
 * leading dims into ncols contiguous halves: the float32 column kernel over
 * the halves as they are (the bits of the float32 copy's columns, as the
 * general path computes them, without the copy), in blocks of 1024 columns
 * as the iterator takes them, rounded once to the dtype; a FOLD row (prod)
 * by its narrow FOLD_COLS kernel, which the caller checked is there. */
int reduce_half_cols(int dtype, const char *p, intptr_t rstride, int kind, int64_t ncols,
                     int64_t count, uint16_t *out)
{
    float *vals = malloc((size_t)ncols * sizeof *vals);
    if (!vals) return reduce_out_of_memory(kind);
    /* Columns are reduced each on its own, so any split of them between
     * threads gives the same bits; cuts fall on 64-column boundaries. */
    half_cols_job j = {.dtype = dtype, .p = p, .rstride = rstride, .count = count, .ncols = ncols,
                       .vals = vals};
    j.kop = dispatch_cols_op(dispatch_reduce_kernel_op(kind), rstride ? count * ncols * 2 : 0);
    if (dispatch_reduce_is_fold(kind))
        j.fold = (dispatch_rk_fold_cols_fn)reduce_chosen_kernel(DISPATCH_RK_FOLD_COLS_OF(kind),
                                                                dtype);
    atomic_init(&j.failed, 0);
    dispatch_parallel_for(ncols, dispatch_parallel_grain(count), 64, half_cols_range, &j);
    if (atomic_load(&j.failed)) {
        free(vals);
        return reduce_out_of_memory(kind);
    }
    if (dispatch_reduce_is_sum(kind)) {
        int mean = dispatch_reduce_is_mean(kind);
        for (int64_t c = 0; c < ncols; c++)
            vals[c] = sum_store_f32(mean ? vals[c] / (float)count : vals[c]);
    }
    char *data[2] = {(char *)out, (char *)vals};
    intptr_t steps[2] = {2, 4};
    dispatch_cast_loop_get(DISPATCH_FLOAT32, dtype)(data, steps, (intptr_t)ncols, NULL);
    free(vals);
    return 0;
}

