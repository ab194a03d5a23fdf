/*
 * A small persistent thread pool for the engine: dispatch_parallel_for and
 * dispatch_set_num_threads and dispatch_get_num_threads of iterator.h.
 *
 * Note [Thread pool]
 * ~~~~~~~~~~~~~~~~~~
 * Workers are created lazily, the first time a call wants them, and then
 * wait for the next job, spinning a short while and then asleep on a
 * condition variable (starting threads per call would cost tens of
 * microseconds, more than the work at the grain size).
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
 * count once at its start. A worker idle for more than 1 ms sleeps in
 * pthread_cond_wait, so between calls it takes no CPU (Note [Short spin]).
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
#define _GNU_SOURCE /* sched_getaffinity and CPU_COUNT: the CPUs this process may use */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dispatch/error.h"
#include "dispatch/iterator.h"

#define MAX_THREADS 256

static atomic_int num_threads = 1;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static void install_fork_handlers(void);

/*
 * Note [Following the affinity mask]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The CPUs a process may use change under it (os.sched_setaffinity, taskset
 * -p, a cgroup's cpuset): counted once, a pool started on 2 CPUs and then
 * pinned to one kept spinning a worker for 1 ms after each call on the CPU
 * the caller needed, and the caller spun for its worker (on this project's
 * 2-vCPU VM, 2 threads took 1.2-4.6x the time of one). So a parallel call
 * counts the calling thread's mask again when the last count is older than
 * CPUS_RECOUNT_NS: sched_getaffinity + CPU_COUNT cost 0.49-0.58 us here
 * (a clock read 30-50 ns), too much for every call of a 20 us operation, a
 * twentieth of a percent at most once a millisecond. The count decides only
 * how threads wait (Note [Short spin]), never the split points, so results
 * keep their bits. usable_cpus is atomic: dispatch_pool_usable_cpus reads it
 * from any thread; cpus_counted_at is under pool_lock.
 */
#define CPUS_RECOUNT_NS 1000000
static atomic_int usable_cpus = 1; /* read_env, then each call: Note [Following the affinity mask] */
static int64_t cpus_counted_at;    /* now_ns() of the last count, under pool_lock */

/* The CPUs this process may run on (its affinity mask: taskset, cgroups'
 * cpusets), or the online ones where there is no mask to read. */
static int count_usable_cpus(void)
{
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void read_env(void)
{
    install_fork_handlers();
    atomic_store(&usable_cpus, count_usable_cpus());
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

int dispatch_pool_usable_cpus(void)
{
    pthread_once(&env_once, read_env);
    return atomic_load(&usable_cpus);
}


typedef struct job {
    void (*fn)(void *, int64_t, int64_t);
    void *arg;
    int64_t n, chunk;
    int parts;
    int max_helpers;      /* workers that may join: the thread count at the call, less one */
    int per_slot;         /* parts in each thread's home range: Note [Home ranges] */
    uint64_t generation;  /* this job's number in `published` */
    atomic_int helpers;   /* workers that joined (or tried to) */
    atomic_int remaining; /* parts not finished */
    atomic_int next[MAX_THREADS]; /* next part of each home range, from its start */
} job;

/*
 * Note [Home ranges]
 * ~~~~~~~~~~~~~~~~~~
 * The parts are dealt out in contiguous home ranges, one per thread of the
 * call (the caller's first, then each worker's in the order they join):
 * a thread runs its own range front to back, one long stream for the
 * hardware prefetcher, and the same range on every call of the same shape, so
 * the lines it wrote last time are still in its own cache. A thread that has
 * finished its range takes the parts left in the others' ranges, so a worker
 * that joins late (or never) costs only the parts it did not take. Dealing
 * parts from one shared counter instead sent each thread's parts across the
 * whole array, a different half on every call: on this project's 2-vCPU VM
 * (the public API, one process, medians of 15 interleaved turns, two runs) an
 * add of 1M float32 at 2 threads took 121-124 us a call and 139-149 us into
 * a given output, against torch's 104-110 (OpenMP's static halves); with home
 * ranges 111-112 and 119-120 us.
 */

/*
 * Note [Joining a job without a lock]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A spinning worker that saw a new job and then blocked on a mutex the caller
 * still held (it publishes and signals under it) went to sleep in the kernel
 * and needed a futex wake: the very wake-up the spin exists to avoid, about
 * 100 us on a VM. So the hot path takes no lock. The caller stores the job in
 * `current`, then its number in `published`; a worker that sees a new number
 * counts itself `inside` before it reads `current`, and leaves `inside` when it
 * is done with the job. The caller, once every part is finished, clears
 * `current` and waits for `inside` to drop to zero before its stack frame (the
 * job) goes away. Both sides use sequentially consistent atomics (a store then
 * a load of the other's variable), so either the caller sees the worker inside
 * or the worker reads the cleared `current`: no worker ever touches a job that
 * has returned. The same pairing keeps wake-ups from being lost: a worker
 * counts itself in `sleepers` before its last look at `published`, and the
 * caller signals only when it sees sleepers after publishing; the worker that
 * finishes the last part signals only a caller that said it sleeps.
 *
 * Note [The caller waits awake]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * When its own parts are done the caller waits for the parts a worker is still
 * running: a wait bounded by one part's time, since a part is only claimed by
 * a running thread. It spins for SPIN_NS, then yields the CPU (sched_yield:
 * a worker preempted on this very CPU gets it), and sleeps on a condition
 * variable only after YIELD_NS. Sleeping at once cost more than the work: on
 * this project's 2-vCPU VM an add of 1M float32 called once a millisecond took
 * 325-470 us a call at 2 threads (two runs), more than the 230-250 us of one
 * thread, because the caller slept and then waited for its own wake-up; awake,
 * 260 us.
 */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER; /* for the two waits below */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;     /* sleeping workers wait here */
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER; /* a sleeping caller waits here */
static _Atomic(job *) current;
static atomic_uint_fast64_t published; /* the newest job's generation */
static atomic_int inside;              /* workers that may be reading `current`'s job */
static atomic_int sleepers;            /* workers asleep on `wake` */
static atomic_int caller_sleeping;     /* the caller asleep on `finished` */
static uint64_t generation;            /* under pool_lock */
static int nworkers;                   /* started workers, under pool_lock */
static pthread_t workers[MAX_THREADS]; /* their threads, under pool_lock */
static _Thread_local int in_parallel;

/*
 * Note [Short spin]
 * ~~~~~~~~~~~~~~~~~
 * A worker that finished a job watches for the next one for WORKER_SPIN_NS
 * before it sleeps on its condition variable, and a caller that finished its
 * own parts watches the last ones for SPIN_NS (then Note [The caller waits
 * awake]). Waking a sleeping thread costs from microseconds to, on a virtual
 * machine whose other vCPU has gone idle, a hundred or more: more than a part
 * of a call takes, so a call that finds its worker asleep gains little from
 * it. On this project's 2-vCPU VM (C, an add of 1M float32 at 2 threads
 * called with a busy gap between calls; medians of 8 runs of 1000 calls, one
 * thread takes 230 us) a 30 us spin gave 145, 175 and 210 us a call for gaps
 * of 50, 300 and 1000 us; a 1 ms spin 104, 130 and 150-230 us; 2 ms 104, 128
 * and 146 us. So a worker spins 1 ms, as OpenMP runtimes do (libgomp spins
 * some milliseconds, Intel's 200 ms): a Python loop of operations keeps its
 * workers, and the CPU a worker takes between calls is bounded by 1 ms a call.
 * When the pool has more threads than the calling thread may use CPUs (Note
 * [Following the affinity mask]) a spinning worker takes a CPU some other
 * thread of the call needs: then workers do not spin at all (they sleep as
 * soon as a job is over, and stop a spin under way), and the caller waiting
 * for its last parts yields at once instead of spinning SPIN_NS first.
 */
/*
 * Note [A spinning worker yields]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A process is often not alone on its CPUs: another process runs, or, in a
 * fresh one, NumPy's OpenBLAS threads (one per CPU, started by `import
 * numpy`) wait for work busy for about 100 ms of CPU time (calling
 * sched_yield) before they sleep, mostly during the import itself but at
 * times into the first calls after it. A worker started then could be put
 * by the kernel on the caller's own CPU (the other one looked as busy, and a
 * new thread stays local on a tie), and the kernel's balancer does not move
 * one of two threads off a CPU to one that runs one already. There the
 * worker's 1 ms pure spin between calls took half of the caller's CPU: on
 * this project's 2-vCPU VM, fresh processes timing a 2-thread sum of 1M
 * float32 (tools/bench/bench_threads_steady.py, docs/performance.md) ran at
 * the 1-thread time or at two to five times it, while one long-running
 * process scaled once the other CPU was free. So:
 * - a worker is started on a CPU other than the caller's (its first
 *   affinity mask is the caller's less the caller's current CPU, and stays
 *   so: Note [Workers kept off the caller's CPU]), so a busy CPU elsewhere
 *   is shared with whatever runs there, never with the caller;
 * - a spinning worker that finds itself on the CPU the last call ran on
 *   yields that CPU every 64 looks (sched_yield), so a worker that still
 *   ends up beside its caller costs the caller nothing between calls: the
 *   call takes about the 1-thread time there, not twice it or more.
 *   Anywhere else it does not yield: a yield also hands the CPU to other
 *   processes, and the kernel then counts the worker as having had its
 *   share, so on a loaded machine it missed the calls it could have
 *   helped.
 * sources/iterator/test_parallel.c checks the first (a yielding thread busy
 * on the other CPU: the old pool ran the worker's parts beside the caller
 * in 9 runs of 10, this one in none).
 *
 * Note [Workers kept off the caller's CPU]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Widened after its start, a worker woken from its sleep could still be put
 * on the caller's CPU: the kernel's wake-up chooses between the CPU the
 * worker last ran on and the waker's, and when the former looked busy (a
 * thread of another library just ran there: torch's OpenMP workers spin
 * after each of its calls) it queued the worker behind the caller, which
 * then ran every part itself while its worker waited, the balancer not
 * moving it to the other CPU for milliseconds. On this project's 2-vCPU VM,
 * turns of 2 ms of torch's, NumPy's and our float64 `div` of (512, 512) at 2
 * threads in one process (tools/bench/bench_matrix.py's order) ran ours at
 * the 1-thread time in about half the turns (90 us against 47; the
 * worker's schedstat: 61 us run, 5.5 ms waiting in the caller's CPU's
 * queue), and the whole 2-thread matrix scaled ours by a median of 1.08x
 * where torch's scaled by 1.82x. So while the call's threads fit the CPUs
 * (Note [Short spin]), every worker's mask is the caller's less the CPU the
 * caller runs on; the masks are set again (one syscall per worker) only when
 * a call starts on another CPU than the last did, at most once a
 * millisecond, or when the CPUs change (Note [Following the affinity
 * mask]); when the threads do not fit, or the caller may use one CPU only,
 * the workers get the caller's whole mask back.
 */
#define SPIN_NS 30000
#define WORKER_SPIN_NS 1000000
static atomic_llong worker_spin_ns = SPIN_NS; /* set by each call: Note [Short spin] */
#define YIELD_NS 2000000 /* Note [The caller waits awake] */

int64_t dispatch_pool_worker_spin_ns(void)
{
    return atomic_load_explicit(&worker_spin_ns, memory_order_relaxed);
}

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

/* The CPU the newest call started on (-1: unknown): Note [A spinning worker yields]. */
static atomic_int caller_cpu = -1;

static int current_cpu(void)
{
#if defined(__linux__) && defined(__GLIBC__)
    return sched_getcpu();
#else
    return -1;
#endif
}

static int on_callers_cpu(void)
{
    int here = current_cpu();
    return here >= 0 && here == atomic_load_explicit(&caller_cpu, memory_order_relaxed);
}

/* The CPU the workers' masks leave out (-1: none; -2: not known, set them
 * again), and when they were last set; under pool_lock. */
static int steered_off = -1;
static int64_t steered_at;

/* Every worker's mask: the caller's less CPU `off` (-1: the caller's whole
 * mask): Note [Workers kept off the caller's CPU]. */
static void steer_workers(int off, int64_t now)
{
    if (off == steered_off || nworkers == 0) return;
    if (steered_off != -2 && now - steered_at < CPUS_RECOUNT_NS) return;
#if defined(__linux__) && defined(__GLIBC__) /* the _np calls: glibc's */
    cpu_set_t mask;
    if (pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) != 0) return;
    if (off >= 0 && (!CPU_ISSET(off, &mask) || CPU_COUNT(&mask) < 2)) off = -1;
    if (off >= 0) CPU_CLR(off, &mask);
    for (int k = 0; k < nworkers; k++) pthread_setaffinity_np(workers[k], sizeof mask, &mask);
#endif
    steered_off = off;
    steered_at = now;
}

/* Spin until `published` differs from `from`, for at most worker_spin_ns
 * (read again at each look at the clock: a call that found the pool with
 * more threads than CPUs stops a spin already under way); 1 when it did.
 * Every 64 looks (a microsecond or two) it yields the CPU to any thread
 * waiting for it there: Note [A spinning worker yields]. */
static int spin_for_job(uint64_t from)
{
    int64_t start = now_ns();
    for (int i = 1;; i++) {
        if (atomic_load(&published) != from) return 1;
        if ((i & 63) == 1) {
            if (now_ns() - start >= atomic_load_explicit(&worker_spin_ns, memory_order_relaxed))
                return 0;
            if (i > 1 && on_callers_cpu()) sched_yield();
        }
        cpu_relax();
    }
}

/* Wait for *count to reach zero: spin for spin_ns, then yield, then (when
 * may_sleep) sleep on `finished` (Note [The caller waits awake]). */
static void wait_for_zero(atomic_int *count, int may_sleep, int64_t spin_ns)
{
    int64_t start = now_ns();
    for (int i = 1; atomic_load(count) != 0; i++) {
        if ((i & 63) != 0 && spin_ns > 0) {
            cpu_relax();
            continue;
        }
        int64_t waited = now_ns() - start;
        if (waited < spin_ns) continue;
        if (waited < YIELD_NS || !may_sleep) {
            sched_yield();
            continue;
        }
        pthread_mutex_lock(&sleep_lock);
        atomic_store(&caller_sleeping, 1);
        while (atomic_load(count) != 0) pthread_cond_wait(&finished, &sleep_lock);
        atomic_store(&caller_sleeping, 0);
        pthread_mutex_unlock(&sleep_lock);
        return;
    }
}

static void before_fork(void)
{
    pthread_mutex_lock(&pool_lock);
    pthread_mutex_lock(&sleep_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&sleep_lock);
    pthread_mutex_unlock(&pool_lock);
}

static void after_fork_child(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&sleep_lock, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&finished, NULL);
    atomic_store(&current, NULL);
    atomic_store(&inside, 0);
    atomic_store(&sleepers, 0);
    atomic_store(&caller_sleeping, 0);
    nworkers = 0; /* Note [Thread pool after fork] */
    steered_off = -1;
    in_parallel = 0;
}

static void install_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Run the parts of slot's home range that nobody took yet. */
static void run_range_of(job *j, int slot)
{
    int first = slot * j->per_slot, count = j->parts - first;
    if (count > j->per_slot) count = j->per_slot;
    int k;
    while ((k = atomic_fetch_add(&j->next[slot], 1)) < count) {
        int64_t b = (int64_t)(first + k) * j->chunk;
        int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->arg, b, e);
        if (atomic_fetch_sub(&j->remaining, 1) == 1 && atomic_load(&caller_sleeping)) {
            pthread_mutex_lock(&sleep_lock); /* the last part: wake a caller that sleeps */
            pthread_cond_signal(&finished);
            pthread_mutex_unlock(&sleep_lock);
        }
    }
}

/* Slot's own range, then what is left of the others' (Note [Home ranges]). */
static void run_parts(job *j, int slot)
{
    int slots = j->max_helpers + 1;
    run_range_of(j, slot);
    for (int k = 1; k < slots; k++) run_range_of(j, (slot + k) % slots);
}

static void *worker_main(void *unused)
{
    (void)unused;
    uint64_t seen = 0; /* 0: a worker started for a job joins it, whenever it starts */
    in_parallel = 1;
    for (;;) {
        uint64_t g = atomic_load(&published);
        if (g == seen) {
            if (!spin_for_job(seen)) { /* Note [Short spin] */
                pthread_mutex_lock(&sleep_lock);
                atomic_fetch_add(&sleepers, 1);
                while (atomic_load(&published) == seen) pthread_cond_wait(&wake, &sleep_lock);
                atomic_fetch_sub(&sleepers, 1);
                pthread_mutex_unlock(&sleep_lock);
            }
            continue;
        }
        atomic_fetch_add(&inside, 1); /* Note [Joining a job without a lock] */
        job *j = atomic_load(&current); /* job g, a newer one, or NULL when g is over */
        seen = g;
        if (j != NULL) {
            seen = j->generation;
            /* Only as many workers as the call's thread count join it (a pool
             * started with 8 threads does not use 8 after set_num_threads(2)). */
            int slot = atomic_fetch_add(&j->helpers, 1) + 1; /* the caller is slot 0 */
            if (slot <= j->max_helpers) run_parts(j, slot);
        }
        atomic_fetch_sub(&inside, 1);
    }
    return NULL;
}

/* Start one worker, on a CPU other than the caller's where the caller may
 * use another (Note [A spinning worker yields]); 0 when it started. The
 * call that started it then sets its mask (Note [Workers kept off the
 * caller's CPU]). */
static int start_worker(void)
{
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
#if defined(__linux__) && defined(__GLIBC__) /* the _np calls: glibc's */
    int here = sched_getcpu();
    cpu_set_t away;
    if (have_attr && here >= 0 && pthread_getaffinity_np(pthread_self(), sizeof away, &away) == 0 &&
        CPU_ISSET(here, &away) && CPU_COUNT(&away) > 1) {
        CPU_CLR(here, &away);
        pthread_attr_setaffinity_np(&attr, sizeof away, &away);
    }
#endif
    int rc = pthread_create(&workers[nworkers], have_attr ? &attr : NULL, worker_main, NULL);
    if (have_attr) pthread_attr_destroy(&attr);
    if (rc != 0) return rc;
    pthread_detach(workers[nworkers]);
    steered_off = -2;
    return 0;
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
        if (start_worker() != 0) break;
        nworkers++;
    }
    int64_t chunk = (n + parts - 1) / parts;
    chunk = (chunk + align - 1) / align * align;
    job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk, .max_helpers = helpers,
             .generation = ++generation};
    j.parts = (int)((n + chunk - 1) / chunk);
    j.per_slot = (j.parts + helpers) / (helpers + 1);
    atomic_init(&j.helpers, 0);
    atomic_init(&j.remaining, j.parts);
    for (int k = 0; k <= helpers; k++) atomic_init(&j.next[k], 0);

    int64_t t0 = now_ns(); /* Note [Following the affinity mask] */
    if (t0 - cpus_counted_at >= CPUS_RECOUNT_NS) {
        cpus_counted_at = t0;
        int cpus = count_usable_cpus();
        if (atomic_load_explicit(&usable_cpus, memory_order_relaxed) != cpus) {
            atomic_store(&usable_cpus, cpus);
            steered_off = -2; /* the workers' masks: set again below */
        }
    }
    int fits = threads <= atomic_load_explicit(&usable_cpus, memory_order_relaxed);
    long long spin = fits ? WORKER_SPIN_NS : 0; /* Note [Short spin] */
    if (atomic_load_explicit(&worker_spin_ns, memory_order_relaxed) != spin) {
        atomic_store_explicit(&worker_spin_ns, spin, memory_order_relaxed);
    }
    int here = current_cpu();
    if (atomic_load_explicit(&caller_cpu, memory_order_relaxed) != here)
        atomic_store_explicit(&caller_cpu, here, memory_order_relaxed);
    steer_workers(fits ? here : -1, t0); /* Note [Workers kept off the caller's CPU] */
    atomic_store(&current, &j);
    atomic_store(&published, j.generation);
    if (atomic_load(&sleepers) > 0) { /* Note [Joining a job without a lock] */
        pthread_mutex_lock(&sleep_lock);
        if (helpers >= nworkers) pthread_cond_broadcast(&wake);
        else for (int k = 0; k < helpers; k++) pthread_cond_signal(&wake);
        pthread_mutex_unlock(&sleep_lock);
    }

    in_parallel = 1;
    run_parts(&j, 0);
    in_parallel = 0;

    wait_for_zero(&j.remaining, 1, fits ? SPIN_NS : 0);
    atomic_store(&current, NULL);
    wait_for_zero(&inside, 0, fits ? SPIN_NS : 0); /* a worker between its last look and leaving: short */
    pthread_mutex_unlock(&pool_lock);
}
