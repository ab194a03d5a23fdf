/* The thread pool under stress (parallel.c): every element of every call is
 * visited exactly once, whatever the thread count, the gap between calls
 * (workers spinning, or asleep), concurrent callers, nested calls and a
 * fork. Built plainly by meson test, and with -fsanitize=thread by
 * .ci/sanitize.sh (Note [Joining a job without a lock] is what it checks). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dispatch/iterator.h"

/* Under ThreadSanitizer every atomic is a call: smaller calls, and no fork
 * (it refuses to start threads in a child of a threaded process). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif
#define MAX_N (UNDER_TSAN ? 20011 : 200003)

/* dispatch_set_num_threads reports a bad count through error.c; this test
 * never passes one, and links the pool alone. */
int dispatch_error_set(int code, const char *fmt, ...)
{
    (void)fmt;
    fprintf(stderr, "unexpected error %d\n", code);
    exit(1);
}

typedef struct {
    atomic_uchar *seen; /* one counter per element of the call */
} visit;

static atomic_int failures;

static void mark(void *arg, int64_t begin, int64_t end)
{
    visit *v = arg;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&v->seen[i], 1);
}

static void mark_nested(void *arg, int64_t begin, int64_t end)
{
    visit *v = arg;
    visit inner = {v->seen + begin};
    /* A call from inside a job runs on its own thread (Note [Thread pool]). */
    dispatch_parallel_for(end - begin, 16, 1, mark, &inner);
}

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* One call over n elements; 0 when each was visited once. */
static int check_call(int64_t n, int64_t grain, int64_t align, int nested, const char *what)
{
    atomic_uchar *seen = calloc((size_t)n, 1);
    if (!seen) return 1;
    visit v = {seen};
    dispatch_parallel_for(n, grain, align, nested ? mark_nested : mark, &v);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (atomic_load(&seen[i]) != 1) {
            fprintf(stderr, "%s: n=%lld element %lld visited %d times\n", what, (long long)n,
                    (long long)i, (int)atomic_load(&seen[i]));
            bad = 1;
            break;
        }
    }
    free(seen);
    return bad;
}

/* Note [A spinning worker yields]: a worker started while the caller's
 * other CPU is busy (a thread that waits for work by spinning on
 * sched_yield, as NumPy's OpenBLAS threads do after import) runs its parts
 * off the caller's CPU. Run in a fresh (forked) process, whose pool has no
 * worker yet; 0 when it holds (or when it cannot be set up here). */
#if defined(__GLIBC__)
static atomic_int hog_stop;

static void *yielding_hog(void *arg)
{
    (void)arg;
    while (!atomic_load(&hog_stop)) sched_yield();
    return NULL;
}

typedef struct {
    pthread_t caller;
    atomic_int worker_cpu, worker_parts;
} where_job;

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void where_part(void *arg, int64_t begin, int64_t end)
{
    where_job *w = arg;
    (void)begin;
    (void)end;
    if (!pthread_equal(pthread_self(), w->caller)) {
        atomic_store(&w->worker_cpu, sched_getcpu());
        atomic_fetch_add(&w->worker_parts, 1);
    }
    for (int64_t until = now_us() + 2000; now_us() < until;) { /* 2 ms a part */
    }
}

static int worker_starts_off_the_callers_cpu(void)
{
    cpu_set_t every, two, other;
    int here = sched_getcpu(), there = -1;
    if (here < 0 || sched_getaffinity(0, sizeof every, &every) != 0) return 0;
    for (int c = 0; c < CPU_SETSIZE && there < 0; c++)
        if (c != here && CPU_ISSET(c, &every)) there = c;
    if (there < 0) return 0; /* one CPU: nothing to place */
    CPU_ZERO(&two);
    CPU_SET(here, &two);
    CPU_SET(there, &two);
    CPU_ZERO(&other);
    CPU_SET(there, &other);
    pthread_attr_t attr;
    pthread_t hog;
    if (sched_setaffinity(0, sizeof two, &two) != 0 || pthread_attr_init(&attr) != 0) return 0;
    pthread_attr_setaffinity_np(&attr, sizeof other, &other);
    if (pthread_create(&hog, &attr, yielding_hog, NULL) != 0) return 0;
    pthread_attr_destroy(&attr);
    /* Both CPUs busy for a while (the caller spins too), as the kernel
     * sees them when the first parallel call starts its worker. */
    for (int64_t until = now_us() + 50000; now_us() < until;) {
    }
    here = sched_getcpu();
    where_job w = {.caller = pthread_self()};
    dispatch_set_num_threads(2);
    dispatch_parallel_for(8, 1, 1, where_part, &w);
    atomic_store(&hog_stop, 1);
    pthread_join(hog, NULL);
    if (atomic_load(&w.worker_parts) > 0 && atomic_load(&w.worker_cpu) == here) {
        fprintf(stderr, "the worker ran %d part(s) on the caller's CPU %d, the other one busy\n",
                atomic_load(&w.worker_parts), here);
        return 1;
    }
    return 0;
}
#else
static int worker_starts_off_the_callers_cpu(void)
{
    return 0;
}
#endif

static void *caller_thread(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int k = 0; k < 200; k++) {
        int64_t n = 1000 + (MAX_N / 25) * ((k * 31 + id) % 97) / 4;
        if (check_call(n, 64, 1 + k % 3, k % 5 == 0, "concurrent callers")) failures++;
        if (k % 17 == 0) sleep_us(1500); /* past the worker spin: they sleep */
    }
    return NULL;
}

int main(void)
{
    /* Thread counts below, at and far above the CPUs (the short-spin path). */
    const int counts[] = {1, 2, 3, 8, 33};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        dispatch_set_num_threads(counts[c]);
        for (int k = 0; k < 300; k++) {
            int64_t n = 1 + (int64_t)k * k * 37 % MAX_N;
            failures += check_call(n, 1 + k % 50, 1 + k % 64, k % 7 == 0, "one caller");
            if (k % 50 == 0) sleep_us(3000); /* workers asleep for the next call */
            else if (k % 10 == 0) sleep_us(50);
        }
    }

    /* Note [Following the affinity mask]: pinned to one CPU between calls,
     * the pool counts again and its workers stop spinning mid-way; unpinned,
     * they spin again. Every element is still visited once. */
    cpu_set_t every, one;
    if (sched_getaffinity(0, sizeof every, &every) == 0 && CPU_COUNT(&every) > 1) {
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &every)) {
                CPU_SET(c, &one);
                break;
            }
        }
        dispatch_set_num_threads(2);
        for (int k = 0; k < 120; k++) {
            if (k % 20 == 0) sched_setaffinity(0, sizeof one, &one);
            if (k % 20 == 10) sched_setaffinity(0, sizeof every, &every);
            failures += check_call(20000 + k * 13, 64, 1 + k % 4, k % 9 == 0, "affinity changes");
            if (k % 5 == 0) sleep_us(1200); /* past the recount interval */
        }
        sched_setaffinity(0, sizeof every, &every);
        sleep_us(1200);
        failures += check_call(20000, 64, 1, 0, "affinity restored");
        if (dispatch_pool_usable_cpus() != CPU_COUNT(&every)) {
            fprintf(stderr, "the pool counts %d CPUs, the mask has %d\n",
                    dispatch_pool_usable_cpus(), CPU_COUNT(&every));
            failures++;
        }
    }

    dispatch_set_num_threads(4);
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, caller_thread, (void *)(intptr_t)i);
    for (int i = 0; i < 200; i++) {
        if (i % 40 == 0) dispatch_set_num_threads(2 + i % 3); /* changed under running calls */
        failures += check_call(50000 + i, 100, 8, 0, "main beside callers");
    }
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);

    /* Note [Thread pool after fork]: the child starts its own workers. */
    dispatch_set_num_threads(3);
    if (UNDER_TSAN) goto done;
    /* Through an exe wrapper (a cross build's meson test under qemu-user):
     * qemu-user 7.2 aborts when a forked child of a threaded process starts
     * threads (an assertion in its TCG), whatever the program; the native
     * builds run this part. */
    if (getenv("MESON_EXE_WRAPPER") != NULL) {
        printf("fork part skipped: run through %s\n", getenv("MESON_EXE_WRAPPER"));
        goto done;
    }
    failures += check_call(100000, 100, 1, 0, "before fork");
    pid_t pid = fork();
    if (pid == 0) _exit(check_call(100000, 100, 1, 0, "in the child") ? 3 : 0);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the forked child failed (status %d)\n", status);
        failures++;
    }
    failures += check_call(100000, 100, 1, 0, "after fork");

    /* A fresh pool each try: Note [A spinning worker yields]. Once started,
     * the worker is placed by the kernel, which on a machine loaded by other
     * processes (CI runs two suites at once) may move it beside its caller;
     * the old pool started it there every time, so one try in five off the
     * caller's CPU shows the start mask works. */
    int placed = 0;
    for (int attempt = 0; attempt < 5 && !placed; attempt++) {
        pid = fork();
        if (pid == 0) _exit(worker_starts_off_the_callers_cpu() ? 3 : 0);
        status = 0;
        waitpid(pid, &status, 0);
        placed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (!placed) {
        fprintf(stderr, "the worker started beside its caller in five fresh pools\n");
        failures++;
    }

done:
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("thread pool: every element once\n");
    return 0;
}
