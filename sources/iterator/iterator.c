/* The elementwise engine and reductions of iterator.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/iterator.h"
#include "dispatch/kernels.h"
#include "dispatch/strided.h"

#define MAXD DISPATCH_ITER_MAX_DIMS
#define MAXOPS DISPATCH_ITER_MAX_OPERANDS

/* ------------------------------------------------------------------ shapes */

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    dispatch_format_shape(buf, cap, ndim, shape); /* the one formatter (core/error.c) */
}

int dispatch_iter_broadcast_shape(int n, const dispatch_iter_operand *ops, int *ndim,
                                  int64_t *shape)
{
    int nd = 0;
    for (int k = 0; k < n; k++) {
        if (ops[k].ndim < 0 || ops[k].ndim > MAXD) {
            return dispatch_error_set(DISPATCH_ERR_VALUE, "operand %d has %d dims; at most %d",
                                      k, ops[k].ndim, MAXD);
        }
        if (ops[k].ndim > nd) nd = ops[k].ndim;
    }
    for (int d = 0; d < nd; d++) shape[d] = 1;
    for (int k = 0; k < n; k++) {
        int off = nd - ops[k].ndim;
        for (int d = 0; d < ops[k].ndim; d++) {
            int64_t s = ops[k].shape[d], *t = &shape[off + d];
            if (s == *t || s == 1) continue;
            if (*t == 1) {
                *t = s;
                continue;
            }
            char a[256], b[256];
            format_shape(a, sizeof a, ops[0].ndim, ops[0].shape);
            format_shape(b, sizeof b, ops[k].ndim, ops[k].shape);
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "shapes %s and %s cannot be broadcast together: dimension "
                                      "%d is %lld in one and %lld in the other",
                                      a, b, d - ops[k].ndim, (long long)*t, (long long)s);
        }
    }
    int64_t numel = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] < 0 || __builtin_mul_overflow(numel, shape[d], &numel)) {
            char a[256];
            format_shape(a, sizeof a, nd, shape);
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "invalid broadcast shape %s: a negative size, or the "
                                      "number of elements overflows int64", a);
        }
    }
    *ndim = nd;
    return 0;
}

/* ------------------------------------------------------------------ plan */

/* The iteration space after broadcasting, reordering and merging: the one
 * plan of the strided engine (Note [One strided engine] in
 * sources/core/strided.c). Dimension 0 is the innermost; strides[k][d] is
 * operand k's byte stride. */
typedef dispatch_strided_plan plan;
_Static_assert(MAXD == DISPATCH_MAX_DIMS, "the iterator and the strided engine share dims");
_Static_assert(MAXOPS == DISPATCH_MAX_OPERANDS, "the iterator and the engine share operands");

/* Operand k's strides in the broadcast shape (outermost first in `bs`). */
static void broadcast_strides(const dispatch_iter_operand *op, int nd, const int64_t *shape,
                              intptr_t *bs)
{
    int off = nd - op->ndim;
    for (int d = 0; d < nd; d++) {
        int od = d - off;
        bs[d] = (od < 0 || op->shape[od] == 1 || shape[d] == 1) ? 0 : (intptr_t)op->strides[od];
    }
}

/* Byte range [lo, hi) an operand touches in the plan's space. */
static void extent(const plan *p, int k, size_t itemsize, char **lo, char **hi)
{
    intptr_t a = 0, b = 0;
    for (int d = 0; d < p->ndim; d++) {
        intptr_t span = p->strides[k][d] * (intptr_t)(p->shape[d] - 1);
        if (span < 0) a += span;
        else b += span;
    }
    *lo = p->data[k] + a;
    *hi = p->data[k] + b + (intptr_t)itemsize;
}

/* Whether two elements of operand k share memory: 1, 0, or -1 with the error
 * set (Note [Overlapping outputs] in sources/core/strided.c; exact, not only
 * broadcast dims). */
static int self_overlapping(const plan *p, int k, size_t itemsize)
{
    int64_t st[MAXD];
    for (int d = 0; d < p->ndim; d++) st[d] = (int64_t)p->strides[k][d];
    return dispatch_overlaps_itself(p->ndim, p->shape, st, (int64_t)itemsize);
}

/* --------------------------------------------------------------- running */

typedef struct runner {
    const plan *p;
    dispatch_loop_fn loop;
    void *ctx;
    size_t loop_isz[MAXOPS]; /* itemsize of each operand's loop dtype */
    int cast_any;
    int dtype[MAXOPS];
    dispatch_loop_fn cast[MAXOPS]; /* input: op dtype -> loop; output: loop -> op dtype */
} runner;

/* One inner run of n elements at ptrs with the plan's inner strides, casting
 * (the engine's inner function when some operand's dtype is not the loop's). */
static void run_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg)
{
    const runner *r = arg;
    const plan *p = r->p;
    /* Note [Chunked casting]: operands of another dtype go through buffers of
     * DISPATCH_ITER_CHUNK elements in the loop's dtype: inputs are cast in,
     * the loop runs on the buffers (contiguous, so its fast path), the output
     * is cast out. Memory stays O(chunk) whatever the size. */
    _Alignas(64) char bufs[MAXOPS][DISPATCH_ITER_CHUNK * 8];
    for (intptr_t i = 0; i < n; i += DISPATCH_ITER_CHUNK) {
        intptr_t m = n - i < DISPATCH_ITER_CHUNK ? n - i : DISPATCH_ITER_CHUNK;
        char *lp[MAXOPS];
        intptr_t ls[MAXOPS];
        for (int k = 0; k < p->nops; k++) {
            char *at = ptrs[k] + i * steps[k];
            if (r->cast[k] == NULL) {
                lp[k] = at;
                ls[k] = steps[k];
                continue;
            }
            lp[k] = bufs[k];
            ls[k] = (intptr_t)r->loop_isz[k];
            if (k > 0) {
                char *cd[2] = {bufs[k], at};
                intptr_t cs[2] = {(intptr_t)r->loop_isz[k], steps[k]};
                r->cast[k](cd, cs, m, NULL);
            }
        }
        r->loop(lp, ls, m, r->ctx);
        if (r->cast[0] != NULL) {
            char *cd[2] = {ptrs[0] + i * steps[0], bufs[0]};
            intptr_t cs[2] = {steps[0], (intptr_t)r->loop_isz[0]};
            r->cast[0](cd, cs, m, NULL);
        }
    }
}

/* Run flat elements [begin, end) of the plan (in its inner-first order). */
static void run_range(void *arg, int64_t begin, int64_t end)
{
    const runner *r = arg;
    if (r->cast_any) dispatch_strided_plan_walk(r->p, begin, end, run_inner, arg);
    else dispatch_strided_plan_walk(r->p, begin, end, r->loop, r->ctx);
}

/* Copy operand `src` (in the broadcast shape) into a new contiguous buffer,
 * row-major, through the engine with the copy loop; bs_out (may be NULL)
 * gets the copy's strides in that shape. NULL when it cannot be allocated. */
static char *copy_contiguous(const dispatch_iter_operand *src, int nd, const int64_t *shape,
                             int64_t numel, intptr_t *bs_out)
{
    size_t isz = dispatch_dtype_itemsize(src->dtype), nbytes;
    if (numel < 0 || __builtin_mul_overflow((size_t)numel, isz, &nbytes) ||
        nbytes > SIZE_MAX - 1)
        return NULL;
    char *buf = malloc(nbytes + 1); /* + 1: never malloc(0) */
    if (!buf) return NULL;
    intptr_t bs[2][MAXD];
    intptr_t s = (intptr_t)isz;
    for (int d = nd - 1; d >= 0; d--) {
        bs[0][d] = shape[d] == 1 ? 0 : s;
        s *= (intptr_t)shape[d];
    }
    broadcast_strides(src, nd, shape, bs[1]);
    char *data[2] = {buf, src->data};
    plan p;
    dispatch_strided_plan_init(&p, 2, data, nd, shape, bs);
    dispatch_loop_fn copy = dispatch_loop_get(DISPATCH_LOOP_COPY, src->dtype);
    if (p.numel > 0) dispatch_strided_plan_walk(&p, 0, p.numel, copy, NULL);
    if (bs_out) memcpy(bs_out, bs[0], sizeof(intptr_t) * (size_t)nd);
    return buf;
}

/* The broadcast shape of the operands, which must be the output's (operand
 * 0 is never broadcast): the one shape check of the CPU and device paths. */
static int output_shape(int nops, const dispatch_iter_operand *ops, int *nd, int64_t *shape)
{
    if (dispatch_iter_broadcast_shape(nops, ops, nd, shape) != 0) return -1;
    int same = ops[0].ndim == *nd;
    for (int d = 0; same && d < *nd; d++) same = ops[0].shape[d] == shape[d];
    if (same) return 0;
    char a[256], b[256];
    format_shape(a, sizeof a, ops[0].ndim, ops[0].shape);
    format_shape(b, sizeof b, *nd, shape);
    return dispatch_error_set(DISPATCH_ERR_VALUE,
                              "output with shape %s doesn't match the broadcast shape %s", a, b);
}

int dispatch_iter_elementwise_typed(dispatch_loop_fn loop, const int *loop_dtypes, int nops,
                                    const dispatch_iter_operand *ops, void *ctx)
{
    if (nops < 1 || nops > MAXOPS) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "expected 1 to %d operands, got %d",
                                  MAXOPS, nops);
    }
    if (loop == NULL) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for dtype %s",
                                  dispatch_dtype_name(loop_dtypes[0]));
    }
    int nd;
    int64_t shape[MAXD];
    if (output_shape(nops, ops, &nd, shape) != 0) return -1;
    runner r = {.loop = loop, .ctx = ctx};
    for (int k = 0; k < nops; k++) {
        int want = loop_dtypes[k];
        r.dtype[k] = ops[k].dtype;
        r.loop_isz[k] = dispatch_dtype_itemsize(want);
        if (ops[k].dtype == want) continue;
        r.cast[k] = k == 0 ? dispatch_cast_loop_get(want, ops[k].dtype)
                           : dispatch_cast_loop_get(ops[k].dtype, want);
        if (r.cast[k] == NULL) {
            return dispatch_error_set(DISPATCH_ERR_TYPE, "cannot cast %s to %s",
                                      dispatch_dtype_name(k ? ops[k].dtype : want),
                                      dispatch_dtype_name(k ? want : ops[k].dtype));
        }
        r.cast_any = 1;
    }
    intptr_t bs[MAXOPS][MAXD];
    char *data[MAXOPS];
    for (int k = 0; k < nops; k++) {
        broadcast_strides(&ops[k], nd, shape, bs[k]);
        data[k] = ops[k].data;
    }
    plan p;
    dispatch_strided_plan_init(&p, nops, data, nd, shape, bs);
    if (p.numel == 0) return 0;
    int overlap = self_overlapping(&p, 0, dispatch_dtype_itemsize(ops[0].dtype));
    if (overlap < 0) return -1;
    if (overlap) {
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "the output overlaps itself (more than one element refers to "
                                  "one memory location); write to a contiguous output instead");
    }
    /* Note [Overlapping out=]: an input that shares memory with the output
     * other than exactly (same start, same strides) would be read after the
     * output overwrote it; such an input is copied first. */
    char *tmp[MAXOPS] = {0};
    char *olo, *ohi;
    extent(&p, 0, dispatch_dtype_itemsize(ops[0].dtype), &olo, &ohi);
    int replanned = 0;
    for (int k = 1; k < nops; k++) {
        char *lo, *hi;
        extent(&p, k, dispatch_dtype_itemsize(ops[k].dtype), &lo, &hi);
        if (hi <= olo || lo >= ohi) continue;
        int exact = p.data[k] == p.data[0] && ops[k].dtype == ops[0].dtype;
        for (int d = 0; exact && d < p.ndim; d++) exact = p.strides[k][d] == p.strides[0][d];
        if (exact) continue;
        tmp[k] = copy_contiguous(&ops[k], nd, shape, p.numel, bs[k]);
        if (tmp[k] == NULL) {
            for (int j = 1; j < k; j++) free(tmp[j]);
            char a[256];
            format_shape(a, sizeof a, nd, shape);
            return dispatch_error_set(DISPATCH_ERR_MEMORY,
                                      "cannot allocate a copy of an input of shape %s and "
                                      "dtype %s (it overlaps the output)",
                                      a, dispatch_dtype_name(ops[k].dtype));
        }
        data[k] = tmp[k];
        replanned = 1;
    }
    if (replanned) dispatch_strided_plan_init(&p, nops, data, nd, shape, bs);
    r.p = &p;
    dispatch_parallel_for(p.numel, DISPATCH_ITER_GRAIN, 64, run_range, &r);
    for (int k = 1; k < nops; k++) free(tmp[k]);
    return 0;
}

int dispatch_iter_elementwise_op(int loop, int loop_dtype, int nops,
                                 const dispatch_iter_operand *ops, void *ctx)
{
    if (loop < 0 || loop >= DISPATCH_NUM_LOOPS || !dispatch_dtype_is_valid(loop_dtype)) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "unknown loop %d or dtype %d", loop,
                                  loop_dtype);
    }
    dispatch_loop_fn fn = dispatch_loop_get(loop, loop_dtype);
    if (fn == NULL) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s has no loop for dtype %s",
                                  dispatch_loop_name(loop), dispatch_dtype_name(loop_dtype));
    }
    if (dispatch_loop_nin(loop) != nops - 1) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "%s takes %d inputs, got %d",
                                  dispatch_loop_name(loop), dispatch_loop_nin(loop), nops - 1);
    }
    if (ctx == NULL && (loop == DISPATCH_LOOP_ADDCMUL || loop == DISPATCH_LOOP_FILL)) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "%s needs its scalar value (ctx is NULL)",
                                  dispatch_loop_name(loop));
    }
    int dtypes[MAXOPS];
    for (int k = 0; k < nops; k++) dtypes[k] = dispatch_loop_operand_dtype(loop, k, loop_dtype);
    return dispatch_iter_elementwise_typed(fn, dtypes, nops, ops, ctx);
}

/* The host half of a device loop (Note [CUDA launch plans] in
 * sources/cuda/cuda_launch.c): the same broadcasting, shape check, plan and
 * output self-overlap check as dispatch_iter_elementwise_typed, and nothing
 * walked. An input that overlaps the output other than exactly cannot be
 * copied here (its memory is the device's): bit k of *overlapping is set and
 * the caller copies it on the device and plans again. */
int dispatch_iter_elementwise_plan(int nops, const dispatch_iter_operand *ops,
                                   dispatch_strided_plan *out, uint32_t *overlapping)
{
    *overlapping = 0;
    if (nops < 1 || nops > MAXOPS) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "expected 1 to %d operands, got %d",
                                  MAXOPS, nops);
    }
    int nd;
    int64_t shape[MAXD];
    if (output_shape(nops, ops, &nd, shape) != 0) return -1;
    intptr_t bs[MAXOPS][MAXD];
    char *data[MAXOPS];
    for (int k = 0; k < nops; k++) {
        broadcast_strides(&ops[k], nd, shape, bs[k]);
        data[k] = ops[k].data;
    }
    dispatch_strided_plan_init(out, nops, data, nd, shape, bs);
    if (out->numel == 0) return 0;
    int overlap = self_overlapping(out, 0, dispatch_dtype_itemsize(ops[0].dtype));
    if (overlap < 0) return -1;
    if (overlap) {
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "the output overlaps itself (more than one element refers to "
                                  "one memory location); write to a contiguous output instead");
    }
    char *olo, *ohi;
    extent(out, 0, dispatch_dtype_itemsize(ops[0].dtype), &olo, &ohi);
    for (int k = 1; k < nops; k++) {
        char *lo, *hi;
        extent(out, k, dispatch_dtype_itemsize(ops[k].dtype), &lo, &hi);
        if (hi <= olo || lo >= ohi) continue;
        int exact = out->data[k] == out->data[0] && ops[k].dtype == ops[0].dtype;
        for (int d = 0; exact && d < out->ndim; d++) exact = out->strides[k][d] == out->strides[0][d];
        if (!exact) *overlapping |= 1u << k;
    }
    return 0;
}

/* Device loops (Note [CUDA launch plans] in sources/cuda/cuda_launch.c). */
static _Atomic(dispatch_device_loop_fn) device_loops[DISPATCH_NUM_DEVICES];

int dispatch_device_loop_register(int device, dispatch_device_loop_fn fn)
{
    if (device <= DISPATCH_DEVICE_CPU || device >= DISPATCH_NUM_DEVICES)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "device loops: invalid device %d", device);
    atomic_store(&device_loops[device], fn);
    return 0;
}

int dispatch_iter_device_op(int device, int loop, int loop_dtype, int nops,
                            const dispatch_iter_operand *ops, uint32_t scalar_mask, void *ctx)
{
    if (loop < 0 || loop >= DISPATCH_NUM_LOOPS || !dispatch_dtype_is_valid(loop_dtype))
        return dispatch_error_set(DISPATCH_ERR_VALUE, "unknown loop %d or dtype %d", loop,
                                  loop_dtype);
    if (!dispatch_loop_get(loop, loop_dtype))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s has no loop for dtype %s",
                                  dispatch_loop_name(loop), dispatch_dtype_name(loop_dtype));
    if (dispatch_loop_nin(loop) != nops - 1)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "%s takes %d inputs, got %d",
                                  dispatch_loop_name(loop), dispatch_loop_nin(loop), nops - 1);
    dispatch_device_loop_fn fn = device >= 0 && device < DISPATCH_NUM_DEVICES
                                     ? atomic_load(&device_loops[device]) : NULL;
    if (!fn)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s: no %s loops are registered",
                                  dispatch_loop_name(loop), dispatch_device_name(device));
    if (scalar_mask & 1u)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "the output cannot be a scalar argument");
    dispatch_strided_plan p;
    uint32_t overlapping;
    if (dispatch_iter_elementwise_plan(nops, ops, &p, &overlapping) < 0) return -1;
    if (p.numel == 0) return 0;
    overlapping &= ~scalar_mask; /* host values: read before the launch */
    /* Note [Overlapping out=] on the device: such an input is copied (on the
     * device, by the COPY loop) into a fresh contiguous tensor first. */
    dispatch_iter_operand mine[MAXOPS];
    dispatch_tensor *tmp[MAXOPS] = {0};
    int64_t tstrides[MAXOPS][MAXD];
    int rc = 0;
    for (int k = 0; k < nops; k++) mine[k] = ops[k];
    for (int k = 1; k < nops && rc == 0; k++) {
        if (!(overlapping >> k & 1)) continue;
        tmp[k] = dispatch_tensor_empty(ops[k].ndim, ops[k].shape, ops[k].dtype, device);
        if (!tmp[k]) {
            rc = -1;
            break;
        }
        int64_t isz = (int64_t)dispatch_dtype_itemsize(ops[k].dtype);
        for (int d = 0; d < ops[k].ndim; d++) tstrides[k][d] = tmp[k]->strides[d] * isz;
        dispatch_iter_operand pair[2] = {
            {tmp[k]->data, ops[k].ndim, ops[k].shape, tstrides[k], ops[k].dtype}, ops[k]};
        rc = dispatch_iter_device_op(device, DISPATCH_LOOP_COPY, ops[k].dtype, 2, pair, 0, NULL);
        mine[k] = pair[0];
    }
    if (rc == 0 && overlapping && dispatch_iter_elementwise_plan(nops, mine, &p, &overlapping) < 0)
        rc = -1;
    if (rc == 0) {
        int dtypes[MAXOPS], loop_dtypes[MAXOPS];
        for (int k = 0; k < nops; k++) {
            dtypes[k] = mine[k].dtype;
            loop_dtypes[k] = dispatch_loop_operand_dtype(loop, k, loop_dtype);
        }
        char err[512] = "";
        if (fn(loop, loop_dtype, &p, dtypes, loop_dtypes, scalar_mask, ctx, err, sizeof err) != 0)
            rc = dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s", err[0] ? err : "device loop failed");
    }
    for (int k = 1; k < nops; k++)
        if (tmp[k]) dispatch_tensor_decref(tmp[k]);
    return rc;
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
        return f32 ? (double)dispatch_kernels_extreme_f32(!is_max, (const float *)p,
                                                          (intptr_t)j->count)
                   : dispatch_kernels_extreme_f64(!is_max, (const double *)p, (intptr_t)j->count);
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
            dispatch_kernels_cols_f32(c->kop, ip, j->rstride, (intptr_t)c->pcount[part],
                                      (intptr_t)w, (float *)(void *)dst, scratch);
        else
            dispatch_kernels_cols_f64(c->kop, ip, j->rstride, (intptr_t)c->pcount[part],
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
    c.levels = dispatch_kernels_cols_scratch(j->count);
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

/* The engine's inner function of a reduction: n outputs at ptrs[0], each
 * reduced from its count elements starting at ptrs[1]. */
static void reduce_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg)
{
    const reduce_job *j = arg;
    if (j->op == DISPATCH_REDUCE_SUM || j->op == DISPATCH_REDUCE_MEAN) {
        /* All n sums in one call: the kernel reads two rows at a time where
         * that is faster (Note [Two streams] in sources/kernels/sum.dispatch.c). */
        int f32 = j->dtype == DISPATCH_FLOAT32;
        (f32 ? dispatch_kernels_sum_rows_f32 : dispatch_kernels_sum_rows_f64)(
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
    if (j->count >= 1 && j->rstride == (intptr_t)dispatch_dtype_itemsize(j->dtype)) {
        /* Contiguous rows of max or min: the row kernel, two rows at a time
         * where that is faster. */
        (j->dtype == DISPATCH_FLOAT32 ? dispatch_kernels_extreme_rows_f32
                                      : dispatch_kernels_extreme_rows_f64)(
            j->op == DISPATCH_REDUCE_MIN, ptrs[1], steps[1], (intptr_t)j->count, n, ptrs[0],
            steps[0]);
        return;
    }
    for (intptr_t e = 0; e < n; e++) {
        double v = extreme_one(j, ptrs[1] + e * steps[1]);
        char *op = ptrs[0] + e * steps[0];
        if (j->dtype == DISPATCH_FLOAT32) {
            float f = (float)v;
            memcpy(op, &f, sizeof f);
        } else {
            memcpy(op, &v, sizeof v);
        }
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
        s->part[i] = s->dtype == DISPATCH_FLOAT64   ? dispatch_kernels_sum_f64(p, s->stride, n)
                     : s->dtype == DISPATCH_FLOAT16 ? (double)dispatch_kernels_sum_f16(p, s->stride, n)
                                                    : (double)dispatch_kernels_sum_f32(p, s->stride, n);
    }
}

float dispatch_iter_sum_f16(const uint16_t *p, int64_t n)
{
    if (n < 2 * DISPATCH_ITER_GRAIN || dispatch_get_num_threads() < 2)
        return dispatch_kernels_sum_f16((const char *)p, 2, (intptr_t)n);
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
 * sources/dispatcher/kernels.c (a list of dims, PyTorch's messages, then the
 * output allocated with the shape computed here). The dtype rules are each
 * caller's own facts: the operators' result dtypes (sum of integers is
 * int64, mean needs floats) in kernels.c, the engine's float32/float64
 * kernels in dispatch_iter_reduce.
 */
static const char *const reduce_op_names[] = {"sum", "mean", "max", "min"};

int dispatch_iter_reduce_check(const char *opname, int op, int ndim, const int64_t *shape,
                               int ndims, const int64_t *dims, uint32_t *dim_mask, int keepdim,
                               int *out_ndim, int64_t *out_shape, int64_t *count)
{
    if (op < DISPATCH_REDUCE_SUM || op > DISPATCH_REDUCE_MIN) {
        return dispatch_error_set(DISPATCH_ERR_VALUE, "unknown reduction %d", op);
    }
    const char *name = opname ? opname : reduce_op_names[op];
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

int dispatch_iter_reduce(int op, const dispatch_iter_operand *in, uint32_t dim_mask, int keepdim,
                         const dispatch_iter_operand *out)
{
    if (in->dtype != DISPATCH_FLOAT32 && in->dtype != DISPATCH_FLOAT64) {
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "reductions take float32 or float64 tensors, got %s",
                                  dispatch_dtype_name(in->dtype));
    }
    if (out->dtype != in->dtype) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "reduction output must be %s, got %s",
                                  dispatch_dtype_name(in->dtype), dispatch_dtype_name(out->dtype));
    }
    int nd = in->ndim;
    int64_t oshape[MAXD], count = 0;
    int ond = 0;
    if (dispatch_iter_reduce_check(NULL, op, nd, in->shape, -1, NULL, &dim_mask, keepdim, &ond,
                                   oshape, &count) < 0)
        return -1;
    int same = out->ndim == ond;
    for (int d = 0; same && d < ond; d++) same = out->shape[d] == oshape[d];
    if (!same) {
        char a[256], b[256];
        format_shape(a, sizeof a, out->ndim, out->shape);
        format_shape(b, sizeof b, ond, oshape);
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "reduction output has shape %s, expected %s", a, b);
    }
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
    if (one_stride && count > 1 && rstride != isz0) {
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
                      : copy_contiguous(&src, nd, perm_shape, total, NULL);
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
    if (nout == 1 && count >= 2 * DISPATCH_ITER_GRAIN && dispatch_get_num_threads() > 1) {
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
