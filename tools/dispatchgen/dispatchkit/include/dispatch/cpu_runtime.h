/*
 * The runtime CPU features beyond the core API of cpu_features.h: the feature
 * table as the C side knows it, the hardware-only view the baseline guard
 * needs, the env-override report (error kind, warnings), and the dispatch
 * trace: which variant each dispatched function chose at load.
 *
 * Everything here lives in sources/cpu/ (dispatch_cpu_lib), which is compiled
 * without the baseline flags; see Note [Baseline guard] in
 * sources/cpu/cpu_baseline_guard.c.
 */
#ifndef DISPATCH_CPU_RUNTIME_H_
#define DISPATCH_CPU_RUNTIME_H_

#include "dispatch/cpu_features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The feature table
 * ------------------------------------------------------------------------ */

/* One row per feature and group of every architecture. `implies` lists the
 * direct implications by name, space separated, as the toolkit tables
 * (tools/dispatchgen/dispatchkit/features/) do for the architecture of this build ("" in
 * the rows of other architectures); a group (`is_group`) lists its members
 * there and is present exactly when all of them are. */
typedef struct dispatch_cpu_feature_info {
    int id;              /* enum dispatch_cpu_feature */
    const char *name;    /* table name: "AVX512_SKX" */
    const char *implies; /* "AVX512CD", "" for none */
    int is_group;
    int on_this_arch;    /* 1 when the running build's architecture has it */
} dispatch_cpu_feature_info;

/* Rows of the table, all architectures; index 0 .. count-1. */
int dispatch_cpu_feature_count(void);
const dispatch_cpu_feature_info *dispatch_cpu_feature_at(int index);
/* Case-insensitive lookup of a table name; 0 (NONE) when unknown. */
int dispatch_cpu_feature_id(const char *name);
/* Table name of an id, or NULL. */
const char *dispatch_cpu_feature_name(int feature);
/* The toolkit's arch name: "x86_64", "x86", "aarch64", "armhf", "ppc64le",
 * "ppc64" (big-endian), "s390x", "riscv64", "loongarch64"; "unknown"
 * elsewhere. */
const char *dispatch_cpu_arch(void);

/* ------------------------------------------------------------------------
 * Detection and the env overrides
 * ------------------------------------------------------------------------ */

/* 1 when the hardware (and the OS, for register state) supports the feature
 * and everything it implies, ignoring DISPATCH_*_CPU_FEATURES. Never fails. */
int dispatch_cpu_have_detected(int feature);

/* The build's baseline and dispatch sets, space separated table names
 * (DISPATCH_WITH_CPU_BASELINE / DISPATCH_WITH_CPU_DISPATCH of the generated
 * _cpu_dispatch.h this library was compiled with). */
const char *dispatch_cpu_baseline_names(void);
const char *dispatch_cpu_dispatch_names(void);

/* The compiler that built the runtime, "gcc 12.2.0" / "clang 14.0.6"
 * (python -m dispatch reports it). */
const char *dispatch_cpu_compiler(void);

/* What kind of error dispatch_cpu_init() reported; Python maps CONFLICT to
 * ImportError and ENV to RuntimeError. */
enum dispatch_cpu_error_kind {
    DISPATCH_CPU_ERROR_NONE = 0,
    DISPATCH_CPU_ERROR_CONFLICT = 1, /* both env variables set */
    DISPATCH_CPU_ERROR_ENV = 2       /* a request that cannot be honoured */
};
int dispatch_cpu_error_kind(void);

/* Warnings of the last detection, one per line ("" for none): names in the
 * env variables that this build does not dispatch. */
const char *dispatch_cpu_warnings(void);

/* Longest accepted value of an env variable, in bytes. */
#define DISPATCH_CPU_ENV_MAX 1023

/* ------------------------------------------------------------------------
 * The dispatch trace. See Note [Chosen once] in cpu_dispatch_trace.c.
 * ------------------------------------------------------------------------ */

typedef struct dispatch_cpu_trace_record {
    const char *name;    /* the dispatched function: "add_f32" */
    const char *targets; /* its compiled targets, highest interest first */
    const char *chosen;  /* the target the loader chose: "AVX512_SKX", "baseline" */
} dispatch_cpu_trace_record;

#define DISPATCH_CPU_TRACE_CAPACITY 512

/* Record (or, for a name recorded before, update) a choice. The strings must
 * outlive the process's use of the trace (string literals). Returns 0, or -1
 * when the registry is full. */
int dispatch_cpu_trace_record_choice(const char *name, const char *targets, const char *chosen);
int dispatch_cpu_trace_count(void);
/* Copy record `index` (0 .. count-1) to *out; 0, or -1 when out of range. */
int dispatch_cpu_trace_get(int index, dispatch_cpu_trace_record *out);

/* Record the choice of the dispatched source being compiled: use it in the
 * chooser, next to DISPATCH_CPU_DISPATCH_CALL, in a file that includes the
 * source's generated `X.dispatch.h` (which defines DISPATCH_CPU_DISPATCH_TARGETS). */
#define DISPATCH_CPU_DISPATCH_TRACE(NAME_STR) \
    dispatch_cpu_trace_record_choice((NAME_STR), DISPATCH_CPU_DISPATCH_TARGETS, \
                                     DISPATCH_CPU_DISPATCH_INFO())

/* A chooser sets a function pointer with DISPATCH_CPU_DISPATCH_CALL and
 * records it with DISPATCH_CPU_DISPATCH_TRACE. Registering runs it now and
 * keeps it for dispatch_cpu_redetect_for_tests(). 0, or -1 when full. */
typedef void (*dispatch_cpu_chooser)(void);
int dispatch_cpu_dispatch_register(dispatch_cpu_chooser choose);

/* The test hook: detect again, re-reading the env variables, then run every
 * registered chooser again. Not for production; callers must ensure no other
 * thread dispatches meanwhile. Returns what dispatch_cpu_init() would. */
int dispatch_cpu_redetect_for_tests(void);

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_CPU_RUNTIME_H_ */
