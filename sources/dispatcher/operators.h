/* Private to sources/dispatcher: the boxed CPU/Meta kernels of the built-in
 * operators (operators.c), named by sources/dispatcher/operators.toml. Each one
 * serves both the CPU and the Meta key: it computes the result's shape and
 * dtype, allocates it on the inputs' device, and computes data only on CPU. */
#ifndef DISPATCH_DISPATCHER_OPERATORS_H_
#define DISPATCH_DISPATCHER_OPERATORS_H_

#include "dispatch/dispatcher.h"
#include "dispatch/loops.h"

#include "dispatch/iterator.h"
#include "dispatch/reduce.h"

#define DISPATCH_BOXED_KERNEL(name)                                                          \
    int dispatch_boxed_##name(const dispatch_operator *op, dispatch_keyset ks,               \
                              dispatch_ivalue *args, dispatch_ivalue *rets, void *ctx)

/* ctx of the elementwise kernels: (void *)(intptr_t) a loop id of loops.h;
 * of reduce: a dispatch_reduce_op of dispatch/iterator.h. */

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

#endif
