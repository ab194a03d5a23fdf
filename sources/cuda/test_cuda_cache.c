/* The caching allocator's bookkeeping over a fake backend (host malloc with a
 * capacity): runs anywhere, no GPU needed. Exit 0 when every check passes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cache.h"

static int failures;
#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s:%d: CHECK(%s)\n", __FILE__, __LINE__, #cond); \
            failures++;                                               \
        }                                                             \
    } while (0)

typedef struct fake {
    pthread_mutex_t lock;
    size_t capacity, used;
    long allocs, frees;
} fake;

static int fake_alloc(void **ptr, size_t n, int *oom, void *ctx) {
    fake *f = ctx;
    pthread_mutex_lock(&f->lock);
    if (f->used + n > f->capacity) {
        pthread_mutex_unlock(&f->lock);
        *oom = 1;
        return 2;
    }
    f->used += n;
    f->allocs++;
    pthread_mutex_unlock(&f->lock);
    size_t *p = malloc(n + 16);
    p[0] = n;
    *ptr = p + 2;
    return 0;
}

static void fake_free(void *ptr, void *ctx) {
    fake *f = ctx;
    size_t *p = (size_t *)ptr - 2;
    pthread_mutex_lock(&f->lock);
    f->used -= p[0];
    f->frees++;
    pthread_mutex_unlock(&f->lock);
    free(p);
}

static const char *fake_describe(int code, void *ctx) {
    (void)ctx;
    return code == 2 ? "cudaErrorMemoryAllocation (2): out of memory" : "other";
}

static fake F = {PTHREAD_MUTEX_INITIALIZER, 64u << 20, 0, 0, 0};
static const dcu_backend B = {fake_alloc, fake_free, fake_describe, &F};

static void test_size_classes(void) {
    CHECK(dcu_size_class(0) == 512);
    CHECK(dcu_size_class(1) == 512);
    CHECK(dcu_size_class(512) == 512);
    CHECK(dcu_size_class(513) == 1024);
    CHECK(dcu_size_class((1u << 20) - 1) == (1u << 20));
    CHECK(dcu_size_class((1u << 20) + 1) == (2u << 20));
    CHECK(dcu_size_class(5u << 20) == (6u << 20));
    CHECK(dcu_size_class(SIZE_MAX) == 0);
}

static void test_freed_block_is_reused_without_backend_call(void) {
    dcu_cache c;
    char msg[512];
    dcu_cache_init(&c, &B);
    void *a = dcu_cache_alloc(&c, 1000, msg, sizeof msg);
    CHECK(a != NULL);
    CHECK(dcu_cache_free(&c, a) == 0);
    void *b = dcu_cache_alloc(&c, 1001, msg, sizeof msg); /* same class: 1024 */
    dcu_stats s;
    dcu_cache_stats(&c, &s);
    CHECK(b == a);
    CHECK(s.raw_allocs == 1 && s.cache_hits == 1);
    CHECK(s.allocated == 1024 && s.reserved == 1024 && s.peak_allocated == 1024);
    void *d = dcu_cache_alloc(&c, 3000, msg, sizeof msg); /* another class */
    dcu_cache_stats(&c, &s);
    CHECK(d != NULL && d != a && s.raw_allocs == 2 && s.allocated == 1024 + 3072);
    CHECK(dcu_cache_free(&c, d) == 0 && dcu_cache_free(&c, b) == 0);
    dcu_cache_stats(&c, &s);
    CHECK(s.allocated == 0 && s.reserved == 4096 && s.cached_blocks == 2 && s.peak_allocated == 4096);
    CHECK(dcu_cache_free(&c, (char *)a + 1) == -1); /* not ours */
    dcu_cache_empty(&c);
    dcu_cache_stats(&c, &s);
    CHECK(s.reserved == 0 && s.cached_blocks == 0 && s.raw_frees == 2 && F.used == 0);
    dcu_cache_destroy(&c);
}

static void test_oom_empties_cache_and_retries_once(void) {
    dcu_cache c;
    char msg[512];
    dcu_cache_init(&c, &B);
    /* 40 MiB cached, then 40 MiB of another class: fits only after emptying. */
    void *a = dcu_cache_alloc(&c, 40u << 20, msg, sizeof msg);
    CHECK(a && dcu_cache_free(&c, a) == 0);
    void *b = dcu_cache_alloc(&c, (40u << 20) + (4u << 20), msg, sizeof msg);
    dcu_stats s;
    dcu_cache_stats(&c, &s);
    CHECK(b != NULL && s.oom_retries == 1 && s.raw_allocs == 2 && s.raw_frees == 1);
    CHECK(s.reserved == (44u << 20) && s.cached_blocks == 0);
    /* Still too much with nothing cached: MemoryError text says asked and held. */
    void *d = dcu_cache_alloc(&c, 30u << 20, msg, sizeof msg);
    CHECK(d == NULL);
    CHECK(strstr(msg, "tried to allocate 31457280 bytes") != NULL);
    CHECK(strstr(msg, "holds 46137344 bytes allocated and 0 cached") != NULL);
    CHECK(strstr(msg, "cudaErrorMemoryAllocation (2)") != NULL);
    dcu_cache_stats(&c, &s);
    CHECK(s.oom_retries == 2 && s.allocated == (44u << 20));
    dcu_cache_destroy(&c);
    CHECK(F.used == 0);
}

static dcu_cache shared;

static void *worker(void *arg) {
    char msg[256];
    size_t base = (size_t)(uintptr_t)arg;
    for (int i = 0; i < 2000; i++) {
        void *p[4];
        for (int k = 0; k < 4; k++) p[k] = dcu_cache_alloc(&shared, base * 100 + (size_t)k * 700, msg, sizeof msg);
        for (int k = 0; k < 4; k++)
            if (!p[k] || dcu_cache_free(&shared, p[k]) != 0) failures++;
    }
    return NULL;
}

static void test_threads_keep_stats_consistent(void) {
    pthread_t t[4];
    dcu_cache_init(&shared, &B);
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    dcu_stats s;
    dcu_cache_stats(&shared, &s);
    CHECK(s.allocated == 0 && s.active_blocks == 0);
    CHECK(s.raw_allocs + s.cache_hits == 4 * 2000 * 4);
    CHECK(s.reserved == F.used);
    dcu_cache_destroy(&shared);
    CHECK(F.used == 0);
}

int main(void) {
    test_size_classes();
    test_freed_block_is_reused_without_backend_call();
    test_oom_empties_cache_and_retries_once();
    test_threads_keep_stats_consistent();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
