/*
 * The reduction engine's float32 and float64 paths (Note [Deterministic
 * reductions]): one or more dims of any layout, out of any strides. Rows
 * (the reduced elements of each output in one run: the row kernels),
 * columns (the outer-dim case: the column kernels across a contiguous kept
 * dim), gathers (reduced dims that one stride cannot step: copied first),
 * and the tree split of one long row across the threads. Which kernels a
 * reduction runs is its family (dispatch/reduction_table.h). Planned by
 * reduce_plan.c.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"

typedef dispatch_strided_plan plan;

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    dispatch_format_shape(buf, cap, ndim, shape); /* the one formatter (core/error.c) */
}

/*
 * Note [Deterministic reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A sum over a set of dims is, for each output element, the SIMD pairwise
 * sum of the reduced elements in row-major order of the reduced dims. When
 * the reduced dims cannot be stepped with one stride, they are first copied
 * into a contiguous buffer (row-major), so the order never depends on the
 * layout. The pairwise sum's own tree depends only on the count (Note [Sum
 * order independent of the vector width] in sources/kernels/sum.dispatch.c).
 * Threads split the *output* elements, and a full reduction to one element
 * is split along that same tree: the top levels of the tree are cut into
 * subranges (split_points), summed in parallel, and added back in tree
 * order. So the bits never depend on the thread count either.
 *
 * Note [The NaN and the zero of a sum]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Which NaN an addition returns is the hardware's choice (x86: the first
 * operand's, and a new one, inf + -inf, is the negative "indefinite"
 * 0xffc00000; AArch64 returns the positive default NaN), and the compiler
 * may swap the operands of an add. So the NaN a sum tree ends with depended
 * on which NaN met which, that is on the cuts of the threads and the layout
 * (a 400,000-element sum was -NaN at 1 thread and +NaN at 2). The rule: a
 * sum or mean that is NaN is the positive quiet NaN with no payload
 * (float32 0x7fc00000, float64 0x7ff8000000000000, float16 0x7e00, bfloat16
 * 0x7fc0: NumPy's and torch's `nan`), whatever NaNs the input held. And a
 * sum or mean is never -0.0, as torch's (its sums start at +0.0; our trees
 * start at -0.0 so that padding changes no bit, which left a sum of -0.0s
 * -0.0 here and +0.0 for a 0-dim input). Both are applied once per output
 * where the result is stored (sum_store_*: v + 0.0 is v for every v but
 * -0.0), so no loop pays for them.
 */

/* (sum_store_f32 and sum_store_f64, in reduce_internal.h, apply it.) */

typedef struct reduce_job {
    int op, dtype;
    int64_t count;       /* reduced elements per output */
    intptr_t rstride;    /* their byte stride */
    int no;              /* outer dims (output elements), innermost first */
    int64_t oshape[MAXD];
    intptr_t istrides[MAXD], ostrides[MAXD];
    const char *in;
    char *out;
} reduce_job;

/* The max or min of one output's elements (sums go through reduce_inner's
 * row kernel). */
static double extreme_one(const reduce_job *j, const char *p)
{
    if (j->count < 1) return 0;
    int is_min = dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN;
    char v[8];
    reduce_ext_rows(j->dtype, is_min, p, 0, j->rstride, j->count, 1, v, 8);
    return reduce_real_at(j->dtype, v);
}

/*
 * The outer-dim reduction: the reduced elements of one output are rstride
 * apart, and a kept dim (`col`) is contiguous in the input. The kernel runs
 * across that dim's columns (Note [Column reductions] in
 * sources/kernels/sum.dispatch.c). A unit of work is a block of up to
 * COL_BLOCK_BYTES of columns of one "plane" (one index of the other kept
 * dims) over one part of the rows. The rows are cut into parts along the
 * kernel's own tree (its top levels, at most ROW_PART_DEPTH deep, parts of
 * at least ROW_PART_MIN rows, or ROW_PART_MIN_FEW when there are too few
 * column blocks to give every thread work), and the parts' results are
 * combined in the tree's order: the bits are those of one call over all
 * rows, and neither the cut, the blocks nor the threads that take them
 * change one. A FOLD row with a column kernel (FOLD_COLS_<NAME>: Note
 * [Product columns] in sources/kernels/prod.dispatch.c) runs here too, its
 * columns in blocks of FOLD_COL_BLOCK, so that threads still share a matrix
 * of few columns, and its rows not cut. Its kernel writes the float64 fold,
 * which the store rounds once, so an input of DISPATCH_COLS_STREAM_BYTES or
 * more has its rows cut along the fold's own split (dispatch_fold_split,
 * whole blocks) and the exact parts multiplied in that order (Note [Product
 * columns from whole rows]): its columns go in blocks of 512, whole rows of
 * a (n, 512) matrix, which the kernel reads in address order.
 */
#define COL_BLOCK_BYTES 4096
#define COL_LEAF REDUCE_COLS_LEAF
#define ROW_PART_MIN 2048
#define ROW_PART_MIN_FEW 256
#define ROW_PART_DEPTH 3
#define FOLD_COL_BLOCK 128

typedef struct cols_job {
    const reduce_job *j;
    int col;          /* index of the contiguous kept dim in j->oshape */
    int kop;          /* the kernels' combine: dispatch_reduce_kernel_op */
    int cols_op;      /* the COLS kernel's op: kop, streamed for a large input */
    dispatch_rk_fold_cols_fn fold; /* a FOLD row's column kernel, else NULL */
    int fold_parts;   /* a fold whose rows are cut: float64, streamed (above) */
    int64_t ncols, nblocks, bcols;
    int64_t cstep;    /* bytes from one column to the next: the element's size, or
                         twice it (COLS_EVEN: Note [Columns of every other element]) */
    int nparts;
    int64_t part_min; /* rows: ROW_PART_MIN, or fewer when threads need units */
    int64_t pbegin[1 << ROW_PART_DEPTH], pcount[1 << ROW_PART_DEPTH];
    char *parts;      /* [plane][block][part][bcols] when nparts > 1 */
    int levels;       /* scratch rows of the sum's tree */
    atomic_int failed;
} cols_job;

/* Where the kernel splits n rows (its tree's, or the fold's), 0 where the
 * cut stops: a part of n rows is then one call. */
static int64_t part_split(const cols_job *c, int64_t n, int depth)
{
    if (depth == 0 || n < 2 * c->part_min) return 0;
    if (c->fold) return n > DISPATCH_FOLD_BLOCK ? dispatch_fold_split(n) : 0;
    return reduce_cols_tree_split(n);
}

int64_t reduce_cols_tree_split(int64_t n)
{
    return n > COL_LEAF ? ((n / COL_LEAF + 1) / 2) * COL_LEAF : 0;
}

static void cut_rows(cols_job *c, int64_t begin, int64_t n, int depth)
{
    int64_t h = part_split(c, n, depth);
    if (h == 0) {
        c->pbegin[c->nparts] = begin;
        c->pcount[c->nparts++] = n;
        return;
    }
    cut_rows(c, begin, h, depth - 1);
    cut_rows(c, begin + h, n - h, depth - 1);
}

/* The input and output of unit (plane, block): column c0 of that plane. */
static void cols_unit_base(const cols_job *c, int64_t plane, int64_t c0, const char **ip,
                           char **op)
{
    const reduce_job *j = c->j;
    *ip = j->in + c0 * c->cstep;
    *op = j->out + c0 * (int64_t)j->ostrides[c->col];
    int64_t rest = plane;
    for (int d = 0; d < j->no; d++) {
        if (d == c->col) continue;
        int64_t i = rest % j->oshape[d];
        rest /= j->oshape[d];
        *ip += i * j->istrides[d];
        *op += i * j->ostrides[d];
    }
}

/* Write w finished column values (mean divided) to the output. */
static void store_real(char *op, int dtype, double v);

static void cols_store(const cols_job *c, char *op, const char *vals, int64_t w)
{
    const reduce_job *j = c->j;
    intptr_t os = j->ostrides[c->col];
    int mean = dispatch_reduce_is_mean(j->op), summed = dispatch_reduce_is_sum(j->op);
    for (int64_t k = 0; k < w; k++) {
        if (c->fold) { /* a fold's float64 value, rounded once to the dtype */
            double v;
            memcpy(&v, vals + k * 8, 8);
            store_real(op + k * os, j->dtype, v);
        } else if (j->dtype == DISPATCH_FLOAT32) {
            float v;
            memcpy(&v, vals + k * 4, 4);
            if (mean) v = v / (float)j->count;
            if (summed) v = sum_store_f32(v);
            memcpy(op + k * os, &v, 4);
        } else {
            double v;
            memcpy(&v, vals + k * 8, 8);
            if (mean) v = v / (double)j->count;
            if (summed) v = sum_store_f64(v);
            memcpy(op + k * os, &v, 8);
        }
    }
}

static void cols_range(void *arg, int64_t begin, int64_t end)
{
    cols_job *c = arg;
    const reduce_job *j = c->j;
    int f32 = j->dtype == DISPATCH_FLOAT32;
    _Alignas(64) char buf[COL_BLOCK_BYTES];
    char *scratch = NULL;
    if (!c->fold && dispatch_cols_needs_scratch(c->cols_op) &&
        (scratch = malloc((size_t)c->levels * (size_t)COL_BLOCK_BYTES)) == NULL) {
        atomic_store(&c->failed, 1);
        return;
    }
    for (int64_t u = begin; u < end; u++) {
        int part = (int)(u % c->nparts);
        int64_t pb = u / c->nparts; /* plane * nblocks + block */
        int64_t plane = pb / c->nblocks, c0 = (pb % c->nblocks) * c->bcols;
        int64_t w = c->ncols - c0 < c->bcols ? c->ncols - c0 : c->bcols;
        const char *ip;
        char *op;
        cols_unit_base(c, plane, c0, &ip, &op);
        ip += c->pbegin[part] * j->rstride;
        char *dst = c->nparts > 1 ? c->parts + (size_t)u * COL_BLOCK_BYTES : buf;
        const int kind = c->cstep == (f32 ? 4 : 8) ? DISPATCH_RK_COLS : DISPATCH_RK_COLS_EVEN;
        if (c->fold)
            c->fold(ip, j->rstride, (intptr_t)c->pcount[part], (intptr_t)w, dst);
        else if (f32)
            ((dispatch_rk_cols_f32_fn)reduce_chosen_kernel(kind, DISPATCH_FLOAT32))(
                c->cols_op, ip, j->rstride, (intptr_t)c->pcount[part], (intptr_t)w,
                (float *)(void *)dst, scratch);
        else
            ((dispatch_rk_cols_f64_fn)reduce_chosen_kernel(kind, DISPATCH_FLOAT64))(
                c->cols_op, ip, j->rstride, (intptr_t)c->pcount[part], (intptr_t)w,
                (double *)(void *)dst, scratch);
        if (c->nparts == 1) cols_store(c, op, buf, w);
    }
    free(scratch);
}

/* Combine parts [*i, ...) of one (plane, block) in the tree's order into
 * the part at index `into` (its own first part); max/min keep the earlier
 * part's NaN or zero (Note [Which zero, which NaN] in
 * sources/kernels/sum.dispatch.c). */
static void cols_combine(cols_job *c, char *base, int64_t n, int depth, int *i, int64_t w,
                         char *into)
{
    int64_t h = part_split(c, n, depth);
    if (h == 0) {
        if (into != base + (size_t)*i * COL_BLOCK_BYTES)
            memcpy(into, base + (size_t)*i * COL_BLOCK_BYTES, COL_BLOCK_BYTES);
        (*i)++;
        return;
    }
    _Alignas(64) char b[COL_BLOCK_BYTES];
    cols_combine(c, base, h, depth - 1, i, w, into);
    cols_combine(c, base, n - h, depth - 1, i, w, b);
    if (!c->fold) {
        reduce_join_outputs(c->j->op, c->j->dtype, into, b, w);
        return;
    }
    for (int64_t k = 0; k < w; k++) { /* the fold's float64 parts (fold_parts): its combine */
        double x, y;
        memcpy(&x, into + k * 8, 8), memcpy(&y, b + k * 8, 8);
        x = dispatch_reduce_fold_combine(c->j->op, x, y);
        memcpy(into + k * 8, &x, 8);
    }
}

static void cols_finish(void *arg, int64_t begin, int64_t end)
{
    cols_job *c = arg;
    for (int64_t pb = begin; pb < end; pb++) {
        int64_t plane = pb / c->nblocks, c0 = (pb % c->nblocks) * c->bcols;
        int64_t w = c->ncols - c0 < c->bcols ? c->ncols - c0 : c->bcols;
        char *base = c->parts + (size_t)(pb * c->nparts) * COL_BLOCK_BYTES;
        int i = 0;
        cols_combine(c, base, c->j->count, ROW_PART_DEPTH, &i, w, base);
        const char *ip;
        char *op;
        cols_unit_base(c, plane, c0, &ip, &op);
        cols_store(c, op, base, w);
    }
}

static int reduce_cols(const reduce_job *j, int col, int64_t nout, dispatch_rk_fold_cols_fn fold)
{
    size_t isz = j->dtype == DISPATCH_FLOAT32 ? 4 : 8;
    cols_job c = {.j = j, .col = col, .ncols = j->oshape[col], .fold = fold,
                  .cstep = j->istrides[col]};
    c.kop = dispatch_reduce_kernel_op(j->op);
    /* the bytes its rows span (every other column's: twice its elements') */
    c.cols_op = dispatch_cols_op(c.kop, j->rstride ? j->count * nout * c.cstep : 0);
    c.fold_parts = fold && dispatch_fold_in_blocks(j->op) && j->rstride &&
                   j->count * nout * (int64_t)isz >= DISPATCH_COLS_STREAM_BYTES;
    /* a fold's parts are float64 whatever the dtype */
    c.bcols = !fold ? (int64_t)(COL_BLOCK_BYTES / isz)
              : c.fold_parts ? (int64_t)(COL_BLOCK_BYTES / sizeof(double)) : FOLD_COL_BLOCK;
    c.nblocks = (c.ncols + c.bcols - 1) / c.bcols;
    c.levels = dispatch_reduce_cols_scratch(j->count);
    atomic_init(&c.failed, 0);
    int64_t planes = nout / c.ncols, pbs = planes * c.nblocks;
    /* Few column blocks (e.g. sum(dim=0) of (2048, 512)): cut the rows finer
     * so every thread has units; the parts follow the kernel's tree, so the
     * bits are the same however fine the cut (the note above). */
    int threads = dispatch_get_num_threads();
    c.part_min = threads > 1 && pbs < 2 * threads ? ROW_PART_MIN_FEW : ROW_PART_MIN;
    cut_rows(&c, 0, j->count, fold && !c.fold_parts ? 0 : ROW_PART_DEPTH);
    int64_t units = pbs * c.nparts;
    if (c.nparts > 1) {
        size_t bytes;
        if (__builtin_mul_overflow((size_t)units, (size_t)COL_BLOCK_BYTES, &bytes) ||
            (c.parts = malloc(bytes)) == NULL) {
            return dispatch_error_set(DISPATCH_ERR_MEMORY,
                                      "reduction: cannot allocate %lld partial results",
                                      (long long)units);
        }
    }
    int64_t per_unit = (j->count / c.nparts) * (c.ncols < c.bcols ? c.ncols : c.bcols);
    dispatch_parallel_for(units, dispatch_parallel_grain(per_unit), 1, cols_range, &c);
    if (c.nparts > 1 && !atomic_load(&c.failed)) {
        int64_t per_pb = (int64_t)c.nparts * c.bcols;
        dispatch_parallel_for(pbs, DISPATCH_ITER_GRAIN / per_pb + 1, 1, cols_finish, &c);
    }
    free(c.parts);
    if (atomic_load(&c.failed)) {
        return dispatch_error_set(DISPATCH_ERR_MEMORY,
                                  "reduction: cannot allocate the column sum's scratch");
    }
    return 0;
}

/* One float32 or float64 result, computed in double, stored at op (unaligned). */
static void store_real(char *op, int dtype, double v)
{
    if (dtype == DISPATCH_FLOAT32) {
        float f = (float)v;
        memcpy(op, &f, sizeof f);
    } else {
        memcpy(op, &v, sizeof v);
    }
}

/* The engine's inner function of a reduction: n outputs at ptrs[0], each
 * reduced from its count elements starting at ptrs[1]. */
static void reduce_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg)
{
    const reduce_job *j = arg;
    if (dispatch_reduce_is_sum(j->op)) {
        /* All n sums in one call: the kernel reads two rows at a time where
         * that is faster (Note [Two streams] in sources/kernels/sum.dispatch.c). */
        int f32 = j->dtype == DISPATCH_FLOAT32;
        (f32 ? CHOSEN_KERNEL(SUM_ROWS, FLOAT32, dispatch_rk_rows_fn)
             : CHOSEN_KERNEL(SUM_ROWS, FLOAT64, dispatch_rk_rows_fn))(
            ptrs[1], steps[1], j->rstride, (intptr_t)j->count, n, ptrs[0], steps[0]);
        const int mean = dispatch_reduce_is_mean(j->op);
        for (intptr_t e = 0; e < n; e++) { /* mean's division; Note [The NaN and the zero of a sum] */
            char *op = ptrs[0] + e * steps[0];
            if (f32) {
                float f;
                memcpy(&f, op, sizeof f);
                if (mean) f = f / (float)j->count;
                f = sum_store_f32(f);
                memcpy(op, &f, sizeof f);
            } else {
                double d;
                memcpy(&d, op, sizeof d);
                if (mean) d = d / (double)j->count;
                d = sum_store_f64(d);
                memcpy(op, &d, sizeof d);
            }
        }
        return;
    }
    if (dispatch_reduce_is_fold(j->op)) { /* one call of the row's kernel per output */
        dispatch_rk_fold_fn fold =
            (dispatch_rk_fold_fn)reduce_chosen_kernel(DISPATCH_RK_FOLD_OF(j->op),
                                                      j->dtype);
        for (intptr_t e = 0; e < n; e++) {
            store_real(ptrs[0] + e * steps[0], j->dtype,
                       fold(ptrs[1] + e * steps[1], j->rstride, (intptr_t)j->count));
        }
        return;
    }
    if (j->count >= 1) {
        /* Rows of max or min: the row kernel, two rows at a time where that
         * is faster, by vectors where the elements are one or two apart
         * (Note [Extremes of every other element]). */
        reduce_ext_rows(j->dtype, dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN,
                        ptrs[1], steps[1], j->rstride, j->count, n, ptrs[0], steps[0]);
        return;
    }
    for (intptr_t e = 0; e < n; e++) {
        store_real(ptrs[0] + e * steps[0], j->dtype, extreme_one(j, ptrs[1] + e * steps[1]));
    }
}

typedef struct reduce_walk {
    reduce_job *j;
    plan p; /* (out, in) over the kept dims */
} reduce_walk;

static void reduce_range(void *arg, int64_t begin, int64_t end)
{
    reduce_walk *w = arg;
    dispatch_strided_plan_walk(&w->p, begin, end, reduce_inner, w->j);
}

/* The leaf size of sum.dispatch.c's tree (256-byte rows x 16; float16 and
 * bfloat16 add in float32, on the float32 tree). */
static int64_t sum_leaf(int dtype) { return dtype == DISPATCH_FLOAT64 ? 512 : 1024; }

/* How deep a sum's tree is cut for the threads: at most 2^SPLIT_DEPTH parts. */
#define SPLIT_DEPTH 5

typedef struct split_sum {
    int op, dtype;
    const char *p;
    intptr_t stride;
    int64_t begin[1 << SPLIT_DEPTH], count[1 << SPLIT_DEPTH];
    double part[1 << SPLIT_DEPTH];
} split_sum;

/* The leaf of the kernel's tree (a FOLD row's block: Note [Fold blocks]),
 * and where it splits n elements. */
static int64_t tree_leaf(const split_sum *s)
{
    return dispatch_reduce_is_fold(s->op) ? DISPATCH_FOLD_BLOCK : sum_leaf(s->dtype);
}

static int64_t tree_split(const split_sum *s, int64_t n)
{
    return ((n / tree_leaf(s) + 1) / 2) * tree_leaf(s);
}

/* Cut [begin, begin+n) along the kernel's tree to at most `depth` levels. */
static void split_points(split_sum *s, int64_t begin, int64_t n, int depth, int *np)
{
    int64_t leaf = tree_leaf(s);
    if (depth == 0 || n <= leaf * 4) {
        s->begin[*np] = begin;
        s->count[*np] = n;
        (*np)++;
        return;
    }
    int64_t h = tree_split(s, n);
    split_points(s, begin, h, depth - 1, np);
    split_points(s, begin + h, n - h, depth - 1, np);
}

/* Add the parts back in the same tree shape. */
static double combine(const split_sum *s, int64_t n, int depth, int *i)
{
    int64_t leaf = tree_leaf(s);
    if (depth == 0 || n <= leaf * 4) return s->part[(*i)++];
    int64_t h = tree_split(s, n);
    double a = combine(s, h, depth - 1, i);
    double b = combine(s, n - h, depth - 1, i);
    if (dispatch_reduce_is_fold(s->op)) return dispatch_reduce_fold_combine(s->op, a, b);
    /* ties and NaNs keep the earlier part's: Note [Which zero, which NaN] */
    int kop = dispatch_reduce_kernel_op(s->op);
    if (kop == DISPATCH_COMBINE_MAX) return a != a || !(b != b || b > a) ? a : b;
    if (kop == DISPATCH_COMBINE_MIN) return a != a || !(b != b || b < a) ? a : b;
    if (s->dtype != DISPATCH_FLOAT64) return (double)((float)a + (float)b);
    return a + b;
}

static void split_sum_range(void *arg, int64_t begin, int64_t end)
{
    split_sum *s = arg;
    for (int64_t i = begin; i < end; i++) {
        const char *p = s->p + s->begin[i] * s->stride;
        if (dispatch_reduce_is_extreme(s->op)) {
            reduce_job j = {.op = s->op, .dtype = s->dtype, .count = s->count[i],
                            .rstride = s->stride};
            s->part[i] = extreme_one(&j, p);
            continue;
        }
        intptr_t n = (intptr_t)s->count[i];
        if (dispatch_reduce_is_fold(s->op)) { /* the row's kernel over its part of the tree */
            s->part[i] = ((dispatch_rk_fold_fn)reduce_chosen_kernel(DISPATCH_RK_FOLD_OF(s->op),
                                                                   s->dtype))(p, s->stride, n);
            continue;
        }
        s->part[i] =
            s->dtype == DISPATCH_FLOAT64
                ? CHOSEN_KERNEL(SUM, FLOAT64, dispatch_rk_sum_f64_fn)(p, s->stride, n)
                : (double)((dispatch_rk_sum_f32_fn)reduce_chosen_kernel(DISPATCH_RK_SUM, s->dtype))(
                      p, s->stride, n); /* float32, or a narrow float summed in float32 */
    }
}

/* The sum of n >= 1 narrow floats (float16 or bfloat16 bits) `stride`
 * bytes apart in float32, its top levels split across the threads along the
 * kernel's own tree (as a float32 sum over one output is): the narrow SUM
 * kernel's bits for any count, that is the bits of summing a float32 copy. */
float reduce_sum_narrow(int dtype, const char *p, intptr_t stride, int64_t n)
{
    if (n < 2 * DISPATCH_ITER_GRAIN || dispatch_get_num_threads() < 2)
        return ((dispatch_rk_sum_f32_fn)reduce_chosen_kernel(DISPATCH_RK_SUM, dtype))(
            p, stride, (intptr_t)n);
    split_sum s = {.op = DISPATCH_REDUCE_SUM, .dtype = dtype, .p = p, .stride = stride};
    int parts = 0;
    split_points(&s, 0, n, SPLIT_DEPTH, &parts);
    dispatch_parallel_for(parts, 1, 1, split_sum_range, &s);
    int i = 0;
    return (float)combine(&s, n, SPLIT_DEPTH, &i); /* the caller stores it: Note [The NaN and the zero of a sum] */
}


/* A sum, mean or prod whose reduced dims no one stride steps, of an input
 * with a broadcast dim: its dense copy would hold every repeat (2^31
 * elements of one); or of a view no dim of which steps by one element,
 * whose copy would be written and read again (Note [Gathered reductions]).
 * So reduce_narrow.c reads it in place in the copy's order (Note [Narrow
 * floats without the copy]); the values are stored here through the
 * output's strides. 1 when not taken. */
static int reduce_float_in_place(const reduce_job *j, const dispatch_iter_operand *in,
                                 uint32_t mask, int64_t nout)
{
    if (reduce_in_place_too_long(j->count, nout)) return 1;
    double *vals = malloc((size_t)nout * sizeof *vals);
    if (!vals) return 1; /* the copy's path reports its own */
    int rc = reduce_float_rows_in_place(j->op, in, mask, j->count, nout, vals);
    for (int64_t o = 0; rc == 0 && o < nout; o++) {
        char *op = j->out; /* output o: row-major over the kept dims */
        int64_t rest = o;
        for (int d = 0; d < j->no; d++) {
            op += (rest % j->oshape[d]) * j->ostrides[d];
            rest /= j->oshape[d];
        }
        store_real(op, j->dtype, vals[o]);
    }
    free(vals);
    return rc;
}

/* float32/float64 of one or more dims: the SIMD pairwise sums and extremes
 * over any layout, out of any strides (Note [Deterministic reductions]). */
int reduce_float(int op, const dispatch_iter_operand *in, uint32_t dim_mask, int keepdim,
                 const dispatch_iter_operand *out, int ond, int64_t count)
{
    int nd = in->ndim;
    reduce_job j = {.op = op, .dtype = in->dtype, .count = count, .out = out->data};
    /* Outer (kept) dims, innermost first, with input and output strides. */
    int64_t nout = 1;
    for (int d = nd - 1, od = ond - 1; d >= 0; d--) {
        int reduced = (dim_mask >> d) & 1u;
        if (reduced && !keepdim) continue;
        if (!reduced && in->shape[d] != 1) {
            j.oshape[j.no] = in->shape[d];
            j.istrides[j.no] = (intptr_t)in->strides[d];
            j.ostrides[j.no] = (intptr_t)out->strides[od];
            if (__builtin_mul_overflow(nout, in->shape[d], &nout)) {
                return dispatch_error_set(DISPATCH_ERR_VALUE,
                                          "reduction: the number of elements overflows int64");
            }
            j.no++;
        }
        od--;
    }
    if (nout == 0) return 0;
    /* Can the reduced dims be stepped with one stride (row-major order)? */
    intptr_t rstride = (intptr_t)dispatch_dtype_itemsize(in->dtype);
    int one_stride = 1, first = 1;
    intptr_t expect = 0;
    for (int d = nd - 1; d >= 0; d--) {
        if (!((dim_mask >> d) & 1u) || in->shape[d] == 1) continue;
        if (first) {
            rstride = (intptr_t)in->strides[d];
            expect = rstride * (intptr_t)in->shape[d];
            first = 0;
        } else if ((intptr_t)in->strides[d] == expect) {
            expect *= (intptr_t)in->shape[d];
        } else {
            one_stride = 0;
        }
    }
    char *tmp = NULL;
    j.in = in->data;
    j.rstride = rstride;
    intptr_t isz0 = (intptr_t)dispatch_dtype_itemsize(in->dtype);
    dispatch_rk_fold_cols_fn fold_cols =
        dispatch_reduce_is_fold(op)
            ? (dispatch_rk_fold_cols_fn)reduce_chosen_kernel(DISPATCH_RK_FOLD_COLS_OF(op),
                                                             in->dtype)
            : NULL;
    if (one_stride && count > 1 && rstride != isz0 &&
        (!dispatch_reduce_is_fold(op) || fold_cols)) {
        /* The outer-dim case: vectorize across a contiguous kept dim, or
         * one of every other element (Note [Columns of every other element]
         * in sources/kernels/sum.dispatch.c; a product's: Note [Product
         * columns of every other element] in prod.dispatch.c). */
        for (int d = 0; d < j.no; d++) {
            if (j.istrides[d] == isz0) return reduce_cols(&j, d, nout, fold_cols);
        }
        dispatch_reduce_kernel_fn even = reduce_cols_even_kernel(op, in->dtype);
        for (int d = 0; d < j.no && even; d++) {
            if (j.istrides[d] == 2 * isz0 && (uintptr_t)j.in % (uintptr_t)isz0 == 0 &&
                rstride % isz0 == 0)
                return reduce_cols(&j, d, nout, fold_cols ? (dispatch_rk_fold_cols_fn)even : NULL);
        }
    }
    if (!one_stride) {
        /* A broadcast, or a view no dim of which steps by one element, read
         * in place with the copy's bits (Note [Gathered reductions]); else
         * the copy. */
        int rc = reduce_float_in_place(&j, in, dim_mask, nout);
        if (rc != 1) return rc;
        /* Gather: tmp[o][r] row-major over the reduced dims, per output o. */
        size_t isz = dispatch_dtype_itemsize(in->dtype);
        int64_t perm_shape[MAXD];
        int64_t perm_strides[MAXD];
        int np = 0;
        for (int d = 0; d < nd; d++) { /* kept dims (outermost first), then reduced */
            if (!((dim_mask >> d) & 1u)) {
                perm_shape[np] = in->shape[d];
                perm_strides[np++] = in->strides[d];
            }
        }
        for (int d = 0; d < nd; d++) {
            if ((dim_mask >> d) & 1u) {
                perm_shape[np] = in->shape[d];
                perm_strides[np++] = in->strides[d];
            }
        }
        dispatch_iter_operand src = {in->data, nd, perm_shape, perm_strides, in->dtype};
        int64_t total;
        char *c = __builtin_mul_overflow(nout, count, &total)
                      ? NULL
                      : dispatch_iter_copy_contiguous(&src, nd, perm_shape, total, NULL);
        if (!c) {
            char a[256];
            format_shape(a, sizeof a, nd, in->shape);
            return dispatch_error_set(DISPATCH_ERR_MEMORY,
                                      "cannot allocate the %s buffer to reduce a tensor of shape "
                                      "%s: its size in bytes is too large",
                                      dispatch_dtype_name(in->dtype), a);
        }
        tmp = c;
        j.in = tmp;
        j.rstride = (intptr_t)isz;
        /* Kept dims of the copy: blocks of `count` elements, row-major over
         * the kept dims; listed innermost first, size-1 dims skipped, as in
         * j.oshape. */
        intptr_t s = (intptr_t)isz * (intptr_t)count;
        int k = 0;
        for (int d = nd - 1; d >= 0; d--) {
            if (((dim_mask >> d) & 1u) || in->shape[d] == 1) continue;
            j.istrides[k++] = s;
            s *= (intptr_t)in->shape[d];
        }
    }
    if (nout == 1 && count >= 2 * DISPATCH_ITER_GRAIN && dispatch_get_num_threads() > 1 &&
        (!dispatch_reduce_is_fold(op) ||
         (dispatch_fold_in_blocks(op) &&
          reduce_chosen_kernel(DISPATCH_RK_FOLD_OF(op), in->dtype) != NULL))) {
        split_sum s = {.op = op, .dtype = in->dtype, .p = j.in, .stride = j.rstride};
        int parts = 0;
        split_points(&s, 0, count, SPLIT_DEPTH, &parts);
        dispatch_parallel_for(parts, 1, 1, split_sum_range, &s);
        int i = 0;
        double v = combine(&s, count, SPLIT_DEPTH, &i);
        if (dispatch_reduce_is_mean(op)) {
            v = in->dtype == DISPATCH_FLOAT32 ? (double)((float)v / (float)count)
                                              : v / (double)count;
        }
        int summed = dispatch_reduce_is_sum(op);
        if (in->dtype == DISPATCH_FLOAT32) {
            float f = (float)v;
            if (summed) f = sum_store_f32(f);
            memcpy(out->data, &f, sizeof f);
        } else {
            if (summed) v = sum_store_f64(v);
            memcpy(out->data, &v, sizeof v);
        }
    } else {
        /* The output elements through the engine: (out, in) over the kept
         * dims, listed outermost first for the plan. */
        reduce_walk w = {.j = &j};
        int64_t shape[MAXD];
        intptr_t bs[2][MAXD];
        for (int d = 0; d < j.no; d++) {
            shape[j.no - 1 - d] = j.oshape[d];
            bs[0][j.no - 1 - d] = j.ostrides[d];
            bs[1][j.no - 1 - d] = j.istrides[d];
        }
        char *data[2] = {j.out, (char *)j.in};
        dispatch_strided_plan_init(&w.p, 2, data, j.no, shape, bs);
        dispatch_parallel_for(nout, dispatch_parallel_grain(count), 1, reduce_range, &w);
    }
    free(tmp);
    return 0;
}

