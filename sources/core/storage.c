/* Storages and the per-device allocator table; see dispatch/storage.h. */
#define _DEFAULT_SOURCE /* madvise */
#include "dispatch/storage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dispatch/error.h"

struct dispatch_storage {
    atomic_long refcount;
    void *data;
    size_t nbytes;
    int device;
    const dispatch_allocator *allocator; /* NULL for foreign memory */
    void (*release)(void *ctx);
    void *release_ctx;
    int readonly; /* set once, before the storage is shared: dispatch_storage_set_readonly */
};

static atomic_long live_storages;

const char *dispatch_device_name(int device) {
    switch (device) {
#define DEVICE_NAME_(NAME, name) case DISPATCH_DEVICE_##NAME: return name;
    DISPATCH_FORALL_DEVICES(DEVICE_NAME_)
#undef DEVICE_NAME_
    default: return "?";
    }
}

/*
 * Note [CPU allocations]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * Data is DISPATCH_CPU_ALIGNMENT-aligned; the 16 bytes before it hold the
 * raw block's address and, for a large block, its size (0 for a small one),
 * so one free() fits both paths:
 *   - below HUGE_MIN bytes, plain malloc() plus the alignment slack: glibc
 *     serves that from its per-thread cache (aligned_alloc never does, and
 *     costs several times more: most of a small operator's time);
 *   - from HUGE_MIN bytes on, a block aligned to a 2 MiB page and marked
 *     MADV_HUGEPAGE (as NumPy does), so a fresh 64 MiB result takes 32 page
 *     faults instead of 16384; and freed large blocks are kept, up to
 *     DISPATCH_CPU_CACHE_MB (default 256, 0 disables) in CACHE_SLOTS blocks,
 *     for the next request of the same size: a loop of out-of-place
 *     operations on large tensors pays no page faults at all after its first
 *     pass (glibc gives NumPy the same for blocks up to 32 MiB by raising its
 *     mmap threshold; a 2 MiB-aligned block never benefits from that).
 *     A freed block that finds the cache full pushes out stale blocks, the
 *     oldest first (Note [The cache keeps the newest blocks]).
 *
 * Note [The cache keeps the newest blocks]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The cache used to keep the first blocks it was given and refuse the rest
 * once its slots or its bytes ran out: a program whose sizes change (a
 * batch size, a sequence length) then held the old sizes for good, and
 * every result of a new size faulted its pages in, forever (16M float64
 * a + b after eight other sizes had been freed: 67 faults and 26.6-27.7 ms
 * a call; 0 and 19.6-21.5 ms with stale blocks evicted,
 * tools/bench/bench_block_cache.py). A freed block that finds the cache
 * full now evicts the stale blocks, those not taken back through the last
 * STALE_PUTS frees of large blocks, oldest first, until it fits; the
 * evicted ones go back to the system. Blocks still in use are never pushed
 * out: evicting the oldest block whatever its age would turn a loop over
 * nine sizes, eight of them served from the cache, into one that faults
 * every time (each newcomer pushing out the block the loop needs next).
 *
 * From PAGE_MIN bytes on, data starts on a 4 KiB page (Note [Outputs on a
 * page]).
 *
 * Note [Outputs on a page]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * A core takes a load whose address matches an earlier, unfinished store's
 * in the low 12 bits as depending on it (4K aliasing). A loop reading
 * in[i] and writing out[i] meets that when in lies a few vectors behind
 * out modulo 4096: neg of 1M float64 took 315 us with in 48 bytes behind,
 * 208 with it level or ahead (Zen 4). Other libraries' large arrays (NumPy's,
 * glibc's mmap chunks) start 16 to 64 bytes into a page, and ours started 64
 * bytes in: every NumPy input was 48 bytes behind our output. Data of
 * PAGE_MIN bytes or more now starts on a page, so an input starting a few
 * bytes into its page lies ahead of it, and ours level with it.
 */
#define HUGE_MIN ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define PAGE ((size_t)4096)
#define PAGE_MIN ((size_t)64 << 10)
#define CACHE_SLOTS 8
#define STALE_PUTS 32 /* Note [The cache keeps the newest blocks] */

static struct {
    pthread_mutex_t lock;
    int configured;
    size_t limit, bytes;
    uint64_t clock; /* counts frees of large blocks: a slot's age (Note [The cache keeps the newest blocks]) */
    struct { char *raw; size_t total; uint64_t put_at; } slot[CACHE_SLOTS];
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A cached block of exactly total bytes, or NULL. Called with the lock held. */
static char *cache_take(size_t total) {
    if (!cache.configured) {
        const char *env = getenv("DISPATCH_CPU_CACHE_MB");
        char *end;
        long mb = env && *env ? strtol(env, &end, 10) : 256;
        cache.limit = env && *env && (*end || mb < 0) ? (size_t)256 << 20
                      : (unsigned long)mb > (SIZE_MAX >> 20) ? SIZE_MAX /* no overflow: no limit */
                                                             : (size_t)mb << 20;
        cache.configured = 1;
    }
    for (int k = 0; k < CACHE_SLOTS; k++) {
        if (cache.slot[k].raw && cache.slot[k].total == total) {
            char *raw = cache.slot[k].raw;
            cache.slot[k].raw = NULL;
            cache.bytes -= total;
            return raw;
        }
    }
    return NULL;
}

/* Keep raw for reuse, evicting stale blocks oldest first until it fits
 * (Note [The cache keeps the newest blocks]); the evicted blocks go into
 * out[] and their count into *nout, for the caller to free once the lock is
 * released. 1 when raw is kept. Called with the lock held. */
static int cache_put(char *raw, size_t total, char *out[CACHE_SLOTS], int *nout) {
    const uint64_t now = ++cache.clock;
    *nout = 0;
    if (total > cache.limit) return 0;
    for (;;) {
        int oldest = -1, free_slot = -1;
        for (int k = 0; k < CACHE_SLOTS; k++) {
            if (!cache.slot[k].raw) free_slot = k;
            else if (oldest < 0 || cache.slot[k].put_at < cache.slot[oldest].put_at) oldest = k;
        }
        if (free_slot >= 0 && cache.bytes + total <= cache.limit) {
            cache.slot[free_slot].raw = raw;
            cache.slot[free_slot].total = total;
            cache.slot[free_slot].put_at = now;
            cache.bytes += total;
            return 1;
        }
        /* full, in slots or bytes, so oldest is set: evict it if stale */
        if (now - cache.slot[oldest].put_at < STALE_PUTS) return 0;
        out[(*nout)++] = cache.slot[oldest].raw;
        cache.bytes -= cache.slot[oldest].total;
        cache.slot[oldest].raw = NULL;
    }
}

static void *cpu_alloc(size_t nbytes, void *ctx) {
    (void)ctx;
    /* the 16 bytes before data hold the header: Note [CPU allocations] */
    const size_t slack = nbytes < PAGE_MIN ? DISPATCH_CPU_ALIGNMENT : PAGE;
    if (nbytes > SIZE_MAX - 2 * HUGE_PAGE) return NULL;
    char *raw, *data;
    size_t total = 0;
    if (nbytes < HUGE_MIN) {
        raw = malloc(nbytes + slack);
        if (!raw) return NULL;
        data = (char *)(((uintptr_t)raw + slack) & ~(uintptr_t)(slack - 1));
    } else {
        total = (nbytes + slack + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        pthread_mutex_lock(&cache.lock);
        raw = cache_take(total);
        pthread_mutex_unlock(&cache.lock);
        if (!raw) {
            raw = aligned_alloc(HUGE_PAGE, total);
            if (!raw) return NULL;
#ifdef MADV_HUGEPAGE
            (void)madvise(raw, total, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
        }
        data = raw + slack;
    }
    memcpy(data - 8, &raw, sizeof raw);
    memcpy(data - 16, &total, sizeof total);
    return data;
}

static void cpu_free(void *ptr, void *ctx) {
    (void)ctx;
    if (!ptr) return;
    char *raw;
    size_t total;
    memcpy(&raw, (char *)ptr - 8, sizeof raw);
    memcpy(&total, (char *)ptr - 16, sizeof total);
    if (total) {
        char *evicted[CACHE_SLOTS];
        int n;
        pthread_mutex_lock(&cache.lock);
        int kept = cache_put(raw, total, evicted, &n);
        pthread_mutex_unlock(&cache.lock);
        for (int k = 0; k < n; k++) free(evicted[k]);
        if (kept) return;
    }
    free(raw);
}

static void *meta_alloc(size_t nbytes, void *ctx) {
    (void)nbytes;
    (void)ctx;
    return NULL;
}

static void meta_free(void *ptr, void *ctx) {
    (void)ptr;
    (void)ctx;
}

static const dispatch_allocator cpu_allocator = {"cpu", cpu_alloc, cpu_free, NULL, NULL};
static const dispatch_allocator meta_allocator = {"meta", meta_alloc, meta_free, NULL, NULL};

static _Atomic(const dispatch_allocator *) allocators[DISPATCH_NUM_DEVICES] = {
    &cpu_allocator, NULL, &meta_allocator,
};

void dispatch_allocator_register(int device, const dispatch_allocator *allocator) {
    if (device >= 0 && device < DISPATCH_NUM_DEVICES) atomic_store(&allocators[device], allocator);
}

const dispatch_allocator *dispatch_allocator_get(int device) {
    if (device < 0 || device >= DISPATCH_NUM_DEVICES) return NULL;
    return atomic_load(&allocators[device]);
}

static dispatch_storage *storage_alloc_struct(void) {
    dispatch_storage *s = malloc(sizeof *s);
    if (!s) {
        dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory allocating a storage header");
        return NULL;
    }
    /* no calloc or zeroing struct copy: see Note [CPU allocations] */
    s->data = NULL;
    s->nbytes = 0;
    s->device = 0;
    s->allocator = NULL;
    s->release = NULL;
    s->release_ctx = NULL;
    s->readonly = 0;
    atomic_init(&s->refcount, 1);
    atomic_fetch_add(&live_storages, 1);
    return s;
}

dispatch_storage *dispatch_storage_new(int device, size_t nbytes) {
    const dispatch_allocator *a = dispatch_allocator_get(device);
    if (!a) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME,
                           "no allocator is registered for device '%s' (this build or machine "
                           "has no support for it)",
                           dispatch_device_name(device));
        return NULL;
    }
    void *data = a->alloc(nbytes, a->ctx);
    if (!data && device != DISPATCH_DEVICE_META) {
        const char *why = a->failure_message ? a->failure_message(a->ctx) : NULL;
        if (why && *why) {
            dispatch_error_set(DISPATCH_ERR_MEMORY, "%s allocator: %s", a->name, why);
            return NULL;
        }
        dispatch_error_set(DISPATCH_ERR_MEMORY,
                           "%s allocator: failed to allocate %zu bytes", a->name, nbytes);
        return NULL;
    }
    dispatch_storage *s = storage_alloc_struct();
    if (!s) {
        a->free(data, a->ctx);
        return NULL;
    }
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->allocator = a;
    return s;
}

dispatch_storage *dispatch_storage_from_foreign(int device, void *data, size_t nbytes,
                                                void (*release)(void *ctx), void *ctx) {
    dispatch_storage *s = storage_alloc_struct();
    if (!s) return NULL;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->release = release;
    s->release_ctx = ctx;
    return s;
}

void dispatch_storage_incref(dispatch_storage *s) {
    atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void dispatch_storage_decref(dispatch_storage *s) {
    if (!s) return;
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (s->allocator)
        s->allocator->free(s->data, s->allocator->ctx);
    else if (s->release)
        s->release(s->release_ctx);
    free(s);
    atomic_fetch_sub(&live_storages, 1);
}

void *dispatch_storage_data(const dispatch_storage *s) { return s->data; }
size_t dispatch_storage_nbytes(const dispatch_storage *s) { return s->nbytes; }
int dispatch_storage_device(const dispatch_storage *s) { return s->device; }
long dispatch_storage_refcount(const dispatch_storage *s) { return atomic_load(&s->refcount); }
long dispatch_storage_live_count(void) { return atomic_load(&live_storages); }
void dispatch_storage_set_readonly(dispatch_storage *s) { s->readonly = 1; }
int dispatch_storage_is_readonly(const dispatch_storage *s) { return s != NULL && s->readonly; }
