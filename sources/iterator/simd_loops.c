#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/*
 * The chooser of the SIMD kernels (the dispatchable sources in sources/kernels/): picks each
 * kernel's variant once, records it in the dispatch trace, and registers the
 * chosen loops in the loop table of loops.h. See kernels.h.
 *
 * Note [Choosing the kernels]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Each kernel source's generated `X.dispatch.h` redefines the callback macros
 * that DISPATCH_CPU_DISPATCH_CALL expands, so the file is laid out as one
 * block per source: include its header, declare its variants, define its
 * chooser. The choosers only test CPU features and store pointers: no SIMD
 * instruction runs until an operator calls a loop. They are registered with
 * dispatch_cpu_dispatch_register(), which runs them now and again after
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

#define NSLOT_DTYPES 5 /* float32, float64, int32, int64, float16 */
static _Atomic(dispatch_loop_fn) simd[DISPATCH_NUM_LOOPS][NSLOT_DTYPES];

typedef float (*sum_f32_fn)(const char *, intptr_t, intptr_t);
typedef double (*sum_f64_fn)(const char *, intptr_t, intptr_t);
typedef void (*triad_fn)(double *, const double *, const double *, double, intptr_t);
static _Atomic(sum_f32_fn) sum_f32;
static _Atomic(sum_f64_fn) sum_f64;
typedef void (*cols_f32_fn)(int, const char *, intptr_t, intptr_t, intptr_t, float *, void *);
typedef void (*cols_f64_fn)(int, const char *, intptr_t, intptr_t, intptr_t, double *, void *);
typedef float (*ext_f32_fn)(int, const float *, intptr_t);
typedef double (*ext_f64_fn)(int, const double *, intptr_t);
static _Atomic(cols_f32_fn) cols_f32;
static _Atomic(cols_f64_fn) cols_f64;
static _Atomic(ext_f32_fn) ext_f32;
static _Atomic(ext_f64_fn) ext_f64;
static _Atomic(triad_fn) triad;

enum { SRC_ARITH, SRC_EXP_LOG, SRC_ADDCMUL, SRC_SUM, SRC_TRIAD, SRC_INT_ARITH, SRC_HALF_ARITH,
       NSOURCES };
static const char *const source_names[NSOURCES] = {"arith", "exp_log", "addcmul", "sum", "triad",
                                                   "int_arith", "half_arith"};
static _Atomic(const char *) chosen[NSOURCES];

static int slot_of(int dtype)
{
    switch (dtype) {
    case DISPATCH_FLOAT32: return 0;
    case DISPATCH_FLOAT64: return 1;
    case DISPATCH_INT32: return 2;
    case DISPATCH_INT64: return 3;
    case DISPATCH_FLOAT16: return 4;
    default: return -1;
    }
}

static void set_loop(int loop, int dtype, dispatch_loop_fn fn)
{
    atomic_store(&simd[loop][slot_of(dtype)], fn);
    dispatch_loop_register(loop, dtype, fn);
}

#define LOOP_ARGS (char **data, const intptr_t *steps, intptr_t n, void *ctx)
#define DECLARE_LOOP(NAME) DISPATCH_CPU_DISPATCH_DECLARE(void NAME, LOOP_ARGS)
#define CHOOSE_LOOP(LOOP, DTYPE, NAME)                                         \
    do {                                                                       \
        set_loop(LOOP, DTYPE, DISPATCH_CPU_DISPATCH_CALL(NAME, ));             \
        DISPATCH_CPU_DISPATCH_TRACE(#NAME);                                    \
    } while (0)

/* ---------------------------------------------------------------- arith */
#include "arith.dispatch.h"
DECLARE_LOOP(dispatch_kernel_add_f32)
DECLARE_LOOP(dispatch_kernel_sub_f32)
DECLARE_LOOP(dispatch_kernel_mul_f32)
DECLARE_LOOP(dispatch_kernel_div_f32)
DECLARE_LOOP(dispatch_kernel_maximum_f32)
DECLARE_LOOP(dispatch_kernel_minimum_f32)
DECLARE_LOOP(dispatch_kernel_sqrt_f32)
DECLARE_LOOP(dispatch_kernel_add_f64)
DECLARE_LOOP(dispatch_kernel_sub_f64)
DECLARE_LOOP(dispatch_kernel_mul_f64)
DECLARE_LOOP(dispatch_kernel_div_f64)
DECLARE_LOOP(dispatch_kernel_maximum_f64)
DECLARE_LOOP(dispatch_kernel_minimum_f64)
DECLARE_LOOP(dispatch_kernel_sqrt_f64)

static void choose_arith(void)
{
    CHOOSE_LOOP(DISPATCH_LOOP_ADD, DISPATCH_FLOAT32, dispatch_kernel_add_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_SUB, DISPATCH_FLOAT32, dispatch_kernel_sub_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_MUL, DISPATCH_FLOAT32, dispatch_kernel_mul_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_DIV, DISPATCH_FLOAT32, dispatch_kernel_div_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_MAXIMUM, DISPATCH_FLOAT32, dispatch_kernel_maximum_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_MINIMUM, DISPATCH_FLOAT32, dispatch_kernel_minimum_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_SQRT, DISPATCH_FLOAT32, dispatch_kernel_sqrt_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_ADD, DISPATCH_FLOAT64, dispatch_kernel_add_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_SUB, DISPATCH_FLOAT64, dispatch_kernel_sub_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_MUL, DISPATCH_FLOAT64, dispatch_kernel_mul_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_DIV, DISPATCH_FLOAT64, dispatch_kernel_div_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_MAXIMUM, DISPATCH_FLOAT64, dispatch_kernel_maximum_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_MINIMUM, DISPATCH_FLOAT64, dispatch_kernel_minimum_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_SQRT, DISPATCH_FLOAT64, dispatch_kernel_sqrt_f64);
    atomic_store(&chosen[SRC_ARITH], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- exp_log */
#include "exp_log.dispatch.h"
DECLARE_LOOP(dispatch_kernel_exp_f32)
DECLARE_LOOP(dispatch_kernel_exp_f64)
DECLARE_LOOP(dispatch_kernel_log_f32)
DECLARE_LOOP(dispatch_kernel_log_f64)

static void choose_exp_log(void)
{
    CHOOSE_LOOP(DISPATCH_LOOP_EXP, DISPATCH_FLOAT32, dispatch_kernel_exp_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_EXP, DISPATCH_FLOAT64, dispatch_kernel_exp_f64);
    CHOOSE_LOOP(DISPATCH_LOOP_LOG, DISPATCH_FLOAT32, dispatch_kernel_log_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_LOG, DISPATCH_FLOAT64, dispatch_kernel_log_f64);
    atomic_store(&chosen[SRC_EXP_LOG], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- addcmul */
#include "addcmul.dispatch.h"
DECLARE_LOOP(dispatch_kernel_addcmul_f32)
DECLARE_LOOP(dispatch_kernel_addcmul_f64)

static void choose_addcmul(void)
{
    CHOOSE_LOOP(DISPATCH_LOOP_ADDCMUL, DISPATCH_FLOAT32, dispatch_kernel_addcmul_f32);
    CHOOSE_LOOP(DISPATCH_LOOP_ADDCMUL, DISPATCH_FLOAT64, dispatch_kernel_addcmul_f64);
    atomic_store(&chosen[SRC_ADDCMUL], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- sum */
#include "sum.dispatch.h"
DISPATCH_CPU_DISPATCH_DECLARE(float dispatch_kernel_sum_f32, (const char *p, intptr_t stride, intptr_t n))
DISPATCH_CPU_DISPATCH_DECLARE(double dispatch_kernel_sum_f64, (const char *p, intptr_t stride, intptr_t n))
DISPATCH_CPU_DISPATCH_DECLARE(void dispatch_kernel_sum_f32_cols,
                              (int op, const char *p, intptr_t rs, intptr_t nrows, intptr_t ncols,
                               float *out, void *scratch))
DISPATCH_CPU_DISPATCH_DECLARE(void dispatch_kernel_sum_f64_cols,
                              (int op, const char *p, intptr_t rs, intptr_t nrows, intptr_t ncols,
                               double *out, void *scratch))
DISPATCH_CPU_DISPATCH_DECLARE(float dispatch_kernel_sum_f32_ext,
                              (int is_min, const float *p, intptr_t n))
DISPATCH_CPU_DISPATCH_DECLARE(double dispatch_kernel_sum_f64_ext,
                              (int is_min, const double *p, intptr_t n))

static void choose_sum(void)
{
    atomic_store(&sum_f32, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f32, ));
    DISPATCH_CPU_DISPATCH_TRACE("dispatch_kernel_sum_f32");
    atomic_store(&sum_f64, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f64, ));
    DISPATCH_CPU_DISPATCH_TRACE("dispatch_kernel_sum_f64");
    atomic_store(&cols_f32, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f32_cols, ));
    atomic_store(&cols_f64, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f64_cols, ));
    atomic_store(&ext_f32, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f32_ext, ));
    atomic_store(&ext_f64, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_sum_f64_ext, ));
    atomic_store(&chosen[SRC_SUM], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- triad */
#include "triad.dispatch.h"
DISPATCH_CPU_DISPATCH_DECLARE(void dispatch_kernel_triad_f64,
                              (double *a, const double *b, const double *c, double s, intptr_t n))

static void choose_triad(void)
{
    atomic_store(&triad, DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_triad_f64, ));
    DISPATCH_CPU_DISPATCH_TRACE("dispatch_kernel_triad_f64");
    atomic_store(&chosen[SRC_TRIAD], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- int_arith */
#include "int_arith.dispatch.h"
DECLARE_LOOP(dispatch_kernel_add_i32)
DECLARE_LOOP(dispatch_kernel_sub_i32)
DECLARE_LOOP(dispatch_kernel_mul_i32)
DECLARE_LOOP(dispatch_kernel_maximum_i32)
DECLARE_LOOP(dispatch_kernel_minimum_i32)
DECLARE_LOOP(dispatch_kernel_add_i64)
DECLARE_LOOP(dispatch_kernel_sub_i64)
DECLARE_LOOP(dispatch_kernel_mul_i64)
DECLARE_LOOP(dispatch_kernel_maximum_i64)
DECLARE_LOOP(dispatch_kernel_minimum_i64)

static void choose_int_arith(void)
{
    CHOOSE_LOOP(DISPATCH_LOOP_ADD, DISPATCH_INT32, dispatch_kernel_add_i32);
    CHOOSE_LOOP(DISPATCH_LOOP_SUB, DISPATCH_INT32, dispatch_kernel_sub_i32);
    CHOOSE_LOOP(DISPATCH_LOOP_MUL, DISPATCH_INT32, dispatch_kernel_mul_i32);
    CHOOSE_LOOP(DISPATCH_LOOP_MAXIMUM, DISPATCH_INT32, dispatch_kernel_maximum_i32);
    CHOOSE_LOOP(DISPATCH_LOOP_MINIMUM, DISPATCH_INT32, dispatch_kernel_minimum_i32);
    CHOOSE_LOOP(DISPATCH_LOOP_ADD, DISPATCH_INT64, dispatch_kernel_add_i64);
    CHOOSE_LOOP(DISPATCH_LOOP_SUB, DISPATCH_INT64, dispatch_kernel_sub_i64);
    CHOOSE_LOOP(DISPATCH_LOOP_MUL, DISPATCH_INT64, dispatch_kernel_mul_i64);
    CHOOSE_LOOP(DISPATCH_LOOP_MAXIMUM, DISPATCH_INT64, dispatch_kernel_maximum_i64);
    CHOOSE_LOOP(DISPATCH_LOOP_MINIMUM, DISPATCH_INT64, dispatch_kernel_minimum_i64);
    atomic_store(&chosen[SRC_INT_ARITH], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- half_arith */
#include "half_arith.dispatch.h"
DECLARE_LOOP(dispatch_kernel_add_f16)
DECLARE_LOOP(dispatch_kernel_sub_f16)
DECLARE_LOOP(dispatch_kernel_mul_f16)
DECLARE_LOOP(dispatch_kernel_div_f16)
DECLARE_LOOP(dispatch_kernel_maximum_f16)
DECLARE_LOOP(dispatch_kernel_minimum_f16)
DECLARE_LOOP(dispatch_kernel_sqrt_f16)
DECLARE_LOOP(dispatch_kernel_mul_f16_f32scalar)
DECLARE_LOOP(dispatch_kernel_div_f16_f32scalar)
DECLARE_LOOP(dispatch_kernel_rdiv_f16_f32scalar)
static _Atomic(dispatch_loop_fn) half_scalar[3]; /* mul, div, rdiv */

static void choose_half_arith(void)
{
    CHOOSE_LOOP(DISPATCH_LOOP_ADD, DISPATCH_FLOAT16, dispatch_kernel_add_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_SUB, DISPATCH_FLOAT16, dispatch_kernel_sub_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_MUL, DISPATCH_FLOAT16, dispatch_kernel_mul_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_DIV, DISPATCH_FLOAT16, dispatch_kernel_div_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_MAXIMUM, DISPATCH_FLOAT16, dispatch_kernel_maximum_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_MINIMUM, DISPATCH_FLOAT16, dispatch_kernel_minimum_f16);
    CHOOSE_LOOP(DISPATCH_LOOP_SQRT, DISPATCH_FLOAT16, dispatch_kernel_sqrt_f16);
    atomic_store(&half_scalar[0], DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_mul_f16_f32scalar, ));
    atomic_store(&half_scalar[1], DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_div_f16_f32scalar, ));
    atomic_store(&half_scalar[2], DISPATCH_CPU_DISPATCH_CALL(dispatch_kernel_rdiv_f16_f32scalar, ));
    atomic_store(&chosen[SRC_HALF_ARITH], DISPATCH_CPU_DISPATCH_INFO());
}

/* ---------------------------------------------------------------- API */
static void choose_all(void)
{
    choose_arith();
    choose_exp_log();
    choose_addcmul();
    choose_sum();
    choose_triad();
    choose_int_arith();
    choose_half_arith();
}

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
        if (strcmp(source, source_names[i]) == 0) return atomic_load(&chosen[i]);
    }
    return NULL;
}

static dispatch_loop_fn lookup(int loop, int dtype)
{
    if (loop < 0 || loop >= DISPATCH_NUM_LOOPS || slot_of(dtype) < 0) return NULL;
    if (dispatch_kernels_simd_init() != 0) return NULL;
    return atomic_load_explicit(&simd[loop][slot_of(dtype)], memory_order_relaxed);
}

int dispatch_kernels_has(int loop, int dtype) { return lookup(loop, dtype) != NULL; }

int dispatch_kernels_run(int loop, int dtype, char **data, const intptr_t *steps, intptr_t n,
                         void *ctx)
{
    dispatch_loop_fn fn = lookup(loop, dtype);
    if (fn == NULL || data == NULL || steps == NULL || n < 0) return -1;
    if (ctx == NULL && (loop == DISPATCH_LOOP_ADDCMUL || loop == DISPATCH_LOOP_FILL)) return -1;
    fn(data, steps, n, ctx);
    return 0;
}

dispatch_loop_fn dispatch_kernels_half_scalar_loop(int which)
{
    if (which < 0 || which > 2 || dispatch_kernels_simd_init() != 0) return NULL;
    return atomic_load_explicit(&half_scalar[which], memory_order_relaxed);
}

float dispatch_kernels_sum_f32(const char *p, intptr_t stride, intptr_t n)
{
    dispatch_kernels_simd_init();
    return atomic_load_explicit(&sum_f32, memory_order_relaxed)(p, stride, n);
}

double dispatch_kernels_sum_f64(const char *p, intptr_t stride, intptr_t n)
{
    dispatch_kernels_simd_init();
    return atomic_load_explicit(&sum_f64, memory_order_relaxed)(p, stride, n);
}

void dispatch_kernels_cols_f32(int op, const char *p, intptr_t rstride, intptr_t nrows,
                               intptr_t ncols, float *out, void *scratch)
{
    dispatch_kernels_simd_init();
    atomic_load_explicit(&cols_f32, memory_order_relaxed)(op, p, rstride, nrows, ncols, out,
                                                            scratch);
}

void dispatch_kernels_cols_f64(int op, const char *p, intptr_t rstride, intptr_t nrows,
                               intptr_t ncols, double *out, void *scratch)
{
    dispatch_kernels_simd_init();
    atomic_load_explicit(&cols_f64, memory_order_relaxed)(op, p, rstride, nrows, ncols, out,
                                                            scratch);
}

float dispatch_kernels_extreme_f32(int is_min, const float *p, intptr_t n)
{
    dispatch_kernels_simd_init();
    return atomic_load_explicit(&ext_f32, memory_order_relaxed)(is_min, p, n);
}

double dispatch_kernels_extreme_f64(int is_min, const double *p, intptr_t n)
{
    dispatch_kernels_simd_init();
    return atomic_load_explicit(&ext_f64, memory_order_relaxed)(is_min, p, n);
}

void dispatch_kernels_triad_f64(double *a, const double *b, const double *c, double s, intptr_t n)
{
    dispatch_kernels_simd_init();
    atomic_load_explicit(&triad, memory_order_relaxed)(a, b, c, s, n);
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
        if (ctx == NULL && (loop == DISPATCH_LOOP_ADDCMUL || loop == DISPATCH_LOOP_FILL)) return -1;
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
