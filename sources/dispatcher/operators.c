/* The boxed kernels of the built-in operators; see operators.h. */
#include "operators.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"
#include "dispatch/iterator.h"
#include "dispatch/reduce.h"
#include "dispatch/strided.h"

#define LOOP_OF(ctx) ((int)(intptr_t)(ctx))
#define UNUSED_KS (void)ks

/* Helpers ---------------------------------------------------------------------- */

/* The device of a call: all tensors on one device, except that 0-dim CPU
 * tensors (wrapped numbers included) go with any device, like PyTorch. */
static int common_device(const char *name, dispatch_tensor *const *ts, int n, int *device) {
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

static int result_type(dispatch_tensor *const *ts, int n) {
    dispatch_result_type st;
    dispatch_result_type_init(&st);
    for (int i = 0; i < n; i++)
        dispatch_result_type_update(&st, ts[i]->dtype, (int)ts[i]->ndim, ts[i]->wrapped_number);
    return dispatch_result_type_get(&st);
}

/* Broadcast shape of n tensors, in (*nd, shape). */
static int broadcast_all(dispatch_tensor *const *ts, int n, int *nd, int64_t *shape) {
    *nd = (int)ts[0]->ndim;
    memcpy(shape, ts[0]->sizes, sizeof(int64_t) * (size_t)*nd);
    for (int i = 1; i < n; i++) {
        int64_t tmp[DISPATCH_MAX_DIMS];
        int nt;
        if (dispatch_broadcast_shapes(*nd, shape, (int)ts[i]->ndim, ts[i]->sizes, &nt, tmp) < 0)
            return -1;
        *nd = nt;
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)nt);
    }
    return 0;
}

/* Write a Python number (an ivalue) as one element of dtype into buf. */
static void scalar_to(const dispatch_ivalue *v, int dtype, void *buf) {
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

static int scalar_check(const dispatch_ivalue *v, int dtype) {
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

/* The number a wrapped 0-dim tensor holds, as an ivalue (for scalar_check). */
static void wrapped_value(const dispatch_tensor *t, dispatch_ivalue *v) {
    char *data[2];
    intptr_t strides[2] = {0, 0};
    data[1] = t->data;
    if (t->dtype == DISPATCH_BOOL) {
        v->tag = DISPATCH_IV_BOOL;
    } else if (dispatch_dtype_category_of(t->dtype) == DISPATCH_CAT_FLOAT) {
        v->tag = DISPATCH_IV_DOUBLE;
        data[0] = (char *)&v->v.d;
        dispatch_cast_loop_get(t->dtype, DISPATCH_FLOAT64)(data, strides, 1, NULL);
    } else {
        v->tag = DISPATCH_IV_INT;
        data[0] = (char *)&v->v.i;
        dispatch_cast_loop_get(t->dtype, DISPATCH_INT64)(data, strides, 1, NULL);
    }
}

/*
 * Note [Small calls]
 * ~~~~~~~~~~~~~~~~~~
 * At 16 elements the arithmetic is a few nanoseconds; the call is the rest.
 * So: glibc's per-thread cache serves the three allocations of a result
 * (Note [CPU allocations] in sources/core/storage.c), Tensor.__add__ calls C
 * once with cached pointers (dispatch/_tensor.py), and here, when out is freshly
 * allocated and contiguous, each input is either contiguous with out's shape
 * or a 0-dim scalar, all in the loop's dtypes, and the work is too small to
 * split across threads, the engine's plan would be one flat loop anyway: run
 * it directly. Returns 1 when it ran.
 */
static int flat_run(int loop, int compute, const dispatch_tensor *out,
                    dispatch_tensor *const *ins, int nin, const dispatch_iter_operand *ops,
                    void *ctx) {
    if (out->numel >= 2 * DISPATCH_ITER_GRAIN && dispatch_get_num_threads() > 1) return 0;
    char *data[DISPATCH_MAX_OPERANDS] = {out->data};
    intptr_t steps[DISPATCH_MAX_OPERANDS] = {(intptr_t)dispatch_dtype_itemsize(out->dtype)};
    if (!out->is_contiguous || out->dtype != dispatch_loop_operand_dtype(loop, 0, compute))
        return 0;
    for (int k = 1; k <= nin; k++) {
        const dispatch_tensor *t = ins[k - 1];
        if (ops[k].dtype != dispatch_loop_operand_dtype(loop, k, compute)) return 0;
        data[k] = ops[k].data;
        if (t->ndim == 0) {
            steps[k] = 0;
            continue;
        }
        if (!t->is_contiguous || t->ndim != out->ndim ||
            memcmp(t->sizes, out->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0)
            return 0;
        steps[k] = (intptr_t)dispatch_dtype_itemsize(t->dtype);
    }
    dispatch_loop_fn fn = dispatch_loop_get(loop, compute);
    if (!fn) return 0; /* the engine reports it */
    if (out->numel > 0) fn(data, steps, (intptr_t)out->numel, ctx);
    return 1;
}

/*
 * Run loop over out and the inputs through the elementwise engine
 * (dispatch/iterator.h): it broadcasts the inputs to out's shape, casts those
 * of another dtype than the loop's chunk by chunk, and splits large work
 * across threads. A 0-dim input of another dtype (a wrapped Python number) is
 * cast here once, so the loop sees a stride-0 operand of its own dtype.
 */
static int run_elementwise(int loop, int compute, dispatch_tensor *out, dispatch_tensor *const *ins,
                           int nin, int fresh_out, void *ctx) {
    dispatch_iter_operand ops[DISPATCH_MAX_OPERANDS];
    int64_t strides[DISPATCH_MAX_OPERANDS][DISPATCH_MAX_DIMS];
    _Alignas(16) char scalars[DISPATCH_MAX_OPERANDS][16];
    for (int k = 0; k <= nin; k++) {
        const dispatch_tensor *t = k ? ins[k - 1] : out;
        int isz = (int)dispatch_dtype_itemsize(t->dtype);
        for (int d = 0; d < t->ndim; d++) strides[k][d] = t->strides[d] * isz;
        ops[k] = (dispatch_iter_operand){t->data, (int)t->ndim, t->sizes, strides[k], t->dtype};
        int want = dispatch_loop_operand_dtype(loop, k, compute);
        if (k && t->ndim == 0 && t->device == DISPATCH_DEVICE_CPU && t->dtype != want) {
            char *cd[2] = {scalars[k], t->data};
            intptr_t cs[2] = {0, 0};
            dispatch_cast_loop_get(t->dtype, want)(cd, cs, 1, NULL);
            ops[k].data = scalars[k];
            ops[k].dtype = want;
        }
    }
    if (out->device != DISPATCH_DEVICE_CPU) { /* a device's loop; 0-dim CPU inputs by value */
        uint32_t scalars = 0;
        for (int k = 1; k <= nin; k++)
            if (ins[k - 1]->device == DISPATCH_DEVICE_CPU) scalars |= 1u << k;
        return dispatch_iter_device_op((int)out->device, loop, compute, 1 + nin, ops, scalars, ctx);
    }
    /* An existing output (in-place ops) may overlap an input: the engine
     * checks and buffers (Note [Overlapping out=] in iterator.c). */
    if (fresh_out && flat_run(loop, compute, out, ins, nin, ops, ctx)) return 0;
    return dispatch_iter_elementwise_op(loop, compute, 1 + nin, ops, ctx);
}

/*
 * Note [out=]
 * ~~~~~~~~~~~
 * The .out overloads of operators.toml (add.out, exp.out, sum.IntList_out,
 * ...) end in a kwarg-only `Tensor(a!) out` and run the kernel of their
 * functional overload: out_arg() finds out, and the kernel writes into it
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
static dispatch_tensor *out_arg(const dispatch_operator *op, const dispatch_ivalue *args) {
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
static int check_castable(int dtype, int into) {
    if (dispatch_dtype_category_of(dtype) <= dispatch_dtype_category_of(into)) return 0;
    return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                              "result type %s can't be cast to the desired output type %s",
                              dispatch_dtype_name(dtype), dispatch_dtype_name(into));
}

/* The checks of Note [out=] of out against a result of (nd, shape) and
 * dtype on device computed from ins. */
static int check_out(const dispatch_operator *op, const dispatch_tensor *out, int device, int nd,
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
    if (check_castable(dtype, out->dtype) < 0) return -1;
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

static int return_self(dispatch_tensor *self, dispatch_ivalue *rets);

/* rets[0], a fresh result, copied into out (checked as Note [out=]), and
 * out returned in its place. */
static int into_out(const dispatch_operator *op, dispatch_tensor *out,
                    dispatch_tensor *const *ins, int nin, dispatch_ivalue *rets) {
    dispatch_tensor *r = rets[0].v.t;
    int rc = check_out(op, out, (int)r->device, (int)r->ndim, r->sizes, (int)r->dtype, ins, nin);
    if (rc == 0 && out->device != DISPATCH_DEVICE_META) rc = dispatch_kernels_copy_(out, r);
    dispatch_tensor_decref(r);
    rets[0].tag = DISPATCH_IV_NONE;
    return rc < 0 ? -1 : return_self(out, rets);
}

/* Allocate the result of an elementwise op of ins; compute its data on CPU. */
static int elementwise(const dispatch_operator *op, int loop, int compute, int out_dtype,
                       dispatch_tensor *const *ins, int nin, void *ctx,
                       dispatch_ivalue *rets, dispatch_tensor *given) {
    int device = 0, nd;
    int64_t shape[DISPATCH_MAX_DIMS];
    if (common_device(dispatch_op_name(op), ins, nin, &device) < 0) return -1;
    if (broadcast_all(ins, nin, &nd, shape) < 0) return -1;
    if (device != DISPATCH_DEVICE_META && !dispatch_loop_get(loop, compute))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                                  dispatch_op_name(op), dispatch_dtype_name(compute));
    if (given) { /* out= (Note [out=]): checked, then no overlap but an exact one */
        if (check_out(op, given, device, nd, shape, out_dtype, ins, nin) < 0) return -1;
        if (given->dtype != out_dtype && dispatch_loop_operand_dtype(loop, 0, compute) != out_dtype &&
            device != DISPATCH_DEVICE_META) {
            /* The loop's result is wider than the result dtype (float16 and
             * bfloat16 computed in float32): rounded to the result dtype
             * first, then cast into out (Note [out=]). */
            dispatch_ivalue fresh[1];
            if (elementwise(op, loop, compute, out_dtype, ins, nin, ctx, fresh, NULL) < 0) return -1;
            int rc = dispatch_kernels_copy_(given, fresh[0].v.t);
            dispatch_tensor_decref(fresh[0].v.t);
            return rc < 0 ? -1 : return_self(given, rets);
        }
        if (device != DISPATCH_DEVICE_META &&
            run_elementwise(loop, compute, given, ins, nin, 1, ctx) < 0)
            return -1;
        return return_self(given, rets);
    }
    dispatch_tensor *out = dispatch_tensor_empty(nd, shape, out_dtype, device);
    if (!out) return -1;
    if (device != DISPATCH_DEVICE_META &&
        run_elementwise(loop, compute, out, ins, nin, 1, ctx) < 0) {
        dispatch_tensor_decref(out);
        return -1;
    }
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    return 0;
}

/* An in-place kernel's return: self, as a new reference. */
static int return_self(dispatch_tensor *self, dispatch_ivalue *rets) {
    dispatch_tensor_incref(self);
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = self;
    return 0;
}

static int expect_tensor(const dispatch_operator *op, const dispatch_ivalue *v, const char *arg) {
    if (v->tag != DISPATCH_IV_TENSOR)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: argument '%s' must be a Tensor",
                                  dispatch_op_name(op), arg);
    return 0;
}

/* Kernels ----------------------------------------------------------------------- */

/* The compute dtype of binary op `loop` on ins, with alpha (args[2] of
 * add/sub) written into alpha_buf and *actx pointing at it when it is not 1. */
static int binary_setup(int loop, dispatch_tensor *const *ins, const dispatch_ivalue *args,
                        char *alpha_buf, void **actx, int *dtype_out) {
    int dtype = result_type(ins, 2);
    if (loop == DISPATCH_LOOP_DIV && dispatch_dtype_category_of(dtype) != DISPATCH_CAT_FLOAT)
        dtype = DISPATCH_FLOAT32; /* true division; the default float dtype */
    if (loop == DISPATCH_LOOP_SUB && dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "Subtraction, the `-` operator, with two bool tensors is not "
                                  "supported. Use the `^` or `logical_xor()` operator instead.");
    if (loop == DISPATCH_LOOP_SUB &&
        (ins[0]->dtype == DISPATCH_BOOL || ins[1]->dtype == DISPATCH_BOOL))
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "Subtraction, the `-` operator, with a bool tensor is not "
                                  "supported. If you are trying to invert a mask, use the `~` or "
                                  "`logical_not()` operator instead.");
    *actx = NULL;
    if (loop == DISPATCH_LOOP_ADD || loop == DISPATCH_LOOP_SUB) {
        const dispatch_ivalue *a = &args[2];
        if (a->tag == DISPATCH_IV_DOUBLE && dispatch_dtype_category_of(dtype) != DISPATCH_CAT_FLOAT)
            return dispatch_error_set(DISPATCH_ERR_TYPE,
                                      "For integral input tensors, argument alpha must not be a "
                                      "floating point number.");
        if (a->tag != DISPATCH_IV_NONE && !(a->tag == DISPATCH_IV_INT && a->v.i == 1)) {
            if (scalar_check(a, dtype) < 0) return -1; /* as torch's alpha.to<T>() */
            scalar_to(a, dtype, alpha_buf);
            *actx = alpha_buf;
        }
    }
    *dtype_out = dtype;
    return 0;
}

/*
 * Note [float16 with a scalar]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * PyTorch's CPU mul and div of a float16 tensor by a scalar (a Python
 * number, or a 0-dim tensor, as the second operand; a Python number on
 * either side of *) keep the scalar in float32 and round the float32 result
 * once: h * 0.1 is 0.6001 for h = 6, where rounding 0.1 to float16 first
 * gives 0.5996. Those calls run the loops of dispatch_kernels_half_scalar_loop
^ * (kernels.h): the float16 operand widened, the float32 scalar, one rounding.
 * A number on the left of / is the same, s / x in float rounded once (PyTorch
 * multiplies by a rounded reciprocal there). add and sub round the scalar to
 * float16 first, as PyTorch does, and so keep the float16 loop. bfloat16
 * and every other narrow float (Note [Narrow floats] in dtype.h) the same,
 * through the engine: the float32 loop over its operand and the scalar,
 * both cast to float32, into its result.
 */
static int narrow_scalar_operand(int loop, int dtype, dispatch_tensor *const *ins) {
    if (!dispatch_dtype_is_narrow_float(dtype) ||
        (loop != DISPATCH_LOOP_MUL && loop != DISPATCH_LOOP_DIV))
        return -1;
    for (int k = 1; k >= 0; k--) {
        const dispatch_tensor *t = ins[k];
        if (k == 0 && !t->wrapped_number) break;
        if (t->ndim == 0 && t->device == DISPATCH_DEVICE_CPU && t->dtype != dtype)
            return k;
    }
    return -1;
}

/* out = ins[0] <loop> ins[1], where ins[k] is the scalar (above). */
static int half_scalar_run(int loop, int k, dispatch_tensor *out, dispatch_tensor *const *ins) {
    const dispatch_tensor *x = ins[1 - k];
    float s;
    char *cd[2] = {(char *)&s, ins[k]->data};
    intptr_t cs[2] = {0, 0};
    dispatch_cast_loop_get(ins[k]->dtype, DISPATCH_FLOAT32)(cd, cs, 1, NULL);
    dispatch_loop_fn fn = dispatch_kernels_half_scalar_loop(loop == DISPATCH_LOOP_MUL ? 0
                                                            : k == 1 ? 1 : 2);
    if (!fn)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "the float16 kernels failed to load");
    int64_t strides[2][DISPATCH_MAX_DIMS];
    const dispatch_tensor *ts[2] = {out, x};
    dispatch_iter_operand ops[2];
    for (int j = 0; j < 2; j++) {
        int64_t isz = (int64_t)dispatch_dtype_itemsize(ts[j]->dtype);
        for (int d = 0; d < ts[j]->ndim; d++) strides[j][d] = ts[j]->strides[d] * isz;
        ops[j] = (dispatch_iter_operand){ts[j]->data, (int)ts[j]->ndim, ts[j]->sizes, strides[j],
                                         ts[j]->dtype};
    }
    const int f16[2] = {DISPATCH_FLOAT16, DISPATCH_FLOAT16};
    return dispatch_iter_elementwise_typed(fn, f16, 2, ops, &s);
}

DISPATCH_BOXED_KERNEL(binary) {
    UNUSED_KS;
    int loop = LOOP_OF(ctx), dtype = 0;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *ins[2] = {args[0].v.t, args[1].v.t};
    char alpha[8];
    void *actx;
    if (binary_setup(loop, ins, args, alpha, &actx, &dtype) < 0) return -1;
    int k = narrow_scalar_operand(loop, dtype, ins);
    if (k < 0) return elementwise(op, loop, dtype, dtype, ins, 2, actx, rets, out_arg(op, args));
    if (dtype != DISPATCH_FLOAT16) /* the other narrow floats: through the engine */
        return elementwise(op, loop, DISPATCH_FLOAT32, dtype, ins, 2, NULL, rets,
                           out_arg(op, args));
    int device = 0, nd;
    int64_t shape[DISPATCH_MAX_DIMS];
    if (common_device(dispatch_op_name(op), ins, 2, &device) < 0) return -1;
    if (broadcast_all(ins, 2, &nd, shape) < 0) return -1;
    dispatch_tensor *out = dispatch_tensor_empty(nd, shape, DISPATCH_FLOAT16, device);
    if (!out) return -1;
    if ((device == DISPATCH_DEVICE_CPU ? half_scalar_run(loop, k, out, ins)
         : device == DISPATCH_DEVICE_META ? 0 /* a device: float32 loop, float16 operands */
         : run_elementwise(loop, DISPATCH_FLOAT32, out, ins, 2, 1, NULL)) < 0) {
        dispatch_tensor_decref(out);
        return -1;
    }
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    dispatch_tensor *given = out_arg(op, args); /* out=: the rounded result copied in */
    return given ? into_out(op, given, ins, 2, rets) : 0;
}

/* self <op>= other: computed in the promoted dtype, written into self (cast
 * chunk by chunk), other broadcast to self's shape, as PyTorch's add_ etc. */
DISPATCH_BOXED_KERNEL(binary_) {
    UNUSED_KS;
    int loop = LOOP_OF(ctx), dtype = 0, device = 0;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *self = args[0].v.t, *ins[2] = {args[0].v.t, args[1].v.t};
    char alpha[8];
    void *actx;
    if (binary_setup(loop, ins, args, alpha, &actx, &dtype) < 0) return -1;
    if (check_castable(dtype, self->dtype) < 0) return -1;
    if (common_device(dispatch_op_name(op), ins, 2, &device) < 0) return -1;
    if (device == DISPATCH_DEVICE_CPU) {
        if (!dispatch_loop_get(loop, dtype))
            return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                                      dispatch_op_name(op), dispatch_dtype_name(dtype));
        int k = narrow_scalar_operand(loop, dtype, ins);
        if (k >= 0 && dtype != DISPATCH_FLOAT16) {
            if (run_elementwise(loop, DISPATCH_FLOAT32, self, ins, 2, 0, NULL) < 0) return -1;
        } else if ((k >= 0 ? half_scalar_run(loop, k, self, ins)
                    : run_elementwise(loop, dtype, self, ins, 2, 0, actx)) < 0)
            return -1;
    } else {
        int nd;
        int64_t shape[DISPATCH_MAX_DIMS];
        if (broadcast_all(ins, 2, &nd, shape) < 0) return -1;
        if (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd) != 0)
            return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                      "%s: the result's shape differs from self's: self cannot "
                                      "be broadcast in place", dispatch_op_name(op));
        if (device != DISPATCH_DEVICE_META) {
            if (!dispatch_loop_get(loop, dtype))
                return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                                          dispatch_op_name(op), dispatch_dtype_name(dtype));
            int k = narrow_scalar_operand(loop, dtype, ins);
            if (run_elementwise(loop, k >= 0 ? DISPATCH_FLOAT32 : dtype, self, ins, 2, 0,
                                k >= 0 ? NULL : actx) < 0)
                return -1;
        }
    }
    return return_self(self, rets);
}

DISPATCH_BOXED_KERNEL(compare) {
    UNUSED_KS;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *ins[2] = {args[0].v.t, args[1].v.t};
    return elementwise(op, LOOP_OF(ctx), result_type(ins, 2), DISPATCH_BOOL, ins, 2, NULL, rets,
                       out_arg(op, args));
}

DISPATCH_BOXED_KERNEL(unary) {
    UNUSED_KS;
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *in = args[0].v.t;
    if (LOOP_OF(ctx) == DISPATCH_LOOP_NEG && in->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "Negation, the `-` operator, on a bool tensor is not supported. "
                                  "If you are trying to invert a mask, use the `~` or "
                                  "`logical_not()` operator instead.");
    if (LOOP_OF(ctx) == DISPATCH_LOOP_ABS && in->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"abs\" not implemented for 'bool'");
    return elementwise(op, LOOP_OF(ctx), in->dtype, in->dtype, &in, 1, NULL, rets,
                       out_arg(op, args));
}

DISPATCH_BOXED_KERNEL(unary_float) {
    UNUSED_KS;
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *in = args[0].v.t;
    int dtype = dispatch_dtype_category_of(in->dtype) == DISPATCH_CAT_FLOAT ? in->dtype
                                                                             : DISPATCH_FLOAT32;
    return elementwise(op, LOOP_OF(ctx), dtype, dtype, &in, 1, NULL, rets, out_arg(op, args));
}

/* t as dtype (a new reference): core's dispatch_tensor_to_dtype for a CPU
 * tensor; a device tensor is cast by the device's copy (core's walks host
 * memory and refuses device memory). */
static dispatch_tensor *to_dtype_on_device(dispatch_tensor *t, int dtype) {
    if (t->device == DISPATCH_DEVICE_CPU || t->device == DISPATCH_DEVICE_META)
        return dispatch_tensor_to_dtype(t, dtype);
    if (t->dtype == dtype) {
        dispatch_tensor_incref(t);
        return t;
    }
    dispatch_tensor *cast = dispatch_tensor_empty((int)t->ndim, t->sizes, dtype, t->device);
    if (cast && dispatch_kernels_copy_(cast, t) < 0) {
        dispatch_tensor_decref(cast);
        cast = NULL;
    }
    return cast;
}

DISPATCH_BOXED_KERNEL(addcmul) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "tensor1") < 0 ||
        expect_tensor(op, &args[2], "tensor2") < 0)
        return -1;
    dispatch_tensor *ins[3] = {args[0].v.t, args[1].v.t, args[2].v.t};
    int dtype = result_type(ins, 3);
    if (args[3].tag == DISPATCH_IV_DOUBLE && dispatch_dtype_category_of(dtype) != DISPATCH_CAT_FLOAT)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "addcmul: for integral input tensors, argument value must not "
                                  "be a floating point number.");
    char value[8];
    int reduced = dispatch_dtype_is_narrow_float(dtype); /* Note [Narrow floats] in dtype.h */
    if (scalar_check(&args[3], reduced ? DISPATCH_FLOAT32 : dtype) < 0)
        return -1;
    if (!reduced) {
        scalar_to(&args[3], dtype, value);
        return elementwise(op, DISPATCH_LOOP_ADDCMUL, dtype, dtype, ins, 3, value, rets,
                           out_arg(op, args));
    }
    /* A narrow float, as PyTorch's float16 and bfloat16: the operands in that dtype, then
     * self + value * t1 * t2 in float32 with value in float32, rounded once
     * (Note [float16 with a scalar]). */
    scalar_to(&args[3], DISPATCH_FLOAT32, value);
    dispatch_tensor *h[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++)
        if (!(h[k] = to_dtype_on_device(ins[k], dtype))) rc = -1;
    if (rc == 0)
        rc = elementwise(op, DISPATCH_LOOP_ADDCMUL, DISPATCH_FLOAT32, dtype, h, 3, value, rets,
                         out_arg(op, args));
    for (int k = 0; k < 3; k++)
        if (h[k]) dispatch_tensor_decref(h[k]);
    return rc;
}

DISPATCH_BOXED_KERNEL(where) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "condition") < 0 || expect_tensor(op, &args[1], "self") < 0 ||
        expect_tensor(op, &args[2], "other") < 0)
        return -1;
    dispatch_tensor *ins[3] = {args[0].v.t, args[1].v.t, args[2].v.t};
    if (ins[0]->dtype != DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "where expected condition to be a boolean tensor, but got a "
                                  "tensor with dtype %s", dispatch_dtype_name(ins[0]->dtype));
    int dtype = result_type(ins + 1, 2);
    /* as PyTorch: float16 and bfloat16 (every narrow float) take inf */
    for (int k = 1; k < 3 && !dispatch_dtype_is_narrow_float(dtype); k++) {
        if (!ins[k]->wrapped_number) continue;
        dispatch_ivalue v;
        wrapped_value(ins[k], &v);
        if (scalar_check(&v, dtype) < 0) return -1;
    }
    return elementwise(op, DISPATCH_LOOP_WHERE, dtype, dtype, ins, 3, NULL, rets,
                       out_arg(op, args));
}

/* Reductions -------------------------------------------------------------------- */


/* t as an engine operand, its strides in bytes (into strides). */
static void byte_operand(const dispatch_tensor *t, int64_t *strides, dispatch_iter_operand *o) {
    int64_t isz = (int64_t)dispatch_dtype_itemsize(t->dtype);
    for (int d = 0; d < t->ndim; d++) strides[d] = t->strides[d] * isz;
    *o = (dispatch_iter_operand){t->data, (int)t->ndim, t->sizes, strides, t->dtype};
}

/* The same kernel again on args[0] cast to dtype (args[0] restored after):
 * how a reduction casts first for dtype= and widens float16 to float32. */
typedef int (*kernel_fn)(const dispatch_operator *, dispatch_keyset, dispatch_ivalue *,
                         dispatch_ivalue *, void *);
static int call_on_cast(kernel_fn kernel, int dtype, const dispatch_operator *op,
                        dispatch_keyset ks, dispatch_ivalue *args, dispatch_ivalue *rets,
                        void *ctx) {
    dispatch_tensor *saved = args[0].v.t, *cast = to_dtype_on_device(saved, dtype);
    if (!cast) return -1;
    args[0].v.t = cast;
    int rc = kernel(op, ks, args, rets, ctx);
    args[0].v.t = saved;
    dispatch_tensor_decref(cast);
    return rc;
}

/* rets[0] rounded once to dtype (a narrow float) in place; on failure all
 * nrets released. */
static int round_first_ret_to_narrow(dispatch_ivalue *rets, int nrets, int dtype) {
    dispatch_tensor *narrow = dispatch_tensor_to_dtype(rets[0].v.t, dtype);
    if (!narrow) {
        dispatch_ivalue_release(rets, nrets);
        return -1;
    }
    dispatch_tensor_decref(rets[0].v.t);
    rets[0].v.t = narrow;
    return 0;
}

/* What the caller of reduce_values asks besides the result, as arguments:
 * out= to write in place (reduce_out), or the result's tensor alone
 * (reduce_index: the values and their indices are then one reduction, Note
 * [CUDA reduction plans] in sources/cuda/cuda_reduce_plan.c). */
typedef struct reduce_call {
    /* out= of a reduction written in place (Note [out=]): the result is
     * `into` when the float32/float64 CPU loop would write a result of its
     * exact shape and dtype, from that very input `into_in` (not a dtype= or
     * float16 copy), and it shares no byte with it; took_into then says so.
     * Otherwise a fresh result, which the caller copies into out. */
    dispatch_tensor *into;
    const dispatch_tensor *into_in;
    int took_into;
    int values_later; /* allocate the result, reduce nothing */
} reduce_call;

static dispatch_tensor *take_reduce_into(const dispatch_operator *op, reduce_call *call,
                                         const dispatch_tensor *in, int nd,
                                         const int64_t *shape, int dtype) {
    dispatch_tensor *out = call->into;
    if (!out || call->into_in != in || out->dtype != dtype || out->device != in->device ||
        out->ndim != nd || memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) != 0)
        return NULL;
    if (out->numel > 0 && in->numel > 0) {
        uintptr_t olo, ohi, ilo, ihi;
        dispatch_tensor_byte_range(out, &olo, &ohi);
        dispatch_tensor_byte_range(in, &ilo, &ihi);
        if (!(ohi <= ilo || olo >= ihi)) return NULL;
    }
    dispatch_tensor *const ins[1] = {(dispatch_tensor *)in};
    if (check_out(op, out, (int)in->device, nd, shape, dtype, ins, 1) < 0) {
        dispatch_error_clear();
        return NULL; /* into_out gives the error after the fresh result */
    }
    call->took_into = 1;
    dispatch_tensor_incref(out);
    return out;
}

/* The reduction of in over mask into out (and indices), on in's device,
 * through the engine's one entry (dispatch_iter_reduce_on: the CPU engine or
 * the device's hook); on failure out is released and rets[0] cleared. */
static int run_reduce(int kind, const dispatch_tensor *in, uint32_t mask, int keep,
                      dispatch_tensor *out, int64_t *indices, dispatch_ivalue *rets) {
    if (in->device == DISPATCH_DEVICE_META) return 0; /* shapes only */
    dispatch_iter_operand src, dst;
    int64_t istr[DISPATCH_MAX_DIMS], ostr[DISPATCH_MAX_DIMS];
    byte_operand(in, istr, &src);
    byte_operand(out, ostr, &dst);
    if (dispatch_iter_reduce_on((int)in->device, kind, &src, mask, keep, &dst, indices) == 0)
        return 0;
    dispatch_tensor_decref(out);
    rets[0].tag = DISPATCH_IV_NONE;
    return -1;
}

static int reduce_values(const dispatch_operator *op, dispatch_ivalue *args,
                         dispatch_ivalue *rets, void *ctx, reduce_call *call);

/* A reduction's out= (Note [out=]): as PyTorch, out's dtype is the dtype=
 * when none is given (sum(int32 x, out=int32) sums in int32's result
 * dtype; mean into an integer out is refused as mean(dtype=int64) is);
 * overloads without dtype= (max/min) want out's dtype to be the input's.
 * The functional call with out hidden, its result copied into out. */
static int reduce_out(const dispatch_operator *op, dispatch_ivalue *args, dispatch_ivalue *rets,
                      void *ctx, dispatch_tensor *out) {
    const dispatch_schema *s = dispatch_op_schema(op);
    dispatch_tensor *in = args[0].v.t;
    dispatch_ivalue *dtype_arg = NULL;
    for (int i = 1; i < s->nargs; i++)
        if (strcmp(s->args[i].name, "dtype") == 0) dtype_arg = &args[i];
    dispatch_ivalue saved_out = args[s->nargs - 1], saved_dtype = {0};
    if (dtype_arg && dtype_arg->tag == DISPATCH_IV_INT && dtype_arg->v.i != out->dtype)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: Expected out tensor to have dtype %s, but got %s instead",
                                  dispatch_op_name(op), dispatch_dtype_name((int)dtype_arg->v.i),
                                  dispatch_dtype_name(out->dtype));
    if (!dtype_arg && in->dtype != out->dtype)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: Expected the dtype for input and out to match, but got %s "
                                  "for input's dtype and %s for out's dtype.",
                                  dispatch_op_name(op), dispatch_dtype_name(in->dtype),
                                  dispatch_dtype_name(out->dtype));
    if (dtype_arg) {
        saved_dtype = *dtype_arg;
        dtype_arg->tag = DISPATCH_IV_INT;
        dtype_arg->v.i = out->dtype;
    }
    args[s->nargs - 1].tag = DISPATCH_IV_NONE;
    reduce_call call = {.into = out, .into_in = in};
    int rc = reduce_values(op, args, rets, ctx, &call);
    args[s->nargs - 1] = saved_out;
    if (dtype_arg) *dtype_arg = saved_dtype;
    if (rc < 0) return -1;
    return call.took_into ? 0 : into_out(op, out, &in, 1, rets); /* took_into: written in place */
}

DISPATCH_BOXED_KERNEL(reduce) {
    UNUSED_KS;
    reduce_call call = {0};
    return reduce_values(op, args, rets, ctx, &call);
}

/* The reduce kernel's body: a reduction's result (rets[0]), its out= and
 * its values-only call as `call` says. */
static int reduce_values(const dispatch_operator *op, dispatch_ivalue *args,
                         dispatch_ivalue *rets, void *ctx, reduce_call *call) {
    int kind = (int)(intptr_t)ctx;
    /* the operator's own name in messages: amax/amin run this kernel too */
    char name_buf[32];
    const char *opname = dispatch_op_name(op), *dot = strchr(opname, '.');
    size_t len = dot ? (size_t)(dot - opname) : strlen(opname);
    const char *name = dispatch_reduce_name(kind);
    if (len < sizeof name_buf) {
        memcpy(name_buf, opname, len);
        name_buf[len] = '\0';
        name = name_buf;
    }
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *out_given = out_arg(op, args);
    if (out_given) return reduce_out(op, args, rets, ctx, out_given);
    dispatch_tensor *in = args[0].v.t;
    const dispatch_schema *s = dispatch_op_schema(op);
    /* Find the optional arguments by name: the overloads differ. */
    const dispatch_ivalue *dim = NULL, *keepdim = NULL, *dtype_arg = NULL;
    for (int i = 1; i < s->nargs; i++) {
        if (strcmp(s->args[i].name, "dim") == 0) dim = &args[i];
        else if (strcmp(s->args[i].name, "keepdim") == 0) keepdim = &args[i];
        else if (strcmp(s->args[i].name, "dtype") == 0) dtype_arg = &args[i];
    }
    int keep = keepdim && keepdim->tag == DISPATCH_IV_BOOL && keepdim->v.i;
    /* dims, the result's shape, the count: Note [One reduction check] in reduce_plan.c */
    int all = !dim || dim->tag == DISPATCH_IV_NONE || (dim->tag == DISPATCH_IV_INTLIST && dim->n == 0);
    int64_t one_dim = dim && dim->tag == DISPATCH_IV_INT ? dim->v.i : 0;
    int ndims = all ? 0 : dim->tag == DISPATCH_IV_INTLIST ? dim->n : 1;
    const int64_t *dims = all ? &one_dim : dim->tag == DISPATCH_IV_INTLIST ? dim->list : &one_dim;
    uint32_t mask = 0;
    int64_t out_sizes[DISPATCH_MAX_DIMS], count = 0;
    int out_nd = 0;
    if (dispatch_iter_reduce_check(name, kind, (int)in->ndim, in->sizes, ndims, dims, &mask, keep,
                                   &out_nd, out_sizes, &count) < 0)
        return -1;
    /* dtypes */
    int src = in->dtype, given = dtype_arg && dtype_arg->tag == DISPATCH_IV_INT;
    if (given) src = (int)dtype_arg->v.i;
    if (!dispatch_dtype_is_valid(src))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: dtype must be a dtype", name);
    /* The result's dtype is the table's rule (dispatch_reduce_result_dtype),
     * or the dtype= given; a row that refuses integers gets PyTorch's message. */
    int out_dtype = dispatch_reduce_result_dtype(kind, src);
    if (out_dtype < 0)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  given ? "%s(): could not infer output dtype. Optional dtype "
                                          "must be a floating point dtype. Got: %s"
                                        : "%s(): could not infer output dtype. Input dtype must "
                                          "be a floating point dtype, got: %s",
                                  dispatch_reduce_name(kind), dispatch_dtype_name(src));
    if (given) out_dtype = src;
    if (src != in->dtype) {
        /* dtype=: as PyTorch, cast the input first, then reduce in that
         * dtype (sum(dtype=int8) of 300. is int8 44; float16 of 70000 is
         * inf). The same call again on the cast input. */
        dispatch_tensor *cast = to_dtype_on_device(in, src);
        if (!cast) return -1;
        args[0].v.t = cast;
        int rc = reduce_values(op, args, rets, ctx, call);
        args[0].v.t = in;
        dispatch_tensor_decref(cast);
        return rc;
    }
    int float_loop = in->device == DISPATCH_DEVICE_CPU && in->ndim > 0 &&
                     (src == DISPATCH_FLOAT32 || src == DISPATCH_FLOAT64);
    dispatch_tensor *out =
        float_loop ? take_reduce_into(op, call, in, out_nd, out_sizes, out_dtype) : NULL;
    if (!out) out = dispatch_tensor_empty(out_nd, out_sizes, out_dtype, in->device);
    if (!out) return -1;
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    if (out->numel == 0 || call->values_later) return 0;
    /* The engine plans every dtype, layout and thread split: Note
     * [Deterministic reductions] in sources/iterator/reduce_float.c. */
    return run_reduce(kind, in, mask, keep, out, NULL, rets);
}

/* max.dim/min.dim -> (values, indices); argmax/argmin -> indices (Note [max
 * and min with indices] in sources/iterator/reduce_indices.c). */
DISPATCH_BOXED_KERNEL(reduce_index) {
    const dispatch_schema *s = dispatch_op_schema(op);
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *in = args[0].v.t;
    if (dispatch_dtype_is_narrow_float(in->dtype) && in->device == DISPATCH_DEVICE_CPU) {
        int rc = call_on_cast(dispatch_boxed_reduce_index, DISPATCH_FLOAT32, op, ks, args, rets,
                              ctx);
        if (rc < 0 || s->nrets != 2) return rc;
        return round_first_ret_to_narrow(rets, 2, in->dtype);
    }
    const dispatch_ivalue *dim = &args[1];
    int kind = (int)(intptr_t)ctx;
    const char *name = s->nrets == 2 ? dispatch_reduce_name(kind)
                                      : dispatch_reduce_kernel_op(kind) == DISPATCH_COMBINE_MAX ? "argmax" : "argmin";
    if (in->dtype == DISPATCH_BOOL && s->nrets == 1)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s_cpu\" not implemented for 'Bool'",
                                  name);
    if (in->numel == 0 && (dim->tag == DISPATCH_IV_NONE || in->ndim == 0))
        return dispatch_error_set(DISPATCH_ERR_INDEX, /* torch's type for argmax, not amax's */
                                  "%s(): Expected reduction dim to be specified for "
                                  "input.numel() == 0.", name);
    if (dim->tag == DISPATCH_IV_INT && in->ndim > 0) {
        int64_t d = dim->v.i < 0 ? dim->v.i + in->ndim : dim->v.i;
        if (d >= 0 && d < in->ndim && in->sizes[d] == 0)
            return dispatch_error_set(DISPATCH_ERR_INDEX,
                                      "%s(): Expected reduction dim %lld to have non-zero size.",
                                      name, (long long)d);
    }
    /* The values' tensor: the reduce kernel reads dim (an int or None) and
     * keepdim by name from the same schema; the values and their indices are
     * then one reduction. */
    reduce_call values_later = {.values_later = 1};
    if (reduce_values(op, args, rets, ctx, &values_later) < 0) return -1;
    dispatch_tensor *vals = rets[0].v.t;
    dispatch_tensor *idx = dispatch_tensor_empty((int)vals->ndim, vals->sizes, DISPATCH_INT64,
                                                 in->device);
    if (!idx) {
        dispatch_ivalue_release(rets, 1);
        return -1;
    }
    if (vals->numel > 0) {
        int keep = 0;
        for (int i = 1; i < s->nargs; i++)
            if (strcmp(s->args[i].name, "keepdim") == 0)
                keep = args[i].tag == DISPATCH_IV_BOOL && args[i].v.i;
        uint32_t mask = dim->tag == DISPATCH_IV_NONE || in->ndim == 0
                            ? (uint32_t)((1ull << in->ndim) - 1)
                            : 1u << (dim->v.i < 0 ? dim->v.i + in->ndim : dim->v.i);
        dispatch_tensor_incref(vals);
        int rc = run_reduce(kind, in, mask, keep, vals, (int64_t *)(void *)idx->data, rets);
        dispatch_tensor_decref(vals); /* on failure the last reference: rets[0] is cleared */
        if (rc < 0) {
            dispatch_tensor_decref(idx);
            return -1;
        }
    }
    if (s->nrets == 2) {
        rets[1].tag = DISPATCH_IV_TENSOR;
        rets[1].v.t = idx;
    } else {
        dispatch_tensor_decref(vals);
        rets[0].v.t = idx;
    }
    return 0;
}

/* dot on CPU, through the engine: the products by its MUL loop in float64
 * for floats (exact for float16/float32 inputs; a and b cast chunk by chunk
 * on the way in) or in wrapping int64 for integers, then for floats the
 * engine's pairwise float64 sum of them (Note [Deterministic reductions] in
 * reduce_float.c: the same bits for any thread count), for integers their
 * wrapping sum; rounded once to out's dtype. */
static int dot_cpu(const dispatch_tensor *a, const dispatch_tensor *b, dispatch_tensor *out) {
    int is_float = dispatch_dtype_category_of(a->dtype) == DISPATCH_CAT_FLOAT;
    int compute = is_float ? DISPATCH_FLOAT64 : DISPATCH_INT64;
    int64_t n = a->sizes[0];
    size_t bytes;
    if (__builtin_mul_overflow((size_t)n, (size_t)8, &bytes))
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "dot: %lld elements are too many",
                                  (long long)n);
    char *prod = malloc(bytes ? bytes : 1);
    if (!prod)
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "dot: out of memory for %lld products",
                                  (long long)n);
    int64_t isz = (int64_t)dispatch_dtype_itemsize(a->dtype), eight = 8, zero_stride = 0;
    int64_t sa = a->strides[0] * isz, sb = b->strides[0] * isz;
    dispatch_iter_operand ops[3] = {{prod, 1, &n, &eight, compute},
                                    {a->data, 1, a->sizes, &sa, a->dtype},
                                    {b->data, 1, b->sizes, &sb, b->dtype}};
    int rc = n ? dispatch_iter_elementwise_op(DISPATCH_LOOP_MUL, compute, 3, ops, NULL) : 0;
    double dtotal = 0;
    int64_t itotal = 0;
    if (rc == 0 && n && is_float) {
        dispatch_iter_operand dst = {(char *)&dtotal, 0, NULL, &zero_stride, DISPATCH_FLOAT64};
        rc = dispatch_iter_reduce(DISPATCH_REDUCE_SUM, &ops[0], 1u, 0, &dst);
    } else if (rc == 0) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x;
            memcpy(&x, prod + i * 8, 8);
            acc += (uint64_t)x;
        }
        itotal = (int64_t)acc;
    }
    free(prod);
    if (rc < 0) return -1;
    char *data[2] = {out->data, is_float ? (char *)&dtotal : (char *)&itotal};
    intptr_t zero[2] = {0, 0};
    dispatch_cast_loop_get(compute, out->dtype)(data, zero, 1, NULL);
    return 0;
}

DISPATCH_BOXED_KERNEL(dot) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "tensor") < 0)
        return -1;
    dispatch_tensor *a = args[0].v.t, *b = args[1].v.t;
    if (a->ndim != 1 || b->ndim != 1)
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "1D tensors expected, but got %lldD and %lldD tensors",
                                  (long long)a->ndim, (long long)b->ndim);
    if (a->dtype != b->dtype)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "dot : expected both vectors to have same dtype, but found %s "
                                  "and %s", dispatch_dtype_name(a->dtype),
                                  dispatch_dtype_name(b->dtype));
    if (a->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"dot\" not implemented for 'bool'");
    if (a->sizes[0] != b->sizes[0])
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "inconsistent tensor size, expected tensor [%lld] and src "
                                  "[%lld] to have the same number of elements",
                                  (long long)a->sizes[0], (long long)b->sizes[0]);
    dispatch_tensor *ins[2] = {a, b};
    int device = 0;
    if (common_device("dot", ins, 2, &device) < 0) return -1;
    dispatch_tensor *out = dispatch_tensor_empty(0, NULL, a->dtype, device);
    if (!out) return -1;
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    if (device != DISPATCH_DEVICE_CPU) return 0;
    if (dot_cpu(a, b, out) < 0) {
        dispatch_tensor_decref(out);
        rets[0].tag = DISPATCH_IV_NONE;
        return -1;
    }
    return 0;
}

/* dispatch_kernels_copy_: sources/dispatcher/device_copy.c. */

DISPATCH_BOXED_KERNEL(copy_) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "self") < 0 || expect_tensor(op, &args[1], "src") < 0)
        return -1;
    if (dispatch_kernels_copy_(args[0].v.t, args[1].v.t) < 0) return -1;
    return return_self(args[0].v.t, rets);
}

DISPATCH_BOXED_KERNEL(fill_) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *self = args[0].v.t;
    const dispatch_ivalue *v = &args[1];
    if (v->tag != DISPATCH_IV_TENSOR && scalar_check(v, self->dtype) < 0) return -1;
    if (v->tag == DISPATCH_IV_TENSOR) {
        if (v->v.t->ndim != 0)
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "fill_ only supports 0-dimension value tensor but got "
                                      "tensor with %lld dimensions.", (long long)v->v.t->ndim);
        if (dispatch_kernels_copy_(self, v->v.t) < 0) return -1;
    } else if (self->device == DISPATCH_DEVICE_CPU) {
        char value[8];
        scalar_to(v, self->dtype, value);
        if (dispatch_strided_run(dispatch_loop_get(DISPATCH_LOOP_FILL, self->dtype), 1, &self,
                                 value) < 0)
            return -1;
    } else if (self->device != DISPATCH_DEVICE_META) { /* a device's FILL loop */
        _Alignas(8) char value[8];
        scalar_to(v, self->dtype, value);
        int64_t strides[DISPATCH_MAX_DIMS], isz = (int64_t)dispatch_dtype_itemsize(self->dtype);
        for (int d = 0; d < self->ndim; d++) strides[d] = self->strides[d] * isz;
        dispatch_iter_operand o = {self->data, (int)self->ndim, self->sizes, strides, self->dtype};
        if (dispatch_iter_device_op((int)self->device, DISPATCH_LOOP_FILL, self->dtype, 1, &o, 0,
                                    value) < 0)
            return -1;
    }
    return return_self(self, rets);
}

DISPATCH_BOXED_KERNEL(cast) {
    UNUSED_KS;
    (void)ctx;
    if (expect_tensor(op, &args[0], "self") < 0) return -1;
    if (args[1].tag != DISPATCH_IV_INT || !dispatch_dtype_is_valid((int)args[1].v.i))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "cast: dtype must be a dtype");
    dispatch_tensor *in = args[0].v.t;
    dispatch_tensor *out = dispatch_tensor_empty((int)in->ndim, in->sizes, (int)args[1].v.i,
                                                 in->device);
    if (!out) return -1;
    if (dispatch_kernels_copy_(out, in) < 0) {
        dispatch_tensor_decref(out);
        return -1;
    }
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    return 0;
}

/* Device keys --------------------------------------------------------------------- */

int dispatch_kernels_register_device(int key) {
    static const dispatch_kernel_fn elementwise_kernels[] = {
        dispatch_boxed_binary, dispatch_boxed_binary_, dispatch_boxed_compare,
        dispatch_boxed_unary, dispatch_boxed_unary_float, dispatch_boxed_addcmul,
        dispatch_boxed_where, dispatch_boxed_fill_, dispatch_boxed_cast,
        dispatch_boxed_reduce, dispatch_boxed_reduce_index,
        dispatch_boxed_copy_}; /* also across devices: Note [Copies that touch a device] */
    int n = 0;
    for (int i = 0; i < dispatch_num_ops(); i++) {
        const dispatch_operator *op = dispatch_op_at(i);
        dispatch_kernel_fn fn;
        void *ctx;
        if (dispatch_op_kernel_at(op, DISPATCH_KEY_CPU, &fn, &ctx) != 1) continue;
        for (size_t j = 0; j < sizeof elementwise_kernels / sizeof *elementwise_kernels; j++) {
            if (fn != elementwise_kernels[j]) continue;
            if (dispatch_impl(dispatch_op_name(op), key, fn, ctx,
                              "sources/dispatcher/operators.c (device loops)") < 0)
                return -1;
            n++;
        }
    }
    return n;
}
