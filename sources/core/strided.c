/* The portable strided engine; see dispatch/strided.h. */
#include "dispatch/strided.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"

int dispatch_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops, void *ctx) {
    if (!loop) return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for this operation and dtype");
    const dispatch_tensor *out = ops[0];
    if (out->numel == 0) return 0;
    /* Byte strides per dim per operand, size-1 dims dropped, then adjacent
     * dims merged where every operand steps through them as one. */
    int64_t sizes[DISPATCH_MAX_DIMS];
    intptr_t strides[DISPATCH_MAX_DIMS][DISPATCH_MAX_OPERANDS];
    int nd = 0;
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1) continue;
        sizes[nd] = out->sizes[d];
        for (int k = 0; k < nops; k++)
            strides[nd][k] = (intptr_t)(ops[k]->strides[d] *
                                        (int64_t)dispatch_dtype_itemsize(ops[k]->dtype));
        if (nd > 0) {
            int merge = 1;
            for (int k = 0; k < nops && merge; k++)
                merge = strides[nd - 1][k] == strides[nd][k] * sizes[nd];
            if (merge) {
                sizes[nd - 1] *= sizes[nd];
                memcpy(strides[nd - 1], strides[nd], sizeof strides[nd]);
                continue;
            }
        }
        nd++;
    }
    char *base[DISPATCH_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) base[k] = ops[k]->data;
    if (nd == 0) {
        intptr_t zero[DISPATCH_MAX_OPERANDS] = {0};
        loop(base, zero, 1, ctx);
        return 0;
    }
    intptr_t inner = (intptr_t)sizes[nd - 1];
    int64_t index[DISPATCH_MAX_DIMS] = {0};
    char *ptrs[DISPATCH_MAX_OPERANDS];
    for (;;) {
        memcpy(ptrs, base, sizeof(char *) * (size_t)nops);
        for (int d = 0; d < nd - 1; d++)
            for (int k = 0; k < nops; k++) ptrs[k] += index[d] * strides[d][k];
        loop(ptrs, strides[nd - 1], inner, ctx);
        int d = nd - 2;
        while (d >= 0 && ++index[d] == sizes[d]) index[d--] = 0;
        if (d < 0) return 0;
    }
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
