/*
 * Using dispatchable sources from C: the macros an extension author calls.
 *
 * A dispatchable source `hello.dispatch.c` starts with an @targets comment;
 * the build compiles it once per target with that target's flags (plus
 * -DDISPATCH__CPU_TARGET_CURRENT=<target> and the -D of each feature it
 * enables, from `dispatchgen.py meson-sources`) and, when
 * `baseline` is listed, once as it is. Symbols get the target's suffix through
 * DISPATCH_CPU_DISPATCH_CURFX. Another source includes the generated
 * `hello.dispatch.h`, which defines the two callback macros this header drives:
 *
 *   DISPATCH__CPU_DISPATCH_CALL(CHK, CB, ...)     one CB per target, highest first
 *   DISPATCH__CPU_DISPATCH_BASELINE_CALL(CB, ...) CB once if `baseline` is listed
 *
 * Example (the pattern of tests/examples/hello):
 *
 *   // hello.dispatch.c
 *   #include "dispatch/cpu_dispatch.h"
 *   const char *DISPATCH_CPU_DISPATCH_CURFX(whoami)(void) { return "..."; }
 *
 *   // module.c
 *   #include "hello.dispatch.h"
 *   DISPATCH_CPU_DISPATCH_DECLARE(const char *whoami, (void))
 *   static const char *(*whoami_fn)(void);
 *   ... at load: whoami_fn = DISPATCH_CPU_DISPATCH_CALL(whoami, );
 *
 * Choose once, at load, and keep the pointer: see Note [Chosen once] in
 * tools/dispatchgen/dispatchkit/cpu/cpu_dispatch_trace.c.
 */
#ifndef DISPATCH_CPU_DISPATCH_H_
#define DISPATCH_CPU_DISPATCH_H_

#include "dispatch/_cpu_dispatch.h"   /* generated: this build's baseline and dispatch sets */
#include "dispatch/cpu_features.h"    /* DISPATCH_CPU_HAVE */

#define DISPATCH_CAT_(A, B) A##B
#define DISPATCH_CAT(A, B) DISPATCH_CAT_(A, B)
#define DISPATCH_TOSTR_(X) #X
#define DISPATCH_TOSTR(X) DISPATCH_TOSTR_(X)
#define DISPATCH_EXPAND(X) X

/* Name of the symbol being compiled: `name_<TARGET>` in a target's build,
 * plain `name` in the baseline build. */
#ifdef DISPATCH__CPU_TARGET_CURRENT
    #define DISPATCH_CPU_DISPATCH_CURFX(NAME) \
        DISPATCH_CAT(DISPATCH_CAT(NAME, _), DISPATCH__CPU_TARGET_CURRENT)
    #define DISPATCH_CPU_DISPATCH_CURRENT_NAME DISPATCH_TOSTR(DISPATCH__CPU_TARGET_CURRENT)
#else
    #define DISPATCH_CPU_DISPATCH_CURFX(NAME) NAME
    #define DISPATCH_CPU_DISPATCH_CURRENT_NAME "baseline"
#endif

/* Which target this translation unit is compiled for, public: the name
 * ("AVX2", "FMA3__AVX2", "baseline") and whether this is the baseline compile
 * (1: the code the CPU runs when no dispatched target fits; a baseline
 * compile may still have AVX2 available when AVX2 is in the baseline, so
 * test this, not DISPATCH_HAVE_AVX2, before calling "the baseline version").
 * Per-ISA files of `dispatchgen meson-variants` get both on the command line
 * (so `.S` files have them too). */
#ifndef DISPATCH_CPU_TARGET_NAME
    #ifdef DISPATCH__CPU_TARGET_CURRENT
        #define DISPATCH_CPU_TARGET_NAME DISPATCH_TOSTR(DISPATCH__CPU_TARGET_CURRENT)
        #define DISPATCH_CPU_TARGET_IS_BASELINE 0
    #else
        #define DISPATCH_CPU_TARGET_NAME "baseline"
        #define DISPATCH_CPU_TARGET_IS_BASELINE 1
    #endif
#endif

/* Declare every compiled variant: DISPATCH_CPU_DISPATCH_DECLARE(void f, (int x))
 * gives `void f_AVX2(int x); ... void f(int x);` (the last when `baseline`). */
#define DISPATCH_CPU_DISPATCH_DECLARE(LEFT, ...) \
    DISPATCH__CPU_DISPATCH_CALL(DISPATCH__CPU_DISPATCH_NOCHK, DISPATCH__CPU_DISPATCH_DECLARE_CB, LEFT, __VA_ARGS__) \
    DISPATCH__CPU_DISPATCH_BASELINE_CALL(DISPATCH__CPU_DISPATCH_DECLARE_BASE_CB, LEFT, __VA_ARGS__)
#define DISPATCH__CPU_DISPATCH_NOCHK(FEATURE) 1
#define DISPATCH__CPU_DISPATCH_DECLARE_CB(CHECK, TARGET, LEFT, ...) \
    DISPATCH_CAT(DISPATCH_CAT(LEFT, _), TARGET) __VA_ARGS__;
#define DISPATCH__CPU_DISPATCH_DECLARE_BASE_CB(LEFT, ...) LEFT __VA_ARGS__;

/* The highest-interest variant the running CPU supports, else the baseline
 * one. An expression: with empty ARGS it is the function pointer,
 * `fp = DISPATCH_CPU_DISPATCH_CALL(f, );`, with ARGS a call,
 * `DISPATCH_CPU_DISPATCH_CALL(f, (x))`. A source without `baseline` has no
 * fallback: it fails to compile naming `<f>_has_no_baseline_target`; use
 * DISPATCH_CPU_DISPATCH_CALL_XB there. */
#define DISPATCH_CPU_DISPATCH_CALL(NAME, ...) \
    (DISPATCH__CPU_DISPATCH_CALL(DISPATCH_CPU_HAVE, DISPATCH__CPU_DISPATCH_CALL_CB, NAME, __VA_ARGS__) \
     DISPATCH__CPU_DISPATCH_CALL_FALLBACK(NAME, __VA_ARGS__))
#define DISPATCH__CPU_DISPATCH_CALL_CB(CHECK, TARGET, NAME, ...) \
    (CHECK) ? (DISPATCH_CAT(DISPATCH_CAT(NAME, _), TARGET) __VA_ARGS__) :

/* Like _CALL but excluding the baseline: runs the highest supported
 * dispatched variant for its effect, or nothing. A void expression. */
#define DISPATCH_CPU_DISPATCH_CALL_XB(NAME, ...) \
    (DISPATCH__CPU_DISPATCH_CALL(DISPATCH_CPU_HAVE, DISPATCH__CPU_DISPATCH_CALL_XB_CB, NAME, __VA_ARGS__) \
     ((void)0))
#define DISPATCH__CPU_DISPATCH_CALL_XB_CB(CHECK, TARGET, NAME, ...) \
    (CHECK) ? (void)(DISPATCH_CAT(DISPATCH_CAT(NAME, _), TARGET) __VA_ARGS__) :

/* Every variant the running CPU supports, highest first, then the baseline:
 * a comma expression of void calls (for tests and registration). */
#define DISPATCH_CPU_DISPATCH_CALL_ALL(NAME, ...) \
    (DISPATCH__CPU_DISPATCH_CALL(DISPATCH_CPU_HAVE, DISPATCH__CPU_DISPATCH_CALL_ALL_CB, NAME, __VA_ARGS__) \
     DISPATCH__CPU_DISPATCH_BASELINE_CALL(DISPATCH__CPU_DISPATCH_CALL_ALL_BASE_CB, NAME, __VA_ARGS__) \
     ((void)0))
#define DISPATCH__CPU_DISPATCH_CALL_ALL_CB(CHECK, TARGET, NAME, ...) \
    ((CHECK) ? (void)(DISPATCH_CAT(DISPATCH_CAT(NAME, _), TARGET) __VA_ARGS__) : (void)0),
#define DISPATCH__CPU_DISPATCH_CALL_ALL_BASE_CB(NAME, ...) (void)(NAME __VA_ARGS__),

/* The name of the variant _CALL picks ("AVX512_SKX", "FMA3__AVX2", "baseline"),
 * or "none" when no target of an XB source runs here. */
#define DISPATCH_CPU_DISPATCH_INFO() \
    (DISPATCH__CPU_DISPATCH_CALL(DISPATCH_CPU_HAVE, DISPATCH__CPU_DISPATCH_INFO_CB, ) \
     DISPATCH__CPU_DISPATCH_INFO_FALLBACK)
#define DISPATCH__CPU_DISPATCH_INFO_CB(CHECK, TARGET, ...) (CHECK) ? DISPATCH_TOSTR(TARGET) :

#endif /* DISPATCH_CPU_DISPATCH_H_ */
