/* The strided engine; see dispatch/strided.h and Note [One strided engine]. */
#include "dispatch/strided.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"

/*
 * Note [One strided engine]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * Every CPU walk over strided operands goes through the plan of this file:
 * copy_ and fill_ (dispatch_strided_run below on one thread, the plan's ranges
 * on the pool in sources/dispatcher/host_copy.c), the elementwise engine of
 * sources/iterator (which adds broadcasting, chunked casting, the overlap
 * rules and threads: each thread walks its own range of the same plan), the
 * reductions' walk over their output elements and their gather of
 * non-contiguous reduced dims (iterator.c), the integer reductions and dot
 * (sources/dispatcher/operators_reduce.c). A plan is PyTorch's TensorIterator
 * "coalesced dims + offset calculator" shape: operand-major byte strides
 * over at most DISPATCH_MAX_DIMS dims, innermost first, after dropping
 * size-1 dims, ordering by the output's |stride| and merging neighbours
 * every operand steps through as one. The CUDA path is meant to reuse the
 * same host-side coalescing and hand the (shape, strides) arrays to its
 * offset calculator.
 *
 * It lives in core, not in sources/iterator, because the layers go one way
 * down: the tensor core (copy_, clone, contiguous, to) must run loops
 * without calling up into the iterator, while the iterator and the
 * dispatcher may call down into core. So core owns the plan and the
 * single-threaded walk; threads (parallel.c), casting buffers and overlap
 * copies stay in the iterator, on top of it.
 */

void dispatch_strided_plan_init(dispatch_strided_plan *p, int nops, char *const *data, int nd,
                                const int64_t *shape,
                                intptr_t (*bs)[DISPATCH_MAX_DIMS]) {
    int order[DISPATCH_MAX_DIMS], n = 0;
    p->nops = nops;
    p->numel = 1;
    for (int k = 0; k < nops; k++) p->data[k] = data[k];
    for (int d = nd - 1; d >= 0; d--) { /* innermost (last) first */
        p->numel *= shape[d];
        if (shape[d] != 1) order[n++] = d;
    }
    /* Stable insertion sort by the first operand whose strides differ. */
    for (int i = 1; i < n; i++) {
        int d = order[i], j = i - 1;
        for (; j >= 0; j--) {
            int e = order[j], swap = 0;
            for (int k = 0; k < nops; k++) {
                intptr_t a = bs[k][d] < 0 ? -bs[k][d] : bs[k][d];
                intptr_t b = bs[k][e] < 0 ? -bs[k][e] : bs[k][e];
                if (a == 0 || b == 0 || a == b) continue; /* broadcast dims do not vote */
                swap = a < b;
                break;
            }
            if (!swap) break;
            order[j + 1] = e;
        }
        order[j + 1] = d;
    }
    p->ndim = 0;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (p->ndim > 0) {
            int m = p->ndim - 1, merge = 1;
            for (int k = 0; k < nops && merge; k++)
                merge = bs[k][d] == p->strides[k][m] * (intptr_t)p->shape[m];
            if (merge) {
                p->shape[m] *= shape[d];
                continue;
            }
        }
        p->shape[p->ndim] = shape[d];
        for (int k = 0; k < nops; k++) p->strides[k][p->ndim] = bs[k][d];
        p->ndim++;
    }
    if (p->ndim == 0) { /* a single element */
        p->ndim = 1;
        p->shape[0] = 1;
        for (int k = 0; k < nops; k++) p->strides[k][0] = 0;
    }
}

void dispatch_strided_plan_walk(const dispatch_strided_plan *p, int64_t begin, int64_t end,
                                dispatch_loop_fn inner, void *ctx) {
    /* Nothing to walk (a plan of an empty shape has a 0 among its sizes,
     * which the index arithmetic below would divide by). */
    if (begin >= end) return;
    int64_t idx[DISPATCH_MAX_DIMS];
    int64_t rest = begin;
    for (int d = 0; d < p->ndim; d++) { /* one division per range, then steps */
        idx[d] = rest % p->shape[d];
        rest /= p->shape[d];
    }
    intptr_t steps[DISPATCH_MAX_OPERANDS];
    for (int k = 0; k < p->nops; k++) steps[k] = p->strides[k][0];
    int64_t at = begin;
    while (at < end) {
        int64_t n = p->shape[0] - idx[0];
        if (n > end - at) n = end - at;
        char *ptrs[DISPATCH_MAX_OPERANDS];
        for (int k = 0; k < p->nops; k++) {
            char *q = p->data[k];
            for (int d = 0; d < p->ndim; d++) q += idx[d] * p->strides[k][d];
            ptrs[k] = q;
        }
        inner(ptrs, steps, (intptr_t)n, ctx);
        at += n;
        idx[0] = 0;
        for (int d = 1; d < p->ndim; d++) {
            if (++idx[d] < p->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* The walk above, with the plan's first two dims taken by a 2-D loop
 * (Note [2-D loops] in loops.h): a partial first or last run of the
 * range goes to the 1-D loop, every whole run between them to inner2d, as
 * many rows as dim 1 has left per call. */
void dispatch_strided_plan_walk2d(const dispatch_strided_plan *p, int64_t begin, int64_t end,
                                  dispatch_loop_fn inner, dispatch_loop2d_fn inner2d,
                                  void *ctx) {
    if (inner2d == NULL || p->ndim < 2) {
        dispatch_strided_plan_walk(p, begin, end, inner, ctx);
        return;
    }
    if (begin >= end) return;
    int64_t idx[DISPATCH_MAX_DIMS];
    int64_t rest = begin;
    for (int d = 0; d < p->ndim; d++) {
        idx[d] = rest % p->shape[d];
        rest /= p->shape[d];
    }
    intptr_t steps[DISPATCH_MAX_OPERANDS], outer[DISPATCH_MAX_OPERANDS];
    for (int k = 0; k < p->nops; k++) {
        steps[k] = p->strides[k][0];
        outer[k] = p->strides[k][1];
    }
    const int64_t n0 = p->shape[0];
    int64_t at = begin;
    while (at < end) {
        char *ptrs[DISPATCH_MAX_OPERANDS];
        for (int k = 0; k < p->nops; k++) {
            char *q = p->data[k];
            for (int d = 0; d < p->ndim; d++) q += idx[d] * p->strides[k][d];
            ptrs[k] = q;
        }
        int64_t rows = 0;
        if (idx[0] == 0) {
            rows = (end - at) / n0;
            if (rows > p->shape[1] - idx[1]) rows = p->shape[1] - idx[1];
        }
        if (rows > 0) {
            inner2d(ptrs, steps, outer, (intptr_t)n0, (intptr_t)rows, ctx);
            at += rows * n0;
            idx[1] += rows;
        } else {
            int64_t n = n0 - idx[0];
            if (n > end - at) n = end - at;
            inner(ptrs, steps, (intptr_t)n, ctx);
            at += n;
            idx[0] += n;
            if (idx[0] < n0) continue; /* the range ended inside this run */
            idx[0] = 0;
            idx[1]++;
        }
        for (int d = 1; d < p->ndim - 1 && idx[d] == p->shape[d]; d++) {
            idx[d] = 0;
            idx[d + 1]++;
        }
    }
}

void dispatch_strided_plan_of(dispatch_strided_plan *p, int nops, dispatch_tensor *const *ops) {
    const dispatch_tensor *out = ops[0];
    intptr_t bs[DISPATCH_MAX_OPERANDS][DISPATCH_MAX_DIMS];
    char *data[DISPATCH_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) {
        intptr_t isz = (intptr_t)dispatch_dtype_itemsize(ops[k]->dtype);
        for (int d = 0; d < out->ndim; d++)
            bs[k][d] = out->sizes[d] == 1 ? 0 : (intptr_t)ops[k]->strides[d] * isz;
        data[k] = ops[k]->data;
    }
    dispatch_strided_plan_init(p, nops, data, (int)out->ndim, out->sizes, bs);
}

int dispatch_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops, void *ctx) {
    if (!loop) return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for this operation and dtype");
    if (ops[0]->numel == 0) return 0;
    dispatch_strided_plan p;
    dispatch_strided_plan_of(&p, nops, ops);
    dispatch_strided_plan_walk(&p, 0, p.numel, loop, ctx);
    return 0;
}

/*
 * Note [Overlapping outputs]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * An in-place or out= operation writes each element of its output once. When
 * two elements of the output share memory (an expanded view, or an
 * as_strided view such as sizes (2, 2), strides (1, 1)), the result would
 * depend on the order of the writes: there is no well-defined answer, so such
 * an output is an error (PyTorch raises too; copy_ keeps PyTorch's message,
 * the elementwise engine says "the output overlaps itself"). An output that
 * only overlaps an INPUT is fine: the input is read as it was before the
 * operation (NumPy's answer; Note [Overlapping out=] in
 * sources/iterator/iterator.c and dispatch_tensor_copy_ buffer such inputs).
 *
 * The test here is exact. First the usual sufficient test: with the dims of
 * size > 1 sorted by |stride|, the layout cannot overlap when each stride is
 * at least the extent (in bytes) of all the smaller dims together; this
 * accepts every contiguous, transposed, permuted, sliced or stepped view. A
 * stride 0 (size > 1) always overlaps. Only a layout failing the quick test
 * (interleaved as_strided views, where it may or may not overlap) gets the
 * exact check: a bitmap over the bytes the view spans, in units of the gcd of
 * the strides and the itemsize, marking each element's bytes and stopping at
 * the first byte marked twice. Its cost is bounded by the span (by
 * pigeonhole, more elements than units means an overlap, found without a
 * pass).
 */
static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int dispatch_overlaps_itself(int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t itemsize) {
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    int n = 0;
    if (ndim > DISPATCH_MAX_DIMS) ndim = DISPATCH_MAX_DIMS;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == 0) return 0;
        if (sizes[d] == 1) continue;
        if (strides[d] == 0 || strides[d] == INT64_MIN) return 1;
        int64_t a = strides[d] < 0 ? -strides[d] : strides[d];
        int j = n++;
        for (; j > 0 && st[j - 1] > a; j--) sz[j] = sz[j - 1], st[j] = st[j - 1];
        sz[j] = sizes[d];
        st[j] = a;
    }
    /* The quick test, and the span in bytes. */
    int64_t span = itemsize, term;
    int quick = 1;
    for (int d = 0; d < n; d++) {
        if (st[d] < span) quick = 0;
        if (__builtin_mul_overflow(st[d], sz[d] - 1, &term) ||
            __builtin_add_overflow(span, term, &span))
            return 1; /* spans more than the address space: cannot be real memory */
    }
    if (quick) return 0;
    /* The exact test. */
    int64_t g = itemsize, numel = 1;
    for (int d = 0; d < n; d++) {
        g = gcd64(g, st[d]);
        if (__builtin_mul_overflow(numel, sz[d], &numel)) return 1;
    }
    int64_t units = span / g, per = itemsize / g, bytes;
    if (__builtin_mul_overflow(numel, per, &bytes) || bytes > units) return 1; /* pigeonhole */
    unsigned char *seen = calloc((size_t)(units / 8 + 1), 1);
    if (!seen)
        return dispatch_error_set(DISPATCH_ERR_MEMORY,
                                  "cannot allocate %lld bytes to check a view for overlap",
                                  (long long)(units / 8 + 1));
    int64_t index[DISPATCH_MAX_DIMS] = {0};
    int overlap = 0;
    for (int64_t e = 0; e < numel && !overlap; e++) {
        int64_t at = 0;
        for (int d = 0; d < n; d++) at += index[d] * (st[d] / g);
        for (int64_t u = at; u < at + per; u++) {
            if (seen[u >> 3] & (1u << (u & 7))) {
                overlap = 1;
                break;
            }
            seen[u >> 3] |= (unsigned char)(1u << (u & 7));
        }
        for (int d = 0; d < n && ++index[d] == sz[d]; d++) index[d] = 0;
    }
    free(seen);
    return overlap;
}
