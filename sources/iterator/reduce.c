/*
 * The reduction engine (sources/iterator), beside the elementwise engine
 * (iterator.c) and built like it: over raw strided operands, no tensor
 * object. Every reduction of the runtime is planned here: float32/float64
 * (full, inner, outer, strided, gathered), float16 (its rows, columns and
 * extremes read as halves) and bfloat16 (through a float32 copy), integers
 * and bool (exact accumulators), 0-dim inputs, the thread splits of each,
 * and the first index of a max/min. The operators
 * (sources/dispatcher/operators.c) check arguments and allocate results;
 * device reductions hang off the hook below. See dispatch/reduce.h.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/half.h"
#include "dispatch/iterator.h"
#include "dispatch/reduce.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"
#include "dispatch/storage.h"
#include "dispatch/strided.h"
#include "iterator_internal.h"

#define MAXD DISPATCH_ITER_MAX_DIMS

typedef dispatch_strided_plan plan;

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    dispatch_format_shape(buf, cap, ndim, shape); /* the one formatter (core/error.c) */
}

static int dense(const dispatch_iter_operand *o);

/* -1 with a MemoryError naming the reduction. */
static int out_of_memory(int op)
{
    return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", dispatch_reduce_name(op));
}

/* ------------------------------------------------------ the kernel table */

/* The kernel of (kind, dtype) from the table of dispatch/reduce_kernels.h,
 * the kernels chosen first (as the loops are, once per process). */
static dispatch_reduce_kernel_fn rk(int kind, int dtype)
{
    if (dispatch_kernels_simd_init() != 0) return NULL;
    return dispatch_reduce_kernel_get(kind, dtype);
}

/* The kernel of (KIND, DTYPE) as its type T. */
#define RK(KIND, DTYPE, T) ((T)rk(DISPATCH_RK_##KIND, DISPATCH_##DTYPE))
/* Each kernel the engine calls, as its own type. */
#define K_SUM_F32 RK(SUM, FLOAT32, dispatch_rk_sum_f32_fn)
#define K_SUM_F64 RK(SUM, FLOAT64, dispatch_rk_sum_f64_fn)
#define K_SUM_F16 RK(SUM, FLOAT16, dispatch_rk_sum_f32_fn)
#define K_ROWS_F32 RK(SUM_ROWS, FLOAT32, dispatch_rk_rows_fn)
#define K_ROWS_F64 RK(SUM_ROWS, FLOAT64, dispatch_rk_rows_fn)
#define K_ROWS_F16 RK(SUM_ROWS, FLOAT16, dispatch_rk_rows_fn)
#define K_COLS_F32 RK(COLS, FLOAT32, dispatch_rk_cols_f32_fn)
#define K_COLS_F64 RK(COLS, FLOAT64, dispatch_rk_cols_f64_fn)
#define K_COLS_F16 RK(COLS, FLOAT16, dispatch_rk_cols_f32_fn)
#define K_EXT_F32 RK(EXT, FLOAT32, dispatch_rk_ext_f32_fn)
#define K_EXT_F64 RK(EXT, FLOAT64, dispatch_rk_ext_f64_fn)
#define K_EXT_F16 RK(EXT, FLOAT16, dispatch_rk_ext_f16_fn)
#define K_EXT_ROWS_F32 RK(EXT_ROWS, FLOAT32, dispatch_rk_ext_rows_fn)
#define K_EXT_ROWS_F64 RK(EXT_ROWS, FLOAT64, dispatch_rk_ext_rows_fn)
#define K_PROD_F32 RK(PROD, FLOAT32, dispatch_rk_prod_fn)
#define K_PROD_F64 RK(PROD, FLOAT64, dispatch_rk_prod_fn)

/* The integer kernel of dtype (Note [Integer reductions] in
 * sources/kernels/int_arith.dispatch.c); -1 when there is none. */
static int int_reduce(int op, int dtype, const char *p, intptr_t step, intptr_t n, char *acc,
                      intptr_t acc_step, intptr_t nouter, intptr_t outer_step,
                      intptr_t outer_acc_step)
{
    dispatch_rk_int_fn fn = (dispatch_rk_int_fn)rk(DISPATCH_RK_INT, dtype);
    return fn ? fn(op, dtype, p, step, n, acc, acc_step, nouter, outer_step, outer_acc_step) : -1;
}

/* Device reductions (Note [CUDA reduction plans] in sources/cuda/cuda_reduce_plan.c). */
static _Atomic(dispatch_device_reduce_fn) device_reduces[DISPATCH_NUM_DEVICES];

int dispatch_device_reduce_register(int device, dispatch_device_reduce_fn fn)
{
    if (device <= DISPATCH_DEVICE_CPU || device >= DISPATCH_NUM_DEVICES)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "device reductions: invalid device %d",
                                  device);
    atomic_store(&device_reduces[device], fn);
    return 0;
}

int dispatch_iter_device_reduce(int device, int op, int dtype, const char *in, int ndim,
                                const int64_t *shape, const int64_t *strides, uint32_t mask,
                                int out_dtype, char *out, int64_t *indices)
{
    dispatch_device_reduce_fn fn = device > DISPATCH_DEVICE_CPU && device < DISPATCH_NUM_DEVICES
                                       ? atomic_load(&device_reduces[device]) : NULL;
    const char *name = dispatch_reduce_name(op);
    if (!fn)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s: no %s reductions are registered",
                                  name ? name : "?", dispatch_device_name(device));
    char err[512] = "";
    if (fn(op, dtype, in, ndim, shape, strides, mask, out_dtype, out, indices, err, sizeof err) != 0)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s", err[0] ? err : "device reduction failed");
    return 0;
}

/* -------------------------------------------------------------- reductions */

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

/* A sum's or mean's result as stored: Note [The NaN and the zero of a sum]. */
static inline float sum_store_f32(float v) { return v != v ? __builtin_nanf("") : v + 0.0f; }
static inline double sum_store_f64(double v) { return v != v ? __builtin_nan("") : v + 0.0; }

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
    int f32 = j->dtype == DISPATCH_FLOAT32;
    int is_max = j->op == DISPATCH_REDUCE_MAX;
    if (j->rstride == (f32 ? 4 : 8)) { /* contiguous: the SIMD kernel */
        return f32 ? (double)K_EXT_F32(!is_max, (const float *)p,
                                                          (intptr_t)j->count)
                   : K_EXT_F64(!is_max, (const double *)p, (intptr_t)j->count);
    }
    double acc = 0;
    for (int64_t i = 0; i < j->count; i++) {
        double v = f32 ? (double)*(const float *)(p + i * j->rstride)
                       : *(const double *)(p + i * j->rstride);
        if (i == 0 || v != v) acc = v;
        else if (acc == acc && (is_max ? v > acc : v < acc)) acc = v;
        if (acc != acc) break;
    }
    return acc;
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
 * change one.
 */
#define COL_BLOCK_BYTES 4096
#define COL_LEAF 16
#define ROW_PART_MIN 2048
#define ROW_PART_MIN_FEW 256
#define ROW_PART_DEPTH 3

typedef struct cols_job {
    const reduce_job *j;
    int col;          /* index of the contiguous kept dim in j->oshape */
    int kop;          /* the kernel's op: 0 sum, 1 max, 2 min */
    int64_t ncols, nblocks, bcols;
    int nparts;
    int64_t part_min; /* rows: ROW_PART_MIN, or fewer when threads need units */
    int64_t pbegin[1 << ROW_PART_DEPTH], pcount[1 << ROW_PART_DEPTH];
    char *parts;      /* [plane][block][part][bcols] when nparts > 1 */
    int levels;       /* scratch rows of the sum's tree */
    atomic_int failed;
} cols_job;

static void cut_rows(cols_job *c, int64_t begin, int64_t n, int depth)
{
    if (depth == 0 || n < 2 * c->part_min) {
        c->pbegin[c->nparts] = begin;
        c->pcount[c->nparts++] = n;
        return;
    }
    int64_t h = ((n / COL_LEAF + 1) / 2) * COL_LEAF; /* the kernel's split */
    cut_rows(c, begin, h, depth - 1);
    cut_rows(c, begin + h, n - h, depth - 1);
}

/* The input and output of unit (plane, block): column c0 of that plane. */
static void cols_unit_base(const cols_job *c, int64_t plane, int64_t c0, const char **ip,
                           char **op)
{
    const reduce_job *j = c->j;
    size_t isz = j->dtype == DISPATCH_FLOAT32 ? 4 : 8;
    *ip = j->in + c0 * (int64_t)isz;
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
static void cols_store(const cols_job *c, char *op, const char *vals, int64_t w)
{
    const reduce_job *j = c->j;
    intptr_t os = j->ostrides[c->col];
    for (int64_t k = 0; k < w; k++) {
        if (j->dtype == DISPATCH_FLOAT32) {
            float v;
            memcpy(&v, vals + k * 4, 4);
            if (j->op == DISPATCH_REDUCE_MEAN) v = v / (float)j->count;
            if (j->op <= DISPATCH_REDUCE_MEAN) v = sum_store_f32(v);
            memcpy(op + k * os, &v, 4);
        } else {
            double v;
            memcpy(&v, vals + k * 8, 8);
            if (j->op == DISPATCH_REDUCE_MEAN) v = v / (double)j->count;
            if (j->op <= DISPATCH_REDUCE_MEAN) v = sum_store_f64(v);
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
    if (c->kop == 0 && (scratch = malloc((size_t)c->levels * (size_t)COL_BLOCK_BYTES)) == NULL) {
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
        if (f32)
            K_COLS_F32(c->kop, ip, j->rstride, (intptr_t)c->pcount[part],
                                      (intptr_t)w, (float *)(void *)dst, scratch);
        else
            K_COLS_F64(c->kop, ip, j->rstride, (intptr_t)c->pcount[part],
                                      (intptr_t)w, (double *)(void *)dst, scratch);
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
    if (depth == 0 || n < 2 * c->part_min) {
        if (into != base + (size_t)*i * COL_BLOCK_BYTES)
            memcpy(into, base + (size_t)*i * COL_BLOCK_BYTES, COL_BLOCK_BYTES);
        (*i)++;
        return;
    }
    int64_t h = ((n / COL_LEAF + 1) / 2) * COL_LEAF;
    _Alignas(64) char b[COL_BLOCK_BYTES];
    cols_combine(c, base, h, depth - 1, i, w, into);
    cols_combine(c, base, n - h, depth - 1, i, w, b);
    for (int64_t k = 0; k < w; k++) {
        if (c->j->dtype == DISPATCH_FLOAT32) {
            float x, y;
            memcpy(&x, into + k * 4, 4), memcpy(&y, b + k * 4, 4);
            x = c->kop == 0 ? x + y : c->kop == 1 ? (x != x || !(y != y || y > x) ? x : y)
                                                  : (x != x || !(y != y || y < x) ? x : y);
            memcpy(into + k * 4, &x, 4);
        } else {
            double x, y;
            memcpy(&x, into + k * 8, 8), memcpy(&y, b + k * 8, 8);
            x = c->kop == 0 ? x + y : c->kop == 1 ? (x != x || !(y != y || y > x) ? x : y)
                                                  : (x != x || !(y != y || y < x) ? x : y);
            memcpy(into + k * 8, &x, 8);
        }
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

static int reduce_cols(const reduce_job *j, int col, int64_t nout)
{
    size_t isz = j->dtype == DISPATCH_FLOAT32 ? 4 : 8;
    cols_job c = {.j = j, .col = col, .ncols = j->oshape[col]};
    c.kop = dispatch_reduce_kernel_op(j->op);
    c.bcols = (int64_t)(COL_BLOCK_BYTES / isz);
    c.nblocks = (c.ncols + c.bcols - 1) / c.bcols;
    c.levels = dispatch_reduce_cols_scratch(j->count);
    atomic_init(&c.failed, 0);
    int64_t planes = nout / c.ncols, pbs = planes * c.nblocks;
    /* Few column blocks (e.g. sum(dim=0) of (2048, 512)): cut the rows finer
     * so every thread has units; the parts follow the kernel's tree, so the
     * bits are the same however fine the cut (the note above). */
    int threads = dispatch_get_num_threads();
    c.part_min = threads > 1 && pbs < 2 * threads ? ROW_PART_MIN_FEW : ROW_PART_MIN;
    cut_rows(&c, 0, j->count, ROW_PART_DEPTH);
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
    if (j->op == DISPATCH_REDUCE_SUM || j->op == DISPATCH_REDUCE_MEAN) {
        /* All n sums in one call: the kernel reads two rows at a time where
         * that is faster (Note [Two streams] in sources/kernels/sum.dispatch.c). */
        int f32 = j->dtype == DISPATCH_FLOAT32;
        (f32 ? K_ROWS_F32 : K_ROWS_F64)(
            ptrs[1], steps[1], j->rstride, (intptr_t)j->count, n, ptrs[0], steps[0]);
        const int mean = j->op == DISPATCH_REDUCE_MEAN;
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
    if (j->op == DISPATCH_REDUCE_PROD) { /* one kernel call per output: Note [Product order] */
        dispatch_rk_prod_fn prod = j->dtype == DISPATCH_FLOAT32 ? K_PROD_F32
                                                                : K_PROD_F64;
        for (intptr_t e = 0; e < n; e++) {
            store_real(ptrs[0] + e * steps[0], j->dtype,
                       prod(ptrs[1] + e * steps[1], j->rstride, (intptr_t)j->count));
        }
        return;
    }
    if (j->count >= 1 && j->rstride == (intptr_t)dispatch_dtype_itemsize(j->dtype)) {
        /* Contiguous rows of max or min: the row kernel, two rows at a time
         * where that is faster. */
        (j->dtype == DISPATCH_FLOAT32 ? K_EXT_ROWS_F32
                                      : K_EXT_ROWS_F64)(
            j->op == DISPATCH_REDUCE_MIN, ptrs[1], steps[1], (intptr_t)j->count, n, ptrs[0],
            steps[0]);
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

/* The leaf size of sum.dispatch.c's tree (256-byte rows x 16; float16
 * adds in float32, on the float32 tree). */
static int64_t sum_leaf(int dtype) { return dtype == DISPATCH_FLOAT64 ? 512 : 1024; }

typedef struct split_sum {
    int op, dtype;
    const char *p;
    intptr_t stride;
    int64_t begin[64], count[64];
    double part[64];
} split_sum;

/* Cut [begin, begin+n) along the kernel's tree to at most `depth` levels. */
static void split_points(split_sum *s, int64_t begin, int64_t n, int depth, int *np)
{
    int64_t leaf = sum_leaf(s->dtype);
    if (depth == 0 || n <= leaf * 4) {
        s->begin[*np] = begin;
        s->count[*np] = n;
        (*np)++;
        return;
    }
    int64_t h = ((n / leaf + 1) / 2) * leaf;
    split_points(s, begin, h, depth - 1, np);
    split_points(s, begin + h, n - h, depth - 1, np);
}

/* Add the parts back in the same tree shape. */
static double combine(const split_sum *s, int64_t n, int depth, int *i)
{
    int64_t leaf = sum_leaf(s->dtype);
    if (depth == 0 || n <= leaf * 4) return s->part[(*i)++];
    int64_t h = ((n / leaf + 1) / 2) * leaf;
    double a = combine(s, h, depth - 1, i);
    double b = combine(s, n - h, depth - 1, i);
    /* ties and NaNs keep the earlier part's: Note [Which zero, which NaN] */
    if (s->op == DISPATCH_REDUCE_MAX) return a != a || !(b != b || b > a) ? a : b;
    if (s->op == DISPATCH_REDUCE_MIN) return a != a || !(b != b || b < a) ? a : b;
    if (s->dtype != DISPATCH_FLOAT64) return (double)((float)a + (float)b);
    return a + b;
}

static void split_sum_range(void *arg, int64_t begin, int64_t end)
{
    split_sum *s = arg;
    for (int64_t i = begin; i < end; i++) {
        const char *p = s->p + s->begin[i] * s->stride;
        if (s->op == DISPATCH_REDUCE_MAX || s->op == DISPATCH_REDUCE_MIN) {
            reduce_job j = {.op = s->op, .dtype = s->dtype, .count = s->count[i],
                            .rstride = s->stride};
            s->part[i] = extreme_one(&j, p);
            continue;
        }
        intptr_t n = (intptr_t)s->count[i];
        s->part[i] = s->dtype == DISPATCH_FLOAT64   ? K_SUM_F64(p, s->stride, n)
                     : s->dtype == DISPATCH_FLOAT16 ? (double)K_SUM_F16(p, s->stride, n)
                                                    : (double)K_SUM_F32(p, s->stride, n);
    }
}

/* The sum of n >= 1 contiguous float16 (bits) in float32, its top levels
 * split across the threads along the kernel's own tree (as a float32 sum
 * over one output is): the float16 SUM kernel's bits for any count. */
static float dispatch_iter_sum_f16(const uint16_t *p, int64_t n)
{
    if (n < 2 * DISPATCH_ITER_GRAIN || dispatch_get_num_threads() < 2)
        return K_SUM_F16((const char *)p, 2, (intptr_t)n);
    split_sum s = {.op = DISPATCH_REDUCE_SUM, .dtype = DISPATCH_FLOAT16, .p = (const char *)p,
                   .stride = 2};
    int parts = 0;
    split_points(&s, 0, n, 5, &parts);
    dispatch_parallel_for(parts, 1, 1, split_sum_range, &s);
    int i = 0;
    return (float)combine(&s, n, 5, &i); /* the caller stores it: Note [The NaN and the zero of a sum] */
}

/*
 * Note [One reduction check]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Which dims a reduction reduces, what shape its result has (keepdim or
 * not), how many elements each output reduces and whether max/min have
 * anything to reduce: decided here once, for the raw engine
 * (dispatch_iter_reduce, a dim mask) and for the operators of
 * sources/dispatcher/operators.c (a list of dims, PyTorch's messages, then
 * the output allocated with the shape computed here). The result dtype is
 * dispatch_reduce_result_dtype's (sum and prod of integers are int64, mean
 * needs floats); the operators add PyTorch's dtype= and its messages.
 */

int dispatch_iter_reduce_check(const char *opname, int op, int ndim, const int64_t *shape,
                               int ndims, const int64_t *dims, uint32_t *dim_mask, int keepdim,
                               int *out_ndim, int64_t *out_shape, int64_t *count)
{
    if (op < 0 || op >= DISPATCH_NUM_REDUCTIONS) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "unknown reduction %d", op);
    }
    const char *name = opname ? opname : dispatch_reduce_name(op);
    if (ndim < 0 || ndim > MAXD) {
        return dispatch_error_set(DISPATCH_ERR_INDEX, "reduction dims out of range for %d dims",
                                  ndim);
    }
    uint32_t mask = 0;
    if (dims == NULL) {
        mask = *dim_mask;
        if (ndim < 32 && (mask >> ndim) != 0) {
            return dispatch_error_set(DISPATCH_ERR_INDEX,
                                      "reduction dims out of range for %d dims", ndim);
        }
    } else if (ndims <= 0) {
        mask = ndim ? (uint32_t)((1ull << ndim) - 1) : 0;
    } else {
        /* A 0-dim tensor takes dim 0 and -1, as PyTorch. */
        int64_t wrap = ndim ? ndim : 1;
        for (int i = 0; i < ndims; i++) {
            int64_t d = dims[i];
            if ((d < -wrap || d >= wrap) && opname) {
                return dispatch_error_set(DISPATCH_ERR_INDEX,
                                          "Dimension out of range (expected to be in range of "
                                          "[%lld, %lld], but got %lld)",
                                          (long long)-wrap, (long long)wrap - 1, (long long)d);
            }
            if (d < -wrap || d >= wrap) {
                return dispatch_error_set(DISPATCH_ERR_INDEX, "dim %lld out of range for %d dims",
                                          (long long)d, ndim);
            }
            if (d < 0) d += wrap;
            if (ndim == 0) continue;
            if (mask & (1u << d)) {
                return dispatch_error_set(DISPATCH_ERR_VALUE,
                                          opname ? "%s: dim %lld appears multiple times in the "
                                                   "list of dims"
                                                 : "%s: dim %lld appears more than once in dims",
                                          name, (long long)d);
            }
            mask |= 1u << d;
        }
    }
    int ond = 0;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return dispatch_error_set(DISPATCH_ERR_VALUE, "negative dimension %lld in a reduction",
                                      (long long)shape[d]);
        }
        if (mask & (1u << d)) {
            if (__builtin_mul_overflow(n, shape[d], &n)) {
                return dispatch_error_set(DISPATCH_ERR_VALUE,
                                          "reduction: the number of elements overflows int64");
            }
            if (keepdim) out_shape[ond++] = 1;
        } else {
            out_shape[ond++] = shape[d];
        }
    }
    if (n == 0 && (op == DISPATCH_REDUCE_MAX || op == DISPATCH_REDUCE_MIN)) {
        /* PyTorch's two errors, each with its own exception type: an
         * empty dim that was named is an IndexError (as max(x, dim) and
         * argmax(x, dim)), no dim named a RuntimeError. */
        for (int i = 0; opname && dims != NULL && i < ndims; i++) {
            int64_t d = dims[i] < 0 ? dims[i] + ndim : dims[i];
            if (ndim > 0 && shape[d] == 0) {
                return dispatch_error_set(DISPATCH_ERR_INDEX,
                                          "%s(): Expected reduction dim %lld to have non-zero "
                                          "size.", opname, (long long)dims[i]);
            }
        }
        if (opname) {
            return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                      "%s(): Expected reduction dim to be specified for "
                                      "input.numel() == 0. Specify the reduction dim with the "
                                      "'dim' argument.", opname);
        }
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "%s of an empty set of elements has no identity; reduce over "
                                  "non-empty dims", name);
    }
    *dim_mask = mask;
    *out_ndim = ond;
    *count = n;
    return 0;
}

/* float32/float64 of one or more dims: the SIMD pairwise sums and extremes
 * over any layout, out of any strides (Note [Deterministic reductions]). */
static int reduce_float(int op, const dispatch_iter_operand *in, uint32_t dim_mask, int keepdim,
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
    if (one_stride && count > 1 && rstride != isz0 && op != DISPATCH_REDUCE_PROD) {
        /* The outer-dim case: vectorize across a contiguous kept dim. */
        for (int d = 0; d < j.no; d++) {
            if (j.istrides[d] == isz0) return reduce_cols(&j, d, nout);
        }
    }
    if (!one_stride) {
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
        op != DISPATCH_REDUCE_PROD) {
        split_sum s = {.op = op, .dtype = in->dtype, .p = j.in, .stride = j.rstride};
        int parts = 0;
        split_points(&s, 0, count, 5, &parts);
        dispatch_parallel_for(parts, 1, 1, split_sum_range, &s);
        int i = 0;
        double v = combine(&s, count, 5, &i);
        if (op == DISPATCH_REDUCE_MEAN) {
            v = in->dtype == DISPATCH_FLOAT32 ? (double)((float)v / (float)count)
                                              : v / (double)count;
        }
        int summed = op <= DISPATCH_REDUCE_MEAN;
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

/* ------------------------------------------------ integer, bool and 0-dim */

/* The range of bool (0, 1) or an integer dtype, as int64. */
static void int_range(int dtype, int64_t *lo, int64_t *hi) {
    switch (dtype) {
    case DISPATCH_BOOL: *lo = 0, *hi = 1; return;
    case DISPATCH_UINT8: *lo = 0, *hi = UINT8_MAX; return;
    case DISPATCH_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return;
    case DISPATCH_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return;
    case DISPATCH_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return;
    default: *lo = INT64_MIN, *hi = INT64_MAX; return;
    }
}


/* The engine's inner function of the integer (and 0-dim) reductions: n
 * input elements at ptrs[2] accumulated into their slots at ptrs[0]: for
 * floats a double each (ptrs[1] marks the slots seen), NaN propagating
 * through max/min, the input cast a chunk at a time; for integers int64
 * sums (wrapping) or max/min in the input's type, by the int_arith kernel. */
typedef struct accumulate_ctx {
    int kind, is_float, dtype;
    dispatch_loop_fn cast; /* input dtype -> float64 or int64 */
} accumulate_ctx;

static void accumulate(char **ptrs, const intptr_t *steps, intptr_t n, void *arg) {
    const accumulate_ctx *c = arg;
    if (!c->is_float && c->kind != DISPATCH_REDUCE_PROD) {
        /* accumulators start at the identity: `seen` is not needed */
        int op = dispatch_reduce_kernel_op(c->kind);
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
        for (intptr_t e = 0; e < m; e++) {
            char *slot = ptrs[0] + (i + e) * steps[0];
            unsigned char *seen = (unsigned char *)ptrs[1] + (i + e) * steps[1];
            if (c->is_float) {
                double x, a;
                memcpy(&x, buf + e * 8, 8), memcpy(&a, slot, 8);
                /* max/min keep the first NaN and, of equals, the first
                 * (Note [Which zero, which NaN] in sum.dispatch.c) */
                if (c->kind <= DISPATCH_REDUCE_MEAN) a += x;
                else if (c->kind == DISPATCH_REDUCE_PROD) a *= x;
                else if (!*seen || (isnan(x) && !isnan(a))) a = x;
                else if (!isnan(a) && (c->kind == DISPATCH_REDUCE_MAX ? x > a : x < a)) a = x;
                memcpy(slot, &a, 8);
            } else {
                int64_t x, a;
                memcpy(&x, buf + e * 8, 8), memcpy(&a, slot, 8);
                if (c->kind == DISPATCH_REDUCE_SUM) a = (int64_t)((uint64_t)a + (uint64_t)x);
                else if (c->kind == DISPATCH_REDUCE_PROD) a = (int64_t)((uint64_t)a * (uint64_t)x);
                else if (!*seen || (c->kind == DISPATCH_REDUCE_MAX ? x > a : x < a)) a = x;
                memcpy(slot, &a, 8);
            }
            *seen = 1;
        }
    }
}


/* ------------------------------------------------------------- float16 */

/* The float16 row loops' shared state: rows of `count` halves at p, one
 * result each at out. */
typedef struct half_rows_job {
    const uint16_t *p;
    int64_t count;
    int op; /* kind: sum/mean, max, min */
    uint16_t *out;
    atomic_int nan; /* max/min: a row held a NaN */
} half_rows_job;

static void half_sum_rows_range(void *arg, int64_t b, int64_t e) {
    half_rows_job *j = arg;
    dispatch_loop_fn narrow = dispatch_cast_loop_get(DISPATCH_FLOAT32, DISPATCH_FLOAT16);
    enum { CHUNK = 256 }; /* rows summed per kernel call, into float32 */
    float s[CHUNK];
    for (int64_t r = b; r < e; r += CHUNK) {
        intptr_t n = (intptr_t)(e - r < CHUNK ? e - r : CHUNK);
        K_ROWS_F16((const char *)(j->p + r * j->count), (intptr_t)j->count * 2,
                                      2, (intptr_t)j->count, n, (char *)s, sizeof(float));
        for (intptr_t k = 0; k < n; k++)
            s[k] = sum_store_f32(j->op == DISPATCH_REDUCE_MEAN ? s[k] / (float)j->count : s[k]);
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
static void sum_half_rows(const uint16_t *p, int mean, int64_t nout, int64_t count, uint16_t *out)
{
    half_rows_job j = {.p = p, .count = count,
                       .op = mean ? DISPATCH_REDUCE_MEAN : DISPATCH_REDUCE_SUM, .out = out};
    if (nout == 1) { /* one row: its tree's top levels split across the threads */
        float s = dispatch_iter_sum_f16(j.p, count);
        if (mean) s = s / (float)count;
        s = sum_store_f32(s);
        char *data[2] = {(char *)out, (char *)&s};
        intptr_t steps[2] = {2, 4};
        dispatch_cast_loop_get(DISPATCH_FLOAT32, DISPATCH_FLOAT16)(data, steps, 1, NULL);
    } else {
        dispatch_parallel_for(nout, dispatch_parallel_grain(count), 1, half_sum_rows_range, &j);
    }
}

static void half_ext_rows_range(void *arg, int64_t b, int64_t e) {
    half_rows_job *j = arg;
    for (int64_t r = b; r < e && !atomic_load_explicit(&j->nan, memory_order_relaxed); r++)
        if (!K_EXT_F16(j->op == DISPATCH_REDUCE_MIN, j->p + r * j->count,
                                          (intptr_t)j->count, &j->out[r]))
            atomic_store(&j->nan, 1);
}

/* float16 max or min of a contiguous input over its trailing dims into
 * nout contiguous halves: each row of `count` halves by the integer-keyed
 * kernel (Note [float16 max and min as integers] in
 * sources/kernels/sum.dispatch.c), with no float32 copy. 1 when done; 0
 * when a row holds a NaN (the caller takes the float32 path, which
 * propagates it, and writes every output again). */
static int ext_half_rows(const uint16_t *p, int kind, int64_t nout, int64_t count, uint16_t *out)
{
    half_rows_job j = {.p = p, .count = count, .op = kind, .out = out};
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
        half_rows_job pj = {.p = j.p, .count = count / nparts, .op = kind, .out = part};
        atomic_init(&pj.nan, 0);
        dispatch_parallel_for(nparts, 1, 1, half_ext_rows_range, &pj);
        int64_t done = pj.count * nparts; /* the remainder (< nparts halves) joins last */
        return !atomic_load(&pj.nan) &&
               (done == count || K_EXT_F16(kind == DISPATCH_REDUCE_MIN, j.p + done,
                                         (intptr_t)(count - done), &part[nparts++])) &&
               K_EXT_F16(kind == DISPATCH_REDUCE_MIN, part, (intptr_t)nparts, &j.out[0]);
    }
    dispatch_parallel_for(nout, dispatch_parallel_grain(count), 1, half_ext_rows_range, &j);
    return !atomic_load(&j.nan);
}

/* The reduced dims (size-1 dims aside) all come before the kept ones:
 * sum(dim=0) of a matrix, the rows of a contiguous tensor over its columns. */
static int leading_dims(const dispatch_iter_operand *in, uint32_t mask)
{
    int kept_seen = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        if (!((mask >> d) & 1u)) kept_seen = 1;
        else if (kept_seen) return 0;
    }
    return 1;
}

typedef struct half_cols_job {
    const char *p;
    int64_t count, ncols;
    int kop;
    float *vals;
    atomic_int failed; /* a range could not have its scratch */
} half_cols_job;

enum { HALF_COLS_BLOCK = 1024 }; /* columns per kernel call, as the iterator takes them */

/* Columns [b, e), a block at a time, each range with its own scratch. */
static void half_cols_range(void *arg, int64_t b, int64_t e) {
    half_cols_job *j = arg;
    int64_t bw = e - b < HALF_COLS_BLOCK ? e - b : HALF_COLS_BLOCK;
    float *scratch = NULL;
    if (j->kop == 0 &&
        (scratch = malloc((size_t)dispatch_reduce_cols_scratch(j->count) * (size_t)bw *
                          sizeof *scratch)) == NULL) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t c0 = b; c0 < e; c0 += HALF_COLS_BLOCK) {
        int64_t w = e - c0 < HALF_COLS_BLOCK ? e - c0 : HALF_COLS_BLOCK;
        K_COLS_F16(j->kop, j->p + c0 * 2, (intptr_t)j->ncols * 2,
                                  (intptr_t)j->count, (intptr_t)w, j->vals + c0, scratch);
    }
    free(scratch);
}

/* float16 sum, mean, max, min of a contiguous input over its leading dims
 * into ncols contiguous halves: the float32 column kernel over the halves
 * as they are (the bits of the float32 copy's columns, as the general path
 * computes them, without the copy), in blocks of 1024 columns as the
 * iterator takes them, rounded once to float16. */
static int reduce_half_cols(const char *p, int kind, int64_t ncols, int64_t count, uint16_t *out)
{
    float *vals = malloc((size_t)ncols * sizeof *vals);
    if (!vals) return out_of_memory(kind);
    /* Columns are reduced each on its own, so any split of them between
     * threads gives the same bits; cuts fall on 64-column boundaries. */
    half_cols_job j = {.p = p, .count = count, .ncols = ncols,
                       .kop = dispatch_reduce_kernel_op(kind), .vals = vals};
    atomic_init(&j.failed, 0);
    dispatch_parallel_for(ncols, dispatch_parallel_grain(count), 64, half_cols_range, &j);
    if (atomic_load(&j.failed)) {
        free(vals);
        return out_of_memory(kind);
    }
    if (kind <= DISPATCH_REDUCE_MEAN)
        for (int64_t c = 0; c < ncols; c++)
            vals[c] = sum_store_f32(kind == DISPATCH_REDUCE_MEAN ? vals[c] / (float)count : vals[c]);
    char *data[2] = {(char *)out, (char *)vals};
    intptr_t steps[2] = {2, 4};
    dispatch_cast_loop_get(DISPATCH_FLOAT32, DISPATCH_FLOAT16)(data, steps, (intptr_t)ncols, NULL);
    free(vals);
    return 0;
}

/*
 * Note [Threaded integer reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The one-call integer matrix reduction (Note [Integer reductions]) split
 * across the threads. Integer sums (wrapping) and max/min are exact, so
 * no split changes a bit: runs with accumulators of their own (the rows
 * of sum(dim=1)) are shared out as they stand, so are the columns of
 * sum(dim=0); a reduction folded into one accumulator (a full sum) is cut
 * into parts, each folded into its own copy of the starting value, and the
 * parts then folded into the accumulator by the same kernel. Below
 * 2 * DISPATCH_ITER_GRAIN elements, or with one thread, it is one call.
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

/* Returns 0, or -1 (MemoryError) when the parts' accumulators cannot be had. */
static int int_matrix_reduce(int_matrix_job *j, const char *name) {
    int threads = dispatch_get_num_threads();
    int64_t total = (int64_t)j->n * (int64_t)j->nouter;
    if (threads > 1 && total >= 2 * DISPATCH_ITER_GRAIN) {
        if (j->nouter > 1 && j->outer_acc_step != 0) {
            dispatch_parallel_for(j->nouter, dispatch_parallel_grain(j->n), 1, int_matrix_runs, j);
            return 0;
        }
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


/* --------------------------------------------------- max/min with indices */

/* One element of an integer or bool tensor as int64. */
static int64_t int_at(const char *p, int dtype) {
    switch (dtype) {
    case DISPATCH_BOOL: return *(const unsigned char *)p != 0;
    case DISPATCH_INT8: return *(const int8_t *)p;
    case DISPATCH_UINT8: return *(const uint8_t *)p;
    case DISPATCH_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case DISPATCH_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Whether the elements at a and b are equal, NaN matching NaN. */
static int same_value(const char *a, const char *b, int dtype) {
    if (dtype == DISPATCH_FLOAT32) {
        float x, y;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        return x == y || (x != x && y != y);
    }
    if (dtype == DISPATCH_FLOAT64) {
        double x, y;
        memcpy(&x, a, 8), memcpy(&y, b, 8);
        return x == y || (x != x && y != y);
    }
    return int_at(a, dtype) == int_at(b, dtype);
}

/*
 * Note [max and min with indices]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max(dim)/min(dim) return (values, indices) and argmax/argmin the indices,
 * with PyTorch's rules: NaN propagates and its index is the first NaN's; of
 * equal values the first (in row-major order of the reduced dims) wins.
 * The values come from the reduction kernel; the index of each is then the
 * first reduced element equal to it (NaN equal to NaN), and the value is
 * re-read from there, so a tie of -0.0 and 0.0 reports the first one's
 * sign as PyTorch does.
 */
/*
 * Note [Broadcast reduced dims]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A reduced dim of stride 0 (an expand()ed view) holds one element many
 * times. max and min of it are that element's, so they reduce the view with
 * such dims at size 1: nothing to gather, where the general layout copied
 * the whole broadcast first (argmax of zeros(2, 1).expand(2, 2**31 + 1) asked
 * for 16 GiB and failed). The first index of a value (Note [max and min with
 * indices]) has index 0 in every such dim: a match at another index there
 * is the same element as at 0, earlier in row-major order. So the search runs
 * over the other reduced dims and maps its position back to the row-major
 * position among all of them. Sums, means and products keep every element:
 * their order of additions is the copy's, and they still gather.
 */
typedef struct first_ctx {
    int dtype, nr;
    int64_t isz, count;
    int64_t rshape[DISPATCH_MAX_DIMS], rstride[DISPATCH_MAX_DIMS];
    int64_t rstep[DISPATCH_MAX_DIMS]; /* a searched dim's step in the row-major position */
} first_ctx;

/* The engine's inner function: n outputs, each a value at ptrs[0] whose first
 * position among the reduced elements from ptrs[2] goes to ptrs[1]. */
static void first_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg) {
    const first_ctx *c = arg;
    for (intptr_t e = 0; e < n; e++) {
        const char *base = ptrs[2] + e * steps[2];
        char *v = ptrs[0] + e * steps[0];
        int64_t found = 0;
        if (c->nr == 1 && (c->dtype == DISPATCH_FLOAT32 || c->dtype == DISPATCH_FLOAT64)) {
            /* one reduced dim of floats: a typed scan (the common case) */
            int64_t r = 0;
#define FIRST_MATCH(T)                                                                    \
            do {                                                                          \
                T want, x;                                                                \
                memcpy(&want, v, sizeof want);                                           \
                for (; r < c->count; r++) {                                               \
                    memcpy(&x, base + r * c->rstride[0], sizeof x);                       \
                    if (x == want || (x != x && want != want)) break;                     \
                }                                                                         \
            } while (0)
            if (c->dtype == DISPATCH_FLOAT32) FIRST_MATCH(float);
            else FIRST_MATCH(double);
#undef FIRST_MATCH
            if (r >= c->count) r = 0;
            memcpy(v, base + r * c->rstride[0], (size_t)c->isz);
            found = r * c->rstep[0];
        } else {
            int64_t ridx[DISPATCH_MAX_DIMS] = {0};
            for (int64_t r = 0; r < c->count; r++) {
                const char *p = base;
                for (int d = 0; d < c->nr; d++) p += ridx[d] * c->rstride[d];
                if (same_value(p, v, c->dtype)) {
                    for (int d = 0; d < c->nr; d++) found += ridx[d] * c->rstep[d];
                    memcpy(v, p, (size_t)c->isz);
                    break;
                }
                for (int d = c->nr - 1; d >= 0 && ++ridx[d] == c->rshape[d]; d--) ridx[d] = 0;
            }
        }
        memcpy(ptrs[1] + e * steps[1], &found, sizeof found);
    }
}

/* The kept dims walked by the engine (Note [One strided engine] in
 * sources/core/strided.c): operands (vals, idx, in), vals and idx fresh
 * and contiguous over the kept dims. */
static void first_indices(const dispatch_iter_operand *in, uint32_t mask, char *vals,
                          int64_t *idx)
{
    int nd = in->ndim, nk = 0;
    first_ctx c = {.dtype = in->dtype, .isz = (int64_t)dispatch_dtype_itemsize(in->dtype),
                   .count = 1};
    int64_t kshape[DISPATCH_MAX_DIMS];
    intptr_t bs[3][DISPATCH_MAX_DIMS];
    int64_t step = 1; /* row-major over all reduced dims, innermost first */
    for (int d = nd - 1; d >= 0; d--) {
        if (!((mask >> d) & 1u)) continue;
        if (in->strides[d] != 0 || in->shape[d] <= 1) c.nr++;
    }
    for (int d = nd - 1, k = c.nr; d >= 0; d--) {
        if ((mask >> d) & 1u) {
            if (in->strides[d] != 0 || in->shape[d] <= 1) { /* Note [Broadcast reduced dims] */
                k--;
                c.rshape[k] = in->shape[d], c.rstride[k] = in->strides[d], c.rstep[k] = step;
                c.count *= in->shape[d];
            }
            step *= in->shape[d];
        }
    }
    for (int d = 0; d < nd; d++) {
        if (!((mask >> d) & 1u)) {
            kshape[nk] = in->shape[d];
            bs[2][nk++] = (intptr_t)in->strides[d];
        }
    }
    if (nk == 0 && c.nr > 1 && dense(in)) { /* all dims of a contiguous tensor: one */
        c.nr = 1, c.rshape[0] = c.count, c.rstride[0] = c.isz, c.rstep[0] = 1;
    }
    intptr_t vs = (intptr_t)c.isz, is = 8;
    for (int d = nk - 1; d >= 0; d--) {
        bs[0][d] = kshape[d] == 1 ? 0 : vs;
        bs[1][d] = kshape[d] == 1 ? 0 : is;
        if (kshape[d] == 1) bs[2][d] = 0;
        vs *= (intptr_t)kshape[d], is *= (intptr_t)kshape[d];
    }
    char *data[3] = {vals, (char *)idx, in->data};
    dispatch_strided_plan plan;
    dispatch_strided_plan_init(&plan, 3, data, nk, kshape, bs);
    dispatch_strided_plan_walk(&plan, 0, plan.numel, first_inner, &c);
}


/* ------------------------------------------------------------ the planner */

/* Row-major and gap-free over its shape (size-1 dims aside): the layout
 * the float16 row and column kernels read and the dense paths write. */
static int dense(const dispatch_iter_operand *o)
{
    int64_t expect = (int64_t)dispatch_dtype_itemsize(o->dtype);
    for (int d = o->ndim - 1; d >= 0; d--) {
        if (o->shape[d] == 1) continue;
        if (o->strides[d] != expect) return 0;
        expect *= o->shape[d];
    }
    return 1;
}

/* Row-major byte strides of a dense buffer of that shape. */
static void dense_strides(int nd, const int64_t *shape, int64_t itemsize, int64_t *strides)
{
    for (int d = nd - 1; d >= 0; d--) {
        strides[d] = itemsize;
        itemsize *= shape[d];
    }
}

/* The reduced dims are the last ones (a full sum, sum(dim=-1), ...). */
static int trailing_dims(int ndim, uint32_t mask)
{
    int d = ndim - 1;
    while (d >= 0 && ((mask >> d) & 1u)) d--;
    for (; d >= 0; d--)
        if ((mask >> d) & 1u) return 0;
    return 1;
}

/* Every element folded into its output's accumulator: a double for floats
 * (NaN propagates through max/min), for integers and bool a wrapping int64
 * sum or a max/min in the input's dtype starting from the identity (Note
 * [Integer reductions] in sources/kernels/int_arith.dispatch.c, Note
 * [Threaded integer reductions]); then cast into nout dense outputs. */
static int reduce_accumulate(int op, const dispatch_iter_operand *in, uint32_t mask,
                             int64_t count, int64_t nout, char *out, int out_dtype)
{
    const char *name = dispatch_reduce_name(op);
    int is_float = dispatch_dtype_category_of(in->dtype) == DISPATCH_CAT_FLOAT;
    int acc_dtype = is_float ? DISPATCH_FLOAT64
                             : op == DISPATCH_REDUCE_SUM || op == DISPATCH_REDUCE_PROD
                                   ? DISPATCH_INT64 : in->dtype;
    intptr_t acc_size = (intptr_t)dispatch_dtype_itemsize(acc_dtype);
    char *acc = calloc((size_t)nout, (size_t)acc_size);
    unsigned char *seen = is_float ? calloc((size_t)nout, 1) : NULL;
    if (!acc || (is_float && !seen)) {
        free(seen), free(acc);
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", name);
    }
    if (op == DISPATCH_REDUCE_PROD) { /* products start at 1 */
        int64_t one_i = 1;
        double one_d = 1;
        char *fill[2] = {acc, is_float ? (char *)&one_d : (char *)&one_i};
        intptr_t fs[2] = {acc_size, 0};
        int from = is_float ? DISPATCH_FLOAT64 : DISPATCH_INT64;
        dispatch_cast_loop_get(from, acc_dtype)(fill, fs, nout, NULL);
    } else if (!is_float && op != DISPATCH_REDUCE_SUM) { /* a reduced dim has elements */
        int64_t lo, hi;
        int_range(in->dtype, &lo, &hi);
        int64_t ident = op == DISPATCH_REDUCE_MAX ? lo : hi;
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
    if (!is_float && p.ndim <= 2 && op != DISPATCH_REDUCE_PROD) { /* one call: rows or columns */
        int two = p.ndim == 2;
        int_matrix_job job = {
            .op = dispatch_reduce_kernel_op(op), .dtype = in->dtype, .acc_dtype = acc_dtype,
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
    if (is_float && op <= DISPATCH_REDUCE_MEAN) {
        double *dacc = (double *)(void *)acc;
        for (int64_t o = 0; o < nout; o++) {
            if (op == DISPATCH_REDUCE_MEAN) dacc[o] /= (double)count; /* 0/0: NaN, like NumPy */
            dacc[o] = sum_store_f64(dacc[o]);
        }
    }
    char *data[2] = {out, acc};
    intptr_t strides[2] = {(intptr_t)dispatch_dtype_itemsize(out_dtype), acc_size};
    dispatch_cast_loop_get(acc_dtype, out_dtype)(data, strides, nout, NULL);
    free(seen), free(acc);
    return 0;
}

/* float16 and bfloat16 accumulate in float32, as PyTorch's: the same
 * reduction of a float32 copy, rounded once into out (any strides). */
static int reduce_via_float32(int op, const dispatch_iter_operand *in, uint32_t mask,
                              int keepdim, const dispatch_iter_operand *out, int64_t nout)
{
    int64_t numel = 1, cstr[MAXD], ostr[MAXD];
    for (int d = 0; d < in->ndim; d++) numel *= in->shape[d];
    dense_strides(in->ndim, in->shape, 4, cstr);
    dense_strides(out->ndim, out->shape, 4, ostr);
    float *copy = malloc((size_t)numel * 4 + 4), *vals = malloc((size_t)nout * 4 + 4);
    int rc = -1;
    if (!copy || !vals) {
        out_of_memory(op);
    } else {
        dispatch_iter_operand c[2] = {{(char *)copy, in->ndim, in->shape, cstr, DISPATCH_FLOAT32},
                                      *in};
        dispatch_iter_operand v = {(char *)vals, out->ndim, out->shape, ostr, DISPATCH_FLOAT32};
        dispatch_iter_operand back[2] = {*out, v};
        rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, DISPATCH_FLOAT32, 2, c, NULL);
        if (rc == 0) rc = dispatch_iter_reduce(op, &c[0], mask, keepdim, &v);
        if (rc == 0)
            rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, back, NULL);
    }
    free(copy), free(vals);
    return rc;
}

/* The reduction into dense outputs, every dtype but the float32/float64 of
 * reduce_float; each path gives the bits of the general one. */
static int reduce_dense(int op, const dispatch_iter_operand *in, uint32_t mask, int keepdim,
                        int64_t count, const dispatch_iter_operand *out, int64_t nout)
{
    int64_t numel = nout * count;
    int half = in->dtype == DISPATCH_FLOAT16 && in->ndim > 0 && numel > 0 && dense(in);
    uint16_t *hout = (uint16_t *)(void *)out->data;
    const uint16_t *hin = (const uint16_t *)(const void *)in->data;
    if (half && op <= DISPATCH_REDUCE_MEAN && trailing_dims(in->ndim, mask)) {
        sum_half_rows(hin, op == DISPATCH_REDUCE_MEAN, nout, count, hout);
        return 0;
    }
    if (op == DISPATCH_REDUCE_PROD) half = 0;
    if (half && trailing_dims(in->ndim, mask) && ext_half_rows(hin, op, nout, count, hout))
        return 0;
    if (half && count > 1 && nout > 1 && leading_dims(in, mask))
        return reduce_half_cols(in->data, op, nout, count, hout);
    if (in->dtype == DISPATCH_FLOAT16 || in->dtype == DISPATCH_BFLOAT16)
        return reduce_via_float32(op, in, mask, keepdim, out, nout);
    return reduce_accumulate(op, in, mask, count, nout, out->data, out->dtype);
}

int dispatch_reduce_result_dtype(int op, int dtype)
{
    if (!dispatch_dtype_is_valid(dtype) || op < 0 || op >= DISPATCH_NUM_REDUCTIONS) return -1;
    int is_float = dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT;
    if (op == DISPATCH_REDUCE_MEAN && !is_float) return -1;
    return (op == DISPATCH_REDUCE_SUM || op == DISPATCH_REDUCE_PROD) && !is_float ? DISPATCH_INT64
                                                                                  : dtype;
}

int dispatch_iter_reduce(int op, const dispatch_iter_operand *in, uint32_t dim_mask, int keepdim,
                         const dispatch_iter_operand *out)
{
    int nd = in->ndim;
    int64_t oshape[MAXD], count = 0;
    int ond = 0;
    if (dispatch_iter_reduce_check(NULL, op, nd, in->shape, -1, NULL, &dim_mask, keepdim, &ond,
                                   oshape, &count) < 0)
        return -1;
    int want = dispatch_reduce_result_dtype(op, in->dtype);
    if (want < 0) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s takes floating point tensors, got %s",
                                  dispatch_reduce_name(op), dispatch_dtype_name(in->dtype));
    }
    /* An integer sum or prod may also land in another integer dtype
     * (sum(dtype=int32) of integers: the int64 sum wrapped into it, as
     * PyTorch). */
    int int_sum = (op == DISPATCH_REDUCE_SUM || op == DISPATCH_REDUCE_PROD) &&
                  out->dtype != want &&
                  dispatch_dtype_is_valid(out->dtype) &&
                  dispatch_dtype_category_of(in->dtype) != DISPATCH_CAT_FLOAT &&
                  dispatch_dtype_category_of(out->dtype) != DISPATCH_CAT_FLOAT;
    if (out->dtype != want && !int_sum) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "reduction output must be %s, got %s",
                                  dispatch_dtype_name(want), dispatch_dtype_name(out->dtype));
    }
    int same = out->ndim == ond;
    int64_t nout = 1;
    for (int d = 0; same && d < ond; d++) {
        same = out->shape[d] == oshape[d];
        if (__builtin_mul_overflow(nout, oshape[d], &nout)) {
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "reduction: the number of elements overflows int64");
        }
    }
    if (!same) {
        char a[256], b[256];
        format_shape(a, sizeof a, out->ndim, out->shape);
        format_shape(b, sizeof b, ond, oshape);
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "reduction output has shape %s, expected %s", a, b);
    }
    /* Note [Broadcast reduced dims]: max and min read one element of each. */
    int64_t cshape[MAXD];
    dispatch_iter_operand collapsed;
    if ((op == DISPATCH_REDUCE_MAX || op == DISPATCH_REDUCE_MIN) && count > 0) {
        int any = 0;
        for (int d = 0; d < nd; d++) {
            cshape[d] = in->shape[d];
            if (((dim_mask >> d) & 1u) && in->strides[d] == 0 && in->shape[d] > 1) {
                count /= cshape[d];
                cshape[d] = 1;
                any = 1;
            }
        }
        if (any) {
            collapsed = *in;
            collapsed.shape = cshape;
            in = &collapsed;
        }
    }
    if ((in->dtype == DISPATCH_FLOAT32 || in->dtype == DISPATCH_FLOAT64) && nd > 0)
        return reduce_float(op, in, dim_mask, keepdim, out, ond, count);
    if (nout == 0) return 0;
    if (dense(out)) return reduce_dense(op, in, dim_mask, keepdim, count, out, nout);
    /* Another layout: into a dense buffer, then copied. */
    size_t osz = dispatch_dtype_itemsize(out->dtype);
    int64_t tstr[MAXD];
    dense_strides(ond, oshape, (int64_t)osz, tstr);
    char *tmp = malloc((size_t)nout * osz + 1);
    if (!tmp) return out_of_memory(op);
    dispatch_iter_operand t = {tmp, ond, oshape, tstr, out->dtype};
    int rc = reduce_dense(op, in, dim_mask, keepdim, count, &t, nout);
    dispatch_iter_operand cp[2] = {*out, t};
    if (rc == 0) rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, cp, NULL);
    free(tmp);
    return rc;
}

int dispatch_iter_reduce_indices(const dispatch_iter_operand *in, uint32_t dim_mask, char *vals,
                                 int64_t *indices)
{
    first_indices(in, dim_mask, vals, indices);
    return 0;
}

int dispatch_iter_reduce_on(int device, int op, const dispatch_iter_operand *in,
                            uint32_t dim_mask, int keepdim, const dispatch_iter_operand *out,
                            int64_t *indices)
{
    if (device != DISPATCH_DEVICE_CPU)
        return dispatch_iter_device_reduce(device, op, in->dtype, in->data, in->ndim, in->shape,
                                           in->strides, dim_mask, out->dtype, out->data, indices);
    if (dispatch_iter_reduce(op, in, dim_mask, keepdim, out) < 0) return -1;
    return indices ? dispatch_iter_reduce_indices(in, dim_mask, out->data, indices) : 0;
}
