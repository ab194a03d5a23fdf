/*
 * The portable strided engine of the runtime: runs one loop of loops.h over
 * operands that already have a common shape (broadcast views, strides 0 where
 * broadcast). Dimensions that can be merged are merged first, so contiguous
 * operands make one call of n = numel. The kernels issue's engine
 * (sources/iterator) may replace the callers of this one; the loop interface
 * stays.
 */
#ifndef DISPATCH_STRIDED_H_
#define DISPATCH_STRIDED_H_

#include "dispatch/loops.h"
#include "dispatch/tensor.h"

#define DISPATCH_MAX_OPERANDS 8

/* ops[0] is the output; every operand has the output's sizes (expand first).
 * Returns 0 (nothing can fail but a NULL loop, reported as a TypeError). */
int dispatch_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops, void *ctx);

/* Whether two elements of a layout (sizes, strides in BYTES, elements of
 * itemsize bytes) share a byte: 1 when they do, 0 when no two do, -1 with a
 * MemoryError set when the exact check could not get its scratch memory.
 * See Note [Overlapping outputs] in strided.c. */
int dispatch_overlaps_itself(int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t itemsize);

#endif /* DISPATCH_STRIDED_H_ */
