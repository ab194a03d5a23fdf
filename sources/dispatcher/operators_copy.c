/* copy_, fill_ and cast (operators.h); a copy that touches a device is
 * dispatch_kernels_copy_ (device_copy.c). */
#include "operators.h"

#include "dispatch/error.h"
#include "dispatch/strided.h"

DISPATCH_BOXED_KERNEL(copy_) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "src") < 0)
        return -1;
    if (dispatch_kernels_copy_(args[0].v.t, args[1].v.t) < 0) return -1;
    return operator_return_self(args[0].v.t, rets);
}

DISPATCH_BOXED_KERNEL(fill_) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *self = args[0].v.t;
    const dispatch_ivalue *v = &args[1];
    if (v->tag != DISPATCH_IV_TENSOR && operator_scalar_check(v, self->dtype) < 0) return -1;
    if (v->tag == DISPATCH_IV_TENSOR) {
        if (v->v.t->ndim != 0)
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "fill_ only supports 0-dimension value tensor but got "
                                      "tensor with %lld dimensions.", (long long)v->v.t->ndim);
        if (dispatch_kernels_copy_(self, v->v.t) < 0) return -1;
    } else if (self->device == DISPATCH_DEVICE_CPU) {
        char value[8];
        operator_scalar_to(v, self->dtype, value);
        if (dispatch_kernels_strided_run(dispatch_loop_get(DISPATCH_LOOP_FILL, self->dtype), 1,
                                         &self, value) < 0)
            return -1;
    } else if (self->device != DISPATCH_DEVICE_META) { /* a device's FILL loop */
        _Alignas(8) char value[8];
        operator_scalar_to(v, self->dtype, value);
        int64_t strides[DISPATCH_MAX_DIMS], isz = (int64_t)dispatch_dtype_itemsize(self->dtype);
        for (int d = 0; d < self->ndim; d++) strides[d] = self->strides[d] * isz;
        dispatch_iter_operand o = {self->data, (int)self->ndim, self->sizes, strides, self->dtype};
        if (dispatch_iter_device_op((int)self->device, DISPATCH_LOOP_FILL, self->dtype, 1, &o, 0,
                                    value) < 0)
            return -1;
    }
    return operator_return_self(self, rets);
}

DISPATCH_BOXED_KERNEL(cast) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
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
