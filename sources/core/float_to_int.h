/*
 * Float -> integer conversions by the rule of Note [Float to integer casts]
 * (cpu_loops_reference.c): truncated toward zero where the value fits,
 * else INT32_MIN / INT64_MIN (NaN and +-inf too), on every architecture.
 * Shared by the cast table and its test (test_casts.c, which checks the
 * portable functions too where the table uses the x86 instruction).
 */
#ifndef DISPATCH_CORE_FLOAT_TO_INT_H_
#define DISPATCH_CORE_FLOAT_TO_INT_H_

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

/* x where mask is all ones, else +0.0 (the bits masked: no branch). */
static inline double dispatch_keep_if_(double x, uint64_t mask) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    b &= mask;
    memcpy(&x, &b, sizeof b);
    return x;
}

/* Portable C, no UB and no branch: x > -2**31 - 1 and x < 2**31 hold
 * exactly for the doubles that truncate into int32 (false for NaN); where
 * they do not, +0.0 is converted instead of x and the result is masked to
 * INT32_MIN. A branch instead is mispredicted on data that mixes in- and
 * out-of-range values (4x slower). */
static inline int32_t dispatch_float_to_i32_portable(double x) {
    uint64_t fits = (uint64_t)0 - (uint64_t)((x > -2147483649.0) & (x < 2147483648.0));
    uint32_t v = (uint32_t)(int32_t)dispatch_keep_if_(x, fits);
    return (int32_t)((v & (uint32_t)fits) | ((uint32_t)INT32_MIN & ~(uint32_t)fits));
}
static inline int64_t dispatch_float_to_i64_portable(double x) {
    uint64_t fits = (uint64_t)0 - (uint64_t)((x >= -0x1p63) & (x < 0x1p63));
    uint64_t v = (uint64_t)(int64_t)dispatch_keep_if_(x, fits);
    return (int64_t)((v & fits) | ((uint64_t)INT64_MIN & ~fits));
}

#if defined(__x86_64__) && defined(__SSE2__)
/* x86-64's cvttsd2si is the rule itself (its "integer indefinite" for NaN
 * and out of range), one instruction; as an intrinsic it is defined for
 * every input. (GCC 12 compiles the portable form here into a loop-carried
 * dependency through a partial register: 5 ns an element.) */
static inline int32_t dispatch_float_to_i32(double x) { return _mm_cvttsd_si32(_mm_set_sd(x)); }
static inline int64_t dispatch_float_to_i64(double x) { return _mm_cvttsd_si64(_mm_set_sd(x)); }
#else
static inline int32_t dispatch_float_to_i32(double x) { return dispatch_float_to_i32_portable(x); }
static inline int64_t dispatch_float_to_i64(double x) { return dispatch_float_to_i64_portable(x); }
#endif

#endif /* DISPATCH_CORE_FLOAT_TO_INT_H_ */
