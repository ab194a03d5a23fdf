#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/*
 * The chooser of the SIMD kernels (the dispatchable sources in sources/kernels/): runs each
 * source's chooser, which picks its table of kernels for this CPU and records
 * it in the dispatch trace, and registers the chosen loops in the loop table
 * of loops.h and the chosen reductions in the reduction engine's kernel
 * table (dispatch/reduce_kernel_table.h). See kernels.h.
 *
 * Note [Choosing the kernels]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Every source exports a table of (loop, dtype, function) and named kernels
 * per target, and a chooser (Note [Exported kernel tables] in
 * kernels_export.h); the sources are meson's loop_kernel_sources, listed in
 * the generated kernels_sources.h. This file walks them: nothing here names a
 * kernel. The choosers only test CPU features and store pointers: no SIMD
 * instruction runs until an operator calls a loop. choose_all is registered
 * with dispatch_cpu_dispatch_register(), which runs it now and again after
 * dispatch_cpu_redetect_for_tests(); the pointers are atomics so a re-choice
 * is seen by the next call.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"
#include "dispatch/dtype.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"
#include "dispatch/reduce_kernel_table.h"
#include "kernels_export.h"
#include "kernels_sources.h" /* generated: DISPATCH_KERNELS_FORALL_SOURCES(X) */

#define DECLARE_CHOOSER_(SOURCE) \
    const char *dispatch_kernels_choose_##SOURCE(const dispatch_kernel_export **table); \
    void dispatch_kernels_all_##SOURCE(dispatch_kernel_tables *all);
DISPATCH_KERNELS_FORALL_SOURCES(DECLARE_CHOOSER_)
#undef DECLARE_CHOOSER_

static const struct {
    const char *name;
    dispatch_kernels_chooser choose;
    dispatch_kernels_collector all;
} sources[] = {
#define SOURCE_ENTRY_(SOURCE) {#SOURCE, dispatch_kernels_choose_##SOURCE, dispatch_kernels_all_##SOURCE},
    DISPATCH_KERNELS_FORALL_SOURCES(SOURCE_ENTRY_)
#undef SOURCE_ENTRY_
};
enum { NSOURCES = sizeof sources / sizeof sources[0] };

static _Atomic(const char *) chosen[NSOURCES];
static _Atomic(dispatch_loop_fn) simd[DISPATCH_NUM_LOOPS][DISPATCH_NUM_DTYPES];
static _Atomic(dispatch_kernel_any_fn) named[DISPATCH_KERNELS_NUM_NAMED];

static void choose_all(void)
{
    for (int s = 0; s < NSOURCES; s++) {
        const dispatch_kernel_export *table = NULL;
        const char *target = sources[s].choose(&table);
        for (const dispatch_kernel_export *e = table; e && e->fn != NULL; e++) {
            if (e->loop >= 0 && e->loop < DISPATCH_NUM_LOOPS && dispatch_dtype_is_valid(e->dtype)) {
                /* a generated entry of a pair without a loop stays empty */
                if (!dispatch_loop_supported(e->loop, e->dtype)) continue;
                dispatch_loop_fn fn = (dispatch_loop_fn)e->fn;
                atomic_store(&simd[e->loop][e->dtype], fn);
                /* with its 2-D loop, or none: a later source's loop of the
                 * pair never runs beside an earlier one's form */
                dispatch_loop_register2d(e->loop, e->dtype, fn, (dispatch_loop2d_fn)e->fn2d);
            } else if (e->loop == DISPATCH_KERNELS_CAST_ENTRY) {
                dispatch_cast_loop_register(e->dtype, e->named, (dispatch_loop_fn)e->fn);
            } else if (e->loop == DISPATCH_KERNELS_REDUCE_ENTRY) {
                dispatch_reduce_kernel_register(e->named, e->dtype, (dispatch_reduce_kernel_fn)e->fn);
            } else if (e->loop < 0 && e->named >= 0 && e->named < DISPATCH_KERNELS_NUM_NAMED) {
                atomic_store(&named[e->named], e->fn);
            }
        }
        atomic_store(&chosen[s], target);
    }
    /* The float16 <-> float32 casts (copy_, .to(), float16 reductions) of
     * half_arith, where its chosen target has them (F16C); elsewhere
     * cast_loops' stand (a scalar cast here took 2.7 ns an element on an
     * SSE4.2 CPU, where cast_loops' vectors take 0.1). */
    dispatch_loop_fn f16_f32 = (dispatch_loop_fn)atomic_load(&named[DISPATCH_KNAMED_CAST_F16_F32]);
    dispatch_loop_fn f32_f16 = (dispatch_loop_fn)atomic_load(&named[DISPATCH_KNAMED_CAST_F32_F16]);
    if (f16_f32) dispatch_cast_loop_register(DISPATCH_FLOAT16, DISPATCH_FLOAT32, f16_f32);
    if (f32_f16) dispatch_cast_loop_register(DISPATCH_FLOAT32, DISPATCH_FLOAT16, f32_f16);
}

/* The chosen named kernel, cast back to its own type T by the caller. */
#define NAMED(N, T) ((T)atomic_load_explicit(&named[DISPATCH_KNAMED_##N], memory_order_relaxed))

typedef void (*triad_fn)(double *, const double *, const double *, double, intptr_t);

/* ---------------------------------------------------------------- API */
static atomic_int init_state; /* 0 not yet, 1 running, 2 done, -1 failed */

int dispatch_kernels_simd_init(void)
{
    int st = atomic_load_explicit(&init_state, memory_order_acquire);
    if (st == 2) return 0;
    if (dispatch_cpu_init() != 0) return -1;
    int expected = 0;
    if (atomic_compare_exchange_strong(&init_state, &expected, 1)) {
        dispatch_cpu_dispatch_register(choose_all); /* runs choose_all now */
        atomic_store_explicit(&init_state, 2, memory_order_release);
        return 0;
    }
    while (atomic_load_explicit(&init_state, memory_order_acquire) != 2) {
        /* another thread is choosing: a few microseconds */
    }
    return 0;
}

const char *dispatch_kernels_chosen(const char *source)
{
    if (dispatch_kernels_simd_init() != 0 || source == NULL) return NULL;
    for (int i = 0; i < NSOURCES; i++) {
        if (strcmp(source, sources[i].name) == 0) return atomic_load(&chosen[i]);
    }
    return NULL;
}

const char *dispatch_kernels_source_name(int i)
{
    return i >= 0 && i < NSOURCES ? sources[i].name : NULL;
}

int dispatch_kernels_target_tables(int i, dispatch_kernel_tables *all)
{
    if (i < 0 || i >= NSOURCES || all == NULL || dispatch_kernels_simd_init() != 0) return -1;
    sources[i].all(all);
    return all->count;
}

static dispatch_loop_fn lookup(int loop, int dtype)
{
    if (loop < 0 || loop >= DISPATCH_NUM_LOOPS || !dispatch_dtype_is_valid(dtype)) return NULL;
    if (dispatch_kernels_simd_init() != 0) return NULL;
    return atomic_load_explicit(&simd[loop][dtype], memory_order_relaxed);
}

int dispatch_kernels_has(int loop, int dtype) { return lookup(loop, dtype) != NULL; }

int dispatch_kernels_run(int loop, int dtype, char **data, const intptr_t *steps, intptr_t n,
                         void *ctx)
{
    dispatch_loop_fn fn = lookup(loop, dtype);
    if (fn == NULL || data == NULL || steps == NULL || n < 0) return -1;
    if (ctx == NULL && dispatch_loop_ctx_kind(loop) == DISPATCH_LOOP_CTX_REQUIRED) return -1;
    fn(data, steps, n, ctx);
    return 0;
}

dispatch_loop_fn dispatch_kernels_half_scalar_loop(int which)
{
    if (which < 0 || which > 2 || dispatch_kernels_simd_init() != 0) return NULL;
    return (dispatch_loop_fn)atomic_load_explicit(&named[DISPATCH_KNAMED_HALF_MUL_F32SCALAR + which],
                                                  memory_order_relaxed);
}

/* The two sums Python and the benchmarks call by name: the engine's SUM
 * kernels (dispatch/reduce_kernel_table.h). */
float dispatch_kernels_sum_f32(const char *p, intptr_t stride, intptr_t n)
{
    return ((dispatch_rk_sum_f32_fn)dispatch_reduce_kernel_get(DISPATCH_RK_SUM, DISPATCH_FLOAT32))(
        p, stride, n);
}

double dispatch_kernels_sum_f64(const char *p, intptr_t stride, intptr_t n)
{
    return ((dispatch_rk_sum_f64_fn)dispatch_reduce_kernel_get(DISPATCH_RK_SUM, DISPATCH_FLOAT64))(
        p, stride, n);
}

void dispatch_kernels_triad_f64(double *a, const double *b, const double *c, double s, intptr_t n)
{
    dispatch_kernels_simd_init();
    NAMED(TRIAD_F64, triad_fn)(a, b, c, s, n);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int dispatch_kernels_time(int loop, int dtype, char **data, const intptr_t *steps, intptr_t n,
                          void *ctx, intptr_t reps, int rounds, double *out)
{
    double t[64];
    dispatch_loop_fn fn = NULL;
    if (rounds < 1 || rounds > 64 || reps < 1) return -1;
    if (data == NULL || steps == NULL || out == NULL || n < 0) return -1;
    if (dispatch_kernels_simd_init() != 0) return -1;
    if (loop >= 0) {
        fn = lookup(loop, dtype);
        if (fn == NULL) return -1;
        if (ctx == NULL && dispatch_loop_ctx_kind(loop) == DISPATCH_LOOP_CTX_REQUIRED) return -1;
    } else if (loop == -1) { /* the sums read float32 or float64, nothing else */
        if (dtype != DISPATCH_FLOAT32 && dtype != DISPATCH_FLOAT64) return -1;
    } else if (loop == -2) { /* the triad: float64, s in *ctx */
        if (dtype != DISPATCH_FLOAT64 || ctx == NULL) return -1;
    } else {
        return -1;
    }
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (intptr_t i = 0; i < reps; i++) {
            if (fn) {
                fn(data, steps, n, ctx);
            } else if (loop == -1 && dtype == DISPATCH_FLOAT32) {
                float s = dispatch_kernels_sum_f32(data[1], steps[1], n);
                memcpy(data[0], &s, sizeof s);
            } else if (loop == -1) {
                double s = dispatch_kernels_sum_f64(data[1], steps[1], n);
                memcpy(data[0], &s, sizeof s);
            } else {
                dispatch_kernels_triad_f64((double *)data[0], (const double *)data[1],
                                           (const double *)data[2], *(const double *)ctx, n);
            }
        }
        t[r] = (now_ns() - t0) / (double)reps;
    }
    qsort(t, (size_t)rounds, sizeof t[0], cmp_double);
    out[0] = t[0];
    out[1] = t[rounds / 2];
    return 0;
}
