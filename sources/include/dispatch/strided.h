/*
 * The strided engine of the runtime: the one place that walks strided
 * operands (Note [One strided engine] in sources/core/strided.c). A plan is
 * the iteration space of operands that already have a common shape (stride
 * 0 where broadcast): size-1 dims dropped, the rest ordered by the output's
 * |stride| (innermost first) and merged where every operand steps through
 * them as one, so contiguous operands (in any common order) make one call of
 * n = numel. Walking a plan calls one loop of loops.h (or any function of
 * that shape) per inner run. core's copies run it on one thread, the
 * dispatcher's copy_, fill_, clone, contiguous and to in ranges on the
 * pool's threads (sources/dispatcher/host_copy.c); the elementwise engine
 * and the reductions of sources/iterator build on the same plan, adding
 * broadcasting, casting, overlap checks and threads.
 */
#ifndef DISPATCH_STRIDED_H_
#define DISPATCH_STRIDED_H_

#include "dispatch/loops.h"
#include "dispatch/tensor.h"

#define DISPATCH_MAX_OPERANDS 8

typedef struct dispatch_strided_plan {
    int nops, ndim;                                          /* ndim >= 1 */
    int64_t numel;                                           /* 0: nothing to run */
    int64_t shape[DISPATCH_MAX_DIMS];                        /* dim 0 is the innermost */
    intptr_t strides[DISPATCH_MAX_OPERANDS][DISPATCH_MAX_DIMS]; /* [operand][dim], bytes */
    char *data[DISPATCH_MAX_OPERANDS];
} dispatch_strided_plan;

/* The plan of nops operands (operand 0 is the output; it orders the dims)
 * over `shape` (ndim dims, outermost first): strides[k][d] is operand k's
 * byte stride in dim d (0 where broadcast or size 1). */
void dispatch_strided_plan_init(dispatch_strided_plan *p, int nops, char *const *data, int ndim,
                                const int64_t *shape,
                                intptr_t (*strides)[DISPATCH_MAX_DIMS]); /* read only */

/* Run elements [begin, end) of the plan (in its innermost-first order):
 * inner(ptrs, inner strides, n, ctx) once per run of the innermost dim. */
void dispatch_strided_plan_walk(const dispatch_strided_plan *p, int64_t begin, int64_t end,
                                dispatch_loop_fn inner, void *ctx);

/* The same walk, each whole run of dims 0 and 1 in one call of inner2d (the
 * 2-D loop of inner: Note [2-D loops] in loops.h); inner2d NULL: the
 * walk above. */
void dispatch_strided_plan_walk2d(const dispatch_strided_plan *p, int64_t begin, int64_t end,
                                  dispatch_loop_fn inner, dispatch_loop2d_fn inner2d,
                                  void *ctx);

/* The plan of tensors: ops[0] is the output; every operand has the output's
 * sizes (expand first). */
void dispatch_strided_plan_of(dispatch_strided_plan *p, int nops, dispatch_tensor *const *ops);

/* Walk the plan of ops on this thread (the dispatcher's
 * dispatch_kernels_strided_run splits it across threads). Returns 0
 * (nothing can fail but a NULL loop, reported as a TypeError). */
int dispatch_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops, void *ctx);

/* copy_'s checks and plan without the walk: 1 with *view (a new reference:
 * src expanded to dst's shape, or a private copy of it where it may share
 * memory with dst) and *loop (dst = src's cast or copy loop) when there are
 * elements to copy, 0 when there are none (meta, empty), -1 with the error
 * set (read-only or self-overlapping dst, shapes that do not broadcast,
 * another device). */
int dispatch_tensor_copy_prepare(dispatch_tensor *dst, dispatch_tensor *src,
                                 dispatch_tensor **view, dispatch_loop_fn *loop);

/* Whether two elements of a layout (sizes, strides in BYTES, elements of
 * itemsize bytes) share a byte: 1 when they do, 0 when no two do, -1 with a
 * MemoryError set when the exact check could not get its scratch memory.
 * See Note [Overlapping outputs] in strided.c. */
int dispatch_overlaps_itself(int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t itemsize);

#endif /* DISPATCH_STRIDED_H_ */
