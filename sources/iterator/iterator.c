/* The elementwise engine and reductions of iterator.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/iterator.h"
#include "dispatch/strided.h"
#include "iterator_internal.h"

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
    dispatch_loop2d_fn loop2d; /* its 2-D loop, or NULL */
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
    int in_place = 0;
    for (int k = 1; k < p->nops; k++) in_place |= ptrs[k] == ptrs[0];
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
                /* a broadcast input (a column's element over a row) is cast
                 * once and stays the loop's scalar operand (its stride 0
                 * path); not in place, where a scalar-operand loop whose
                 * output is its other input fails the compiler's alias
                 * check and runs scalar (x.add_(1) of int32: 1.5x) */
                const int once = steps[k] == 0 && !in_place;
                char *cd[2] = {bufs[k], at};
                intptr_t cs[2] = {(intptr_t)r->loop_isz[k], steps[k]};
                r->cast[k](cd, cs, once ? 1 : m, NULL);
                if (once) ls[k] = 0;
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
    else dispatch_strided_plan_walk2d(r->p, begin, end, r->loop, r->loop2d, r->ctx);
}

/* A new buffer of shape's elements, isz bytes each, row-major (stride 0
 * where a dim is 1), filled by loop(buffer, src) with src's strides src_bs;
 * its strides into bs_out. NULL when it cannot be allocated. */
static char *fill_new_buffer(dispatch_loop_fn loop, char *src, const intptr_t *src_bs, int nd,
                             const int64_t *shape, int64_t numel, size_t isz, intptr_t *bs_out)
{
    size_t nbytes;
    if (numel < 0 || __builtin_mul_overflow((size_t)numel, isz, &nbytes) ||
        nbytes > SIZE_MAX - 1)
        return NULL;
    char *buf = malloc(nbytes + 1); /* + 1: never malloc(0) */
    if (!buf) return NULL;
    intptr_t bs[2][MAXD];
    intptr_t s = (intptr_t)isz;
    for (int d = nd - 1; d >= 0; d--) {
        bs[0][d] = shape[d] == 1 ? 0 : s;
        bs[1][d] = src_bs[d];
        s *= (intptr_t)shape[d];
    }
    char *data[2] = {buf, src};
    plan p;
    dispatch_strided_plan_init(&p, 2, data, nd, shape, bs);
    if (p.numel > 0) dispatch_strided_plan_walk(&p, 0, p.numel, loop, NULL);
    if (bs_out) memcpy(bs_out, bs[0], sizeof(intptr_t) * (size_t)nd);
    return buf;
}

/* See iterator_internal.h. */
char *dispatch_iter_copy_contiguous(const dispatch_iter_operand *src, int nd, const int64_t *shape,
                                    int64_t numel, intptr_t *bs_out)
{
    intptr_t src_bs[MAXD];
    broadcast_strides(src, nd, shape, src_bs);
    return fill_new_buffer(dispatch_loop_get(DISPATCH_LOOP_COPY, src->dtype), src->data, src_bs,
                           nd, shape, numel, dispatch_dtype_itemsize(src->dtype), bs_out);
}

/*
 * Note [Broadcast inputs cast once]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * An input of another dtype than its loop's that the broadcast repeats (a
 * row over every row of a matrix: x / row with int64 operands) was cast
 * again for each repetition by Note [Chunked casting]. Where it repeats at
 * least BROADCAST_CAST_REPEATS times and its own elements fit
 * BROADCAST_CAST_BYTES in the loop's dtype, they are cast once, up front,
 * into a buffer laid out as the input (stride 0 where it is broadcast), and
 * the loop reads that buffer as an operand of its own dtype. The same
 * values: one cast per element either way. A buffer that cannot be
 * allocated leaves the input to the chunks, and so does a value repeated
 * along the inner dim of an in-place call (x.sub_(2.5) of float64): the
 * loop would take its scalar-operand path with its output its other input,
 * which fails the compiler's alias check and runs scalar (23 -> 32 us for
 * 256K), where the chunks give it a run of copies.
 */
enum { BROADCAST_CAST_REPEATS = 4, BROADCAST_CAST_BYTES = 1 << 20 };

/* Input k's own elements cast to `want` into a new buffer (NULL: not worth
 * it, or no memory), its strides in bs_io replaced by the buffer's. */
static char *cast_broadcast_once(const dispatch_iter_operand *src, int want, int nd,
                                 const int64_t *shape, int64_t numel, intptr_t *bs_io)
{
    int64_t own[MAXD], count = 1;
    for (int d = 0; d < nd; d++) {
        own[d] = bs_io[d] == 0 ? 1 : shape[d];
        count *= own[d];
    }
    const size_t isz = dispatch_dtype_itemsize(want);
    dispatch_loop_fn cast = dispatch_cast_loop_get(src->dtype, want);
    if (!cast || count > numel / BROADCAST_CAST_REPEATS ||
        (size_t)count * isz > BROADCAST_CAST_BYTES)
        return NULL;
    return fill_new_buffer(cast, src->data, bs_io, nd, own, count, isz, bs_io);
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

/*
 * Note [Gathered strided inputs]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A loop marked gather_strided in operators.toml (sqrt and the exp/log
 * family: DISPATCH_FORALL_GATHERED_LOOPS) costs far more per element than a
 * copy, and its vector path runs only on contiguous operands: a strided
 * input was copied into the loop's own chunk buffer an element at a time
 * (sqrt of a float32 view of every other element: 188 us for 256K, 60% of
 * it in that copy, the contiguous loop 48). Such an operand, and
 * a strided output, go through Note [Chunked casting]'s buffers with the
 * copy loop as their "cast": a chunk is copied in, the loop runs on
 * contiguous memory, the output chunk is copied out. The same values: the
 * loop's element-wise results do not depend on the layout (the targets'
 * test compares every layout with the reference). One layout stays with
 * the loop: every other element of float32 or float64 into a contiguous
 * output (x[:, ::2].sqrt()), which the loop reads by vector itself (Note
 * [Every other element in the loop] in sources/kernels/kernels_loops.h).
 */
static int loop_gathers_strided(int loop)
{
    switch (loop) {
#define LOOP_GATHERED_(NAME) case DISPATCH_LOOP_##NAME: return 1;
        DISPATCH_FORALL_GATHERED_LOOPS(LOOP_GATHERED_)
#undef LOOP_GATHERED_
    default: return 0;
    }
}

/* dispatch_iter_elementwise_typed with the loop's 2-D loop (or NULL);
 * gather: Note [Gathered strided inputs]. */
static int elementwise_run(dispatch_loop_fn loop, dispatch_loop2d_fn loop2d,
                           const int *loop_dtypes, int nops, const dispatch_iter_operand *ops,
                           void *ctx, int gather)
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
    runner r = {.loop = loop, .loop2d = loop2d, .ctx = ctx};
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
        tmp[k] = dispatch_iter_copy_contiguous(&ops[k], nd, shape, p.numel, bs[k]);
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
    int in_place = 0;
    for (int k = 1; k < nops; k++) in_place |= data[k] == data[0];
    for (int k = 1; k < nops; k++) { /* Note [Broadcast inputs cast once] */
        if (r.cast[k] == NULL || tmp[k] != NULL || (in_place && (nd == 0 || bs[k][nd - 1] == 0)))
            continue;
        tmp[k] = cast_broadcast_once(&ops[k], loop_dtypes[k], nd, shape, p.numel, bs[k]);
        if (tmp[k] == NULL) continue;
        data[k] = tmp[k];
        r.cast[k] = NULL;
        r.dtype[k] = loop_dtypes[k];
        replanned = 1;
    }
    for (int k = 0; k < nops; k++) r.cast_any |= r.cast[k] != NULL;
    if (replanned) dispatch_strided_plan_init(&p, nops, data, nd, shape, bs);
    const int out_contiguous = r.cast[0] == NULL && p.strides[0][0] == (intptr_t)r.loop_isz[0];
    for (int k = 0; gather && k < nops; k++) { /* Note [Gathered strided inputs] */
        const intptr_t step = p.strides[k][0];
        if (r.cast[k] != NULL || step == 0 || step == (intptr_t)r.loop_isz[k]) continue;
        if (k > 0 && out_contiguous && r.loop_isz[k] >= 4 && step == 2 * (intptr_t)r.loop_isz[k])
            continue; /* every other float32/float64: the loop reads it itself */
        r.cast[k] = dispatch_loop_get(DISPATCH_LOOP_COPY, ops[k].dtype);
        r.cast_any |= r.cast[k] != NULL;
    }
    r.p = &p;
    dispatch_parallel_for(p.numel, DISPATCH_ITER_GRAIN, 64, run_range, &r);
    for (int k = 1; k < nops; k++) free(tmp[k]);
    return 0;
}

int dispatch_iter_elementwise_typed(dispatch_loop_fn loop, const int *loop_dtypes, int nops,
                                    const dispatch_iter_operand *ops, void *ctx)
{
    return elementwise_run(loop, NULL, loop_dtypes, nops, ops, ctx, 0);
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
    return elementwise_run(fn, dispatch_loop2d_get(loop, loop_dtype, fn), dtypes, nops, ops, ctx,
                           loop_gathers_strided(loop));
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

/* Device byte copies, registered beside the loops (Note [Copies that touch a
 * device] in sources/dispatcher/device_copy.c). */
static _Atomic(dispatch_device_memcpy_fn) device_memcpys[DISPATCH_NUM_DEVICES];

int dispatch_device_memcpy_register(int device, dispatch_device_memcpy_fn fn)
{
    if (device <= DISPATCH_DEVICE_CPU || device >= DISPATCH_NUM_DEVICES)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "device copies: invalid device %d", device);
    atomic_store(&device_memcpys[device], fn);
    return 0;
}

int dispatch_iter_device_memcpy(int device, void *dst, const void *src, size_t nbytes, int kind)
{
    dispatch_device_memcpy_fn fn = device > DISPATCH_DEVICE_CPU && device < DISPATCH_NUM_DEVICES
                                       ? atomic_load(&device_memcpys[device]) : NULL;
    if (!fn)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "copy_: no %s copies are registered",
                                  dispatch_device_name(device));
    if (nbytes == 0) return 0;
    char err[512] = "";
    if (fn(dst, src, nbytes, kind, err, sizeof err) != 0)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s", err[0] ? err : "device copy failed");
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
