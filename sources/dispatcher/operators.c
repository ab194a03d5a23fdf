/* Which boxed operator kernels (operators.h) serve another device's key
 * too: they shape and allocate on any device and run that device's loops
 * and reductions through the engines' hooks. */
#include "operators.h"

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
