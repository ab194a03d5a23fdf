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
 * Reductions (sum, mean, max, min over any set of dims, keepdim or not) use
 * the pairwise SIMD sum; their results are the same bits for any number of
 * threads and any input layout. See Note [Deterministic reductions] in
 * sources/iterator/iterator.c.
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

/* dispatch_iter_elementwise_op for operands in a device's memory: the same
 * broadcasting, plan, checks and loop table, the loop run by the device
 * (operands in scalar_mask are host values: 0-dim CPU tensors, numbers). An
 * input overlapping the output is copied on the device first. */
int dispatch_iter_device_op(int device, int loop, int loop_dtype, int nops,
                            const dispatch_iter_operand *ops, uint32_t scalar_mask, void *ctx);

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

/* The broadcast shape of n operands (right-aligned; sizes must match or be
 * 1). Writes *ndim and shape[DISPATCH_ITER_MAX_DIMS]; 0 or -1 (ValueError
 * naming the shapes). */
int dispatch_iter_broadcast_shape(int n, const dispatch_iter_operand *ops, int *ndim,
                                  int64_t *shape);

/* X(NAME, name) per reduction, in id order (Python reads them from C through
 * dispatch_reduce_name). max and min propagate NaN. */
#define DISPATCH_FORALL_REDUCTIONS(X) X(SUM, "sum") X(MEAN, "mean") X(MAX, "max") X(MIN, "min")

enum dispatch_reduce_op {
#define DISPATCH_REDUCE_ENUM_(NAME, name) DISPATCH_REDUCE_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_ENUM_)
#undef DISPATCH_REDUCE_ENUM_
    DISPATCH_NUM_REDUCTIONS
};

/* "sum", ...; NULL out of range. */
static inline const char *dispatch_reduce_name(int op)
{
    static const char *const names[] = {
#define DISPATCH_REDUCE_NAME_(NAME, name) name,
        DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_NAME_)
#undef DISPATCH_REDUCE_NAME_
    };
    return op >= 0 && op < DISPATCH_NUM_REDUCTIONS ? names[op] : NULL;
}

/* The kernels' op number of a reduction (dispatch/kernels.h: 0 sum, which
 * mean also runs, 1 max, 2 min). */
static inline int dispatch_reduce_kernel_op(int op)
{
    return op == DISPATCH_REDUCE_MAX ? 1 : op == DISPATCH_REDUCE_MIN ? 2 : 0;
}

/* Reduce `in` (float32 or float64) over the dims whose bit is set in
 * dim_mask (all dims: (1 << ndim) - 1) into `out`, which has in's dtype and
 * the reduced shape: with keepdim the reduced dims are present with size 1,
 * without they are dropped (out's strides are taken as given either way).
 * max/min of an empty set is a ValueError; sum is 0 and mean NaN. */
int dispatch_iter_reduce(int op, const dispatch_iter_operand *in, uint32_t dim_mask,
                         int keepdim, const dispatch_iter_operand *out);

/* The one check of a reduction's arguments (Note [One reduction check] in
 * iterator.c): op, the reduced dims, the result's shape and the count of
 * elements reduced per output. The dims are either *dim_mask (dims NULL) or
 * the list dims[0..ndims) (negative dims wrap; ndims 0 means all dims;
 * written to *dim_mask). Writes *out_ndim, out_shape[DISPATCH_ITER_MAX_DIMS]
 * and *count; 0, or -1 with the error set. opname NULL: the engine's
 * messages; else PyTorch's, naming the operator (max/min of nothing is then
 * a RuntimeError, not a ValueError). */
int dispatch_iter_reduce_check(const char *opname, int op, int ndim, const int64_t *shape,
                               int ndims, const int64_t *dims, uint32_t *dim_mask, int keepdim,
                               int *out_ndim, int64_t *out_shape, int64_t *count);

/* The sum of n >= 1 contiguous float16 (bits) in float32, its top levels
 * split across the threads along the kernel's own tree (as a float32 sum
 * over one output is): dispatch_kernels_sum_f16's bits for any count. */
float dispatch_iter_sum_f16(const uint16_t *p, int64_t n);

/* Threads used by the engine (>= 1; default: 1). set: 0, or -1 (ValueError)
 * for n < 1 or n > 256. */
int dispatch_set_num_threads(int64_t n);
int dispatch_get_num_threads(void);

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
