/*
 * The chosen SIMD loops against the portable reference loops, in C: every
 * (loop, dtype) that has a kernel, on contiguous, strided and broadcast
 * operands with ragged tails and special values. + - * / max min sqrt and
 * the integer and float16 loops must give the reference's bits (any NaN
 * matches any NaN); exp/log/log1p stay within 2 ulp of the C library,
 * expm1 within 3 and tanh within 5 (their bounds plus the library's).
 *
 * It runs natively (the x86 variants this CPU picks) and, cross-compiled,
 * under qemu-aarch64 (tests/test_cross_aarch64.py), where it checks the
 * ASIMD code of sources/kernels/simd.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"
#include "dispatch/reduce_kernel_table.h"

/* The engine's kernel of (KIND, DTYPE) as its type T (dispatch/reduce_kernel_table.h). */
#define RK(KIND, DTYPE, T) ((T)dispatch_reduce_kernel_get(DISPATCH_RK_##KIND, DISPATCH_##DTYPE))

#define N 1037 /* not a multiple of any vector width */

static int failures, checked;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A value for lane i: mostly ordinary, some special. */
static double value(int i, int positive) {
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, -1e-40,
                                      1e300, 3.0, -2.5};
    double x;
    if (i % 17 == 3) x = special[(next() >> 8) % 10];
    else x = ldexp((double)(next() >> 11) * 0x1p-53 - 0.5, (int)(next() % 40) - 20);
    return positive ? fabs(x) : x;
}

static void fill(int dtype, char *p, int n, int positive) {
    for (int i = 0; i < n; i++) {
        double x = value(i, positive);
        switch (dtype) {
        case DISPATCH_FLOAT32: ((float *)p)[i] = (float)x; break;
        case DISPATCH_FLOAT64: ((double *)p)[i] = x; break;
        case DISPATCH_FLOAT16: ((uint16_t *)p)[i] = dispatch_half_bits_from_double(x); break;
        case DISPATCH_INT32: ((int32_t *)p)[i] = (int32_t)next(); break;
        default: ((int64_t *)p)[i] = (int64_t)next(); break;
        }
    }
}

static double as_double(int dtype, const char *p) {
    switch (dtype) {
    case DISPATCH_FLOAT32: return *(const float *)p;
    case DISPATCH_FLOAT64: return *(const double *)p;
    default: return dispatch_half_bits_to_float(*(const uint16_t *)p);
    }
}

/* The bits of one float16/32/64 as an integer. Read at its own width: a
 * narrow memcpy into an int64_t fills its high bytes on big-endian s390x
 * (1 ulp read as 2^32 there). */
static int64_t bits_of(const char *p, size_t isz) {
    if (isz == 2) { uint16_t v; memcpy(&v, p, 2); return v; }
    if (isz == 4) { uint32_t v; memcpy(&v, p, 4); return v; }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Whether a and b agree: the same bits, both NaN, or (ulps > 0) at most
 * ulps representable values apart. */
static int agree(int dtype, const char *a, const char *b, int ulps) {
    size_t isz = dispatch_dtype_itemsize(dtype);
    if (memcmp(a, b, isz) == 0) return 1;
    if (dtype == DISPATCH_INT32 || dtype == DISPATCH_INT64) return 0;
    double x = as_double(dtype, a), y = as_double(dtype, b);
    if (isnan(x) && isnan(y)) return 1;
    if (!ulps || isnan(x) || isnan(y) || signbit(x) != signbit(y)) return 0;
    return llabs(bits_of(a, isz) - bits_of(b, isz)) <= ulps;
}

static void check(int loop, int dtype, int ulps) {
    if (!dispatch_kernels_has(loop, dtype)) return;
    checked++;
    int nin = dispatch_loop_nin(loop);
    size_t isz = dispatch_dtype_itemsize(dtype);
    int positive = loop == DISPATCH_LOOP_SQRT || loop == DISPATCH_LOOP_LOG;
    char *in[3], *got = malloc(2 * N * isz), *want = malloc(2 * N * isz);
    for (int k = 0; k < nin; k++) {
        in[k] = malloc(2 * N * isz);
        fill(dtype, in[k], 2 * N, positive);
    }
    char value_buf[8] = {0};
    void *ctx = NULL;
    if (loop == DISPATCH_LOOP_ADDCMUL || loop == DISPATCH_LOOP_SUB) { /* value / alpha */
        fill(dtype, value_buf, 1, 0);
        ctx = value_buf;
    }
    dispatch_loop_fn ref = dispatch_loop_reference(loop, dtype);
    /* layouts: contiguous; every operand strided by 2; input 1 broadcast */
    for (int layout = 0; layout < 3; layout++) {
        intptr_t step = (intptr_t)isz * (layout == 1 ? 2 : 1);
        for (int n = 0; n <= N; n += n < 40 ? 1 : 331) {
            char *dg[4] = {got}, *dw[4] = {want};
            intptr_t st[4] = {step};
            for (int k = 0; k < nin; k++) {
                dg[1 + k] = dw[1 + k] = in[k];
                st[1 + k] = layout == 2 && k == 0 ? 0 : step;
            }
            memset(got, 0, 2 * N * isz);
            memset(want, 0, 2 * N * isz);
            if (dispatch_kernels_run(loop, dtype, dg, st, n, ctx) != 0) {
                printf("FAIL %s/%s: no kernel ran\n", dispatch_loop_name(loop),
                       dispatch_dtype_name(dtype));
                failures++;
                goto done;
            }
            ref(dw, st, n, ctx);
            for (int i = 0; i < n; i++) {
                if (!agree(dtype, got + i * step, want + i * step, ulps)) {
                    if (failures++ < 20)
                        printf("FAIL %s/%s layout %d n %d lane %d: %.17g, reference %.17g\n",
                               dispatch_loop_name(loop), dispatch_dtype_name(dtype), layout, n,
                               i, dtype >= DISPATCH_FLOAT16 ? as_double(dtype, got + i * step) : 0,
                               dtype >= DISPATCH_FLOAT16 ? as_double(dtype, want + i * step) : 0);
                    break;
                }
            }
        }
    }
done:
    for (int k = 0; k < nin; k++) free(in[k]);
    free(got);
    free(want);
}

/* The pairwise sum: within its error bound of the exact sum, and the same
 * bits for the same values read contiguously or with a stride. */
static void check_sum(void) {
    for (int n = 0; n < 70000; n = n * 3 + 1) {
        float *f = malloc(sizeof(float) * (size_t)n * 3 + 4);
        double *d = malloc(sizeof(double) * (size_t)n * 3 + 8);
        long double exact_f = 0, exact_d = 0, abs_f = 0, abs_d = 0;
        for (int i = 0; i < n; i++) {
            double x = value(i, 0);
            if (!isfinite(x) || fabs(x) > 1e30) x = 1.5;
            f[i] = (float)x;
            d[i] = x;
            exact_f += f[i], abs_f += fabsl((long double)f[i]);
            exact_d += d[i], abs_d += fabsl((long double)d[i]);
        }
        for (int i = 0; i < n; i++) f[n + 2 * i] = f[i], d[n + 2 * i] = d[i];
        float sf = dispatch_kernels_sum_f32((const char *)f, 4, n);
        double sd = dispatch_kernels_sum_f64((const char *)d, 8, n);
        float sf2 = dispatch_kernels_sum_f32((const char *)(f + n), 8, n);
        double sd2 = dispatch_kernels_sum_f64((const char *)(d + n), 16, n);
        /* Higham's bound with depth h <= 64 (Note in sum.dispatch.c) */
        /* bfloat16 (f's top halves): the float32 kernel's bits on the widened copy */
        uint16_t *bh = malloc(sizeof(uint16_t) * (size_t)n + 2);
        float *bw = malloc(sizeof(float) * (size_t)n + 4);
        for (int i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &f[i], 4);
            bh[i] = (uint16_t)(u >> 16), u &= 0xffff0000u;
            memcpy(&bw[i], &u, 4);
        }
        float sb = RK(SUM, BFLOAT16, dispatch_rk_sum_f32_fn)((const char *)bh, 2, n);
        float sbw = dispatch_kernels_sum_f32((const char *)bw, 4, n);
        int bf_ok = memcmp(&sb, &sbw, 4) == 0;
        free(bh), free(bw);
        int ok = bf_ok && fabsl(sf - exact_f) <= 64 * 0x1p-24L * abs_f &&
                 fabsl(sd - exact_d) <= 64 * 0x1p-53L * abs_d &&
                 memcmp(&sf, &sf2, 4) == 0 && memcmp(&sd, &sd2, 8) == 0;
        checked++;
        if (!ok && failures++ < 20)
            printf("FAIL sum n %d: %.9g (strided %.9g) vs %.9Lg; %.17g (strided %.17g) vs %.17Lg\n",
                   n, sf, sf2, exact_f, sd, sd2, exact_d);
        free(f);
        free(d);
    }
}

/* max/min answer with the first element equal to the extreme: the first
 * NaN with its bits, the first of -0.0/+0.0 (Note [Which zero, which NaN]
 * in sum.dispatch.c), contiguous, as rows and as columns, at every length
 * class (the vector passes, two streams, the tail). */
static int extremes_checked;

static void check_extremes(void) {
    static const int lengths[] = {1, 2, 7, 64, 65, 257, 1037, 4099, 70001};
    for (int li = 0; li < 9; li++) {
        int n = lengths[li];
        /* n elements, then the two row results at [n] and [n + 1] */
        float *f = malloc(sizeof(float) * ((size_t)n * 2 + 2));
        double *d = malloc(sizeof(double) * ((size_t)n * 2 + 2));
        uint16_t *h = malloc(sizeof(uint16_t) * (size_t)n);
        uint16_t *hb = malloc(sizeof(uint16_t) * (size_t)n); /* the same as bfloat16 */
        for (int trial = 0; trial < 6; trial++) {
            int first = (int)(next() % (uint64_t)n), nan = trial >= 4;
            for (int i = 0; i < n; i++) { /* zeros of random signs, or -1 before `first` */
                double x = i < first ? (trial & 1 ? 1.0 : -1.0) : ((next() >> 9) & 1 ? -0.0 : 0.0);
                if (nan && i >= first) x = (double)(i % 5) - 2.0;
                f[i] = (float)x, d[i] = x;
                h[i] = (uint16_t)(x == 0 ? (signbit(x) ? 0x8000 : 0) : x < 0 ? 0xbc00 : 0x3c00);
                hb[i] = (uint16_t)(x == 0 ? (signbit(x) ? 0x8000 : 0) : x < 0 ? 0xbf80 : 0x3f80);
            }
            if (nan) { /* two NaNs of other bits: the first must answer */
                uint32_t b32 = trial == 4 ? 0xffc01234u : 0x7fc00077u;
                uint64_t b64 = trial == 4 ? 0xfff8000000001234ull : 0x7ff8000000000077ull;
                memcpy(&f[first], &b32, 4), memcpy(&d[first], &b64, 8);
                int later = first + (n - first) / 2;
                if (later > first) f[later] = NAN, d[later] = NAN;
            }
            for (int is_min = 0; is_min < 2; is_min++) {
                /* the reference: first NaN, else the first element equal to the extreme */
                int at = -1;
                for (int i = 0; i < n && at < 0; i++)
                    if (d[i] != d[i]) at = i;
                if (at < 0) {
                    at = 0;
                    for (int i = 1; i < n; i++)
                        if (is_min ? d[i] < d[at] : d[i] > d[at]) at = i;
                }
                float gf = RK(EXT, FLOAT32, dispatch_rk_ext_f32_fn)(is_min, f, n), rf;
                double gd = RK(EXT, FLOAT64, dispatch_rk_ext_f64_fn)(is_min, d, n), rd;
                RK(EXT_ROWS, FLOAT32, dispatch_rk_ext_rows_fn)(is_min, (const char *)f, 0, 4, n, 2,
                                                  (char *)&f[n],
                                                  4);
                RK(EXT_ROWS, FLOAT64, dispatch_rk_ext_rows_fn)(is_min, (const char *)d, 0, 8, n, 2,
                                                  (char *)&d[n],
                                                  8);
                int ok = memcmp(&gf, &f[at], 4) == 0 && memcmp(&gd, &d[at], 8) == 0 &&
                         memcmp(&f[n], &f[at], 4) == 0 && memcmp(&d[n], &d[at], 8) == 0;
                /* as one column of n rows */
                RK(COLS, FLOAT32, dispatch_rk_cols_f32_fn)(1 + is_min, (const char *)f, 4, n, 1, &rf, NULL);
                RK(COLS, FLOAT64, dispatch_rk_cols_f64_fn)(1 + is_min, (const char *)d, 8, n, 1, &rd, NULL);
                ok = ok && memcmp(&rf, &f[at], 4) == 0 && memcmp(&rd, &d[at], 8) == 0;
                uint16_t rh;
                if (!nan) ok = ok && RK(EXT, FLOAT16, dispatch_rk_ext_f16_fn)(is_min, h, n, &rh) && rh == h[at];
                if (!nan) ok = ok && RK(EXT, BFLOAT16, dispatch_rk_ext_f16_fn)(is_min, hb, n, &rh) && rh == hb[at];
                extremes_checked++;
                if (!ok && failures++ < 20)
                    printf("FAIL %s n %d trial %d: want element %d\n", is_min ? "min" : "max", n,
                           trial, at);
            }
        }
        free(f), free(d), free(h), free(hb);
    }
}

/* The integer kernels' product (op DISPATCH_COMBINE_MUL, Note [Integer
 * reductions] in int_reduce.dispatch.c): against a scalar wrapping int64
 * product, as one run, strided, as rows of columns (acc_step 8) and as runs
 * (nouter, outer_acc_step 8), at lengths around the lanes and the blocks. */
static int int_prods_checked;

#define CHECK_INT_PROD(T, DT)                                                              \
    do {                                                                                   \
        dispatch_rk_int_fn fn = RK(INT, DT, dispatch_rk_int_fn);                           \
        T *x = malloc(sizeof(T) * (size_t)n * 2 + sizeof(T));                              \
        uint64_t *acc = malloc(8 * (size_t)n + 8), want = 1, ws = 1, one;                  \
        for (int i = 0; i < 2 * n; i++) x[i] = (T)((next() >> 20) % 5 == 0 ? -1 : 2 * (int)(next() % 50) + 1); \
        for (int i = 0; i < n; i++) want *= (uint64_t)(int64_t)x[i];                       \
        for (int i = 0; i < n; i++) ws *= (uint64_t)(int64_t)x[2 * i];                     \
        one = 1;                                                                           \
        int ok = fn(DISPATCH_COMBINE_MUL, DISPATCH_##DT, (const char *)x, sizeof(T), n,    \
                    (char *)&one, 0, 1, 0, 0) == 0 && one == want;                         \
        one = 1;                                                                           \
        fn(DISPATCH_COMBINE_MUL, DISPATCH_##DT, (const char *)x, 2 * sizeof(T), n,         \
           (char *)&one, 0, 1, 0, 0);                                                      \
        ok = ok && one == ws;                                                              \
        /* two rows of n columns: column c is x[c] * x[n + c] */                          \
        for (int c = 0; c < n; c++) acc[c] = 1;                                            \
        fn(DISPATCH_COMBINE_MUL, DISPATCH_##DT, (const char *)x, sizeof(T), n, (char *)acc, \
           8, 2, n * (intptr_t)sizeof(T), 0);                                              \
        for (int c = 0; c < n && ok; c++)                                                  \
            ok = acc[c] == (uint64_t)(int64_t)x[c] * (uint64_t)(int64_t)x[n + c];          \
        /* two runs of n, each into its own accumulator */                                \
        acc[0] = acc[1] = 1;                                                               \
        fn(DISPATCH_COMBINE_MUL, DISPATCH_##DT, (const char *)x, sizeof(T), n, (char *)acc, \
           0, 2, n * (intptr_t)sizeof(T), 8);                                              \
        uint64_t w2 = 1;                                                                   \
        for (int i = n; i < 2 * n; i++) w2 *= (uint64_t)(int64_t)x[i];                     \
        ok = ok && acc[0] == want && acc[1] == w2;                                         \
        int_prods_checked++;                                                               \
        if (!ok && failures++ < 20) printf("FAIL int prod %s n %d\n", #DT, n);             \
        free(x), free(acc);                                                                \
    } while (0)

static void check_int_prod(void) {
    static const int lengths[] = {1, 5, 31, 32, 33, 100, 1000, 4099};
    for (int li = 0; li < 8; li++) {
        int n = lengths[li];
        CHECK_INT_PROD(int8_t, INT8);
        CHECK_INT_PROD(int16_t, INT16);
        CHECK_INT_PROD(int32_t, INT32);
        CHECK_INT_PROD(int64_t, INT64);
    }
}

int main(void) {
    if (dispatch_kernels_simd_init() != 0) {
        printf("FAIL: the kernels did not initialise\n");
        return 1;
    }
    static const char *const sources[] = {"arith", "exp_log", "addcmul", "int_arith",
                                          "int_reduce", "half_arith"};
    for (int s = 0; s < 6; s++)
        printf("%-10s %s\n", sources[s], dispatch_kernels_chosen(sources[s]));
    static const int exact[] = {DISPATCH_LOOP_ADD, DISPATCH_LOOP_SUB, DISPATCH_LOOP_MUL,
                                DISPATCH_LOOP_DIV, DISPATCH_LOOP_MAXIMUM, DISPATCH_LOOP_MINIMUM,
                                DISPATCH_LOOP_SQRT};
    static const int dtypes[] = {DISPATCH_FLOAT16, DISPATCH_FLOAT32, DISPATCH_FLOAT64,
                                 DISPATCH_INT32, DISPATCH_INT64};
    for (int d = 0; d < 5; d++) {
        for (int l = 0; l < 7; l++) check(exact[l], dtypes[d], 0);
    }
    /* addcmul is a + v*b*c without fusing: exact too; the others: their
     * documented bound (exp_log.dispatch.c) plus libm's, rounded up */
    check(DISPATCH_LOOP_ADDCMUL, DISPATCH_FLOAT16, 0); /* half_arith's float path */
    for (int d = 1; d < 3; d++) {
        check(DISPATCH_LOOP_ADDCMUL, dtypes[d], 0);
        check(DISPATCH_LOOP_EXP, dtypes[d], 2);
        check(DISPATCH_LOOP_LOG, dtypes[d], 2);
        check(DISPATCH_LOOP_EXPM1, dtypes[d], 3);
        check(DISPATCH_LOOP_LOG1P, dtypes[d], 2);
        check(DISPATCH_LOOP_TANH, dtypes[d], 5);
    }
    int loops = checked;
    check_sum();
    printf("%d (loop, dtype) kernels and %d sums checked\n", loops, checked - loops);
    check_extremes();
    printf("%d max/min answers checked for the first equal element\n", extremes_checked);
    check_int_prod();
    printf("%d integer products checked\n", int_prods_checked);
    if (int_prods_checked != 32) {
        printf("FAIL: the integer products did not all run\n");
        failures++;
    }
    if (loops != 44) { /* 7 x f16/f32/f64 + 5 x i32/i64 + 6 float loops x f32/f64 + f16 addcmul */
        printf("FAIL: fewer kernels than expected\n");
        failures++;
    }
    printf(failures ? "%d failures\n" : "ok\n", failures);
    return failures != 0;
}
