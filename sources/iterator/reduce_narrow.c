/*
 * The reduction engine's narrow floats (float16, bfloat16) in layouts
 * other than the dense rows and columns of reduce_half.c: strided views,
 * broadcasts (a stride-0 dim of 2^31 elements), gathers. Read in place, a
 * bounded chunk at a time, with the bits of what the engine did before: the
 * float32 reduction of a dense float32 copy (reduce_via_float32 in
 * reduce_plan.c, still the last resort for what is not taken here). The
 * same rows, in their own dtype, read float32/float64 sums of broadcasts
 * and of views no dim of which steps by one element (Note [Gathered
 * reductions] in reduce_plan.c).
 *
 * Note [Narrow floats without the copy]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * On a dense float32 copy, reduce_float takes one of two orders, decided by
 * the shape and the reduced dims alone:
 *   - columns (reduced dims consecutive, a kept dim after them, not FOLD):
 *     the column kernel down each column (Note [Column reductions]). Taken
 *     here when the input's reduced dims step with one stride (0 for a
 *     broadcast) and the kept dims after them are one contiguous run: the
 *     narrow column kernel reads the halves with that stride.
 *   - rows (otherwise): each output the SUM kernel's pairwise tree (or the
 *     FOLD kernel's 32 lanes) over its elements in row-major order of the
 *     reduced dims. The tree's splits depend on the count only, so a range
 *     of it is summed alone: ranges of up to SUM_CHUNK_BYTES are gathered
 *     (runs of the innermost reduced dim, an odometer over the others) and
 *     summed by the SUM kernel of their dtype, and added back along the
 *     same splits (the kernel's own `lo + hi`, in float32 but for
 *     float64). A product is the FOLD kernel's own call on
 *     each block of its tree (Note [Fold blocks] in
 *     dispatch/reduce_kernel_table.h), gathered and widened, the blocks'
 *     products multiplied back along the same splits; one long row's top
 *     halves on two threads, as a sum's.
 * max and min of float32/float64 rows read their runs in place where the
 * innermost reduced dim steps by one or two elements (extreme_runs: the
 * EXT_ROWS kernel over each run, Note [Extremes of every other element]);
 * other rows that are not dense are left to the copy: their stride-0
 * reduced dims are read once already (Note [Broadcast reduced dims]), so
 * the copy holds only what the input holds. So is a product in
 * the columns layout of an input without a broadcast dim: the float32
 * engine's column kernel (FOLD_COLS_PROD) beats folding each column here
 * (prod(dim=0) of (512, 512) float16: 315 -> 69 us), with the same bits
 * (Note [Product columns]), and the copy has the input's element count.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"

enum {
    PAIR_ABOVE = 1 << 16, /* a sum of one output this long: its halves on two threads */
    SUM_LEAF = 1024,     /* sum.dispatch.c's float32 leaf (reduce_float.c's sum_leaf) */
    SUM_LEAF_F64 = 512,  /* and its float64 leaf */
    /* a sum's range gathered at a time: the buffer stays in L1/L2 between
     * the gather that writes it and the kernel that reads it, and below
     * malloc's mmap threshold (a fresh mapping's page faults cost more
     * than the gather) */
    SUM_CHUNK_BYTES = 1 << 12,
};

/* One side of the input: dims (size-1 dims dropped), outermost first. */
typedef struct dims {
    int n;
    int64_t shape[MAXD], stride[MAXD];
} dims;

/* Merge dims that one stride steps (a stride-0 run stays one stride 0). */
static void merge_dims(dims *d)
{
    int k = 0;
    for (int i = 0; i < d->n; i++) {
        if (k > 0 && d->stride[k - 1] == d->stride[i] * d->shape[i]) {
            d->shape[k - 1] *= d->shape[i];
            d->stride[k - 1] = d->stride[i];
            continue;
        }
        d->shape[k] = d->shape[i], d->stride[k] = d->stride[i];
        k++;
    }
    d->n = k;
}

/* The byte offset of element `index` in row-major order of d. */
static int64_t offset_of(const dims *d, int64_t index)
{
    int64_t off = 0;
    for (int i = d->n - 1; i >= 0; i--) {
        off += (index % d->shape[i]) * d->stride[i];
        index /= d->shape[i];
    }
    return off;
}

typedef struct rows_job {
    int op, dtype;
    size_t isz;     /* the element's size: 2 (narrow), 4 or 8 */
    dispatch_loop_fn copy; /* the dtype's copy loop: the gathers */
    const char *base;
    dims kept, red; /* red merged */
    int64_t count;
    double *vals;   /* one result per output (a narrow float's in float32) */
    atomic_int failed;
} rows_job;

/* n elements `s` bytes apart from q into buf: the dtype's copy loop, whose
 * strided paths vectorize per target (a loop of one-element copies here,
 * compiled at the baseline, ran at 0.6 ns an element: twice the dense
 * copy it replaced). */
static void copy_run(const rows_job *j, char *buf, const char *q, int64_t s, int64_t n)
{
    char *data[2] = {buf, (char *)q};
    intptr_t steps[2] = {(intptr_t)j->isz, (intptr_t)s};
    j->copy(data, steps, (intptr_t)n, NULL);
}

/* Elements [begin, begin + n) of one output's row-major sequence, as
 * they are (isz bytes each), into buf (n <= gather_cap): runs of the innermost
 * reduced dim, an odometer over the others. */
static void gather(const rows_job *j, const char *p, int64_t begin, int64_t n, char *buf)
{
    const dims *r = &j->red;
    const size_t isz = j->isz;
    if (r->n <= 1) {
        int64_t s = r->n ? r->stride[0] : 0;
        copy_run(j, buf, p + begin * s, s, n);
        return;
    }
    int64_t idx[MAXD], rest = begin;
    for (int i = r->n - 1; i >= 0; i--) {
        idx[i] = rest % r->shape[i];
        rest /= r->shape[i];
    }
    const char *q = p + offset_of(r, begin);
    const int in = r->n - 1;
    while (n > 0) {
        int64_t k = r->shape[in] - idx[in];
        if (k > n) k = n;
        copy_run(j, buf, q, r->stride[in], k);
        buf += k * (int64_t)isz, n -= k;
        q += k * r->stride[in];
        idx[in] += k;
        for (int d = in; d > 0 && idx[d] == r->shape[d]; d--) { /* carry */
            q -= idx[d] * r->stride[d];
            idx[d] = 0;
            idx[d - 1]++;
            q += r->stride[d - 1];
        }
    }
}

/* The elements one gather takes for a range of n of an output's sequence:
 * a sum's chunk, a fold's block (its whole run where its kernels do not
 * fold in blocks, Note [Fold blocks]). */
static int64_t gather_cap(const rows_job *j, int64_t n)
{
    int64_t cap = !dispatch_reduce_is_fold(j->op)  ? SUM_CHUNK_BYTES / (int64_t)j->isz
                  : dispatch_fold_in_blocks(j->op) ? DISPATCH_FOLD_BLOCK
                                                   : n;
    return n < cap ? n : cap;
}

/* Two halves of the tree added as the kernel adds them: in float32 but for
 * float64. */
static double add_halves(int dtype, double lo, double hi)
{
    return dtype == DISPATCH_FLOAT64 ? lo + hi : (double)((float)lo + (float)hi);
}

/* The SUM kernel of j's dtype over n elements `stride` bytes apart. */
static double sum_kernel(const rows_job *j, const char *p, int64_t stride, int64_t n)
{
    if (j->dtype == DISPATCH_FLOAT64)
        return CHOSEN_KERNEL(SUM, FLOAT64, dispatch_rk_sum_f64_fn)(p, (intptr_t)stride,
                                                                    (intptr_t)n);
    return ((dispatch_rk_sum_f32_fn)reduce_chosen_kernel(DISPATCH_RK_SUM, j->dtype))(
        p, (intptr_t)stride, (intptr_t)n);
}

/* The SUM kernel's tree over elements [begin, begin + n) of one output: a
 * range inside one run of the innermost reduced dim read in place by the
 * kernel (which reads every other element as it loads), else gathered. */
static double sum_range(const rows_job *j, const char *p, int64_t begin, int64_t n, char *buf)
{
    const dims *r = &j->red;
    if (r->n >= 1 && begin % r->shape[r->n - 1] + n <= r->shape[r->n - 1])
        return sum_kernel(j, p + offset_of(r, begin), r->stride[r->n - 1], n);
    if (n <= gather_cap(j, n)) {
        gather(j, p, begin, n, buf);
        return sum_kernel(j, buf, (int64_t)j->isz, n);
    }
    int64_t leaf = j->dtype == DISPATCH_FLOAT64 ? SUM_LEAF_F64 : SUM_LEAF;
    int64_t h = ((n / leaf + 1) / 2) * leaf; /* the kernel's split */
    double lo = sum_range(j, p, begin, h, buf);
    double hi = sum_range(j, p, begin + h, n - h, buf);
    return add_halves(j->dtype, lo, hi);
}

/* Whether an output's elements are runs of the innermost reduced dim that
 * the EXT_ROWS kernel reads in place: elements one or two apart (Note
 * [Extremes of every other element] in sources/kernels/sum.dispatch.c). */
static int runs_in_place(const rows_job *j)
{
    const dims *r = &j->red;
    if (r->n < 1) return 0;
    const int64_t s = r->stride[r->n - 1], isz = (int64_t)j->isz;
    return s == isz || s == 2 * isz;
}

/* The max or min of elements [begin, end) of one output's row-major
 * sequence, read in place by runs of the innermost reduced dim (a part of
 * one at either end), combined in order as the kernel combines elements:
 * the first NaN, else the first of equal extremes (Note [Which zero, which
 * NaN] in sum.dispatch.c). Whole runs of one row of runs go to the kernel
 * together, up to cap of them (buf holds cap values). */
static double extreme_runs(const rows_job *j, const char *p, int64_t begin, int64_t end,
                           char *buf, int64_t cap)
{
    const int is_min = dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN;
    const dims *r = &j->red;
    const int64_t run = r->shape[r->n - 1], step = r->stride[r->n - 1];
    const int64_t rows = r->n >= 2 ? r->shape[r->n - 2] : 1;
    const int64_t rstep = r->n >= 2 ? r->stride[r->n - 2] : 0;
    double acc = 0;
    for (int64_t q = begin; q < end;) {
        int64_t n = run - q % run, m = 1; /* m runs of n elements */
        if (n > end - q) n = end - q;
        if (n == run) { /* whole runs: as many as this row of runs, end and cap allow */
            m = rows - (q / run) % rows;
            if (m > (end - q) / run) m = (end - q) / run;
            if (m > cap) m = cap;
        }
        reduce_ext_rows(j->dtype, is_min, p + offset_of(r, q), (intptr_t)rstep, (intptr_t)step,
                        n, m, buf, (intptr_t)j->isz);
        for (int64_t k = 0; k < m; k++) {
            const double v = reduce_real_at(j->dtype, buf + k * (int64_t)j->isz);
            acc = q == begin && k == 0 ? v : reduce_ext_next(is_min, acc, v);
            if (acc != acc) return acc; /* the first NaN */
        }
        q += m * n;
    }
    return acc;
}

/* The max or min of one output's elements (float32 or float64): runs read
 * in place where the kernel reads them, else the EXT kernel over each
 * gathered chunk in row-major order, the chunks' answers combined as the
 * kernel combines elements (as extreme_runs'). */
static double extreme_range(const rows_job *j, const char *p, char *buf)
{
    const int is_min = dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN;
    const int64_t cap = gather_cap(j, j->count);
    if (runs_in_place(j)) return extreme_runs(j, p, 0, j->count, buf, cap);
    double acc = 0;
    for (int64_t b = 0; b < j->count; b += cap) {
        const int64_t n = j->count - b < cap ? j->count - b : cap;
        gather(j, p, b, n, buf);
        const double v = reduce_ext_contiguous(j->dtype, is_min, buf, n);
        acc = b == 0 ? v : reduce_ext_next(is_min, acc, v);
        if (acc != acc) break; /* the first NaN */
    }
    return acc;
}

/* The FOLD kernel's fold of elements [begin, begin + n) of one output,
 * along its tree (Note [Fold blocks]): a block read in place where it is
 * one contiguous run, else gathered, a narrow float's widened to float32
 * (f), and handed to the kernel; a longer range split where the kernel
 * splits it, the halves combined as it combines them (a FOLD row whose
 * kernels do not fold in blocks: the whole run in one call, its buffers
 * that long). In float64 (a narrow float's float32 fold is rounded by the
 * caller). */
static double fold_range(const rows_job *j, const char *p, int64_t begin, int64_t n, char *buf,
                         float *f)
{
    if (n > DISPATCH_FOLD_BLOCK && dispatch_fold_in_blocks(j->op)) {
        int64_t h = dispatch_fold_split((intptr_t)n);
        double lo = fold_range(j, p, begin, h, buf, f);
        return dispatch_reduce_fold_combine(j->op, lo, fold_range(j, p, begin + h, n - h, buf, f));
    }
    const char *x = buf;
    if (j->red.n == 1 && j->red.stride[0] == (int64_t)j->isz)
        x = p + begin * (int64_t)j->isz; /* one contiguous run: in place */
    else
        gather(j, p, begin, n, buf);
    int kernel_dtype = j->dtype;
    intptr_t step = (intptr_t)j->isz;
    if (j->isz == 2) { /* narrow: widened, exactly */
        char *data[2] = {(char *)f, (char *)x};
        intptr_t steps[2] = {4, 2};
        dispatch_cast_loop_get(j->dtype, DISPATCH_FLOAT32)(data, steps, (intptr_t)n, NULL);
        x = (const char *)f, kernel_dtype = DISPATCH_FLOAT32, step = 4;
    }
    dispatch_rk_fold_fn fold =
        (dispatch_rk_fold_fn)reduce_chosen_kernel(DISPATCH_RK_FOLD_OF(j->op), kernel_dtype);
    return fold(x, step, (intptr_t)n);
}

/* A fold's value as stored: a float32 (or narrow float's) rounded once. */
static double fold_stored(const rows_job *j, double v)
{
    return j->dtype == DISPATCH_FLOAT64 ? v : (double)(float)v;
}

/* A sum's or mean's value as stored (Note [The NaN and the zero of a sum]). */
static double sum_stored(const rows_job *j, double v)
{
    int mean = dispatch_reduce_is_mean(j->op);
    if (j->dtype == DISPATCH_FLOAT64)
        return sum_store_f64(mean ? v / (double)j->count : v);
    float s = (float)v;
    return (double)sum_store_f32(mean ? s / (float)j->count : s);
}

static void rows_range(void *arg, int64_t b, int64_t e)
{
    rows_job *j = arg;
    int fold = dispatch_reduce_is_fold(j->op);
    int64_t cap = gather_cap(j, j->count);
    char *buf = malloc((size_t)cap * j->isz);
    float *f = fold && j->isz == 2 ? malloc((size_t)cap * sizeof *f) : NULL;
    if (!buf || (fold && j->isz == 2 && !f)) {
        atomic_store(&j->failed, 1);
        free(buf), free(f);
        return;
    }
    for (int64_t o = b; o < e; o++) {
        const char *p = j->base + offset_of(&j->kept, o);
        j->vals[o] = dispatch_reduce_is_extreme(j->op) ? extreme_range(j, p, buf)
                     : fold ? fold_stored(j, fold_range(j, p, 0, j->count, buf, f))
                            : sum_stored(j, sum_range(j, p, 0, j->count, buf));
    }
    free(buf), free(f);
}

/* One long row alone: the tree's top halves on two threads where it pays
 * (the same splits, so the same bits). */
typedef struct half_pair {
    rows_job *j;
    int64_t begin[2], n[2];
    double part[2];
} half_pair;

static void pair_range(void *arg, int64_t b, int64_t e)
{
    half_pair *h = arg;
    int fold = dispatch_reduce_is_fold(h->j->op);
    int64_t cap = gather_cap(h->j, h->n[0] > h->n[1] ? h->n[0] : h->n[1]);
    char *buf = malloc((size_t)cap * h->j->isz);
    float *f = fold && h->j->isz == 2 ? malloc((size_t)cap * sizeof *f) : NULL;
    if (!buf || (fold && h->j->isz == 2 && !f)) {
        atomic_store(&h->j->failed, 1);
        free(buf), free(f);
        return;
    }
    for (int64_t i = b; i < e; i++)
        h->part[i] = dispatch_reduce_is_extreme(h->j->op)
                         ? extreme_runs(h->j, h->j->base, h->begin[i], h->begin[i] + h->n[i],
                                        buf, cap)
                     : fold ? fold_range(h->j, h->j->base, h->begin[i], h->n[i], buf, f)
                            : sum_range(h->j, h->j->base, h->begin[i], h->n[i], buf);
    free(buf), free(f);
}

static int reduce_rows(rows_job *j, int64_t nout)
{
    int fold = dispatch_reduce_is_fold(j->op);
    int64_t split_above = fold ? 2 * DISPATCH_ITER_GRAIN : PAIR_ABOVE;
    if (nout == 1 && j->count > split_above && dispatch_get_num_threads() > 1 &&
        dispatch_reduce_is_extreme(j->op) && runs_in_place(j)) {
        /* one output's elements in two halves, one a thread, joined in order */
        const int64_t h = j->count / 2;
        half_pair hp = {.j = j, .begin = {0, h}, .n = {h, j->count - h}};
        dispatch_parallel_for(2, 1, 1, pair_range, &hp);
        j->vals[0] = reduce_ext_next(dispatch_reduce_kernel_op(j->op) == DISPATCH_COMBINE_MIN,
                                     hp.part[0], hp.part[1]);
    } else if (nout == 1 && j->count > split_above && dispatch_get_num_threads() > 1 &&
        !dispatch_reduce_is_extreme(j->op) && (!fold || dispatch_fold_in_blocks(j->op))) {
        int64_t leaf = j->dtype == DISPATCH_FLOAT64 ? SUM_LEAF_F64 : SUM_LEAF;
        int64_t h = fold ? dispatch_fold_split((intptr_t)j->count)
                         : ((j->count / leaf + 1) / 2) * leaf;
        half_pair hp = {.j = j, .begin = {0, h}, .n = {h, j->count - h}};
        dispatch_parallel_for(2, 1, 1, pair_range, &hp);
        j->vals[0] = fold ? fold_stored(j, dispatch_reduce_fold_combine(j->op, hp.part[0],
                                                                        hp.part[1]))
                          : sum_stored(j, add_halves(j->dtype, hp.part[0], hp.part[1]));
    } else {
        dispatch_parallel_for(nout, dispatch_parallel_grain(j->count), 1, rows_range, j);
    }
    return atomic_load(&j->failed) ? reduce_out_of_memory(j->op) : 0;
}

static int rows_in_place(int op, int dtype, size_t isz, const char *base, const dims *kept,
                         const dims *red, int64_t count, int64_t nout, double *vals);

int reduce_narrow_in_place(int op, const dispatch_iter_operand *in, uint32_t mask,
                           int64_t count, int64_t nout, uint16_t *out)
{
    if (count < 1 || nout < 1) return 1;
    if (reduce_in_place_too_long(count, nout)) return 1;
    /* The dense copy's order (the note above): columns or rows. */
    int last;
    int cols_layout = reduce_copy_takes_columns(in, mask, count, &last);
    /* A product over columns (prod(dim=0)) folds column by column here,
     * element by element; the float32 engine has a column kernel for it
     * (FOLD_COLS, Note [Product columns]). Without a broadcast dim the copy
     * it reduces holds as many elements as the input itself: take it. */
    if (cols_layout && dispatch_reduce_is_fold(op)) {
        int broadcast = 0;
        for (int d = 0; d < in->ndim; d++) broadcast |= in->shape[d] > 1 && in->strides[d] == 0;
        if (!broadcast) return 1; /* the copy's */
    }
    int cols = cols_layout && !dispatch_reduce_is_fold(op);
    dims kept = {0}, red = {0}, after = {0};
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        dims *to = (mask >> d) & 1u ? &red : cols && d > last ? &after : &kept;
        to->shape[to->n] = in->shape[d];
        to->stride[to->n++] = in->strides[d];
    }
    merge_dims(&red);
    if (cols) {
        merge_dims(&after);
        if (red.n != 1 || after.n != 1 || after.stride[0] != 2) return 1; /* the copy's */
        int64_t ncols = after.shape[0];
        for (int64_t plane = 0; plane < nout / ncols; plane++) {
            const char *p = in->data + offset_of(&kept, plane);
            if (reduce_half_cols(in->dtype, p, (intptr_t)red.stride[0], op, ncols, count,
                                 out + plane * ncols) < 0)
                return -1;
        }
        return 0;
    }
    if (dispatch_reduce_is_extreme(op)) return 1; /* the copy's (the note above) */
    double *vals = malloc((size_t)nout * sizeof *vals);
    if (!vals) return reduce_out_of_memory(op);
    int rc = rows_in_place(op, in->dtype, 2, in->data, &kept, &red, count, nout, vals);
    if (rc == 0) { /* float32 values in doubles: rounded once */
        char *data[2] = {(char *)out, (char *)vals};
        intptr_t steps[2] = {2, 8};
        dispatch_cast_loop_get(DISPATCH_FLOAT64, in->dtype)(data, steps, (intptr_t)nout, NULL);
    }
    free(vals);
    return rc;
}

/* The rows order (the note above) read in place: one value per output, in
 * row-major order of the kept dims, into vals. */
static int rows_in_place(int op, int dtype, size_t isz, const char *base, const dims *kept,
                         const dims *red, int64_t count, int64_t nout, double *vals)
{
    rows_job j = {.op = op, .dtype = dtype, .isz = isz, .base = base, .kept = *kept,
                  .red = *red, .count = count, .vals = vals,
                  .copy = dispatch_loop_get(DISPATCH_LOOP_COPY, dtype)};
    if (!j.copy) return 1;
    atomic_init(&j.failed, 0);
    return reduce_rows(&j, nout);
}

int reduce_float_rows_in_place(int op, const dispatch_iter_operand *in, uint32_t mask,
                               int64_t count, int64_t nout, double *vals)
{
    if (count < 1 || nout < 1) return 1;
    if (dispatch_reduce_is_fold(op) && op != DISPATCH_REDUCE_PROD) return 1; /* lanes: prod's */
    int broadcast = 0;
    for (int d = 0; d < in->ndim; d++) broadcast |= in->shape[d] > 1 && in->strides[d] == 0;
    if (!broadcast && !reduce_reads_by_gathers(in)) return 1; /* the copy: as fast, as small */
    dims kept = {0}, red = {0};
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        dims *to = (mask >> d) & 1u ? &red : &kept;
        to->shape[to->n] = in->shape[d];
        to->stride[to->n++] = in->strides[d];
    }
    merge_dims(&red);
    return rows_in_place(op, in->dtype, dispatch_dtype_itemsize(in->dtype), in->data, &kept,
                         &red, count, nout, vals);
}
