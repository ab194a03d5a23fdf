/*
 * The reduction engine (sources/iterator/reduce_*.c, one job per file:
 * reduce_internal.h), beside the elementwise one (iterator.h) and over the
 * same raw strided operands: every dtype, every set of dims, keepdim or
 * not, the thread splits, and the hook where a device's reductions hang.
 * The operators check their arguments and allocate the result; everything
 * after that is here. The reductions and their rules are the rows of
 * dispatch/reduction_table.h; the SIMD kernels it runs come from the reduction
 * kernel table (dispatch/reduce_kernel_table.h).
 *
 * Errors: -1 with dispatch_error_set() (error.h), as iterator.h.
 */
#ifndef DISPATCH_REDUCE_ENGINE_H_
#define DISPATCH_REDUCE_ENGINE_H_

#include <stddef.h>
#include <stdint.h>

#include "dispatch/iterator.h"
#include "dispatch/reduce_kernel_table.h"
#include "dispatch/reduction_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reduce `in` (any dtype) over the dims whose bit is set in dim_mask (all
 * dims: (1 << ndim) - 1) into `out`, which has the reduced shape and
 * dispatch_reduce_result_dtype's dtype: with keepdim the reduced dims are
 * present with size 1, without they are dropped (out's strides are taken
 * as given either way). max/min of an empty set is a ValueError; sum is 0
 * and mean NaN. float16 and bfloat16 accumulate in float32 and round once;
 * integers exactly (sums wrap in int64). The same bits for any thread count
 * and input layout (Note [Deterministic reductions] in reduce_float.c). */
int dispatch_iter_reduce(int op, const dispatch_iter_operand *in, uint32_t dim_mask,
                         int keepdim, const dispatch_iter_operand *out);

/* After dispatch_iter_reduce of max or min into `vals` (dense over the
 * kept dims, keepdim or not): indices (dense int64, same shape) gets the
 * row-major position among its reduced elements of the first element equal
 * to each value (NaN equal to NaN), and the value is re-read from there
 * (Note [max and min with indices] in reduce_indices.c). 0. */
int dispatch_iter_reduce_indices(const dispatch_iter_operand *in, uint32_t dim_mask, char *vals,
                                 int64_t *indices);

/* The one check of a reduction's arguments (Note [One reduction check] in
 * reduce_check.c): op, the reduced dims, the result's shape and the count of
 * elements reduced per output. The dims are either *dim_mask (dims NULL) or
 * the list dims[0..ndims) (negative dims wrap; ndims 0 means all dims;
 * written to *dim_mask). Writes *out_ndim, out_shape[DISPATCH_ITER_MAX_DIMS]
 * and *count; 0, or -1 with the error set. opname NULL: the engine's
 * messages; else PyTorch's, naming the operator (max/min of nothing is then
 * a RuntimeError, not a ValueError). */
int dispatch_iter_reduce_check(const char *opname, int op, int ndim, const int64_t *shape,
                               int ndims, const int64_t *dims, uint32_t *dim_mask, int keepdim,
                               int *out_ndim, int64_t *out_shape, int64_t *count);

/* One reduction wherever its tensor lives, the one entry the operators
 * call after dispatch_iter_reduce_check: dim_mask and out's shape are what
 * the check answered, and are not checked again. On the CPU this engine
 * (as dispatch_iter_reduce, then, when indices is not NULL,
 * dispatch_iter_reduce_indices into a dense out); on another device the
 * reduction its module hung on the hook below (out and indices dense,
 * fresh, in that device's memory). 0, or -1 with the error set. */
int dispatch_iter_reduce_on(int device, int op, const dispatch_iter_operand *in,
                            uint32_t dim_mask, int keepdim, const dispatch_iter_operand *out,
                            int64_t *indices);

/* A device's reduction (the CUDA module's dcu_reduce, Note [CUDA reduction
 * plans] in sources/cuda/cuda_reduce_plan.c): op (enum dispatch_reduce_op)
 * of the input (dtype, data, ndim dims of shape and byte strides) over the
 * dims in mask into out (fresh and contiguous over the kept dims, of
 * out_dtype: the input's, or int64 for an integer sum); indices (NULL, or
 * fresh contiguous int64) the position of each max/min among its reduced
 * elements, row-major. 0, or non-zero with a message in err. */
typedef int (*dispatch_device_reduce_fn)(int op, int dtype, const char *in, int ndim,
                                         const int64_t *shape, const int64_t *strides,
                                         uint32_t mask, int out_dtype, char *out,
                                         int64_t *indices, char *err, size_t errcap);
int dispatch_device_reduce_register(int device, dispatch_device_reduce_fn fn);

/* Run the reduction registered for device (a RuntimeError naming the
 * device when none is, or with the device's message when it fails). */
int dispatch_iter_device_reduce(int device, int op, int dtype, const char *in, int ndim,
                                const int64_t *shape, const int64_t *strides, uint32_t mask,
                                int out_dtype, char *out, int64_t *indices);

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_REDUCE_ENGINE_H_ */
