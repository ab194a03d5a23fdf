/* The reduction kernel table: see dispatch/reduce_kernel_table.h. */
#include <stdatomic.h>

#include "dispatch/dtype.h"
#include "dispatch/reduce_kernel_table.h"

/* Atomics: a re-detection (dispatch_cpu_redetect_for_tests) re-sets them
 * while another thread may be reducing. */
static _Atomic(dispatch_reduce_kernel_fn) table[DISPATCH_NUM_REDUCE_KERNELS][DISPATCH_NUM_DTYPES];

int dispatch_reduce_kernel_register(int kind, int dtype, dispatch_reduce_kernel_fn fn)
{
    if (kind < 0 || kind >= DISPATCH_NUM_REDUCE_KERNELS || !dispatch_dtype_is_valid(dtype))
        return -1;
    atomic_store(&table[kind][dtype], fn);
    return 0;
}

dispatch_reduce_kernel_fn dispatch_reduce_kernel_get(int kind, int dtype)
{
    if (kind < 0 || kind >= DISPATCH_NUM_REDUCE_KERNELS || !dispatch_dtype_is_valid(dtype))
        return NULL;
    return atomic_load_explicit(&table[kind][dtype], memory_order_relaxed);
}
