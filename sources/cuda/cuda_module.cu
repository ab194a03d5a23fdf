/*
 * dispatch/_cuda: the CUDA half of the runtime, a plain C-ABI shared library
 * that dispatch/cuda.py loads with ctypes on the first CUDA use (never at
 * `import dispatch`). The CUDA runtime is linked statically: the installed
 * package needs only the NVIDIA driver (libcuda, which cudart dlopens itself
 * on its first call).
 *
 * Every CUDA call goes through CHECK: a failure returns the cudaError_t and
 * leaves "operation: cudaErrorName (N): string" in this thread's message
 * (dcu_last_error), which Python raises as a RuntimeError.
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda_cache.h"
#include "cuda_device_types.cuh"
#include "dispatch/storage.h"


static thread_local char last_error[1024];

static const char *describe_code(int code) {
    static thread_local char buf[512];
    cudaError_t e = (cudaError_t)code;
    snprintf(buf, sizeof buf, "%s (%d): %s", cudaGetErrorName(e), code, cudaGetErrorString(e));
    return buf;
}

static int fail(cudaError_t e, const char *op) {
    snprintf(last_error, sizeof last_error, "%s: %s", op, describe_code((int)e));
    (void)cudaGetLastError(); /* clear the sticky-free error state */
    return (int)e;
}

#define CHECK(call)                                   \
    do {                                              \
        cudaError_t e_ = (call);                      \
        if (e_ != cudaSuccess) return fail(e_, #call); \
    } while (0)

DCU_API const char *dcu_last_error(void) { return last_error; }
DCU_API const char *dcu_error_name(int code) { return cudaGetErrorName((cudaError_t)code); }
DCU_API const char *dcu_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }

DCU_API int dcu_runtime_version(int *v) {
    CHECK(cudaRuntimeGetVersion(v));
    return 0;
}

DCU_API int dcu_driver_version(int *v) {
    CHECK(cudaDriverGetVersion(v));
    return 0;
}

DCU_API int dcu_device_count(int *n) {
    *n = 0;
    CHECK(cudaGetDeviceCount(n));
    return 0;
}

DCU_API int dcu_device_properties(int dev, char *name, size_t namecap, int *major, int *minor,
                                   size_t *total_memory) {
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    snprintf(name, namecap, "%s", p.name);
    *major = p.major;
    *minor = p.minor;
    *total_memory = p.totalGlobalMem;
    return 0;
}

DCU_API int dcu_set_device(int dev) {
    CHECK(cudaSetDevice(dev));
    return 0;
}

DCU_API int dcu_synchronize(void) {
    CHECK(cudaDeviceSynchronize());
    return 0;
}

/* kind: 1 host to device, 2 device to host, 3 device to device. Synchronous
 * with respect to the host (cudaMemcpy on the default stream). */
DCU_API int dcu_memcpy(void *dst, const void *src, size_t nbytes, int kind) {
    if (nbytes == 0) return 0;
    cudaMemcpyKind k = kind == 1 ? cudaMemcpyHostToDevice
                       : kind == 2 ? cudaMemcpyDeviceToHost
                                   : cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy(dst, src, nbytes, k));
    return 0;
}

/* The runtime's byte copy (dispatch_device_memcpy_fn, registered by
 * dispatch/cuda.py; Note [Copies that touch a device] in
 * sources/dispatcher/device_copy.c). Within the device: queued on the legacy
 * default stream, where all of this runtime's work goes, and the host does
 * not wait (cudaMemcpyAsync); to or from the host: cudaMemcpy, which returns
 * when the bytes have arrived (the host's buffer may be pageable and freed
 * right after). */
DCU_API int dcu_copy_bytes(void *dst, const void *src, size_t nbytes, int kind, char *err,
                           size_t errcap) {
    if (nbytes == 0) return 0;
    cudaError_t e;
    const char *op;
    if (kind == 3) {
        op = "cudaMemcpyAsync(device to device)";
        e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, 0);
    } else if (kind == 1 || kind == 2) {
        op = kind == 1 ? "cudaMemcpy(host to device)" : "cudaMemcpy(device to host)";
        e = cudaMemcpy(dst, src, nbytes,
                       kind == 1 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    } else {
        snprintf(err, errcap, "dcu_copy_bytes: unknown kind %d", kind);
        return 1;
    }
    if (e != cudaSuccess) {
        snprintf(err, errcap, "%s of %zu bytes: %s", op, nbytes, describe_code((int)e));
        (void)cudaGetLastError();
        return (int)e;
    }
    return 0;
}

DCU_API int dcu_memset(void *dst, int value, size_t nbytes) {
    if (nbytes == 0) return 0;
    CHECK(cudaMemset(dst, value, nbytes));
    return 0;
}

/* DLPack's stream handshake (dispatch/cuda.py dlpack_stream resolves the
 * consumer's stream argument): make `stream` wait for all work queued so far
 * on the legacy default stream, where this runtime works, without blocking
 * the host: an event recorded there and waited on by that stream. DLPack
 * numbers the CUDA streams as CUDA does: 1 is cudaStreamLegacy, 2
 * cudaStreamPerThread, anything else a cudaStream_t. The event can go at once:
 * the wait was queued already. */
DCU_API int dcu_stream_wait_legacy(uintptr_t stream) {
    cudaEvent_t event;
    CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    const char *op = "cudaEventRecord(event, cudaStreamLegacy)";
    cudaError_t e = cudaEventRecord(event, cudaStreamLegacy);
    if (e == cudaSuccess) {
        op = "cudaStreamWaitEvent(consumer stream, event, 0)";
        e = cudaStreamWaitEvent((cudaStream_t)stream, event, 0);
    }
    cudaError_t d = cudaEventDestroy(event);
    if (e != cudaSuccess) return fail(e, op);
    if (d != cudaSuccess) return fail(d, "cudaEventDestroy(event)");
    return 0;
}

/* The kernel every build carries: it writes the architecture its code was
 * compiled for, so the report can say whether the device runs its own SASS
 * or PTX the driver compiled (and it gives the fatbinary an entry per arch). */
__global__ void dcu_arch_kernel(int *out) {
#ifdef __CUDA_ARCH__
    *out = __CUDA_ARCH__;
#endif
}

DCU_API int dcu_kernel_arch(int *arch) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, dcu_arch_kernel));
    int *d = NULL;
    CHECK(cudaMalloc(&d, sizeof(int)));
    dcu_arch_kernel<<<1, 1>>>(d);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpy(arch, d, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    if (e != cudaSuccess) return fail(e, "dcu_arch_kernel<<<1, 1>>>");
    return 0;
}

/* ---- the caching allocator over cudaMalloc/cudaFree -------------------- */

static int raw_alloc(void **ptr, size_t nbytes, int *oom, void *ctx) {
    (void)ctx;
    cudaError_t e = cudaMalloc(ptr, nbytes);
    if (e != cudaSuccess) {
        *oom = e == cudaErrorMemoryAllocation;
        (void)cudaGetLastError();
        return (int)e;
    }
    return 0;
}

static void raw_free(void *ptr, void *ctx) {
    (void)ctx;
    cudaError_t e = cudaFree(ptr);
    if (e != cudaSuccess) fail(e, "cudaFree");
}

static const char *backend_describe(int code, void *ctx) {
    (void)ctx;
    return describe_code(code);
}

static dcu_cache cache;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_init(void) {
    dcu_backend b = {raw_alloc, raw_free, backend_describe, NULL};
    dcu_cache_init(&cache, &b);
}

static void *device_alloc(size_t nbytes, void *ctx) {
    (void)ctx;
    pthread_once(&cache_once, cache_init);
    return dcu_cache_alloc(&cache, nbytes, last_error, sizeof last_error);
}

static void device_free(void *ptr, void *ctx) {
    (void)ctx;
    if (ptr) (void)dcu_cache_free(&cache, ptr);
}

static const char *device_failure(void *ctx) {
    (void)ctx;
    return last_error;
}

static const dispatch_allocator device_allocator = {"cuda", device_alloc, device_free, NULL,
                                                    device_failure};

/* What dispatch/cuda.py registers in the device allocator table. */
DCU_API const dispatch_allocator *dcu_allocator(void) { return &device_allocator; }

DCU_API void dcu_memory_stats(dcu_stats *out) {
    pthread_once(&cache_once, cache_init);
    dcu_cache_stats(&cache, out);
}

DCU_API void dcu_empty_cache(void) {
    pthread_once(&cache_once, cache_init);
    dcu_cache_empty(&cache);
}
