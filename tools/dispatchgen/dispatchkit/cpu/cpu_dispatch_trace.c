/*
 * The dispatch trace (which variant each dispatched function chose) and the
 * chooser registry behind the one documented way to choose again.
 */
#include "cpu_internal.h"

#include <stdatomic.h>
#include <string.h>

/* Note [Chosen once]
 * A dispatched function is chosen once, when its module loads: a chooser
 * evaluates DISPATCH_CPU_DISPATCH_CALL(f, ) against the detected features,
 * stores the resulting function pointer and records the choice with
 * DISPATCH_CPU_DISPATCH_TRACE. Calls then go through the pointer: no feature
 * test per call, and no way for a call to observe a half-changed choice.
 *
 * Tests need to run every compiled variant in one process now and then (the
 * env restriction in a subprocess covers the rest), so a chooser is
 * registered with dispatch_cpu_dispatch_register(), which runs it and keeps
 * it. dispatch_cpu_redetect_for_tests() re-reads the env variables, detects
 * again and runs every registered chooser again. That is the only way to
 * change a choice; it is not thread-safe against concurrent dispatch by
 * design (no lock on the hot path), hence its name. */

static atomic_flag dispatch__trace_lock = ATOMIC_FLAG_INIT;
static dispatch_cpu_trace_record dispatch__trace[DISPATCH_CPU_TRACE_CAPACITY];
static int dispatch__trace_n;
static dispatch_cpu_chooser dispatch__choosers[DISPATCH_CPU_TRACE_CAPACITY];
static int dispatch__choosers_n;

static void dispatch__trace_acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&dispatch__trace_lock, memory_order_acquire)) {
    }
}

static void dispatch__trace_release(void)
{
    atomic_flag_clear_explicit(&dispatch__trace_lock, memory_order_release);
}

int dispatch_cpu_trace_record_choice(const char *name, const char *targets, const char *chosen)
{
    int rc = 0;
    dispatch__trace_acquire();
    int i = 0;
    while (i < dispatch__trace_n && strcmp(dispatch__trace[i].name, name) != 0) {
        ++i;
    }
    if (i == dispatch__trace_n) {
        if (i == DISPATCH_CPU_TRACE_CAPACITY) {
            rc = -1;
        } else {
            ++dispatch__trace_n;
        }
    }
    if (rc == 0) {
        dispatch__trace[i].name = name;
        dispatch__trace[i].targets = targets;
        dispatch__trace[i].chosen = chosen;
    }
    dispatch__trace_release();
    return rc;
}

int dispatch_cpu_trace_count(void)
{
    dispatch__trace_acquire();
    int n = dispatch__trace_n;
    dispatch__trace_release();
    return n;
}

int dispatch_cpu_trace_get(int index, dispatch_cpu_trace_record *out)
{
    int rc = -1;
    dispatch__trace_acquire();
    if (index >= 0 && index < dispatch__trace_n) {
        *out = dispatch__trace[index];
        rc = 0;
    }
    dispatch__trace_release();
    return rc;
}

int dispatch_cpu_dispatch_register(dispatch_cpu_chooser choose)
{
    dispatch__trace_acquire();
    int rc = dispatch__choosers_n < DISPATCH_CPU_TRACE_CAPACITY ? 0 : -1;
    if (rc == 0) {
        dispatch__choosers[dispatch__choosers_n++] = choose;
    }
    dispatch__trace_release();
    /* Run outside the lock: the chooser records its trace, which locks. */
    choose();
    return rc;
}

int dispatch_cpu_redetect_for_tests(void)
{
    const int rc = dispatch__cpu_redetect();
    dispatch__trace_acquire();
    const int n = dispatch__choosers_n;
    dispatch__trace_release();
    /* Choosers only append to the registry, so the first n stay put. */
    for (int i = 0; i < n; ++i) {
        dispatch__choosers[i]();
    }
    return rc;
}
