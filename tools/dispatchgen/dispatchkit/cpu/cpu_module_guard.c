/*
 * The exported init function of a downstream extension: the baseline guard,
 * the env check, then the author's DISPATCH_MODULE_INIT, then the report.
 *
 * Note [Module guard]
 * A downstream extension built with a baseline the CPU lacks must not import
 * (NumPy's npy_cpu_init + baseline check, for every package). As Note
 * [Baseline guard] in cpu_baseline_guard.c explains, the check cannot live in
 * code compiled with the baseline flags, so this file is the extension's
 * PyInit_<DISPATCH_MODULE_NAME>: it is compiled with the runtime, WITHOUT the
 * baseline flags (the user's meson.build puts it in the runtime's static
 * library, see docs/toolkit.md), and only once the CPU has every baseline feature does
 * it call the author's dispatch_module_init_<NAME> (DISPATCH_MODULE_INIT in
 * dispatch/cpu_module.h), the first code built with those flags to run.
 *
 * Failures are ImportError naming the package and the missing features
 * (hardware detection, which the env variables cannot change); a refused
 * <PREFIX>_*_CPU_FEATURES request is ImportError (both set) or RuntimeError
 * (a request that cannot be honoured), as dispatch._cpu does for dispatch.
 *
 * After the author's init the module gets its own report:
 *   __cpu_baseline__  list of the build's baseline features
 *   __cpu_dispatch__  list of the build's dispatch features
 *   __cpu_features__  dict feature -> bool (running CPU, after the env)
 *   __cpu_targets__   dict dispatched function -> chosen target, from the
 *                     DISPATCH_CPU_DISPATCH_TRACE records of this extension
 * Single-phase init only: a PyModuleDef returned for multi-phase init is
 * passed through without the report.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define DISPATCH_NO_CPU_INTRINSICS_HEADERS
#include "dispatch/_cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"

#include <string.h>

#ifndef DISPATCH_MODULE_NAME
    #error "compile cpu_module_guard.c with -DDISPATCH_MODULE_NAME=<the extension's module name>"
#endif
#ifndef DISPATCH_PACKAGE_NAME
    #define DISPATCH_PACKAGE_NAME DISPATCH_MODULE_NAME
#endif
#ifndef DISPATCH_CPU_ENV_PREFIX
    #define DISPATCH_CPU_ENV_PREFIX DISPATCH
#endif

#define DISPATCH__MG_CAT_(A, B) A##B
#define DISPATCH__MG_CAT(A, B) DISPATCH__MG_CAT_(A, B)
#define DISPATCH__MG_STR_(X) #X
#define DISPATCH__MG_STR(X) DISPATCH__MG_STR_(X)
#define DISPATCH__MG_PACKAGE DISPATCH__MG_STR(DISPATCH_PACKAGE_NAME)

PyObject *DISPATCH__MG_CAT(dispatch_module_init_, DISPATCH_MODULE_NAME)(void);

#define DISPATCH__MG_ID(NAME, ...) DISPATCH_CPU_FEATURE_##NAME,
static const int dispatch__mg_baseline[] = {
    DISPATCH_WITH_CPU_BASELINE_CALL(DISPATCH__MG_ID, _)
    DISPATCH_CPU_FEATURE_NONE
};
static const int dispatch__mg_dispatch[] = {
    DISPATCH_WITH_CPU_DISPATCH_CALL(DISPATCH__MG_ID, _)
    DISPATCH_CPU_FEATURE_NONE
};

static int dispatch__mg_missing(char *buf, size_t cap)
{
    int missing = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (const int *id = dispatch__mg_baseline; *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        if (dispatch_cpu_have_detected(*id)) {
            continue;
        }
        int n = snprintf(buf + len, cap - len, missing ? " %s" : "%s",
                         dispatch_cpu_feature_name(*id));
        if (n > 0 && (size_t)n < cap - len) {
            len += (size_t)n;
        }
        ++missing;
    }
    return missing;
}

static PyObject *dispatch__mg_names(const int *ids)
{
    PyObject *list = PyList_New(0);
    for (const int *id = ids; list && *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        PyObject *s = PyUnicode_FromString(dispatch_cpu_feature_name(*id));
        if (!s || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(s);
    }
    return list;
}

static int dispatch__mg_set_features(PyObject *dict, const int *ids)
{
    for (const int *id = ids; *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        if (PyDict_SetItemString(dict, dispatch_cpu_feature_name(*id),
                                 dispatch_cpu_have(*id) ? Py_True : Py_False) < 0) {
            return -1;
        }
    }
    return 0;
}

static int dispatch__mg_report(PyObject *m)
{
    PyObject *baseline = dispatch__mg_names(dispatch__mg_baseline);
    if (!baseline || PyModule_AddObject(m, "__cpu_baseline__", baseline) < 0) {
        Py_XDECREF(baseline);
        return -1;
    }
    PyObject *dispatched = dispatch__mg_names(dispatch__mg_dispatch);
    if (!dispatched || PyModule_AddObject(m, "__cpu_dispatch__", dispatched) < 0) {
        Py_XDECREF(dispatched);
        return -1;
    }
    PyObject *features = PyDict_New();
    if (!features || dispatch__mg_set_features(features, dispatch__mg_baseline) < 0 ||
        dispatch__mg_set_features(features, dispatch__mg_dispatch) < 0 ||
        PyModule_AddObject(m, "__cpu_features__", features) < 0) {
        Py_XDECREF(features);
        return -1;
    }
    PyObject *targets = PyDict_New();
    if (!targets) {
        return -1;
    }
    const int n = dispatch_cpu_trace_count();
    for (int i = 0; i < n; ++i) {
        dispatch_cpu_trace_record r;
        if (dispatch_cpu_trace_get(i, &r) != 0) {
            continue;
        }
        PyObject *chosen = PyUnicode_FromString(r.chosen);
        if (!chosen || PyDict_SetItemString(targets, r.name, chosen) < 0) {
            Py_XDECREF(chosen);
            Py_DECREF(targets);
            return -1;
        }
        Py_DECREF(chosen);
    }
    if (PyModule_AddObject(m, "__cpu_targets__", targets) < 0) {
        Py_DECREF(targets);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC DISPATCH__MG_CAT(PyInit_, DISPATCH_MODULE_NAME)(void)
{
    char missing[1024];
    if (dispatch__mg_missing(missing, sizeof(missing)) > 0) {
        PyErr_Format(PyExc_ImportError,
            "%s cannot be imported: this CPU lacks %s, which this build of %s requires "
            "(its baseline is '%s' and all of its code may use those instructions). "
            "Install a build made for this CPU (a lower cpu-baseline) or run on a CPU "
            "that has them.",
            DISPATCH__MG_PACKAGE, missing, DISPATCH__MG_PACKAGE, DISPATCH_WITH_CPU_BASELINE);
        return NULL;
    }
    if (dispatch_cpu_init() != 0) {
        PyErr_Format(dispatch_cpu_error_kind() == DISPATCH_CPU_ERROR_CONFLICT
                         ? PyExc_ImportError : PyExc_RuntimeError,
                     "%s: %s", DISPATCH__MG_PACKAGE, dispatch_cpu_error());
        return NULL;
    }
    const char *warnings = dispatch_cpu_warnings();
    if (warnings[0] && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "%s: %s",
                                        DISPATCH__MG_PACKAGE, warnings) < 0) {
        return NULL;
    }
    PyObject *m = DISPATCH__MG_CAT(dispatch_module_init_, DISPATCH_MODULE_NAME)();
    if (m && PyModule_Check(m) && dispatch__mg_report(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
