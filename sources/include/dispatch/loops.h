/*
 * The inner-loop interface between the operators (sources/dispatcher) and the
 * elementwise engine + SIMD kernels (sources/iterator, sources/kernels).
 *
 * A loop runs one operation on n elements of one dtype:
 *
 *   void loop(char **data, const intptr_t *byte_strides, intptr_t n, void *ctx);
 *
 *   data[0]          the output, data[1..nin] the inputs (outputs first, as in
 *                    PyTorch's TensorIterator);
 *   byte_strides[i]  the step of operand i in bytes (0 for a broadcast operand);
 *   ctx              per-call extra data, described per loop below, else NULL.
 *
 * Operands all have the loop's dtype except where noted (comparisons write
 * bool; WHERE reads a bool condition). Integer arithmetic wraps (two's
 * complement) and never traps; floats follow IEEE (maximum/minimum propagate
 * NaN).
 *
 * Every (loop, dtype) slot starts with the portable strided loop of
 * sources/core/cpu_loops_reference.c. A faster implementation replaces one
 * with dispatch_loop_register() (e.g. once, at load, with the SIMD variant
 * the CPU dispatch chose); operators look the pointer up per call, so the
 * replacement takes effect at once. See Note [Loop table] in
 * sources/core/loops.c.
 */
#ifndef DISPATCH_LOOPS_H_
#define DISPATCH_LOOPS_H_

#include <stdint.h>

typedef void (*dispatch_loop_fn)(char **data, const intptr_t *byte_strides, intptr_t n, void *ctx);

typedef enum dispatch_loop_id {
    /* binary: out = f(a, b) */
    DISPATCH_LOOP_ADD = 0, /* out = a + alpha * b; ctx: const T *alpha, or NULL for 1 */
    DISPATCH_LOOP_SUB,     /* out = a - alpha * b; ctx as ADD */
    DISPATCH_LOOP_MUL,
    DISPATCH_LOOP_DIV,     /* true division; floating dtypes only */
    DISPATCH_LOOP_MAXIMUM,
    DISPATCH_LOOP_MINIMUM,
    /* comparisons: out is bool, a and b are T */
    DISPATCH_LOOP_EQ,
    DISPATCH_LOOP_NE,
    DISPATCH_LOOP_LT,
    DISPATCH_LOOP_LE,
    DISPATCH_LOOP_GT,
    DISPATCH_LOOP_GE,
    /* unary: out = f(a) */
    DISPATCH_LOOP_NEG,
    DISPATCH_LOOP_ABS,
    DISPATCH_LOOP_SQRT, /* floating dtypes only (likewise EXP, LOG) */
    DISPATCH_LOOP_EXP,
    DISPATCH_LOOP_LOG,
    DISPATCH_LOOP_COPY, /* out = a */
    /* out = self + value * t1 * t2 (data[1..3] = self, t1, t2); ctx: const T *value */
    DISPATCH_LOOP_ADDCMUL,
    /* out = cond ? a : b (data[1] = bool cond, data[2] = a, data[3] = b) */
    DISPATCH_LOOP_WHERE,
    /* out = value, no inputs; ctx: const T *value */
    DISPATCH_LOOP_FILL,
    DISPATCH_NUM_LOOPS,
} dispatch_loop_id;

/* Number of inputs of a loop (ADD: 2, NEG: 1, ADDCMUL: 3, WHERE: 3, FILL: 0). */
int dispatch_loop_nin(int loop);
const char *dispatch_loop_name(int loop);
/* The dtype of operand k (0 = output) of `loop` run for `dtype`: bool for a
 * comparison's output and WHERE's condition, else dtype itself. */
int dispatch_loop_operand_dtype(int loop, int k, int dtype);

/* The loop for (loop, dtype), or NULL when the pair is not supported (e.g.
 * SQRT on int32, NEG on bool). */
dispatch_loop_fn dispatch_loop_get(int loop, int dtype);
/* Replace the loop for (loop, dtype); returns the previous one. Thread-safe. */
dispatch_loop_fn dispatch_loop_register(int loop, int dtype, dispatch_loop_fn fn);
/* The portable reference loop of the pair (what dispatch_loop_get returns
 * until someone registers another); NULL when unsupported. */
dispatch_loop_fn dispatch_loop_reference(int loop, int dtype);

/* Cast loops: data[0] is dst (dtype `to`), data[1] is src (dtype `from`).
 * Float -> integer of an out-of-range value gives an unspecified value, not UB. */
dispatch_loop_fn dispatch_cast_loop_get(int from, int to);
dispatch_loop_fn dispatch_cast_loop_register(int from, int to, dispatch_loop_fn fn);

#endif /* DISPATCH_LOOPS_H_ */
