/*
 * The host entry of the CUDA reductions (dcu_reduce); the kernels and the
 * rules they keep are in cuda_reduce.cuh, instantiated by the shards.
 */
#include "cuda_reduce.cuh"

#include <pthread.h>

#define DCR_SIZE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) size,
static constexpr int kItemsize[] = {DISPATCH_FORALL_DTYPES(DCR_SIZE_)};

thread_local char dcu_reduce_error[512];
static dcr_record last_reduce;

/* The counters of Note [One launch per reduction], per device: DCR_MAX_BLOCKS
 * of them (a split plan has at most that many block columns: the plan's C
 * test checks it), allocated once through the caching allocator (which
 * empties its cache and retries when the device is full), zeroed once on
 * the legacy stream before any kernel reads them, each put back to 0 by the
 * kernel that counted on it, never freed: no launch can hold a pointer to
 * counters that went away. */
#define DCR_MAX_DEVICES 64
static unsigned *counters[DCR_MAX_DEVICES];
static pthread_mutex_t counters_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned *cuda_failed(const char *what, cudaError_t e) {
    snprintf(dcu_reduce_error, sizeof dcu_reduce_error, "%s: %s (%d): %s", what, cudaGetErrorName(e),
             (int)e, cudaGetErrorString(e));
    (void)cudaGetLastError(); /* not this thread's next launch's error */
    return nullptr;
}

unsigned *dcr_counters(int64_t n) {
    if (n > DCR_MAX_BLOCKS) {
        snprintf(dcu_reduce_error, sizeof dcu_reduce_error,
                 "a split reduction of %lld block columns: the plan allows at most %d",
                 (long long)n, DCR_MAX_BLOCKS);
        return nullptr;
    }
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_failed("cudaGetDevice", e);
    if (dev < 0 || dev >= DCR_MAX_DEVICES) {
        snprintf(dcu_reduce_error, sizeof dcu_reduce_error,
                 "CUDA device %d: reductions support devices 0 to %d", dev, DCR_MAX_DEVICES - 1);
        return nullptr;
    }
    pthread_mutex_lock(&counters_lock);
    unsigned *ptr = counters[dev];
    if (!ptr) {
        const dispatch_allocator *al = dcu_allocator();
        size_t bytes = (size_t)DCR_MAX_BLOCKS * sizeof(unsigned);
        ptr = (unsigned *)al->alloc(bytes, al->ctx);
        if (!ptr) {
            snprintf(dcu_reduce_error, sizeof dcu_reduce_error,
                     "out of CUDA memory for the reductions' %zu-byte counters", bytes);
        } else if ((e = cudaMemsetAsync(ptr, 0, bytes, 0)) != cudaSuccess) {
            al->free(ptr, al->ctx);
            ptr = cuda_failed("cudaMemsetAsync (the reduction counters)", e);
        } else {
            counters[dev] = ptr;
        }
    }
    pthread_mutex_unlock(&counters_lock);
    return ptr;
}

/* Each shard's table (cuda_reduce_shard.cu); Note [CUDA shards]. */
DCU_SHARD_TABLES(run_table, dcr_shard)

/*
 * The device reduction the host calls (dispatch_device_reduce_fn,
 * dispatch/reduce_engine.h): op a dispatch_reduce_op whose row of the reduction
 * table (dispatch/reduction_table.h) says CUDA computes it (sum, mean, max, min) of the
 * input (dtype, data, ndim dims of shape and byte strides) over the dims in
 * mask into out (contiguous over the kept dims, out_dtype: the input's, or
 * int64 for an integer sum), indices (contiguous int64, or NULL) the
 * position of max/min among the reduced elements. 0, or -1 with err set.
 */
DCU_API int dcu_reduce(int op, int dtype, const char *in, int ndim, const int64_t *shape,
                       const int64_t *strides, uint32_t mask, int out_dtype, char *out,
                       int64_t *indices, char *err, size_t errcap) {
    if (op < 0 || op >= DISPATCH_NUM_REDUCTIONS || dtype < 0 || dtype >= DISPATCH_NUM_DTYPES) {
        snprintf(err, errcap, "dcu_reduce: unknown reduction %d or dtype %d", op, dtype);
        return -1;
    }
    int kop = dispatch_reduce_kernel_op(op);
    if (!dispatch_reduce_on_cuda(op) || kop < 0 || kop >= DCR_NUM_COMBINES) {
        snprintf(err, errcap, "%s is not implemented for CUDA tensors (its row of "
                 "dispatch/reduction_table.h has no CUDA kernel); reduce a .cpu() copy",
                 dispatch_reduce_name(op));
        return -1;
    }
    RArgs a; /* dcr_plan_make fills a.p */
    a.partial = nullptr, a.counters = nullptr;
    if (dcr_plan_make(&a.p, ndim, shape, strides, mask, kItemsize[dtype],
                      (uintptr_t)in, err, errcap) < 0)
        return -1;
    a.in = in, a.out = out, a.idx = indices;
    a.mean = dispatch_reduce_is_mean(op);
    a.out_int64 = out_dtype == DISPATCH_INT64 && dtype != DISPATCH_INT64;
    last_reduce = dcr_record{a.p.path, a.p.vec,   a.p.tpo,  a.p.splits,
                             a.p.nout, a.p.count, a.p.lanes, a.p.ctpo,
                             dcr_blocks_x(&a.p) * a.p.splits, a.p.launches, 0};
    if (a.p.nout == 0) return 0;
    if ((*shards[dtype % DCU_SHARDS])[dtype][kop](a) < 0) {
        snprintf(err, errcap, "%s", dcu_reduce_error);
        return -1;
    }
    return 0;
}

/* What the last CUDA reduction chose. */
DCU_API void dcu_last_reduce(dcr_record *out) { *out = last_reduce; }
