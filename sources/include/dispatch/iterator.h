/*
 * The elementwise engine (sources/iterator), in the manner of PyTorch's
 * TensorIterator, over raw strided operands: it needs no tensor object, so
 * the tensor operators and the tests (through cffi, on NumPy buffers) drive
 * it alike.
 *
 * An elementwise call runs one loop of loops.h over operands of any layout:
 *   - right-aligned broadcasting of the inputs to the output's shape (a
 *     broadcast dimension gets stride 0, so a scalar operand reaches the
 *     loop's stride-0 path);
 *   - dimensions reordered by the output's strides (innermost = smallest)
 *     and merged where every operand steps through them as one, so
 *     contiguous operands (in any common order) make one flat loop;
 *   - operands whose dtype differs from the loop's are cast chunk by chunk
 *     through small buffers (cast loops of loops.h), never per element and
 *     never as a whole temporary;
 *   - an input that overlaps the output in any other way than exactly (same
 *     address, same strides: in-place `a += b` is fine) is first copied, so
 *     results are what they would be with no overlap; an output that
 *     overlaps itself (a broadcast view) is rejected;
 *   - above DISPATCH_ITER_GRAIN elements the work is split across
 *     dispatch_get_num_threads() threads; elementwise results do not depend
 *     on the split.
 * Reductions are the other engine of this folder: dispatch/reduce_engine.h, which
 * includes this header (never the other way round: no include circle).
 *
 * Errors: -1 with dispatch_error_set() (error.h): ValueError for shapes,
 * TypeError for dtypes, MemoryError when a buffer cannot be allocated.
 */
#ifndef DISPATCH_ITERATOR_H_
#define DISPATCH_ITERATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "dispatch/loops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DISPATCH_ITER_MAX_DIMS 16
#define DISPATCH_ITER_MAX_OPERANDS 8
/* Elements below which a call runs on one thread (PyTorch's grain size). */
#define DISPATCH_ITER_GRAIN 32768
/* Elements per cast buffer. */
#define DISPATCH_ITER_CHUNK 1024

typedef struct dispatch_iter_operand {
    char *data;             /* address of element [0, ..., 0] */
    int ndim;
    const int64_t *shape;   /* ndim sizes */
    const int64_t *strides; /* ndim strides in bytes (may be 0 or negative) */
    int dtype;              /* dtype.h */
} dispatch_iter_operand;

/* ops[0] is the output, ops[1..nops-1] the inputs; ctx is passed through to
 * the loop. Operand k of the loop has dtype loop_dtypes[k] (a comparison
 * writes bool; WHERE reads a bool condition): an operand of any other dtype
 * is cast to or from it chunk by chunk. */
int dispatch_iter_elementwise_typed(dispatch_loop_fn loop, const int *loop_dtypes, int nops,
                                    const dispatch_iter_operand *ops, void *ctx);

/* The same with the loop looked up in the loop table (loops.h) by id:
 * TypeError when the pair has no loop, ValueError for a wrong operand count.
 * Operand dtypes follow dispatch_loop_operand_dtype() (loops.h). */
int dispatch_iter_elementwise_op(int loop, int loop_dtype, int nops,
                                 const dispatch_iter_operand *ops, void *ctx);

/* The host half of a device loop: broadcasting, the plan (strided.h) and
 * the output's self-overlap check, nothing walked; bit k of *overlapping set
 * for an input that overlaps the output other than exactly (copy it first).
 * 0, or -1 with the error set. */
struct dispatch_strided_plan;
int dispatch_iter_elementwise_plan(int nops, const dispatch_iter_operand *ops,
                                   struct dispatch_strided_plan *out, uint32_t *overlapping);

/* A device's elementwise loop (the CUDA module's dcu_elementwise): run loop
 * `loop` of dtype `dtype` over plan p, operand k of dtype dtypes[k] (the
 * loop's operand dtype is loop_dtypes[k]; another is converted on the way);
 * operands in scalar_mask are host values in their loop dtype at p->data[k];
 * ctx the loop's host scalar (alpha, value) or NULL. 0, or non-zero with a
 * message in err. */
typedef int (*dispatch_device_loop_fn)(int loop, int dtype,
                                       const struct dispatch_strided_plan *p, const int *dtypes,
                                       const int *loop_dtypes, uint32_t scalar_mask,
                                       const void *ctx, char *err, size_t errcap);
int dispatch_device_loop_register(int device, dispatch_device_loop_fn fn);

/* A device's byte copy (the CUDA module's dcu_copy_bytes), by direction:
 * host to device and device to host return when the bytes have arrived;
 * within the device the copy is queued on the device's stream and the host
 * does not wait. 0, or non-zero with a message in err. */
enum dispatch_memcpy_kind {
    DISPATCH_MEMCPY_HOST_TO_DEVICE = 1,
    DISPATCH_MEMCPY_DEVICE_TO_HOST = 2,
    DISPATCH_MEMCPY_DEVICE_TO_DEVICE = 3,
};
typedef int (*dispatch_device_memcpy_fn)(void *dst, const void *src, size_t nbytes, int kind,
                                         char *err, size_t errcap);
int dispatch_device_memcpy_register(int device, dispatch_device_memcpy_fn fn);
/* nbytes through device's registered copy: 0, or -1 with the error set
 * (RuntimeError when the device registered none, or its message). */
int dispatch_iter_device_memcpy(int device, void *dst, const void *src, size_t nbytes, int kind);

/* dispatch_iter_elementwise_op for operands in a device's memory: the same
 * broadcasting, plan, checks and loop table, the loop run by the device
 * (operands in scalar_mask are host values: 0-dim CPU tensors, numbers). An
 * input overlapping the output is copied on the device first. */
int dispatch_iter_device_op(int device, int loop, int loop_dtype, int nops,
                            const dispatch_iter_operand *ops, uint32_t scalar_mask, void *ctx);

/* The broadcast shape of n operands (right-aligned; sizes must match or be
 * 1). Writes *ndim and shape[DISPATCH_ITER_MAX_DIMS]; 0 or -1 (ValueError
 * naming the shapes). */
int dispatch_iter_broadcast_shape(int n, const dispatch_iter_operand *ops, int *ndim,
                                  int64_t *shape);

/* Threads used by the engine (>= 1; default: 1). set: 0, or -1 (ValueError)
 * for n < 1 or n > 256. */
int dispatch_set_num_threads(int64_t n);
int dispatch_get_num_threads(void);

/* The pool's view, for tests and reports (Note [Following the affinity mask]
 * in sources/iterator/parallel.c): the CPUs the calling thread of its last
 * parallel call could use (counted again at most once a millisecond), and
 * how long an idle worker now spins before it sleeps (0: the pool has more
 * threads than those CPUs, and workers do not spin). */
int dispatch_pool_usable_cpus(void);
int64_t dispatch_pool_worker_spin_ns(void);

/* Run fn(arg, begin, end) over [0, n) split in at most num_threads ranges of
 * at least `grain` elements (one call on this thread when n < 2 * grain or
 * one thread is set, or when called from inside a parallel region). Range
 * boundaries are multiples of `align` (>= 1). */
void dispatch_parallel_for(int64_t n, int64_t grain, int64_t align,
                           void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

/* dispatch_parallel_for's grain for units of `per_unit` elements each: units
 * enough to make DISPATCH_ITER_GRAIN elements (1 when one unit has them). */
static inline int64_t dispatch_parallel_grain(int64_t per_unit)
{
    return DISPATCH_ITER_GRAIN / (per_unit + 1) + 1;
}

#ifdef __cplusplus
}
#endif

#endif /* DISPATCH_ITERATOR_H_ */
