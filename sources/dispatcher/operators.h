/* Private to sources/dispatcher: the boxed CPU/Meta kernels of the built-in
 * operators, named by sources/dispatcher/operators.toml, one file per family:
 *   operators_elementwise.c  binary, in place, compare, unary, addcmul, where
 *   operators_reduce.c       the reductions and dot: the reduction engine's front
 *   operators_copy.c         copy_, fill_, cast (device copies: device_copy.c)
 *   operators_shared.c       what the families share (declared below)
 *   operators.c              which of them serve another device's key
 * Each one serves both the CPU and the Meta key: it computes the result's
 * shape and dtype, allocates it on the inputs' device, and computes data only
 * on CPU (or through a device's hooks). */
#ifndef DISPATCH_DISPATCHER_OPERATORS_H_
#define DISPATCH_DISPATCHER_OPERATORS_H_

#include "dispatch/dispatcher.h"
#include "dispatch/loops.h"

#include "dispatch/iterator.h"
#include "dispatch/reduce_engine.h"

#define DISPATCH_BOXED_KERNEL(name)                                                          \
    int dispatch_boxed_##name(const dispatch_operator *op, dispatch_keyset ks,               \
                              dispatch_ivalue *args, dispatch_ivalue *rets, void *ctx)

/* ctx of the elementwise kernels: (void *)(intptr_t) a loop id of loops.h;
 * of reduce: a dispatch_reduce_op of dispatch/reduction_table.h. */

DISPATCH_BOXED_KERNEL(binary);       /* add/sub (alpha), mul, div, maximum, minimum */
DISPATCH_BOXED_KERNEL(binary_);      /* add_/sub_ (alpha), mul_, div_: in place into self */
DISPATCH_BOXED_KERNEL(compare);      /* eq, ne, lt, le, gt, ge -> bool */
DISPATCH_BOXED_KERNEL(unary);        /* neg, abs: same dtype */
DISPATCH_BOXED_KERNEL(unary_float);  /* sqrt, exp, log: integers -> float32 */
DISPATCH_BOXED_KERNEL(addcmul);
DISPATCH_BOXED_KERNEL(where);
DISPATCH_BOXED_KERNEL(reduce);       /* sum/mean/max/min, all or along dims */
DISPATCH_BOXED_KERNEL(reduce_index); /* max/min.dim -> (values, indices), argmax/argmin */
DISPATCH_BOXED_KERNEL(dot);
DISPATCH_BOXED_KERNEL(copy_);
DISPATCH_BOXED_KERNEL(fill_);
DISPATCH_BOXED_KERNEL(cast);

/* host_copy.c: core's dispatch_strided_run and dispatch_tensor_copy_ split
 * across the pool's threads (Note [Copies across threads]). */
int dispatch_kernels_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops,
                                 void *ctx);
int dispatch_kernels_host_copy_(dispatch_tensor *dst, dispatch_tensor *src);

/* What the families share (operators_shared.c). ------------------------------ */

#define UNUSED_KS (void)ks

/* The device of a call into *device: all tensors on one device, except that
 * 0-dim CPU tensors (wrapped numbers included) go with any device. */
int operator_common_device(const char *name, dispatch_tensor *const *ts, int n, int *device);
/* A Python number (an ivalue) as one element of dtype, into buf. */
void operator_scalar_to(const dispatch_ivalue *v, int dtype, void *buf);
/* 0 when the Python number v fits dtype (PyTorch's rule), else -1 with the error. */
int operator_scalar_check(const dispatch_ivalue *v, int dtype);
/* The out= tensor of a .out overload (Note [out=] in operators_shared.c), or NULL. */
dispatch_tensor *operator_out_arg(const dispatch_operator *op, const dispatch_ivalue *args);
/* torch's can_cast of a result of dtype into an existing tensor of `into`. */
int operator_check_castable(int dtype, int into);
/* The checks of Note [out=] of out against a result of (nd, shape, dtype). */
int operator_check_out(const dispatch_operator *op, const dispatch_tensor *out, int device, int nd,
                       const int64_t *shape, int dtype, dispatch_tensor *const *ins, int nin);
/* rets[0], a fresh result, copied into out, and out returned in its place. */
int operator_into_out(const dispatch_operator *op, dispatch_tensor *out,
                      dispatch_tensor *const *ins, int nin, dispatch_ivalue *rets);
/* An in-place kernel's return: self, as a new reference. */
int operator_return_self(dispatch_tensor *self, dispatch_ivalue *rets);
/* 0 when v is a tensor, else -1 with a TypeError naming arg. */
int operator_expect_tensor(const dispatch_operator *op, const dispatch_ivalue *v, const char *arg);

#endif
