/*
 * A small vector vocabulary for the kernels: one set of names over AVX-512,
 * AVX2, SSE2, AArch64 Advanced SIMD (ASIMD, the aarch64 baseline) and plain
 * scalar C, so a kernel file reads as one algorithm and the target
 * differences live in simd/:
 *
 *     simd/x86_512-inl.h   AVX-512F: 16 floats or 8 doubles, mask registers
 *     simd/x86_256-inl.h   AVX2 (with or without FMA): 8 floats or 4 doubles
 *     simd/x86_128-inl.h   SSE2 (SSE4.1's blendv where present): 4 or 2
 *     simd/arm_neon-inl.h  ASIMD: 4 floats or 2 doubles, FMA always
 *     simd/scalar-inl.h    one lane, for every other architecture
 *     simd/generic-inl.h   what is built from those: ldexp, max/min with
 *                          our NaN rule, partial loads, the FTZ mode
 *
 * This file is the only one a kernel includes; the ones in simd/ are parts
 * of it, not headers of their own (Note [One template per lane type]).
 *
 * Note [Width from the compiler's flags]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A dispatchable source is compiled once per target with that target's
 * flags; the flags define the compiler's own __AVX512F__/__AVX2__/__FMA__
 * macros. We pick the width from those rather than from DISPATCH_HAVE_*: they
 * always agree with what the compiler may emit (the toolkit's macros follow
 * the same flags), and the same source also compiles in a bare `gcc -mavx2`
 * test harness. The baseline build of an x86-64 source gets SSE2, of an
 * aarch64 source ASIMD; any other architecture gets the scalar branch (one
 * lane), which the compiler may still auto-vectorize under its own flags.
 *
 * Note [Same answer on every target]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * + - * / sqrt are correctly rounded on every width, so they agree bit for
 * bit. max/min are defined here, not by the instruction: the result is the
 * first operand if it is NaN, else the second if it is NaN, else the larger
 * (smaller); on a tie (+0 vs -0) the second operand. dv_muladd fuses only
 * where the target has FMA, so polynomial kernels (exp, log) agree across
 * targets only within their documented ulp bound; kernels that promise
 * bit-identical results never call dv_muladd.
 *
 * Tails are handled by copying the last partial vector through a small stack
 * buffer (dv_*_partial), so the tail runs the very same instructions as the
 * body, and no load ever reads past the caller's memory. Loads and stores are
 * unaligned throughout.
 *
 * Note [One template per lane type]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The float32 and float64 operations of one instruction set differ only in
 * their types, intrinsic suffixes (_ps/_pd, _epi32/_epi64, _f32/_f64) and a
 * few constants (23 or 52 mantissa bits), so each is written once, in a
 * per-lane section that this file includes twice: with DV_LANE 32 and with
 * DV_LANE 64. simd/lanes.h turns DV_LANE into the section's parameters
 * (DV_T the element type, DV_V the vector type, DV_(add) the name
 * dv_add_f32 or dv_add_f64, DV_MANT, ...), and each ISA file maps its own
 * intrinsic names the same way, in a few macros at the top of its section.
 * This is NumPy's .c.src (one source, expanded per type) and Highway's
 * re-included -inl.h files done with the C preprocessor alone: no generator
 * step, the compiler sees ordinary static inline functions with the public
 * names (dv_add_f32), errors point at the template line, and an operation
 * that really differs by width (dv_split's exponent trick without 64-bit
 * shifts, NEON's mask reinterprets) says so with `#if DV_LANE == 32` on the
 * spot. We chose re-inclusion over one multi-line #define per operation so
 * the templates stay plain C that can be read, stepped through and grepped.
 * Each -inl.h file has two parts: without DV_LANE (its first inclusion) the
 * types and width; with DV_LANE the operations on that lane type.
 */
#ifndef DISPATCH_KERNELS_SIMD_H_
#define DISPATCH_KERNELS_SIMD_H_

#include <stdint.h>
#include <string.h>

#define DV_INLINE static inline __attribute__((always_inline))
#define DV_CAT_(a, b) a##b
#define DV_CAT(a, b) DV_CAT_(a, b)

#if defined(__AVX512F__)
    #define DV_ISA_INL "simd/x86_512-inl.h"
#elif defined(__AVX2__)
    #define DV_ISA_INL "simd/x86_256-inl.h"
#elif defined(__SSE2__)
    #define DV_ISA_INL "simd/x86_128-inl.h"
#elif defined(__aarch64__) && defined(__ARM_NEON)
    #define DV_ISA_INL "simd/arm_neon-inl.h"
#else
    #define DV_ISA_INL "simd/scalar-inl.h"
#endif

/* The types dv_f32/dv_f64 (vectors), dm_f32/dm_f64 (lane masks), DV_WIDTH
 * (bytes per vector, 0 for scalar) and DV_NAME. */
#include DV_ISA_INL

#if DV_WIDTH
    #define DV_LANES_F32 (DV_WIDTH / 4)
    #define DV_LANES_F64 (DV_WIDTH / 8)
#else
    #define DV_LANES_F32 1
    #define DV_LANES_F64 1
#endif

#if defined(__FMA__) || defined(__AVX512F__) || defined(DV_NEON)
    #define DV_HAVE_FMA 1
#else
    #define DV_HAVE_FMA 0
#endif

#include "simd/generic-inl.h" /* the parts that have no lane type */

/* The target's primitives, then what is built from them, for each lane type. */
#define DV_LANE 32
#include "simd/lanes.h"
#include DV_ISA_INL
#include "simd/generic-inl.h"
#undef DV_LANE

#define DV_LANE 64
#include "simd/lanes.h"
#include DV_ISA_INL
#include "simd/generic-inl.h"
#undef DV_LANE

#include "simd/lanes.h" /* without DV_LANE: the parameters are undefined again */

#endif /* DISPATCH_KERNELS_SIMD_H_ */
