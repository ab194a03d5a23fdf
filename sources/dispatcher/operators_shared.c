/* What the operator families share (operators.h): the device of a call,
 * Python numbers as elements, the out= rules and argument checks. */
#include "operators.h"

#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels.h"

/* The device of a call: all tensors on one device, except that 0-dim CPU
 * tensors (wrapped numbers included) go with any device, like PyTorch. */
int operator_common_device(const char *name, dispatch_tensor *const *ts, int n, int *device) {
    int dev = -1;
    for (int i = 0; i < n; i++) {
        const dispatch_tensor *t = ts[i];
        if (t->ndim == 0 && t->device == DISPATCH_DEVICE_CPU) continue;
        if (dev >= 0 && t->device != dev)
            return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                      "%s: expected all tensors to be on the same device, but "
                                      "found at least two devices, %s and %s",
                                      name, dispatch_device_name(dev),
                                      dispatch_device_name(t->device));
        dev = t->device;
    }
    *device = dev < 0 ? DISPATCH_DEVICE_CPU : dev;
    return 0;
}

/* Write a Python number (an ivalue) as one element of dtype into buf. */
void operator_scalar_to(const dispatch_ivalue *v, int dtype, void *buf) {
    char *data[2];
    intptr_t strides[2] = {0, 0};
    data[0] = buf;
    if (v->tag == DISPATCH_IV_DOUBLE) {
        double d = v->v.d;
        data[1] = (char *)&d;
        dispatch_cast_loop_get(DISPATCH_FLOAT64, dtype)(data, strides, 1, NULL);
    } else {
        int64_t i = v->tag == DISPATCH_IV_NONE ? 1 : v->v.i;
        data[1] = (char *)&i;
        dispatch_cast_loop_get(DISPATCH_INT64, dtype)(data, strides, 1, NULL);
    }
}

/* Whether the Python number v fits dtype, by PyTorch's rule (c10::overflows):
 * integers and floats beyond an integer dtype's range, NaN and infinities
 * for integers, finite floats beyond a float dtype's range; negative ints
 * down to -max wrap into unsigned dtypes; bool takes anything. Sets the
 * error and returns -1 when it does not. */
static int float_has_inf(int dtype);

int operator_scalar_check(const dispatch_ivalue *v, int dtype) {
    /* an integer's range (Note [Integer facts] in dtype.h) */
    const int64_t ilo = dispatch_dtype_min(dtype), ihi = dispatch_dtype_max(dtype);
    const int is_int = dispatch_dtype_category_of(dtype) == DISPATCH_CAT_INT;
    int bad = 0;
    if (dtype == DISPATCH_BOOL || dtype == DISPATCH_FLOAT64 || v->tag == DISPATCH_IV_BOOL ||
        v->tag == DISPATCH_IV_NONE)
        return 0;
    if (v->tag == DISPATCH_IV_DOUBLE) {
        double d = v->v.d;
        if (dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT) /* its largest finite; */
            bad = (isfinite(d) || !float_has_inf(dtype)) && /* inf where it has none */
                  fabs(d) > dispatch_dtype_float_max(dtype);
        else if (is_int) bad = !(d >= (double)ilo && d <= (double)ihi); /* NaN too */
        else return dispatch_error_set(DISPATCH_ERR_TYPE, "scalar_check: no range for dtype %s",
                                       dispatch_dtype_name(dtype));
        if (ihi == INT64_MAX && d >= 9223372036854775807.0) bad = 1; /* 2**63 is out */
    } else if (v->tag == DISPATCH_IV_INT && dispatch_dtype_is_narrow_float(dtype)) {
        bad = fabs((double)v->v.i) > dispatch_dtype_float_max(dtype); /* float16: 65504 */
    } else if (v->tag == DISPATCH_IV_INT && is_int) {
        int64_t i = v->v.i;
        bad = ilo == 0 ? (i > ihi || i < -ihi) : (i < ilo || i > ihi); /* unsigned: wraps */
    }
    if (!bad) return 0;
    if (v->tag == DISPATCH_IV_DOUBLE)
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "value cannot be converted to type %s without overflow: %g",
                                  dispatch_dtype_name(dtype), v->v.d);
    return dispatch_error_set(DISPATCH_ERR_VALUE,
                              "value cannot be converted to type %s without overflow: %lld",
                              dispatch_dtype_name(dtype), (long long)v->v.i);
}

/* Whether a float dtype has infinities: not a finite-only narrow format (FN,
 * Note [Narrow floats] in dtype.h: inf becomes its NaN), where PyTorch's
 * c10::overflows refuses inf as it refuses any value beyond the largest. */
static int float_has_inf(int dtype) {
    if (!dispatch_dtype_is_narrow_float(dtype)) return 1;
    return isinf(dispatch_narrow_bits_to_double(dtype, dispatch_narrow_bits_from_double(dtype, INFINITY)));
}

/*
 * Note [out=]
 * ~~~~~~~~~~~
 * The .out overloads of operators.toml (add.out, exp.out, sum.IntList_out,
 * ...) end in a kwarg-only `Tensor(a!) out` and run the kernel of their
 * functional overload: operator_out_arg() finds out, and the kernel writes into it
 * instead of allocating, returning it (the binder hands back the very
 * Python object passed as out=). PyTorch's rules: out's shape must be the
 * result's (no resizing here, not even of an empty out), the result dtype
 * must be castable to out's by can_cast (no float into an integer out, no
 * integer into bool) and is cast on the write, out must be on the inputs'
 * device, must not overlap itself (a broadcast view), and an input may
 * share memory with it only exactly (same start, strides and dtype, as
 * in place): a partial overlap of two dense tensors is refused as PyTorch
 * refuses it; other overlaps (interleaved strided views, where the
 * ranges cross without common elements) go to the engine, which copies such
 * inputs first (Note [Overlapping out=] in sources/iterator/iterator.c).
 * out= is the functional call, then a cast into out: a result of float16
 * or bfloat16 computed in float32 (addcmul, mul/div by a scalar: Note
 * [float16 with a scalar]) is rounded to its dtype before a float32 or
 * float64 out takes it, as PyTorch's; elementwise() makes that result
 * first whenever the loop writes another dtype than the result's and out
 * has a third, and writes straight into out otherwise. The engine's cast
 * on the write is the only rounding there.
 */
dispatch_tensor *operator_out_arg(const dispatch_operator *op, const dispatch_ivalue *args) {
    const dispatch_schema *s = dispatch_op_schema(op);
    int i = s->nargs - 1;
    if (i < 1 || !s->args[i].alias_write || args[i].tag != DISPATCH_IV_TENSOR ||
        strcmp(s->args[i].name, "out") != 0)
        return NULL;
    return args[i].v.t;
}

/* Whether t's elements fill a block of memory without gaps or repeats, in
 * some order of its dims (PyTorch's non-overlapping and dense). */
static int dense_block(const dispatch_tensor *t) {
    int64_t st[DISPATCH_MAX_DIMS], sz[DISPATCH_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1) continue;
        int j = n++;
        for (; j > 0 && st[j - 1] > t->strides[d]; j--) st[j] = st[j - 1], sz[j] = sz[j - 1];
        st[j] = t->strides[d], sz[j] = t->sizes[d];
    }
    int64_t expected = 1;
    for (int j = 0; j < n; j++) {
        if (st[j] != expected) return 0;
        expected *= sz[j];
    }
    return 1;
}

/* torch's can_cast for a result written into an existing tensor (out=, in
 * place): never to a lower category (no float into an integer, no integer
 * into bool). 0, or -1 with torch's RuntimeError. */
int operator_check_castable(int dtype, int into) {
    if (dispatch_dtype_category_of(dtype) <= dispatch_dtype_category_of(into)) return 0;
    return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                              "result type %s can't be cast to the desired output type %s",
                              dispatch_dtype_name(dtype), dispatch_dtype_name(into));
}

/* The checks of Note [out=] of out against a result of (nd, shape) and
 * dtype on device computed from ins. */
int operator_check_out(const dispatch_operator *op, const dispatch_tensor *out, int device, int nd,
                       const int64_t *shape, int dtype, dispatch_tensor *const *ins, int nin) {
    const char *name = dispatch_op_name(op);
    if (out->wrapped_number) /* the binder made a number given as out= a tensor */
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: argument 'out' must be a Tensor, "
                                  "not a number", name);
    if (out->device != device)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: Expected out tensor to have device %s, but got %s instead",
                                  name, dispatch_device_name(device),
                                  dispatch_device_name(out->device));
    if (nd != out->ndim || memcmp(shape, out->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[256], b[256];
        dispatch_format_shape(a, sizeof a, (int)out->ndim, out->sizes);
        dispatch_format_shape(b, sizeof b, nd, shape);
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: out has shape %s but the result has shape %s (out= is "
                                  "not resized)", name, a, b);
    }
    if (operator_check_castable(dtype, out->dtype) < 0) return -1;
    if (dispatch_tensor_check_no_internal_overlap(out) < 0) return -1;
    if (out->numel == 0 || device == DISPATCH_DEVICE_META) return 0;
    uintptr_t olo, ohi;
    dispatch_tensor_byte_range(out, &olo, &ohi);
    for (int k = 0; k < nin; k++) {
        const dispatch_tensor *t = ins[k];
        uintptr_t lo, hi;
        if (t->numel == 0 || t->device != out->device) continue;
        dispatch_tensor_byte_range(t, &lo, &hi);
        if (hi <= olo || lo >= ohi) continue;
        int exact = t->data == out->data && t->dtype == out->dtype && t->ndim == out->ndim;
        for (int d = 0; exact && d < t->ndim; d++)
            exact = t->sizes[d] == out->sizes[d] && t->strides[d] == out->strides[d];
        if (!exact && dense_block(t) && dense_block(out))
            return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                      "unsupported operation: some elements of the input tensor "
                                      "and the written-to tensor refer to a single memory "
                                      "location. Please clone() the tensor before performing "
                                      "the operation.");
    }
    return 0;
}

/* rets[0], a fresh result, copied into out (checked as Note [out=]), and
 * out returned in its place. */
int operator_into_out(const dispatch_operator *op, dispatch_tensor *out,
                      dispatch_tensor *const *ins, int nin, dispatch_ivalue *rets) {
    dispatch_tensor *r = rets[0].v.t;
    int rc = operator_check_out(op, out, (int)r->device, (int)r->ndim, r->sizes, (int)r->dtype,
                                ins, nin);
    if (rc == 0 && out->device != DISPATCH_DEVICE_META) rc = dispatch_kernels_copy_(out, r);
    dispatch_tensor_decref(r);
    rets[0].tag = DISPATCH_IV_NONE;
    return rc < 0 ? -1 : operator_return_self(out, rets);
}

/* An in-place kernel's return: self, as a new reference. */
int operator_return_self(dispatch_tensor *self, dispatch_ivalue *rets) {
    dispatch_tensor_incref(self);
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = self;
    return 0;
}

int operator_expect_tensor(const dispatch_operator *op, const dispatch_ivalue *v, const char *arg) {
    if (v->tag != DISPATCH_IV_TENSOR)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: argument '%s' must be a Tensor",
                                  dispatch_op_name(op), arg);
    return 0;
}

