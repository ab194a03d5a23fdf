/*
 * Runtime CPU features. The feature ids are generated from the toolkit's
 * tables (tools/dispatchgen/dispatchkit/features/) into dispatch/_cpu_features_table.h,
 * which `dispatchgen configure` writes beside dispatch/_cpu_dispatch.h;
 * they are fixed forever (Note [Stable C ids] in tools/dispatchgen/dispatchkit/ctable.py).
 */
#ifndef DISPATCH_CPU_FEATURES_H_
#define DISPATCH_CPU_FEATURES_H_

#ifdef __cplusplus
extern "C" {
#endif

/* enum dispatch_cpu_feature: DISPATCH_CPU_FEATURE_<NAME> for every feature
 * and group of the toolkit's tables, NONE = 0 and the MAX sentinel. */
#include "dispatch/_cpu_features_table.h"

/*
 * The runtime API (sources/cpu/). Detection runs once, is thread-safe and
 * allocates nothing; every function may be called before dispatch_cpu_init(),
 * which it then runs.
 *
 * dispatch_cpu_init: detect, then apply DISPATCH_DISABLE_CPU_FEATURES /
 *   DISPATCH_ENABLE_CPU_FEATURES. Returns 0, or -1 with dispatch_cpu_error()
 *   set (bad env value, impossible request). Idempotent. ENABLE=baseline
 *   keeps the baseline alone (Note [Baseline token] in cpu_features.c).
 * dispatch_cpu_have: 1 when the running CPU has the feature (after the env
 *   overrides), else 0. Unknown ids give 0.
 */
int dispatch_cpu_init(void);
int dispatch_cpu_have(int feature);
const char *dispatch_cpu_error(void);

/* DISPATCH_CPU_HAVE(AVX2): runtime test by table name. */
#define DISPATCH_CPU_HAVE(FEATURE_NAME) dispatch_cpu_have(DISPATCH_CPU_FEATURE_##FEATURE_NAME)

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_CPU_FEATURES_H_ */
