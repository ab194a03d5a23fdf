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
 * "sum", "triad", "int_arith", "half_arith"): "AVX512_SKX", "FMA3__AVX2", "SSE42",
 * "baseline"; NULL for an unknown source. */
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
 * the vector width] in sources/kernels/sum.dispatch.c for the error bound. */
float dispatch_kernels_sum_f32(const char *p, intptr_t stride, intptr_t n);
/* The sum of n float16 (bits) `stride` bytes apart, in float32: the same
 * bits as dispatch_kernels_sum_f32 of their float32 copy, without making one. */
float dispatch_kernels_sum_f16(const char *p, intptr_t stride, intptr_t n);
double dispatch_kernels_sum_f64(const char *p, intptr_t stride, intptr_t n);
/* nrows of those sums at once: out + r * ostep (a float for f32 and f16, a
 * double for f64) is the sum of the n elements at p + r * rstep, `stride`
 * bytes apart; each row's bits are the single sum's (the kernel may read
 * two rows at a time: Note [Two streams] in sources/kernels/sum.dispatch.c). */
void dispatch_kernels_sum_rows_f32(const char *p, intptr_t rstep, intptr_t stride, intptr_t n,
                                   intptr_t nrows, char *out, intptr_t ostep);
void dispatch_kernels_sum_rows_f64(const char *p, intptr_t rstep, intptr_t stride, intptr_t n,
                                   intptr_t nrows, char *out, intptr_t ostep);
void dispatch_kernels_sum_rows_f16(const char *p, intptr_t rstep, intptr_t stride, intptr_t n,
                                   intptr_t nrows, char *out, intptr_t ostep);

/* Column reductions (Note [Column reductions] in sources/kernels/sum.dispatch.c):
 * out[c] for c < ncols is the reduction over rows r < nrows of the element at
 * p + r * rstride + c * itemsize (each row's ncols elements contiguous). op 0:
 * sum, pairwise over the rows in an order fixed by nrows (0 when nrows is 0),
 * with `scratch` room for dispatch_kernels_cols_scratch(nrows) * ncols
 * elements; 1: max, 2: min, NaN propagating (nrows >= 1; scratch unused).
 * The same bits on every target and for any split of the columns. */
void dispatch_kernels_cols_f32(int op, const char *p, intptr_t rstride, intptr_t nrows,
                               intptr_t ncols, float *out, void *scratch);
void dispatch_kernels_cols_f64(int op, const char *p, intptr_t rstride, intptr_t nrows,
                               intptr_t ncols, double *out, void *scratch);
/* The same over float16 rows (p: halves), into float32 out and scratch: the
 * bits of dispatch_kernels_cols_f32 over the rows' float32 copy. */
void dispatch_kernels_cols_f16(int op, const char *p, intptr_t rstride, intptr_t nrows,
                               intptr_t ncols, float *out, void *scratch);
/* The depth of the column sum's tree over nrows rows (leaves of 16). */
static inline int dispatch_kernels_cols_scratch(int64_t nrows)
{
    int d = 1;
    for (int64_t n = nrows; n > 16; n = (n / 16 + 1) / 2 * 16) d++;
    return d;
}

/* max (is_min 0) or min (1) of n >= 1 contiguous elements: the first
 * element equal to the extreme, so the first NaN, the first of -0.0/+0.0
 * (Note [Which zero, which NaN] in sources/kernels/sum.dispatch.c; the
 * column kernels above and the row kernels below answer the same way). */
float dispatch_kernels_extreme_f32(int is_min, const float *p, intptr_t n);
double dispatch_kernels_extreme_f64(int is_min, const double *p, intptr_t n);
/* nrows of those: out + r * ostep (a float, a double) is the max or min of
 * the n >= 1 contiguous elements at p + r * rstep (two rows may be read at
 * once: Note [Two streams] in sources/kernels/sum.dispatch.c). */
void dispatch_kernels_extreme_rows_f32(int is_min, const char *p, intptr_t rstep, intptr_t n,
                                       intptr_t nrows, char *out, intptr_t ostep);
void dispatch_kernels_extreme_rows_f64(int is_min, const char *p, intptr_t rstep, intptr_t n,
                                       intptr_t nrows, char *out, intptr_t ostep);
/* max (is_min 0) or min (1) of n >= 1 contiguous float16 (bits) into *r:
 * the first element equal to the extreme (Note [float16 max and min as
 * integers] in sources/kernels/sum.dispatch.c). 1, or 0 when one is NaN
 * (*r unset). */
int dispatch_kernels_extreme_f16(int is_min, const uint16_t *p, intptr_t n, uint16_t *r);

/* Integer and bool sum (op 0, into int64 accumulators, wrapping), max (1),
 * min (2) (into accumulators of the input's dtype) of nouter runs of n
 * elements step bytes apart, run o at p + o * outer_step: element i of run
 * o folded into the accumulator at acc + o * outer_acc_step + i * acc_step
 * (acc_step 0: the whole run into one; outer_acc_step 0 and contiguous
 * runs and accumulators: the rows of an outer-dim reduction, taken in
 * column blocks) (Note [Integer reductions] in int_arith.dispatch.c). -1
 * for another dtype. */
int dispatch_kernels_int_reduce(int op, int dtype, const char *p, intptr_t step, intptr_t n,
                                char *acc, intptr_t acc_step, intptr_t nouter,
                                intptr_t outer_step, intptr_t outer_acc_step);

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
