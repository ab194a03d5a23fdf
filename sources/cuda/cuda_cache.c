/* The caching device allocator's bookkeeping; see cuda_cache.h. */
#include "cuda_cache.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * Note [Caching allocator]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * cudaMalloc and cudaFree are slow (cudaFree synchronizes the device), so,
 * as PyTorch does, a freed block is not given back: it is kept under its size
 * class and the next request of that class takes it without a cudaMalloc.
 * Requests are rounded up to their class (512 bytes below 1 MiB, 2 MiB above),
 * so the same tensor shape always lands in the same class. Blocks are never
 * split or merged (PyTorch does both; this is the simple first step). When
 * the backend is out of memory, every cached block is given back and the
 * request tried once more; if that fails too, the message says what was
 * asked, what this process holds (allocated and cached) and the backend's
 * error. One mutex guards everything: an allocation is a short critical
 * section next to a kernel launch.
 */
struct dcu_block {
    void *ptr;
    size_t size; /* the size class */
    dcu_block *next;
};

#define SMALL_LIMIT ((size_t)1 << 20)
#define SMALL_STEP ((size_t)512)
#define LARGE_STEP ((size_t)2 << 20)

size_t dcu_size_class(size_t nbytes) {
    size_t step = nbytes < SMALL_LIMIT ? SMALL_STEP : LARGE_STEP;
    size_t r;
    if (nbytes == 0) return SMALL_STEP;
    if (__builtin_add_overflow(nbytes, step - 1, &r)) return 0;
    return r / step * step;
}

static size_t hash_ptr(const void *p) {
    uintptr_t v = (uintptr_t)p >> 9;
    return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 56) % DCU_BUCKETS;
}

static size_t hash_size(size_t n) { return (size_t)((n / SMALL_STEP * 0x9E3779B97F4A7C15ull) >> 56) % DCU_BUCKETS; }

static void bump_peaks(dcu_stats *s) {
    if (s->allocated > s->peak_allocated) s->peak_allocated = s->allocated;
    if (s->reserved > s->peak_reserved) s->peak_reserved = s->reserved;
}

void dcu_cache_init(dcu_cache *c, const dcu_backend *backend) {
    pthread_mutex_init(&c->lock, NULL);
    c->backend = *backend;
    for (int i = 0; i < DCU_BUCKETS; i++) c->live[i] = c->free[i] = NULL;
    c->stats = (dcu_stats){0};
}

/* Cached blocks back to the backend. Lock held. */
static void empty_locked(dcu_cache *c) {
    for (int i = 0; i < DCU_BUCKETS; i++) {
        dcu_block *b = c->free[i];
        c->free[i] = NULL;
        while (b) {
            dcu_block *next = b->next;
            c->backend.raw_free(b->ptr, c->backend.ctx);
            c->stats.raw_frees++;
            c->stats.reserved -= b->size;
            c->stats.cached_blocks--;
            free(b);
            b = next;
        }
    }
}

void *dcu_cache_alloc(dcu_cache *c, size_t nbytes, char *msg, size_t msgcap) {
    size_t size = dcu_size_class(nbytes);
    if (size == 0) {
        snprintf(msg, msgcap, "cannot allocate %zu bytes on the device (too large)", nbytes);
        return NULL;
    }
    dcu_block *b = malloc(sizeof *b);
    if (!b) {
        snprintf(msg, msgcap, "out of host memory for the allocator's bookkeeping");
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    dcu_block **pp = &c->free[hash_size(size)];
    while (*pp && (*pp)->size != size) pp = &(*pp)->next;
    if (*pp) { /* a cached block of this class: no backend call */
        dcu_block *hit = *pp;
        *pp = hit->next;
        free(b);
        b = hit;
        c->stats.cache_hits++;
        c->stats.cached_blocks--;
    } else {
        void *ptr = NULL;
        int oom = 0;
        int err = c->backend.raw_alloc(&ptr, size, &oom, c->backend.ctx);
        if (err && oom) {
            empty_locked(c);
            c->stats.oom_retries++;
            oom = 0;
            err = c->backend.raw_alloc(&ptr, size, &oom, c->backend.ctx);
        }
        if (err) {
            const char *why = c->backend.describe(err, c->backend.ctx);
            if (oom)
                snprintf(msg, msgcap,
                         "CUDA out of memory: tried to allocate %zu bytes (%zu with rounding); "
                         "this process holds %llu bytes allocated and %llu cached, the cache "
                         "was emptied and the allocation retried once (%s)",
                         nbytes, size, (unsigned long long)c->stats.allocated,
                         (unsigned long long)(c->stats.reserved - c->stats.allocated), why);
            else
                snprintf(msg, msgcap, "cudaMalloc(%zu bytes) failed: %s", size, why);
            pthread_mutex_unlock(&c->lock);
            free(b);
            return NULL;
        }
        b->ptr = ptr;
        b->size = size;
        c->stats.raw_allocs++;
        c->stats.reserved += size;
    }
    size_t h = hash_ptr(b->ptr);
    b->next = c->live[h];
    c->live[h] = b;
    c->stats.allocated += size;
    c->stats.active_blocks++;
    bump_peaks(&c->stats);
    void *ptr = b->ptr;
    pthread_mutex_unlock(&c->lock);
    return ptr;
}

int dcu_cache_free(dcu_cache *c, void *ptr) {
    if (!ptr) return 0;
    pthread_mutex_lock(&c->lock);
    dcu_block **pp = &c->live[hash_ptr(ptr)];
    while (*pp && (*pp)->ptr != ptr) pp = &(*pp)->next;
    dcu_block *b = *pp;
    if (!b) {
        pthread_mutex_unlock(&c->lock);
        return -1;
    }
    *pp = b->next;
    size_t h = hash_size(b->size);
    b->next = c->free[h];
    c->free[h] = b;
    c->stats.allocated -= b->size;
    c->stats.active_blocks--;
    c->stats.cached_blocks++;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

void dcu_cache_empty(dcu_cache *c) {
    pthread_mutex_lock(&c->lock);
    empty_locked(c);
    pthread_mutex_unlock(&c->lock);
}

void dcu_cache_stats(dcu_cache *c, dcu_stats *out) {
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    pthread_mutex_unlock(&c->lock);
}

void dcu_cache_destroy(dcu_cache *c) {
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < DCU_BUCKETS; i++) {
        while (c->live[i]) {
            dcu_block *b = c->live[i];
            c->live[i] = b->next;
            c->stats.allocated -= b->size;
            c->stats.active_blocks--;
            b->next = c->free[hash_size(b->size)];
            c->free[hash_size(b->size)] = b;
            c->stats.cached_blocks++;
        }
    }
    empty_locked(c);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_destroy(&c->lock);
}
