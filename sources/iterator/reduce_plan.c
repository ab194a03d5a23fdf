/*
 * The reduction engine's entries (dispatch/reduce.h) and its planner, beside
 * the elementwise engine (iterator.c) and built like it: over raw strided
 * operands, no tensor object. Every reduction of the runtime is checked
 * here once (Note [One reduction check]) and handed to the file of its
 * path by dtype, layout and the row of its reduction (dispatch/
 * reductions.h): float32/float64 (reduce_float.c), float16 rows and
 * columns (reduce_half.c), any other narrow float or layout through a
 * float32 copy, integers, bool, 0-dim and FOLD rows off their kernels
 * (reduce_integer.c), then max/min indices (reduce_indices.c). The
 * operators (sources/dispatcher/operators.c) check arguments and allocate
 * results; device reductions hang off the hook below. The files' jobs:
 * reduce_internal.h.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "reduce_internal.h"

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    dispatch_format_shape(buf, cap, ndim, shape); /* the one formatter (core/error.c) */
}

int dispatch_reduce_out_of_memory(int op)
{
    return dispatch_error_set(DISPATCH_ERR_MEMORY, "%s: out of memory", dispatch_reduce_name(op));
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
    char err[512];
    err[0] = '\0'; /* not the whole buffer: this runs on every device reduction */
    if (fn(op, dtype, in, ndim, shape, strides, mask, out_dtype, out, indices, err, sizeof err) != 0)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s", err[0] ? err : "device reduction failed");
    return 0;
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

/* Row-major and gap-free over its shape (size-1 dims aside): the layout
 * the float16 row and column kernels read and the dense paths write. */
int dispatch_reduce_is_dense(const dispatch_iter_operand *o)
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


/* A narrow float (Note [Narrow floats] in dtype.h) accumulates in float32,
 * as PyTorch's float16 and bfloat16: the same
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
        dispatch_reduce_out_of_memory(op);
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
    int half = in->dtype == DISPATCH_FLOAT16 && in->ndim > 0 && numel > 0 &&
               dispatch_reduce_is_dense(in);
    uint16_t *hout = (uint16_t *)(void *)out->data;
    const uint16_t *hin = (const uint16_t *)(const void *)in->data;
    if (half && dispatch_reduce_is_sum(op) && trailing_dims(in->ndim, mask)) {
        dispatch_reduce_half_sum_rows(hin, op, nout, count, hout);
        return 0;
    }
    if (dispatch_reduce_is_fold(op)) half = 0; /* FOLD rows: float32 kernels only */
    if (half && trailing_dims(in->ndim, mask) &&
        dispatch_reduce_half_ext_rows(hin, op, nout, count, hout))
        return 0;
    if (half && count > 1 && nout > 1 && leading_dims(in, mask))
        return dispatch_reduce_half_cols(in->data, op, nout, count, hout);
    if (dispatch_dtype_is_narrow_float(in->dtype))
        return reduce_via_float32(op, in, mask, keepdim, out, nout);
    return dispatch_reduce_accumulate(op, in, mask, count, nout, out->data, out->dtype);
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
    int int_sum = dispatch_reduce_integers(op) == DISPATCH_REDUCE_INTEGERS_INT64 &&
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
    if (dispatch_reduce_is_extreme(op) && count > 0) {
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
        return dispatch_reduce_float(op, in, dim_mask, keepdim, out, ond, count);
    if (nout == 0) return 0;
    if (dispatch_reduce_is_dense(out)) return reduce_dense(op, in, dim_mask, keepdim, count, out, nout);
    /* Another layout: into a dense buffer, then copied. */
    size_t osz = dispatch_dtype_itemsize(out->dtype);
    int64_t tstr[MAXD];
    dense_strides(ond, oshape, (int64_t)osz, tstr);
    char *tmp = malloc((size_t)nout * osz + 1);
    if (!tmp) return dispatch_reduce_out_of_memory(op);
    dispatch_iter_operand t = {tmp, ond, oshape, tstr, out->dtype};
    int rc = reduce_dense(op, in, dim_mask, keepdim, count, &t, nout);
    dispatch_iter_operand cp[2] = {*out, t};
    if (rc == 0) rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, cp, NULL);
    free(tmp);
    return rc;
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
