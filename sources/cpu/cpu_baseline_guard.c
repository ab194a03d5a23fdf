/*
 * dispatch._cpu_guard: refuses to let the package load on a CPU that lacks
 * the build's baseline features, with an ImportError instead of SIGILL.
 *
 * Note [Baseline guard]
 * The baseline flags (-Dcpu-baseline, e.g. -mavx2) let the compiler use those
 * instructions anywhere: in loops it vectorises, in a struct copy, in a
 * module's init function, long before any dispatch decision. A build whose
 * own extension checked the CPU at import was seen to load under
 * `qemu-x86_64 -cpu Nehalem` and crash at the first call, and nothing stops
 * the compiler from crashing it earlier. So the check lives apart:
 *
 *   - this module and dispatch_cpu_lib (the detection it links) are compiled
 *     WITHOUT dispatch_baseline_dep, with the architecture minimum only, and
 *     include _cpu_dispatch.h with DISPATCH_NO_CPU_INTRINSICS_HEADERS so no
 *     intrinsics header (and no inline function in one) comes along;
 *   - dispatch/__init__.py imports it before anything built with the
 *     baseline flags (dispatch._core), so a missing baseline feature stops
 *     the import with an ImportError naming the package, what is missing
 *     and the build's baseline (as every downstream module's guard does:
 *     tools/dispatchgen/dispatchkit/cpu/cpu_module_guard.c);
 *   - it checks what the hardware has (dispatch_cpu_have_detected), not what
 *     the env variables leave: the env cannot disable baseline features, and
 *     its errors are reported by dispatch._cpu, after this check.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define DISPATCH_NO_CPU_INTRINSICS_HEADERS
#include "dispatch/_cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"

/* Every baseline name must be a table feature: a name without an enum value
 * fails to compile here rather than going unchecked. */
#define DISPATCH__GUARD_ID(NAME, ...) DISPATCH_CPU_FEATURE_##NAME,
static const int dispatch__guard_baseline[] = {
    DISPATCH_WITH_CPU_BASELINE_CALL(DISPATCH__GUARD_ID, _)
    DISPATCH_CPU_FEATURE_NONE
};

/* Writes the names of the missing baseline features into buf; returns how
 * many are missing. */
static int dispatch__guard_missing(char *buf, size_t cap)
{
    int missing = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (const int *id = dispatch__guard_baseline; *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        if (dispatch_cpu_have_detected(*id)) {
            continue;
        }
        int n = snprintf(buf + len, cap - len, missing ? " %s" : "%s", dispatch_cpu_feature_name(*id));
        if (n > 0 && (size_t)n < cap - len) {
            len += (size_t)n;
        }
        ++missing;
    }
    return missing;
}

PyDoc_STRVAR(dispatch__guard_doc,
    "Import-time check that this CPU has the build's baseline features.\n\n"
    "Importing it raises ImportError when one is missing; it is compiled\n"
    "without the baseline flags so the check itself cannot fault.");

static struct PyModuleDef dispatch__guard_module = {
    PyModuleDef_HEAD_INIT,
    "dispatch._cpu_guard",
    dispatch__guard_doc,
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__cpu_guard(void)
{
    char missing[1024];
    if (dispatch__guard_missing(missing, sizeof(missing)) > 0) {
        PyErr_Format(PyExc_ImportError,
            "dispatch cannot be imported: this CPU lacks %s, which this build of "
            "dispatch requires: its baseline "
            "(-Dcpu-baseline) is '%s' and every part of it may use those instructions. "
            "Rebuild with a lower baseline (e.g. -Csetup-args=-Dcpu-baseline=min) "
            "or run on a CPU that has them.",
            missing, DISPATCH_WITH_CPU_BASELINE);
        return NULL;
    }
    PyObject *m = PyModule_Create(&dispatch__guard_module);
    if (m && PyModule_AddStringConstant(m, "baseline", DISPATCH_WITH_CPU_BASELINE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
