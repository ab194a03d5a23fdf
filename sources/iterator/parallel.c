/*
 * A small persistent thread pool for the engine: dispatch_parallel_for and
 * dispatch_set/get_num_threads of iterator.h.
 *
 * Note [Thread pool]
 * ~~~~~~~~~~~~~~~~~~
 * Workers are created lazily, the first time a call wants them, and then
 * sleep on a condition variable between jobs (starting threads per call
 * would cost tens of microseconds, more than the work at the grain size).
 * One job runs at a time: a call that finds the pool busy (another Python
 * thread, or a nested call from inside a job) runs its work on the calling
 * thread instead, which is always correct because every caller's work is a
 * pure function of its range. A job is a set of ranges claimed with an
 * atomic counter; the caller takes ranges too and returns when all are done.
 * The split points depend on n, the thread count and `align` only, never on
 * timing, and the engine's reductions do not depend on them at all.
 *
 * The thread count starts at 1, or at DISPATCH_NUM_THREADS (1 to 256; any
 * other value is ignored) read from the environment at first use, and is
 * an atomic that any thread may read or set at any time; a call takes the
 * count once at its start. Idle workers sleep in pthread_cond_wait, so
 * between calls they take no CPU.
 *
 * Note [Thread pool after fork]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * fork() copies only the calling thread, so a child would find workers
 * counted that do not exist and locks possibly held by them. pthread_atfork
 * handlers take both locks before the fork (so no job is half-way: the fork
 * waits for a running one to finish), release them in the parent, and in
 * the child re-initialise the locks and condition variables and forget the
 * workers: the child's first parallel call starts its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "dispatch/error.h"
#include "dispatch/iterator.h"

#define MAX_THREADS 256

static atomic_int num_threads = 1;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static void install_fork_handlers(void);

static void read_env(void)
{
    install_fork_handlers();
    const char *e = getenv("DISPATCH_NUM_THREADS");
    if (e == NULL || *e == '\0') return;
    char *end;
    long v = strtol(e, &end, 10);
    if (*end == '\0' && v >= 1 && v <= MAX_THREADS) atomic_store(&num_threads, (int)v);
}

int dispatch_set_num_threads(int64_t n) /* int64_t: 2**40 is refused by value, not truncated */
{
    pthread_once(&env_once, read_env); /* the env var never overrides an explicit set */
    if (n < 1 || n > MAX_THREADS) {
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "set_num_threads: expected 1 to %d threads, got %lld",
                                  MAX_THREADS, (long long)n);
    }
    atomic_store(&num_threads, (int)n);
    return 0;
}

int dispatch_get_num_threads(void)
{
    pthread_once(&env_once, read_env);
    return atomic_load(&num_threads);
}

typedef struct job {
    void (*fn)(void *, int64_t, int64_t);
    void *arg;
    int64_t n, chunk;
    int parts;
    int max_helpers;      /* workers that may join: the thread count at the call, less one */
    atomic_int helpers;   /* workers that joined (or tried to) */
    atomic_int next;      /* next part to claim */
    atomic_int remaining; /* parts not finished */
} job;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static job *current;       /* under state_lock */
static uint64_t generation; /* under state_lock */
static atomic_uint_fast64_t published; /* generation, readable without the lock */

/* Note [Short spin]: a worker that just finished a job, and a caller that
 * finished its own parts, watch for the next job (or the last part) for at
 * most SPIN_NS before sleeping on their condition variable. Waking a sleeping
 * thread costs from microseconds to, on a virtual machine whose other vCPU
 * has gone idle, hundreds of them, more than a part of a call takes, so
 * without it back-to-back calls never see the second thread. The spin is
 * bounded (torch's OpenMP spins for up to 200 ms by default) and a worker
 * idle for longer than SPIN_NS sleeps, taking no CPU between calls. */
#define SPIN_NS 30000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spin until *flag differs from `from` (spin_for_change) or a counter drops
 * to zero (spin_for_zero), for at most SPIN_NS; 1 when it happened. */
static int spin_for_change(atomic_uint_fast64_t *flag, uint64_t from)
{
    int64_t end = now_ns() + SPIN_NS;
    for (int i = 1;; i++) {
        if (atomic_load_explicit(flag, memory_order_acquire) != from) return 1;
        cpu_relax();
        if ((i & 63) == 0 && now_ns() > end) return 0;
    }
}

static int spin_for_zero(atomic_int *count)
{
    int64_t end = now_ns() + SPIN_NS;
    for (int i = 1;; i++) {
        if (atomic_load_explicit(count, memory_order_acquire) == 0) return 1;
        cpu_relax();
        if ((i & 63) == 0 && now_ns() > end) return 0;
    }
}
static int busy_workers;   /* workers inside the current job, under state_lock */
static int nworkers;       /* started workers, under pool_lock */
static _Thread_local int in_parallel;

static void before_fork(void)
{
    pthread_mutex_lock(&pool_lock);
    pthread_mutex_lock(&state_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&state_lock);
    pthread_mutex_unlock(&pool_lock);
}

static void after_fork_child(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&state_lock, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&finished, NULL);
    current = NULL;
    busy_workers = 0;
    nworkers = 0; /* Note [Thread pool after fork] */
    in_parallel = 0;
}

static void install_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static void run_parts(job *j)
{
    int p;
    while ((p = atomic_fetch_add(&j->next, 1)) < j->parts) {
        int64_t b = (int64_t)p * j->chunk;
        int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->arg, b, e);
        atomic_fetch_sub(&j->remaining, 1);
    }
}

static void *worker_main(void *unused)
{
    (void)unused;
    uint64_t seen = 0;
    in_parallel = 1;
    pthread_mutex_lock(&state_lock);
    for (;;) {
        while (generation == seen || current == NULL) {
            if (generation != seen) seen = generation; /* a job we missed: gone */
            pthread_cond_wait(&wake, &state_lock);
        }
        seen = generation;
        job *j = current;
        /* Only as many workers as the call's thread count join it (a pool
         * started with 8 threads does not use 8 after set_num_threads(2)). */
        if (atomic_fetch_add(&j->helpers, 1) >= j->max_helpers) continue;
        busy_workers++;
        pthread_mutex_unlock(&state_lock);
        run_parts(j);
        pthread_mutex_lock(&state_lock);
        busy_workers--;
        pthread_cond_broadcast(&finished);
        pthread_mutex_unlock(&state_lock);
        spin_for_change(&published, seen); /* Note [Short spin] */
        pthread_mutex_lock(&state_lock);
    }
    return NULL;
}

void dispatch_parallel_for(int64_t n, int64_t grain, int64_t align,
                           void (*fn)(void *arg, int64_t begin, int64_t end), void *arg)
{
    if (n <= 0) return;
    if (align < 1) align = 1;
    if (grain < 1) grain = 1;
    int threads = dispatch_get_num_threads();
    /* Up to 4 parts per thread, each at least `grain`: a worker that wakes
     * late (a busy machine) still finds parts left to take, and the caller
     * never waits long for a lagging one. */
    int64_t max_parts = n / grain;
    int parts = (int)(max_parts < 4 * (int64_t)threads ? max_parts : 4 * (int64_t)threads);
    int helpers = (parts < threads ? parts : threads) - 1;
    if (parts < 2 || helpers < 1 || in_parallel || pthread_mutex_trylock(&pool_lock) != 0) {
        fn(arg, 0, n);
        return;
    }
    while (nworkers < helpers) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0) break;
        pthread_detach(t);
        nworkers++;
    }
    int64_t chunk = (n + parts - 1) / parts;
    chunk = (chunk + align - 1) / align * align;
    job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk, .max_helpers = helpers};
    j.parts = (int)((n + chunk - 1) / chunk);
    atomic_init(&j.helpers, 0);
    atomic_init(&j.next, 0);
    atomic_init(&j.remaining, j.parts);

    pthread_mutex_lock(&state_lock);
    current = &j;
    generation++;
    atomic_store_explicit(&published, generation, memory_order_release);
    if (helpers >= nworkers) pthread_cond_broadcast(&wake);
    else for (int k = 0; k < helpers; k++) pthread_cond_signal(&wake);
    pthread_mutex_unlock(&state_lock);

    in_parallel = 1;
    run_parts(&j);
    in_parallel = 0;

    spin_for_zero(&j.remaining); /* Note [Short spin] */
    pthread_mutex_lock(&state_lock);
    while (atomic_load(&j.remaining) > 0 || busy_workers > 0) {
        pthread_cond_wait(&finished, &state_lock);
    }
    current = NULL;
    pthread_mutex_unlock(&state_lock);
    pthread_mutex_unlock(&pool_lock);
}
