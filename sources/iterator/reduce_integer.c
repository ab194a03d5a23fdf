/*
 * The reduction engine's exact paths: integers and bool (int64 sums and products that
 * wrap, max/min in the input's dtype: the integer kernels, threaded by Note
 * [Threaded integer reductions]), 0-dim inputs, and the FOLD rows of the
 * reduction table (dispatch/reduction_table.h) wherever no kernel of theirs
 * runs: every element folded into its output's scalar accumulator by the
 * row's IDENTITY and COMBINE. Planned by reduce_plan.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"

typedef dispatch_strided_plan plan;

/* The integer kernel of dtype (Note [Integer reductions] in
 * sources/kernels/int_reduce.dispatch.c); -1 when there is none. */
static int int_reduce(int op, int dtype, const char *p, intptr_t step, intptr_t n, char *acc,
                      intptr_t acc_step, intptr_t nouter, intptr_t outer_step,
                      intptr_t outer_acc_step)
{
    dispatch_rk_int_fn fn =
        (dispatch_rk_int_fn)reduce_chosen_kernel(DISPATCH_RK_INT, dtype);
    return fn ? fn(op, dtype, p, step, n, acc, acc_step, nouter, outer_step, outer_acc_step) : -1;
}


/* The engine's inner function of the integer (and 0-dim) reductions: n
 * input elements at ptrs[2] accumulated into their slots at ptrs[0]: for
 * floats a double each (ptrs[1] marks the slots seen), NaN propagating
 * through max/min, the input cast a chunk at a time; for integers int64
 * sums (wrapping) or max/min in the input's type, by the int_reduce kernel. */
typedef void (*fold_chunk_fn)(char *slots, intptr_t step, const char *xs, intptr_t m,
                              int is_float);

/* Per row, the step a = COMBINE(a, x) over m cast elements xs (doubles, or
 * int64 for integers) into their slots: the row's expressions compiled in
 * place, so a new row adds no branch here. */
#define DISPATCH_FOLD_CHUNK_(NAME, name, FAMILY, INTEGERS, IDENTITY, COMBINE_F, COMBINE_I, CUDA) \
    static void fold_chunk_##NAME(char *slots, intptr_t step, const char *xs, intptr_t m,  \
                                  int is_float)                                            \
    {                                                                                      \
        for (intptr_t e = 0; e < m; e++) {                                                 \
            char *slot = slots + e * step;                                                 \
            if (is_float) {                                                                \
                double x, a;                                                               \
                memcpy(&x, xs + e * 8, 8), memcpy(&a, slot, 8);                            \
                (void)x;                                                                   \
                a = COMBINE_F;                                                             \
                memcpy(slot, &a, 8);                                                       \
            } else {                                                                       \
                int64_t x, a;                                                              \
                memcpy(&x, xs + e * 8, 8), memcpy(&a, slot, 8);                            \
                (void)x;                                                                   \
                a = COMBINE_I;                                                             \
                memcpy(slot, &a, 8);                                                       \
            }                                                                              \
        }                                                                                  \
    }
DISPATCH_FORALL_REDUCTIONS(DISPATCH_FOLD_CHUNK_)
#undef DISPATCH_FOLD_CHUNK_

static const fold_chunk_fn fold_chunks[] = {
#define DISPATCH_FOLD_CHUNK_NAME_(NAME, ...) fold_chunk_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_FOLD_CHUNK_NAME_)
#undef DISPATCH_FOLD_CHUNK_NAME_
};

/* Each row's IDENTITY, the accumulators' start (SUM and FOLD rows). */
static const double identities[] = {
#define DISPATCH_IDENTITY_(NAME, name, FAMILY, INTEGERS, IDENTITY, ...) (double)(IDENTITY),
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_IDENTITY_)
#undef DISPATCH_IDENTITY_
};

typedef struct accumulate_ctx {
    int kind, is_float, dtype;
    dispatch_loop_fn cast; /* input dtype -> float64 or int64 */
} accumulate_ctx;

static void accumulate(char **ptrs, const intptr_t *steps, intptr_t n, void *arg) {
    const accumulate_ctx *c = arg;
    int op = dispatch_reduce_int_kernel_op(c->kind);
    if (!c->is_float && op != DISPATCH_COMBINE_NONE) {
        /* accumulators start at the identity: `seen` is not needed */
        int_reduce(op, c->dtype, ptrs[2], steps[2], n, ptrs[0], steps[0], 1, 0, 0);
        return;
    }
    enum { CHUNK = 256 };
    _Alignas(8) char buf[CHUNK * 8];
    for (intptr_t i = 0; i < n; i += CHUNK) {
        intptr_t m = n - i < CHUNK ? n - i : CHUNK;
        char *cd[2] = {buf, ptrs[2] + i * steps[2]};
        intptr_t cs[2] = {8, steps[2]};
        c->cast(cd, cs, m, NULL);
        if (!dispatch_reduce_is_extreme(c->kind)) { /* `seen` is read by max/min only */
            fold_chunks[c->kind](ptrs[0] + i * steps[0], steps[0], buf, m, c->is_float);
            continue;
        }
        int is_max = dispatch_reduce_kernel_op(c->kind) == DISPATCH_COMBINE_MAX;
        for (intptr_t e = 0; e < m; e++) {
            char *slot = ptrs[0] + (i + e) * steps[0];
            unsigned char *seen = (unsigned char *)ptrs[1] + (i + e) * steps[1];
            if (c->is_float) {
                double x, a;
                memcpy(&x, buf + e * 8, 8), memcpy(&a, slot, 8);
                /* max/min keep the first NaN and, of equals, the first
                 * (Note [Which zero, which NaN] in sum.dispatch.c) */
                if (!*seen || (isnan(x) && !isnan(a))) a = x;
                else if (!isnan(a) && (is_max ? x > a : x < a)) a = x;
                memcpy(slot, &a, 8);
            } else {
                int64_t x, a;
                memcpy(&x, buf + e * 8, 8), memcpy(&a, slot, 8);
                if (!*seen || (is_max ? x > a : x < a)) a = x;
                memcpy(slot, &a, 8);
            }
            *seen = 1;
        }
    }
}



/*
 * Note [Threaded integer reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The one-call integer matrix reduction (Note [Integer reductions]) split
 * across the threads. Integer sums and products (wrapping) and max/min are exact, so
 * no split changes a bit: runs with accumulators of their own (the rows
 * of sum(dim=1)) are shared out as they stand, so are the columns of
 * sum(dim=0); a reduction folded into one accumulator (a full sum) is cut
 * into parts, each folded into its own copy of the starting value, and the
 * parts then folded into the accumulator by the same kernel. Below
 * 2 * DISPATCH_ITER_GRAIN elements, or with one thread, it is one call.
 * Columns whose rows are short (a thread's share of a row under a page)
 * are not shared out: each thread would read part of every page of the
 * matrix, and the two threads stream the whole of it between them
 * (amax(dim=0) of (32768, 512) int64: 18.2 ms at 2 threads, 5.6 at one).
 * Their rows are cut into parts instead, each folded into its own row of
 * accumulators (a copy of the starting values), the parts' rows then
 * folded into the accumulators as rows of a matrix.
 */
typedef struct int_matrix_job {
    int op, dtype, acc_dtype;
    const char *p;
    intptr_t step, n;
    char *acc;
    intptr_t acc_step, nouter, outer_step, outer_acc_step;
    char *parts;        /* folded: one accumulator per part */
    intptr_t acc_size;  /* bytes of one accumulator */
    int64_t nparts;
} int_matrix_job;

static void int_matrix_runs(void *arg, int64_t b, int64_t e) {
    const int_matrix_job *j = arg;
    int_reduce(j->op, j->dtype, j->p + b * j->outer_step, j->step, j->n,
                                j->acc + b * j->outer_acc_step, j->acc_step, (intptr_t)(e - b),
                                j->outer_step, j->outer_acc_step);
}

static void int_matrix_cols(void *arg, int64_t b, int64_t e) {
    const int_matrix_job *j = arg;
    int_reduce(j->op, j->dtype, j->p + b * j->step, j->step, (intptr_t)(e - b),
                                j->acc + b * j->acc_step, j->acc_step, j->nouter, j->outer_step,
                                0);
}

static void int_matrix_part(void *arg, int64_t b, int64_t e) {
    const int_matrix_job *j = arg;
    for (int64_t k = b; k < e; k++) {
        char *slot = j->parts + k * j->acc_size;
        if (j->nouter > 1) { /* whole outer runs per part */
            int64_t o0 = j->nouter * k / j->nparts, o1 = j->nouter * (k + 1) / j->nparts;
            int_reduce(j->op, j->dtype, j->p + o0 * j->outer_step, j->step, j->n,
                                        slot, 0, (intptr_t)(o1 - o0), j->outer_step, 0);
        } else {
            int64_t i0 = j->n * k / j->nparts, i1 = j->n * (k + 1) / j->nparts;
            int_reduce(j->op, j->dtype, j->p + i0 * j->step, j->step,
                                        (intptr_t)(i1 - i0), slot, 0, 1, 0, 0);
        }
    }
}

/* Rows [o0, o1) of part k of the columns' rows, into part k's row of
 * accumulators (Note [Threaded integer reductions]). */
static void int_matrix_row_parts(void *arg, int64_t b, int64_t e) {
    const int_matrix_job *j = arg;
    const intptr_t row_bytes = j->n * j->acc_step;
    for (int64_t k = b; k < e; k++) {
        int64_t o0 = j->nouter * k / j->nparts, o1 = j->nouter * (k + 1) / j->nparts;
        int_reduce(j->op, j->dtype, j->p + o0 * j->outer_step, j->step, j->n,
                   j->parts + k * row_bytes, j->acc_step, (intptr_t)(o1 - o0), j->outer_step, 0);
    }
}

/* The columns' rows cut into parts (Note [Threaded integer reductions]);
 * 0, or -1 (MemoryError). */
static int int_matrix_columns_by_rows(int_matrix_job *j, int threads, const char *name) {
    const intptr_t row_bytes = j->n * j->acc_step;
    j->nparts = j->nouter < threads ? j->nouter : threads;
    j->parts = malloc((size_t)j->nparts * (size_t)row_bytes);
    if (!j->parts) return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", name);
    for (int64_t k = 0; k < j->nparts; k++)
        memcpy(j->parts + k * row_bytes, j->acc, (size_t)row_bytes);
    dispatch_parallel_for(j->nparts, 1, 1, int_matrix_row_parts, j);
    int_reduce(j->op, j->acc_dtype, j->parts, j->acc_step, j->n, j->acc, j->acc_step,
               (intptr_t)j->nparts, row_bytes, 0);
    free(j->parts);
    return 0;
}

/* Returns 0, or -1 (MemoryError) when the parts' accumulators cannot be had. */
static int int_matrix_reduce(int_matrix_job *j, const char *name) {
    int threads = dispatch_get_num_threads();
    int64_t total = (int64_t)j->n * (int64_t)j->nouter;
    if (j->acc_step != 0 && j->outer_acc_step == 0) /* columns: Note [Integer column streams] */
        j->op = dispatch_cols_op(j->op, total * (int64_t)dispatch_dtype_itemsize(j->dtype));
    if (threads > 1 && total >= 2 * DISPATCH_ITER_GRAIN) {
        if (j->nouter > 1 && j->outer_acc_step != 0) {
            dispatch_parallel_for(j->nouter, dispatch_parallel_grain(j->n), 1, int_matrix_runs, j);
            return 0;
        }
        if (j->acc_step != 0 && j->nouter >= 2 * (int64_t)threads &&
            j->outer_acc_step == 0 && j->acc_step == j->acc_size &&
            (int64_t)j->n * (int64_t)dispatch_dtype_itemsize(j->dtype) < 4096 * (int64_t)threads)
            return int_matrix_columns_by_rows(j, threads, name);
        if (j->acc_step != 0) {
            /* Cuts at the kernel's column blocks (128 bytes of input). */
            int64_t align = 128 / (int64_t)dispatch_dtype_itemsize(j->dtype);
            dispatch_parallel_for(j->n, dispatch_parallel_grain(j->nouter), align, int_matrix_cols, j);
            return 0;
        }
        int64_t nparts = total / DISPATCH_ITER_GRAIN;
        if (nparts > threads) nparts = threads;
        if (j->nouter > 1 && nparts > j->nouter) nparts = j->nouter;
        if (nparts > 1) {
            j->nparts = nparts;
            j->parts = malloc((size_t)nparts * (size_t)j->acc_size);
            if (!j->parts) return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", name);
            for (int64_t k = 0; k < nparts; k++)
                memcpy(j->parts + k * j->acc_size, j->acc, (size_t)j->acc_size);
            dispatch_parallel_for(nparts, 1, 1, int_matrix_part, j);
            int_reduce(j->op, j->acc_dtype, j->parts, j->acc_size,
                                        (intptr_t)nparts, j->acc, 0, 1, 0, 0);
            free(j->parts);
            return 0;
        }
    }
    int_reduce(j->op, j->dtype, j->p, j->step, j->n, j->acc, j->acc_step,
                                j->nouter, j->outer_step, j->outer_acc_step);
    return 0;
}



/* Every element folded into its output's accumulator: a double for floats
 * (NaN propagates through max/min), for integers and bool a wrapping int64
 * (sums, FOLD rows) or a max/min in the input's dtype, starting from the
 * identity (Note [Integer reductions] in sources/kernels/int_reduce.dispatch.c,
 * Note [Threaded integer reductions]); then cast into nout dense outputs. */
int reduce_accumulate(int op, const dispatch_iter_operand *in, uint32_t mask,
                      int64_t count, int64_t nout, char *out, int out_dtype)
{
    const char *name = dispatch_reduce_name(op);
    int is_float = dispatch_dtype_category_of(in->dtype) == DISPATCH_CAT_FLOAT;
    int extreme = dispatch_reduce_is_extreme(op);
    int acc_dtype = is_float ? DISPATCH_FLOAT64 : extreme ? in->dtype : DISPATCH_INT64;
    intptr_t acc_size = (intptr_t)dispatch_dtype_itemsize(acc_dtype);
    char *acc = calloc((size_t)nout, (size_t)acc_size);
    unsigned char *seen = is_float ? calloc((size_t)nout, 1) : NULL;
    if (!acc || (is_float && !seen)) {
        free(seen), free(acc);
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", name);
    }
    if (!extreme && identities[op] != 0) { /* calloc gave the other rows their 0 */
        int64_t one_i = (int64_t)identities[op];
        double one_d = identities[op];
        char *fill[2] = {acc, is_float ? (char *)&one_d : (char *)&one_i};
        intptr_t fs[2] = {acc_size, 0};
        int from = is_float ? DISPATCH_FLOAT64 : DISPATCH_INT64;
        dispatch_cast_loop_get(from, acc_dtype)(fill, fs, nout, NULL);
    } else if (!is_float && extreme) { /* a reduced dim has elements */
        /* the range of bool or the integer (Note [Integer facts] in dtype.h) */
        int64_t lo = dispatch_dtype_min(in->dtype), hi = dispatch_dtype_max(in->dtype);
        int64_t ident = dispatch_reduce_kernel_op(op) == DISPATCH_COMBINE_MAX ? lo : hi;
        char *fill[2] = {acc, (char *)&ident};
        intptr_t fs[2] = {acc_size, 0};
        dispatch_cast_loop_get(DISPATCH_INT64, acc_dtype)(fill, fs, nout, NULL);
    }
    /* Through the engine (Note [One strided engine] in sources/core/strided.c):
     * operands (accumulator, seen, input) over in's shape, the first two
     * with stride 0 in the reduced dims. */
    intptr_t bs[3][MAXD];
    intptr_t acc_stride = 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        int reduced = (mask >> d) & 1u, skip = reduced || in->shape[d] == 1;
        bs[0][d] = skip ? 0 : acc_stride * acc_size;
        bs[1][d] = skip || !seen ? 0 : acc_stride;
        bs[2][d] = in->shape[d] == 1 ? 0 : (intptr_t)in->strides[d];
        if (!reduced) acc_stride *= (intptr_t)in->shape[d];
    }
    unsigned char unused_seen = 0;
    char *acc_data[3] = {acc, seen ? (char *)seen : (char *)&unused_seen, in->data};
    accumulate_ctx actx = {op, is_float, in->dtype,
                           dispatch_cast_loop_get(in->dtype,
                                                  is_float ? DISPATCH_FLOAT64 : DISPATCH_INT64)};
    plan p;
    dispatch_strided_plan_init(&p, 3, acc_data, in->ndim, in->shape, bs);
    int int_op = dispatch_reduce_int_kernel_op(op);
    if (!is_float && p.ndim <= 2 && int_op != DISPATCH_COMBINE_NONE) { /* one call: rows or columns */
        int two = p.ndim == 2;
        int_matrix_job job = {
            .op = int_op, .dtype = in->dtype, .acc_dtype = acc_dtype,
            .p = p.data[2], .step = p.strides[2][0], .n = (intptr_t)p.shape[0],
            .acc = p.data[0], .acc_step = p.strides[0][0],
            .nouter = two ? (intptr_t)p.shape[1] : 1,
            .outer_step = two ? p.strides[2][1] : 0,
            .outer_acc_step = two ? p.strides[0][1] : 0, .acc_size = acc_size};
        if (int_matrix_reduce(&job, name) < 0) {
            free(seen), free(acc);
            return -1;
        }
    } else {
        dispatch_strided_plan_walk(&p, 0, p.numel, accumulate, &actx);
    }
    if (is_float && dispatch_reduce_is_sum(op)) {
        double *dacc = (double *)(void *)acc;
        int mean = dispatch_reduce_is_mean(op);
        for (int64_t o = 0; o < nout; o++) {
            if (mean) dacc[o] /= (double)count; /* 0/0: NaN, like NumPy */
            dacc[o] = sum_store_f64(dacc[o]);
        }
    }
    char *data[2] = {out, acc};
    intptr_t strides[2] = {(intptr_t)dispatch_dtype_itemsize(out_dtype), acc_size};
    dispatch_cast_loop_get(acc_dtype, out_dtype)(data, strides, nout, NULL);
    free(seen), free(acc);
    return 0;
}

