/* dispatch_bench_noop_ns: the dispatcher's own overhead, measured in C. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"

static int noop_kernel(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                       dispatch_ivalue *rets, void *ctx) {
    (void)op, (void)ks, (void)args, (void)rets, (void)ctx;
    return 0;
}

static const dispatch_operator *noop_op;
static pthread_once_t noop_once = PTHREAD_ONCE_INIT;

static void define_noop(void) {
    const dispatch_operator *op = dispatch_def("_bench_noop(Tensor self) -> ()", "sources/dispatcher/bench.c");
    if (op && dispatch_impl("_bench_noop", DISPATCH_KEY_CPU, noop_kernel, NULL, "sources/dispatcher/bench.c") >= 0)
        noop_op = op;
}

double dispatch_bench_noop_ns(int64_t iterations) {
    pthread_once(&noop_once, define_noop);
    if (!noop_op) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME, "could not define the benchmark operator");
        return -1;
    }
    int64_t one = 1;
    dispatch_tensor *t = dispatch_tensor_empty(1, &one, DISPATCH_FLOAT32, DISPATCH_DEVICE_CPU);
    if (!t) return -1;
    dispatch_ivalue args[DISPATCH_MAX_ARGS], rets[DISPATCH_MAX_RETS];
    args[0].tag = DISPATCH_IV_TENSOR;
    args[0].v.t = t;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int64_t i = 0; i < iterations; i++) dispatch_call(noop_op, args, 1, rets);
    clock_gettime(CLOCK_MONOTONIC, &b);
    dispatch_tensor_decref(t);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    return iterations > 0 ? ns / (double)iterations : 0.0;
}

/* dispatch_bench_add_ns: one `a + b` on two float32 tensors of n elements,
 * result freed, timed in C: the whole call minus Python and cffi. */
double dispatch_bench_add_ns(int64_t n, int64_t iterations) {
    const dispatch_operator *add = dispatch_find_op("add.Tensor");
    if (!add) return -1;
    dispatch_tensor *a = dispatch_tensor_empty(1, &n, DISPATCH_FLOAT32, DISPATCH_DEVICE_CPU);
    dispatch_tensor *b = a ? dispatch_tensor_empty(1, &n, DISPATCH_FLOAT32, DISPATCH_DEVICE_CPU) : NULL;
    if (!b) {
        dispatch_tensor_decref(a);
        return -1;
    }
    for (int64_t i = 0; i < n; i++) ((float *)a->data)[i] = ((float *)b->data)[i] = (float)i;
    struct timespec t0, t1;
    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int64_t i = 0; i < iterations && rc == 0; i++) {
        dispatch_tensor *r = dispatch_call_tt(add, a, b);
        rc = r ? 0 : -1;
        dispatch_tensor_decref(r);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    dispatch_tensor_decref(a);
    dispatch_tensor_decref(b);
    if (rc) return -1;
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    return iterations > 0 ? ns / (double)iterations : 0.0;
}
