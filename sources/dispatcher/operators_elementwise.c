/* The elementwise operators (operators.h): binary, in place, compare, unary,
 * addcmul, where, and how they run through the elementwise engine. */
#include "operators.h"

#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels.h"
#include "dispatch/iterator.h"
#include "dispatch/strided.h"

#define LOOP_OF(ctx) ((int)(intptr_t)(ctx))

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

/* The number a wrapped 0-dim tensor holds, as an ivalue (for operator_scalar_check). */
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

/* Allocate the result of an elementwise op of ins; compute its data on CPU. */
static int elementwise(const dispatch_operator *op, int loop, int compute, int out_dtype,
                       dispatch_tensor *const *ins, int nin, void *ctx,
                       dispatch_ivalue *rets, dispatch_tensor *given) {
    int device = 0, nd;
    int64_t shape[DISPATCH_MAX_DIMS];
    if (operator_common_device(dispatch_op_name(op), ins, nin, &device) < 0) return -1;
    if (broadcast_all(ins, nin, &nd, shape) < 0) return -1;
    if (device != DISPATCH_DEVICE_META && !dispatch_loop_get(loop, compute))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                                  dispatch_op_name(op), dispatch_dtype_name(compute));
    if (given) { /* out= (Note [out=]): checked, then no overlap but an exact one */
        if (operator_check_out(op, given, device, nd, shape, out_dtype, ins, nin) < 0) return -1;
        if (given->dtype != out_dtype && dispatch_loop_operand_dtype(loop, 0, compute) != out_dtype &&
            device != DISPATCH_DEVICE_META) {
            /* The loop's result is wider than the result dtype (float16 and
             * bfloat16 computed in float32): rounded to the result dtype
             * first, then cast into out (Note [out=]). */
            dispatch_ivalue fresh[1];
            if (elementwise(op, loop, compute, out_dtype, ins, nin, ctx, fresh, NULL) < 0) return -1;
            int rc = dispatch_kernels_copy_(given, fresh[0].v.t);
            dispatch_tensor_decref(fresh[0].v.t);
            return rc < 0 ? -1 : operator_return_self(given, rets);
        }
        if (device != DISPATCH_DEVICE_META &&
            run_elementwise(loop, compute, given, ins, nin, 1, ctx) < 0)
            return -1;
        return operator_return_self(given, rets);
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
            if (operator_scalar_check(a, dtype) < 0) return -1; /* as torch's alpha.to<T>() */
            operator_scalar_to(a, dtype, alpha_buf);
            *actx = alpha_buf;
        }
    }
    *dtype_out = dtype;
    return 0;
}

/* 1 when the float32 at f32 is a value of the narrow float dtype, whose
 * bits are then in *narrow; 0 when rounding would change it (or a NaN). */
static int float32_is_exact_in(int dtype, const char *f32, char *narrow) {
    char back[8];
    char *data[2] = {narrow, (char *)f32};
    intptr_t strides[2] = {0, 0};
    dispatch_cast_loop_get(DISPATCH_FLOAT32, dtype)(data, strides, 1, NULL);
    data[0] = back;
    data[1] = narrow;
    dispatch_cast_loop_get(dtype, DISPATCH_FLOAT32)(data, strides, 1, NULL);
    return memcmp(back, f32, sizeof(float)) == 0;
}

/*
 * Note [Narrow floats with an exact scalar]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * bfloat16 (and every narrow float but float16) times or over a scalar runs
 * the float32 loop over the operand and the scalar in float32 (Note [float16
 * with a scalar]): through the engine's chunked casts, 1.6-1.8x torch's time
 * for x * 0.5 at 256K. When the scalar's float32 value is a value of the
 * dtype (0.5, 2, 3, -1.25, ...), the dtype's own loop (narrow_loops.dispatch.c:
 * both operands widened to float32, the float32 operation, one rounding) gives
 * the same bits in one pass: the scalar, rounded to the dtype, is returned as
 * a 0-dim CPU tensor of the dtype to run that loop with; NULL otherwise (no
 * error set: the engine's path is taken).
 */
static dispatch_tensor *narrow_exact_scalar(int dtype, const dispatch_tensor *scalar) {
    if (dtype == DISPATCH_FLOAT16 || scalar->device != DISPATCH_DEVICE_CPU) return NULL;
    char f32[8], narrow[8];
    char *data[2] = {f32, scalar->data};
    intptr_t strides[2] = {0, 0};
    dispatch_cast_loop_get(scalar->dtype, DISPATCH_FLOAT32)(data, strides, 1, NULL);
    if (!float32_is_exact_in(dtype, f32, narrow)) return NULL;
    dispatch_tensor *t = dispatch_tensor_empty(0, NULL, dtype, DISPATCH_DEVICE_CPU);
    if (t) memcpy(t->data, narrow, dispatch_dtype_itemsize(dtype));
    else dispatch_error_clear();
    return t;
}

/*
 * Note [float16 with a scalar]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * PyTorch's CPU mul and div of a float16 tensor by a scalar (a Python
 * number, or a 0-dim tensor, as the second operand; a Python number on
 * either side of *) keep the scalar in float32 and round the float32 result
 * once: h * 0.1 is 0.6001 for h = 6, where rounding 0.1 to float16 first
 * gives 0.5996. Those calls run the loops of dispatch_kernels_half_scalar_loop
 * (kernels.h): the float16 operand widened, the float32 scalar, one rounding.
 * A number on the left of / is the same, s / x in float rounded once (PyTorch
 * multiplies by a rounded reciprocal there). add and sub round the scalar to
 * float16 first, as PyTorch does, and so keep the float16 loop. bfloat16
 * and every other narrow float (Note [Narrow floats] in dtype.h) the same,
 * through the engine: the float32 loop over its operand and the scalar,
 * both cast to float32, into its result (or the dtype's own loop when the
 * scalar is a value of the dtype: Note [Narrow floats with an exact scalar]).
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
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *ins[2] = {args[0].v.t, args[1].v.t};
    char alpha[8];
    void *actx;
    if (binary_setup(loop, ins, args, alpha, &actx, &dtype) < 0) return -1;
    int k = narrow_scalar_operand(loop, dtype, ins);
    if (k < 0) return elementwise(op, loop, dtype, dtype, ins, 2, actx, rets,
                                  operator_out_arg(op, args));
    if (dtype != DISPATCH_FLOAT16) { /* the other narrow floats: through the engine */
        dispatch_tensor *exact = narrow_exact_scalar(dtype, ins[k]);
        if (!exact)
            return elementwise(op, loop, DISPATCH_FLOAT32, dtype, ins, 2, NULL, rets,
                               operator_out_arg(op, args));
        dispatch_tensor *own[2] = {ins[0], ins[1]};
        own[k] = exact;
        int rc = elementwise(op, loop, dtype, dtype, own, 2, NULL, rets,
                             operator_out_arg(op, args));
        dispatch_tensor_decref(exact);
        return rc;
    }
    int device = 0, nd;
    int64_t shape[DISPATCH_MAX_DIMS];
    if (operator_common_device(dispatch_op_name(op), ins, 2, &device) < 0) return -1;
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
    dispatch_tensor *given = operator_out_arg(op, args); /* out=: the rounded result copied in */
    return given ? operator_into_out(op, given, ins, 2, rets) : 0;
}

/* self <op>= other: computed in the promoted dtype, written into self (cast
 * chunk by chunk), other broadcast to self's shape, as PyTorch's add_ etc. */
DISPATCH_BOXED_KERNEL(binary_) {
    UNUSED_KS;
    int loop = LOOP_OF(ctx), dtype = 0, device = 0;
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *self = args[0].v.t, *ins[2] = {args[0].v.t, args[1].v.t};
    char alpha[8];
    void *actx;
    if (binary_setup(loop, ins, args, alpha, &actx, &dtype) < 0) return -1;
    if (operator_check_castable(dtype, self->dtype) < 0) return -1;
    if (operator_common_device(dispatch_op_name(op), ins, 2, &device) < 0) return -1;
    if (device == DISPATCH_DEVICE_CPU) {
        if (!dispatch_loop_get(loop, dtype))
            return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                                      dispatch_op_name(op), dispatch_dtype_name(dtype));
        int k = narrow_scalar_operand(loop, dtype, ins);
        dispatch_tensor *exact = k >= 0 ? narrow_exact_scalar(dtype, ins[k]) : NULL;
        if (exact) { /* Note [Narrow floats with an exact scalar] */
            dispatch_tensor *own[2] = {ins[0], ins[1]};
            own[k] = exact;
            int rc = run_elementwise(loop, dtype, self, own, 2, 0, NULL);
            dispatch_tensor_decref(exact);
            if (rc < 0) return -1;
        } else if (k >= 0 && dtype != DISPATCH_FLOAT16) {
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
    return operator_return_self(self, rets);
}

DISPATCH_BOXED_KERNEL(compare) {
    UNUSED_KS;
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "other") < 0)
        return -1;
    dispatch_tensor *ins[2] = {args[0].v.t, args[1].v.t};
    return elementwise(op, LOOP_OF(ctx), result_type(ins, 2), DISPATCH_BOOL, ins, 2, NULL, rets,
                       operator_out_arg(op, args));
}

DISPATCH_BOXED_KERNEL(unary) {
    UNUSED_KS;
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *in = args[0].v.t;
    if (LOOP_OF(ctx) == DISPATCH_LOOP_NEG && in->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "Negation, the `-` operator, on a bool tensor is not supported. "
                                  "If you are trying to invert a mask, use the `~` or "
                                  "`logical_not()` operator instead.");
    if (LOOP_OF(ctx) == DISPATCH_LOOP_ABS && in->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"abs\" not implemented for 'bool'");
    return elementwise(op, LOOP_OF(ctx), in->dtype, in->dtype, &in, 1, NULL, rets,
                       operator_out_arg(op, args));
}

DISPATCH_BOXED_KERNEL(unary_float) {
    UNUSED_KS;
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *in = args[0].v.t;
    int dtype = dispatch_dtype_category_of(in->dtype) == DISPATCH_CAT_FLOAT ? in->dtype
                                                                             : DISPATCH_FLOAT32;
    return elementwise(op, LOOP_OF(ctx), dtype, dtype, &in, 1, NULL, rets,
                       operator_out_arg(op, args));
}

/* 1 when addcmul of the narrow float dtype can run the dtype's own loop with
 * the bits of the float32 one: every operand on the CPU and the value, in
 * float32 (f32), the same number once rounded to dtype (1, 0.5, -2, ...).
 * The narrow loop takes its value in dtype (written to narrow) and widens it
 * to float32. */
static int narrow_value_is_exact(int dtype, const char *f32, char *narrow,
                                 dispatch_tensor *const *ins) {
    for (int k = 0; k < 3; k++)
        if (ins[k]->device != DISPATCH_DEVICE_CPU) return 0;
    return float32_is_exact_in(dtype, f32, narrow);
}

DISPATCH_BOXED_KERNEL(addcmul) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "tensor1") < 0 ||
                          operator_expect_tensor(op, &args[2], "tensor2") < 0)
        return -1;
    dispatch_tensor *ins[3] = {args[0].v.t, args[1].v.t, args[2].v.t};
    int dtype = result_type(ins, 3);
    if (args[3].tag == DISPATCH_IV_DOUBLE && dispatch_dtype_category_of(dtype) != DISPATCH_CAT_FLOAT)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "addcmul: for integral input tensors, argument value must not "
                                  "be a floating point number.");
    char value[8];
    int reduced = dispatch_dtype_is_narrow_float(dtype); /* Note [Narrow floats] in dtype.h */
    if (operator_scalar_check(&args[3], reduced ? DISPATCH_FLOAT32 : dtype) < 0)
        return -1;
    if (!reduced) {
        operator_scalar_to(&args[3], dtype, value);
        return elementwise(op, DISPATCH_LOOP_ADDCMUL, dtype, dtype, ins, 3, value, rets,
                           operator_out_arg(op, args));
    }
    /* A narrow float, as PyTorch's float16 and bfloat16: the operands in that dtype, then
     * self + value * t1 * t2 in float32 with value in float32, rounded once
     * (Note [float16 with a scalar]). */
    operator_scalar_to(&args[3], DISPATCH_FLOAT32, value);
    char narrow[8];
    if (narrow_value_is_exact(dtype, value, narrow, ins)) {
        /* The dtype's own loop (narrow_loops.dispatch.c) widens the operands and
         * its ctx (the value in dtype, here equal to the float32 value) to float32
         * by vector chunks and runs the float32 loop: the same bits, no cast
         * buffers of the engine. */
        return elementwise(op, DISPATCH_LOOP_ADDCMUL, dtype, dtype, ins, 3, narrow, rets,
                           operator_out_arg(op, args));
    }
    dispatch_tensor *h[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++)
        if (!(h[k] = dispatch_kernels_to_dtype(ins[k], dtype))) rc = -1;
    if (rc == 0)
        rc = elementwise(op, DISPATCH_LOOP_ADDCMUL, DISPATCH_FLOAT32, dtype, h, 3, value, rets,
                         operator_out_arg(op, args));
    for (int k = 0; k < 3; k++)
        if (h[k]) dispatch_tensor_decref(h[k]);
    return rc;
}

DISPATCH_BOXED_KERNEL(where) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "condition") < 0 ||
        operator_expect_tensor(op, &args[1], "self") < 0 ||
                          operator_expect_tensor(op, &args[2], "other") < 0)
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
        if (operator_scalar_check(&v, dtype) < 0) return -1;
    }
    return elementwise(op, DISPATCH_LOOP_WHERE, dtype, dtype, ins, 3, NULL, rets,
                       operator_out_arg(op, args));
}
