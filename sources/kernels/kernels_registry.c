/*
 * Chooses each dispatchable kernel's variant once, at load, and keeps the
 * pointer: no feature test per call. Choosers are registered with the CPU
 * runtime so the documented test hook can re-run them (Note [Chosen once]).
 */
#include "dispatch/cpu_runtime.h"
#include "kernels_probe.h"
#include "probe.dispatch.h"

DISPATCH_CPU_DISPATCH_DECLARE(const char *probe_whoami, (void))
DISPATCH_CPU_DISPATCH_DECLARE(float probe_sum16, (const float *x))

static const char *(*probe_whoami_fn)(void);
static float (*probe_sum16_fn)(const float *x);
static const char *probe_chosen = "not chosen";

static void choose_probe(void)
{
    probe_whoami_fn = DISPATCH_CPU_DISPATCH_CALL(probe_whoami, );
    probe_sum16_fn = DISPATCH_CPU_DISPATCH_CALL(probe_sum16, );
    probe_chosen = DISPATCH_CPU_DISPATCH_INFO();
    DISPATCH_CPU_DISPATCH_TRACE("probe");
}

int dispatch_kernels_init(void)
{
    if (dispatch_cpu_init() != 0) {
        return -1;
    }
    return dispatch_cpu_dispatch_register(choose_probe);
}

const char *dispatch_probe_whoami(void) { return probe_whoami_fn(); }
const char *dispatch_probe_chosen(void) { return probe_chosen; }
const char *dispatch_probe_targets(void) { return DISPATCH_CPU_DISPATCH_TARGETS; }
float dispatch_probe_sum16(const float *x) { return probe_sum16_fn(x); }
