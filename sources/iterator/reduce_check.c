/*
 * The one check of a reduction's arguments, the first stop of every
 * reduction: the operators call it with the dims they were given (then
 * allocate the result it shaped and call dispatch_iter_reduce_on, which
 * checks nothing again), the raw entry dispatch_iter_reduce with a mask.
 */
#include "reduce_internal.h"

/*
 * Note [One reduction check]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Which dims a reduction reduces, what shape its result has (keepdim or
 * not), how many elements each output reduces and whether max/min have
 * anything to reduce: decided here once, for the raw engine
 * (dispatch_iter_reduce, a dim mask) and for the operators of
 * sources/dispatcher/operators_reduce.c (a list of dims, PyTorch's messages, then
 * the output allocated with the shape computed here). The result dtype is
 * dispatch_reduce_result_dtype's (sum and prod of integers are int64, mean
 * needs floats); the operators add PyTorch's dtype= and its messages.
 * What the check answered is then trusted: dispatch_iter_reduce_on runs
 * the reduction without a second look.
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
    if (n == 0 && dispatch_reduce_is_extreme(op)) {
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
