/*
 * The module init of a downstream Python extension, behind the toolkit's
 * baseline guard. See Note [Module guard] in tools/dispatchgen/dispatchkit/cpu/cpu_module_guard.c.
 *
 * The author writes, instead of `PyMODINIT_FUNC PyInit_mymod(void)`:
 *
 *   #include "dispatch/cpu_module.h"
 *   DISPATCH_MODULE_INIT(mymod)
 *   {
 *       ... choose the dispatched variants (DISPATCH_CPU_DISPATCH_CALL) ...
 *       return PyModule_Create(&mymod_def);
 *   }
 *
 * and the build links the toolkit's runtime compiled with
 * -DDISPATCH_MODULE_NAME=mymod (see docs/toolkit.md, "A downstream extension"). The
 * exported PyInit_mymod is the toolkit's: it checks the CPU against the
 * build's baseline and the package's env variables before this function runs,
 * then adds __cpu_baseline__, __cpu_dispatch__, __cpu_features__ and
 * __cpu_targets__ to the module this function returns. Writing PyInit_mymod
 * by hand as well is a link error (a duplicate definition), so the guard
 * cannot be bypassed by accident.
 */
#ifndef DISPATCH_CPU_MODULE_H_
#define DISPATCH_CPU_MODULE_H_

#include <Python.h>

#ifdef __cplusplus
    #define DISPATCH__MODULE_EXTERN extern "C"
#else
    #define DISPATCH__MODULE_EXTERN
#endif

#if defined(__GNUC__) || defined(__clang__)
    #define DISPATCH__MODULE_HIDDEN __attribute__((visibility("hidden")))
#else
    #define DISPATCH__MODULE_HIDDEN
#endif

/* The author's init: a hidden function the guard calls once the CPU passed. */
#define DISPATCH_MODULE_INIT(NAME) \
    DISPATCH__MODULE_EXTERN DISPATCH__MODULE_HIDDEN PyObject *dispatch_module_init_##NAME(void); \
    DISPATCH__MODULE_EXTERN DISPATCH__MODULE_HIDDEN PyObject *dispatch_module_init_##NAME(void)

#endif /* DISPATCH_CPU_MODULE_H_ */
