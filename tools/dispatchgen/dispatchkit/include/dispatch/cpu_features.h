/*
 * Runtime CPU features: the C half of the feature tables in
 * tools/dispatchkit/features/ (one enum value per table feature and group;
 * tests/test_cpu_tables.py keeps the two in step).
 *
 * Numbers are fixed forever: they are stored nowhere, but keeping them stable
 * keeps compiled downstream extensions and this header in agreement.
 */
#ifndef DISPATCH_CPU_FEATURES_H_
#define DISPATCH_CPU_FEATURES_H_

#ifdef __cplusplus
extern "C" {
#endif

enum dispatch_cpu_feature {
    DISPATCH_CPU_FEATURE_NONE = 0,
    /* x86 */
    DISPATCH_CPU_FEATURE_SSE = 1,
    DISPATCH_CPU_FEATURE_SSE2 = 2,
    DISPATCH_CPU_FEATURE_SSE3 = 3,
    DISPATCH_CPU_FEATURE_SSSE3 = 4,
    DISPATCH_CPU_FEATURE_SSE41 = 5,
    DISPATCH_CPU_FEATURE_POPCNT = 6,
    DISPATCH_CPU_FEATURE_SSE42 = 7,
    DISPATCH_CPU_FEATURE_AVX = 8,
    DISPATCH_CPU_FEATURE_F16C = 9,
    DISPATCH_CPU_FEATURE_XOP = 10,
    DISPATCH_CPU_FEATURE_FMA4 = 11,
    DISPATCH_CPU_FEATURE_FMA3 = 12,
    DISPATCH_CPU_FEATURE_AVX2 = 13,
    DISPATCH_CPU_FEATURE_AVX512F = 30,
    DISPATCH_CPU_FEATURE_AVX512CD = 31,
    DISPATCH_CPU_FEATURE_AVX512_KNL = 40,
    DISPATCH_CPU_FEATURE_AVX512_KNM = 41,
    DISPATCH_CPU_FEATURE_AVX512_SKX = 42,
    DISPATCH_CPU_FEATURE_AVX512_CLX = 43,
    DISPATCH_CPU_FEATURE_AVX512_CNL = 44,
    DISPATCH_CPU_FEATURE_AVX512_ICL = 45,
    DISPATCH_CPU_FEATURE_AVX512_SPR = 46,
    /* x86-64 psABI levels: groups, detected as the AND of their members */
    DISPATCH_CPU_FEATURE_X86_V2 = 60,
    DISPATCH_CPU_FEATURE_X86_V3 = 61,
    DISPATCH_CPU_FEATURE_X86_V4 = 62,
    /* IBM/POWER */
    DISPATCH_CPU_FEATURE_VSX = 200,
    DISPATCH_CPU_FEATURE_VSX2 = 201,
    DISPATCH_CPU_FEATURE_VSX3 = 202,
    DISPATCH_CPU_FEATURE_VSX4 = 203,
    /* ARM */
    DISPATCH_CPU_FEATURE_NEON = 300,
    DISPATCH_CPU_FEATURE_NEON_FP16 = 301,
    DISPATCH_CPU_FEATURE_NEON_VFPV4 = 302,
    DISPATCH_CPU_FEATURE_ASIMD = 303,
    DISPATCH_CPU_FEATURE_ASIMDHP = 304,
    DISPATCH_CPU_FEATURE_ASIMDDP = 305,
    DISPATCH_CPU_FEATURE_ASIMDFHM = 306,
    DISPATCH_CPU_FEATURE_SVE = 307,
    /* IBM/Z */
    DISPATCH_CPU_FEATURE_VX = 350,
    DISPATCH_CPU_FEATURE_VXE = 351,
    DISPATCH_CPU_FEATURE_VXE2 = 352,
    DISPATCH_CPU_FEATURE_MAX = 400
};

/*
 * The runtime API (sources/cpu/). Detection runs once, is thread-safe and
 * allocates nothing; every function may be called before dispatch_cpu_init(),
 * which it then runs.
 *
 * dispatch_cpu_init: detect, then apply DISPATCH_DISABLE_CPU_FEATURES /
 *   DISPATCH_ENABLE_CPU_FEATURES. Returns 0, or -1 with dispatch_cpu_error()
 *   set (bad env value, impossible request). Idempotent.
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
