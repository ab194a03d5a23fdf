/*
 * The SIMD kernels of sources/kernels/ (the dispatchable sources), chosen once per process.
 *
 * dispatch_kernels_simd_init() picks, for every dispatchable kernel source,
 * the highest target the running CPU supports (after the
 * DISPATCH_*_CPU_FEATURES overrides), records each choice in the dispatch
 * trace (cpu_runtime.h), and registers the chosen float32/float64 loops in
 * the loop table of loops.h, where the tensor operators find them. It is
 * idempotent and thread-safe; every other function here runs it first.
 * Nothing SIMD runs before it is called (no static initializers).
 */
#ifndef DISPATCH_KERNELS_H_
#define DISPATCH_KERNELS_H_

#include <stdint.h>

#include "dispatch/loops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -1 when the CPU runtime failed (dispatch_cpu_error() says why). */
int dispatch_kernels_simd_init(void);

/* The target chosen for a kernel source ("arith", "exp_log", "addcmul",
 * "sum", "triad", "int_arith", "int_reduce", "half_arith", ...): "AVX512_SKX",
 * "FMA3__AVX2", "SSE42", "baseline"; NULL for an unknown source. */
const char *dispatch_kernels_chosen(const char *source);
/* The name of kernel source i (0, 1, ... in meson's loop_kernel_sources
 * order); NULL past the last. */
const char *dispatch_kernels_source_name(int i);

/* Run the chosen SIMD loop for (loop, dtype) of loops.h on raw buffers
 * (same arguments as a dispatch_loop_fn). Returns 0, or -1 when there is no
 * SIMD kernel for the pair (float32/float64: add, sub, mul, div, maximum,
 * minimum, sqrt, exp, log, addcmul; int32/int64: add, sub, mul, maximum,
 * minimum), when data or steps is NULL or n < 0, or when ctx is NULL for a
 * loop that requires it (DISPATCH_LOOP_CTX_REQUIRED: addcmul, fill). The buffers themselves cannot be checked
 * here: dispatch/kernels.py checks lengths, dtypes and writability. */
int dispatch_kernels_run(int loop, int dtype, char **data, const intptr_t *steps,
                         intptr_t n, void *ctx);

/* 1 when (loop, dtype) has a SIMD kernel, else 0. */
int dispatch_kernels_has(int loop, int dtype);

/* float16 x by a float32 scalar s, in float, rounded once (PyTorch's float16
 * mul/div by a scalar): which = 0: x * s, 1: x / s, 2: s / x. A loop over
 * data = {out, x} (both float16) with ctx a const float *s; NULL when which
 * is out of range or the kernels failed to initialise. */
dispatch_loop_fn dispatch_kernels_half_scalar_loop(int which);

/* Blocked pairwise sum of n elements `stride` bytes apart; the same bits on
 * every target, layout and thread count. See Note [Sum order independent of
 * the vector width] in sources/kernels/sum.dispatch.c for the error bound.
 * The SUM kernels of the reduction kernel table (dispatch/reduce_kernel_table.h), by
 * name for Python (dispatch.kernels.sum) and the benchmarks; the engine
 * reaches every reduction kernel through the table of reduce_kernel_table.h. */
float dispatch_kernels_sum_f32(const char *p, intptr_t stride, intptr_t n);
double dispatch_kernels_sum_f64(const char *p, intptr_t stride, intptr_t n);

/* STREAM triad a = b + s*c (tools/bench/run.py's bandwidth yardstick). */
void dispatch_kernels_triad_f64(double *a, const double *b, const double *c, double s,
                                intptr_t n);

/* Benchmark helper: call the chosen loop `reps` times back to back and
 * return the best and the median time of one call in nanoseconds over
 * `rounds` rounds (out[0] = min, out[1] = median). loop = -1 times the sum
 * of data[1] (result stored to data[0]), loop = -2 the triad (data = {a, b,
 * c}, ctx: const double *s). Returns 0, or -1 for a pair without a kernel,
 * rounds > 64, a sum of a dtype other than float32/float64, a triad that is
 * not float64 or has no ctx, or the NULL and n checks of dispatch_kernels_run. */
int dispatch_kernels_time(int loop, int dtype, char **data, const intptr_t *steps,
                          intptr_t n, void *ctx, intptr_t reps, int rounds, double *out);

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_KERNELS_H_ */
