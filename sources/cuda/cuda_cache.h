/*
 * The caching device allocator's bookkeeping, in plain host C: size classes,
 * blocks kept on free and reused, the out-of-memory retry, the statistics.
 * The memory itself comes from a backend (cudaMalloc/cudaFree in
 * cuda_module.cu; a fake in test_cuda_cache.c, so that all of this is tested
 * on a machine without a GPU). See Note [Caching allocator] in cuda_cache.c.
 */
#ifndef DISPATCH_CUDA_CACHE_H_
#define DISPATCH_CUDA_CACHE_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dcu_backend {
    /* 0 and *ptr on success; otherwise the backend's error code (for CUDA a
     * cudaError_t) and oom set to 1 when it means "out of memory". */
    int (*raw_alloc)(void **ptr, size_t nbytes, int *oom, void *ctx);
    void (*raw_free)(void *ptr, void *ctx);
    /* "cudaErrorMemoryAllocation (2): out of memory" for a code. */
    const char *(*describe)(int code, void *ctx);
    void *ctx;
} dcu_backend;

/* The numbers memory_stats() shows. */
typedef struct dcu_stats {
    uint64_t allocated;      /* bytes in blocks handed out (rounded to their class) */
    uint64_t reserved;       /* allocated + cached: what the backend holds for us */
    uint64_t peak_allocated;
    uint64_t peak_reserved;
    uint64_t raw_allocs;     /* backend allocations (cudaMalloc calls) */
    uint64_t raw_frees;
    uint64_t cache_hits;     /* requests served from the cache */
    uint64_t oom_retries;    /* out of memory, cache emptied and retried */
    uint64_t active_blocks;
    uint64_t cached_blocks;
} dcu_stats;

typedef struct dcu_block dcu_block;

#define DCU_BUCKETS 256

typedef struct dcu_cache {
    pthread_mutex_t lock;
    dcu_backend backend;
    dcu_block *live[DCU_BUCKETS]; /* handed out, by pointer */
    dcu_block *free[DCU_BUCKETS]; /* cached, by size class */
    dcu_stats stats;
} dcu_cache;

/* The size class of a request: 512-byte steps below 1 MiB, 2 MiB steps above
 * (as PyTorch's caching allocator rounds). 0 when it would overflow. */
size_t dcu_size_class(size_t nbytes);

void dcu_cache_init(dcu_cache *c, const dcu_backend *backend);
/* A block of at least nbytes (0 bytes: a 512-byte block, never NULL on
 * success). NULL on failure with the reason in msg (asked, held, the
 * backend's error), after one retry with the cache emptied. */
void *dcu_cache_alloc(dcu_cache *c, size_t nbytes, char *msg, size_t msgcap);
/* Keep ptr's block for reuse. 0, or -1 when ptr is not ours (nothing done). */
int dcu_cache_free(dcu_cache *c, void *ptr);
/* Give every cached block back to the backend. */
void dcu_cache_empty(dcu_cache *c);
void dcu_cache_stats(dcu_cache *c, dcu_stats *out);
/* empty + free the bookkeeping; blocks still handed out are released too. */
void dcu_cache_destroy(dcu_cache *c);

#ifdef __cplusplus
}
#endif

#endif /* DISPATCH_CUDA_CACHE_H_ */
