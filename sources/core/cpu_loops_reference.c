/*
 * The portable reference loops of loops.h: one plain strided loop per (loop,
 * dtype), written once as a macro over the element type. Loads and stores go
 * through memcpy, so operands need no alignment (the compiler emits plain
 * moves). Integer arithmetic is done in uint64_t and converted back: it wraps
 * like two's complement and is never undefined behaviour.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"
#include "dispatch/loops.h"
#include "float_to_int.h"
#include "loops_internal.h"

#define LOAD(T, p) ({ T v_; memcpy(&v_, (p), sizeof v_); v_; })
#define STORE(T, p, v) do { T v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)

/* bool is stored as one byte, 0 or 1 */
typedef uint8_t bool8;

#define DEF_BINARY(NAME, T, OT, EXPR)                                                     \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        (void)ctx;                                                                        \
        char *o = data[0], *pa = data[1], *pb = data[2];                                  \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1], pb += s[2]) {             \
            T a = LOAD(T, pa), b = LOAD(T, pb);                                           \
            STORE(OT, o, (EXPR));                                                         \
        }                                                                                 \
    }

/* ADD/SUB read alpha from ctx (NULL: 1). */
#define DEF_ALPHA(NAME, T, EXPR)                                                          \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        T alpha = ctx ? LOAD(T, ctx) : (T)1;                                              \
        char *o = data[0], *pa = data[1], *pb = data[2];                                  \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1], pb += s[2]) {             \
            T a = LOAD(T, pa), b = LOAD(T, pb);                                           \
            STORE(T, o, (EXPR));                                                          \
        }                                                                                 \
    }

#define DEF_UNARY(NAME, T, OT, EXPR)                                                      \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        (void)ctx;                                                                        \
        char *o = data[0], *pa = data[1];                                                 \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1]) {                         \
            T a = LOAD(T, pa);                                                            \
            STORE(OT, o, (EXPR));                                                         \
        }                                                                                 \
    }

#define DEF_ADDCMUL(NAME, T, EXPR)                                                        \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        T value = ctx ? LOAD(T, ctx) : (T)1;                                              \
        char *o = data[0], *pa = data[1], *pb = data[2], *pc = data[3];                   \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1], pb += s[2], pc += s[3]) { \
            T a = LOAD(T, pa), b = LOAD(T, pb), c = LOAD(T, pc);                          \
            STORE(T, o, (EXPR));                                                          \
        }                                                                                 \
    }

#define DEF_WHERE(NAME, T)                                                                \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        (void)ctx;                                                                        \
        char *o = data[0], *pc = data[1], *pa = data[2], *pb = data[3];                   \
        for (intptr_t i = 0; i < n; i++, o += s[0], pc += s[1], pa += s[2], pb += s[3]) { \
            memcpy(o, LOAD(bool8, pc) ? pa : pb, sizeof(T));                              \
        }                                                                                 \
    }

#define DEF_FILL(NAME, T)                                                                 \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        T value = LOAD(T, ctx);                                                           \
        char *o = data[0];                                                                \
        for (intptr_t i = 0; i < n; i++, o += s[0]) STORE(T, o, value);                   \
    }

#define DEF_COPY(NAME, T)                                                                 \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        (void)ctx;                                                                        \
        char *o = data[0], *pa = data[1];                                                 \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                     \
            memmove(o, pa, (size_t)n * sizeof(T));                                        \
            return;                                                                       \
        }                                                                                 \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1]) memcpy(o, pa, sizeof(T)); \
    }

#define W(x) ((uint64_t)(x))
#define FMAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))
#define FMIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))

/* Every loop every dtype has, given the arithmetic of its category. */
#define DEF_COMMON(SFX, T)                                                                \
    DEF_BINARY(eq_##SFX, T, bool8, a == b)                                                \
    DEF_BINARY(ne_##SFX, T, bool8, a != b)                                                \
    DEF_BINARY(lt_##SFX, T, bool8, a < b)                                                 \
    DEF_BINARY(le_##SFX, T, bool8, a <= b)                                                \
    DEF_BINARY(gt_##SFX, T, bool8, a > b)                                                 \
    DEF_BINARY(ge_##SFX, T, bool8, a >= b)                                                \
    DEF_COPY(copy_##SFX, T)                                                               \
    DEF_WHERE(where_##SFX, T)                                                             \
    DEF_FILL(fill_##SFX, T)

#define DEF_INT(SFX, T)                                                                   \
    DEF_COMMON(SFX, T)                                                                    \
    DEF_ALPHA(add_##SFX, T, (T)(W(a) + W(alpha) * W(b)))                                  \
    DEF_ALPHA(sub_##SFX, T, (T)(W(a) - W(alpha) * W(b)))                                  \
    DEF_BINARY(mul_##SFX, T, T, (T)(W(a) * W(b)))                                         \
    DEF_BINARY(maximum_##SFX, T, T, a > b ? a : b)                                        \
    DEF_BINARY(minimum_##SFX, T, T, a < b ? a : b)                                        \
    DEF_UNARY(neg_##SFX, T, T, (T)(0 - W(a)))                                             \
    DEF_UNARY(abs_##SFX, T, T, (W(a) >> 63) ? (T)(0 - W(a)) : a)                               \
    DEF_ADDCMUL(addcmul_##SFX, T, (T)(W(a) + W(value) * W(b) * W(c)))

/* Note [Excess precision]
 * s390x's gcc evaluates float expressions in double under -std=c11
 * (FLT_EVAL_METHOD 1), so `a - alpha * b` rounded once there and twice (as
 * every SIMD kernel and NumPy do) elsewhere: 2 ulp apart under qemu-s390x.
 * A cast drops excess precision (C11 5.2.4.2.2), so each intermediate result
 * goes through STEP_<sfx>, the evaluation type of a product: float for float32 and
 * float16 (whose _Float16 arithmetic computes in float and rounds once at the
 * end, by design), double for float64. No-ops where FLT_EVAL_METHOD is 0. */
#define STEP_f32(x) ((float)(x))
#define STEP_f16(x) ((float)(x))
#define STEP_f64(x) ((double)(x))
#define DEF_FLOAT(SFX, T, SQRT, EXP, LOG, F)                                              \
    DEF_COMMON(SFX, T)                                                                    \
    DEF_ALPHA(add_##SFX, T, a + STEP_##SFX(alpha * b))                                    \
    DEF_ALPHA(sub_##SFX, T, a - STEP_##SFX(alpha * b))                                    \
    DEF_BINARY(mul_##SFX, T, T, a * b)                                                    \
    DEF_BINARY(div_##SFX, T, T, a / b)                                                    \
    DEF_BINARY(maximum_##SFX, T, T, FMAX(a, b))                                           \
    DEF_BINARY(minimum_##SFX, T, T, FMIN(a, b))                                           \
    DEF_UNARY(neg_##SFX, T, T, -a)                                                        \
    DEF_UNARY(abs_##SFX, T, T, (T)fabs((double)a))                                        \
    DEF_UNARY(sqrt_##SFX, T, T, (T)SQRT(a))                                               \
    DEF_UNARY(exp_##SFX, T, T, (T)EXP(a))                                                 \
    DEF_UNARY(log_##SFX, T, T, (T)LOG(a))                                                 \
    DEF_UNARY(expm1_##SFX, T, T, (T)F(expm1)(a))                                          \
    DEF_UNARY(log1p_##SFX, T, T, (T)F(log1p)(a))                                          \
    DEF_UNARY(tanh_##SFX, T, T, (T)F(tanh)(a))                                            \
    DEF_ADDCMUL(addcmul_##SFX, T, a + STEP_##SFX(STEP_##SFX(value * b) * c))

DEF_COMMON(b8, bool8)
DEF_ALPHA(add_b8, bool8, (bool8)((a | (alpha & b)) != 0))
DEF_BINARY(mul_b8, bool8, bool8, (bool8)(a & b))
DEF_BINARY(maximum_b8, bool8, bool8, (bool8)(a | b))
DEF_BINARY(minimum_b8, bool8, bool8, (bool8)(a & b))
DEF_UNARY(abs_b8, bool8, bool8, a)

/* The loops of every integer row of the list, over its storage type. */
#define DEF_INT_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) DEF_INT_ROW_##CAT(sfx, T)
#define DEF_INT_ROW_INT(SFX, T) DEF_INT(SFX, T)
#define DEF_INT_ROW_BOOL(SFX, T)
#define DEF_INT_ROW_FLOAT(SFX, T)
DISPATCH_FORALL_DTYPES(DEF_INT_ROW_)
/* F(fn): the libm function of the dtype (expm1f for float32). */
#define LIBM_F32(fn) fn##f
#define LIBM_F64(fn) fn
#define LIBM_F16(fn) (float)fn##f
DEF_FLOAT(f32, float, sqrtf, expf, logf, LIBM_F32)
DEF_FLOAT(f64, double, sqrt, exp, log, LIBM_F64)

/* Via float: a loop of a narrow float without arithmetic of its own
 * (float16 without _Float16, every other narrow float always) converts a chunk of its inputs
 * (and its scalar ctx) to float, runs the float32 reference loop, and rounds
 * the results back once each (a bool result, of the comparisons, is written
 * directly). SFX names the function, ST is the storage, DT the dtype, TO_F
 * and FROM_F its conversions (narrow_float.h). */
#define DEF_VIA_FLOAT(SFX, ST, DT, TO_F, FROM_F)                                          \
    static void SFX##_via_float(int loop, char **data, const intptr_t *s, intptr_t n,     \
                                void *ctx) {                                              \
        enum { CHUNK = 256 };                                                             \
        float buf[4][CHUNK], value;                                                       \
        void *fctx = NULL;                                                                \
        if (ctx) {                                                                        \
            value = TO_F(LOAD(ST, ctx));                                                  \
            fctx = &value;                                                                \
        }                                                                                 \
        int nin = dispatch_loop_nin(loop);                                                \
        int bool_out = dispatch_loop_operand_dtype(loop, 0, DT) == DISPATCH_BOOL;         \
        dispatch_loop_fn f32 = dispatch_reference_loops[DISPATCH_FLOAT32][loop];          \
        for (intptr_t i = 0; i < n; i += CHUNK) {                                         \
            intptr_t m = n - i < CHUNK ? n - i : CHUNK;                                   \
            char *d[4];                                                                   \
            intptr_t st[4] = {bool_out ? s[0] : (intptr_t)sizeof(float), 4, 4, 4};        \
            d[0] = bool_out ? data[0] + i * s[0] : (char *)buf[0];                        \
            for (int k = 1; k <= nin; k++) {                                              \
                const char *p = data[k] + i * s[k];                                       \
                for (intptr_t j = 0; j < m; j++) buf[k][j] = TO_F(LOAD(ST, p + j * s[k])); \
                d[k] = (char *)buf[k];                                                    \
            }                                                                             \
            f32(d, st, m, fctx);                                                          \
            if (bool_out) continue;                                                       \
            char *o = data[0] + i * s[0];                                                 \
            for (intptr_t j = 0; j < m; j++) STORE(ST, o + j * s[0], FROM_F(buf[0][j]));  \
        }                                                                                 \
    }

/* Every narrow float stored as its bits (Note [Narrow floats] in dtype.h)
 * has no arithmetic type: every loop but the bit moves goes via float, as
 * PyTorch's CPU loops do (one rounding per result), with its format's
 * conversions (narrow_float.h). float_from_<sfx> is also what a cast to it
 * stores (below). */
#define DEF_BITS_FLOAT_(NAME, sfx, T, E, M, NANS)                                          \
    static inline float float_to_##sfx(T v) {                                              \
        return dispatch_narrow_to_float(v, E, M, DISPATCH_NARROW_##NANS);                  \
    }                                                                                      \
    static inline T float_from_##sfx(double x) {                                           \
        return (T)dispatch_narrow_from_double(x, E, M, DISPATCH_NARROW_##NANS);            \
    }                                                                                      \
    static inline T float32_from_##sfx(float x) {                                          \
        return (T)dispatch_narrow_from_float(x, E, M, DISPATCH_NARROW_##NANS);             \
    }                                                                                      \
    DEF_VIA_FLOAT(sfx, T, DISPATCH_##NAME, float_to_##sfx, float32_from_##sfx)             \
    DEF_COPY(copy_##sfx, T)                                                                \
    DEF_WHERE(where_##sfx, T)                                                              \
    DEF_FILL(fill_##sfx, T)
DISPATCH_FORALL_BITS_FLOATS(DEF_BITS_FLOAT_)
/* VIA_FLOAT_BITS(name, LOOP): loop LOOP of each of them, name_<sfx>. */
#define VIA_FLOAT_BITS(NAME, LOOP) DISPATCH_FORALL_BITS_FLOATS_WITH(VIA_FLOAT_BITS_, (NAME, LOOP))
#define VIA_FLOAT_BITS_(A, DT, sfx, T, E, M, NANS) VIA_FLOAT_ONE_(sfx, VIA_FLOAT_EXPAND_ A)
#define VIA_FLOAT_EXPAND_(...) __VA_ARGS__
#define VIA_FLOAT_ONE_(...) VIA_FLOAT_ONE2_(__VA_ARGS__)
#define VIA_FLOAT_ONE2_(sfx, NAME, LOOP)                                                  \
    static void NAME##_##sfx(char **data, const intptr_t *s, intptr_t n, void *ctx) {     \
        sfx##_via_float(LOOP, data, s, n, ctx);                                           \
    }

/* float16 computes in float and rounds once per result, like NumPy. */
#if DISPATCH_HALF_NATIVE
#define F16_SQRT(x) sqrtf((float)(x))
#define F16_EXP(x) expf((float)(x))
#define F16_LOG(x) logf((float)(x))
#define HALF_TO_DOUBLE(h) ((double)(h))
#define HALF_FROM_DOUBLE(x) ((dispatch_half)(x))
DEF_FLOAT(f16, dispatch_half, F16_SQRT, F16_EXP, F16_LOG, LIBM_F16)
/* VIA_FLOAT(name, LOOP): the via-float loop of every dtype that computes via float. */
#define VIA_FLOAT(NAME, LOOP) VIA_FLOAT_BITS(NAME, LOOP)
#else
/* No _Float16 arithmetic: each float16 loop goes via float too. The float32
 * loop computes exactly what _Float16's excess precision computes (in float,
 * one rounding at the end), so both builds give the same bits. */
#define HALF_TO_DOUBLE(h) ((double)dispatch_half_to_float_inline(h))
#define HALF_FROM_DOUBLE(x) dispatch_half_from_double_inline((double)(x))
DEF_VIA_FLOAT(half, dispatch_half, DISPATCH_FLOAT16, dispatch_half_to_float_inline,
              HALF_FROM_DOUBLE)
#define VIA_FLOAT(NAME, LOOP)                                                             \
    static void NAME##_f16(char **data, const intptr_t *s, intptr_t n, void *ctx) {       \
        half_via_float(LOOP, data, s, n, ctx);                                            \
    }                                                                                     \
    VIA_FLOAT_BITS(NAME, LOOP)
DEF_COPY(copy_f16, dispatch_half)
DEF_WHERE(where_f16, dispatch_half)
DEF_FILL(fill_f16, dispatch_half)
#endif
VIA_FLOAT(eq, DISPATCH_LOOP_EQ) VIA_FLOAT(ne, DISPATCH_LOOP_NE) VIA_FLOAT(lt, DISPATCH_LOOP_LT)
VIA_FLOAT(le, DISPATCH_LOOP_LE) VIA_FLOAT(gt, DISPATCH_LOOP_GT) VIA_FLOAT(ge, DISPATCH_LOOP_GE)
VIA_FLOAT(add, DISPATCH_LOOP_ADD) VIA_FLOAT(sub, DISPATCH_LOOP_SUB)
VIA_FLOAT(mul, DISPATCH_LOOP_MUL) VIA_FLOAT(div, DISPATCH_LOOP_DIV)
VIA_FLOAT(maximum, DISPATCH_LOOP_MAXIMUM) VIA_FLOAT(minimum, DISPATCH_LOOP_MINIMUM)
VIA_FLOAT(neg, DISPATCH_LOOP_NEG) VIA_FLOAT(abs, DISPATCH_LOOP_ABS)
VIA_FLOAT(sqrt, DISPATCH_LOOP_SQRT) VIA_FLOAT(exp, DISPATCH_LOOP_EXP)
VIA_FLOAT(log, DISPATCH_LOOP_LOG) VIA_FLOAT(addcmul, DISPATCH_LOOP_ADDCMUL)
VIA_FLOAT(expm1, DISPATCH_LOOP_EXPM1) VIA_FLOAT(log1p, DISPATCH_LOOP_LOG1P)
VIA_FLOAT(tanh, DISPATCH_LOOP_TANH)

/* The loops each category has (the rows of the table below). */
#define ROW_COMMON(S)                                                                     \
    [DISPATCH_LOOP_EQ] = eq_##S, [DISPATCH_LOOP_NE] = ne_##S, [DISPATCH_LOOP_LT] = lt_##S, \
    [DISPATCH_LOOP_LE] = le_##S, [DISPATCH_LOOP_GT] = gt_##S, [DISPATCH_LOOP_GE] = ge_##S, \
    [DISPATCH_LOOP_COPY] = copy_##S, [DISPATCH_LOOP_WHERE] = where_##S,                   \
    [DISPATCH_LOOP_FILL] = fill_##S
#define ROW_BOOL(S)                                                                       \
    ROW_COMMON(S), [DISPATCH_LOOP_ADD] = add_##S, [DISPATCH_LOOP_MUL] = mul_##S,          \
    [DISPATCH_LOOP_MAXIMUM] = maximum_##S, [DISPATCH_LOOP_MINIMUM] = minimum_##S,         \
    [DISPATCH_LOOP_ABS] = abs_##S
#define ROW_INT(S)                                                                        \
    ROW_COMMON(S), [DISPATCH_LOOP_ADD] = add_##S, [DISPATCH_LOOP_SUB] = sub_##S,          \
    [DISPATCH_LOOP_MUL] = mul_##S, [DISPATCH_LOOP_MAXIMUM] = maximum_##S,                 \
    [DISPATCH_LOOP_MINIMUM] = minimum_##S, [DISPATCH_LOOP_NEG] = neg_##S,                 \
    [DISPATCH_LOOP_ABS] = abs_##S, [DISPATCH_LOOP_ADDCMUL] = addcmul_##S
#define ROW_FLOAT(S)                                                                      \
    ROW_INT(S), [DISPATCH_LOOP_DIV] = div_##S, [DISPATCH_LOOP_SQRT] = sqrt_##S,           \
    [DISPATCH_LOOP_EXP] = exp_##S, [DISPATCH_LOOP_LOG] = log_##S,                         \
    [DISPATCH_LOOP_EXPM1] = expm1_##S, [DISPATCH_LOOP_LOG1P] = log1p_##S,                 \
    [DISPATCH_LOOP_TANH] = tanh_##S

/* One row per dtype of the list (Note [One dtype list] in dtype.h), by its category. */
#define REF_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) [DISPATCH_##NAME] = {ROW_##CAT(sfx)},
const dispatch_loop_fn dispatch_reference_loops[DISPATCH_NUM_DTYPES][DISPATCH_NUM_LOOPS] = {
    DISPATCH_FORALL_DTYPES(REF_ROW_)
};

/* Casts ----------------------------------------------------------------------
 * Every source is read as one of three carriers (uint8 0/1 for bool, int64 for
 * integers, double for floats) and written from it; integers wrap to the
 * target width, as NumPy's and PyTorch's casts do.
 *
 * Note [Float to integer casts]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * C leaves an out-of-range float -> integer conversion undefined; this
 * project states the result NumPy gives on x86-64 (what cvttsd2si
 * computes; PyTorch's too, but for float64 -> uint8 beyond int32, which it
 * wraps from int64), on every architecture and path (casts, copy_, dtype=
 * of reductions, out=, and CUDA's dcu_float_to_i32/i64 in
 * cuda_device_types.cuh):
 *   - int32: truncated toward zero when that fits int32, else INT32_MIN
 *     (NaN and +-inf too: x86's "integer indefinite");
 *   - int64: the same with int64 and INT64_MIN;
 *   - int8, uint8, int16: the int32 result, wrapped to the width (300.7 ->
 *     int8 44, 1e10 -> int8 0, -1.5 -> uint8 255, NaN -> 0);
 *   - bool: x != 0 (NaN is true).
 * float_to_int.h converts with no UB and no branch (on x86-64 with
 * cvttsd2si itself). Every float source is converted as a double
 * (every narrow float and float32 widen exactly).
 * tests/test_casts_float_to_int.py checks it bit for bit against NumPy,
 * sources/core/test_casts.c on each architecture. */
#define FLOAT_TO_I32(x) dispatch_float_to_i32(x)
#define FLOAT_TO_I64(x) dispatch_float_to_i64(x)

/* A cast loop reads storage type ST, converts it to the carrier FT with
 * TO_FT (float16 -> double without _Float16, another narrow float -> float), and stores
 * CONV of `a` as TT. */
#define CAST_LOOP(NAME, ST, FT, TO_FT, TT, CONV)                                          \
    static void NAME(char **data, const intptr_t *s, intptr_t n, void *ctx) {             \
        (void)ctx;                                                                        \
        char *o = data[0], *pa = data[1];                                                 \
        for (intptr_t i = 0; i < n; i++, o += s[0], pa += s[1]) {                         \
            FT a = TO_FT(LOAD(ST, pa));                                                   \
            STORE(TT, o, CONV);                                                           \
        }                                                                                 \
    }
#define AS_IS(x) (x)

/* How a float dtype is stored from the double (or float, or int64) carrier:
 * float_from_<sfx>, a macro here for float16, float32 and float64 (float32
 * converts an int64 once, not through double), the function above for
 * each narrow float stored as its bits. */
#define float_from_f16(x) HALF_FROM_DOUBLE(x)
#define float_from_f32(x) ((float)(x))
#define float_from_f64(x) ((double)(x))

/* The casts from source S (storage ST, read as FT through TO_FT; I64 and
 * I32: the value as int64_t for int64 targets and for the narrower ones, in
 * terms of `a`) to every dtype of the list, by the target's category, and
 * the row of the cast table that lists them. */
#define CASTS_FROM(S, ST, FT, TO_FT, I64, I32)                                            \
    DISPATCH_FORALL_DTYPES_WITH(CAST_TO_, (S, ST, FT, TO_FT, I64, I32))                   \
    static const dispatch_loop_fn casts_from_##S[DISPATCH_NUM_DTYPES] = {                 \
        DISPATCH_FORALL_DTYPES_WITH(CAST_CELL_, S)};
#define CAST_EXPAND_(...) __VA_ARGS__
#define CAST_TO_(SRC, NAME, name, sfx, T, size, CAT, kind, fmt, dl)                           \
    CAST_TO_##CAT(sfx, T, CAST_EXPAND_ SRC)
#define CAST_TO_BOOL(...) CAST_TO_BOOL_(__VA_ARGS__)
#define CAST_TO_INT(...) CAST_TO_INT_(__VA_ARGS__)
#define CAST_TO_FLOAT(...) CAST_TO_FLOAT_(__VA_ARGS__)
#define CAST_TO_BOOL_(D, TT, S, ST, FT, TO_FT, I64, I32)                                  \
    CAST_LOOP(cast_##S##_##D, ST, FT, TO_FT, TT, (TT)(a != 0))
#define CAST_TO_INT_(D, TT, S, ST, FT, TO_FT, I64, I32)                                   \
    CAST_LOOP(cast_##S##_##D, ST, FT, TO_FT, TT, (TT)INT_VIA(TT, I64, I32))
#define CAST_TO_FLOAT_(D, TT, S, ST, FT, TO_FT, I64, I32)                                 \
    CAST_LOOP(cast_##S##_##D, ST, FT, TO_FT, TT, float_from_##D(a))
/* Which value an integer target TT wraps (Note [Float to integer casts]):
 * int32's when int32 holds TT's range, else int64's. */
#define INT_VIA(TT, I64, I32)                                                             \
    (sizeof(TT) < 4 || (sizeof(TT) == 4 && DISPATCH_INT_IS_SIGNED(TT)) ? W(I32) : W(I64))
#define CAST_CELL_(S, NAME, name, sfx, T, size, CAT, kind, fmt, dl) [DISPATCH_##NAME] = cast_##S##_##sfx,

CASTS_FROM(b8, bool8, bool8, AS_IS, (int64_t)a, (int64_t)a)
/* From every integer row of the list, read as int64. CASTS_FROM expands the
 * list itself, which a macro cannot do inside the list's own expansion: the
 * rows leave `CASTS_FROM (...)` unexpanded (CAST_DEFER_) and CAST_EVAL_
 * scans the result once more, outside the list. */
#define CAST_EMPTY_()
#define CAST_DEFER_(m) m CAST_EMPTY_()
#define CAST_EVAL_(...) __VA_ARGS__
#define CASTS_FROM_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) CASTS_FROM_ROW_##CAT(sfx, T)
#define CASTS_FROM_ROW_INT(SFX, T) CAST_DEFER_(CASTS_FROM)(SFX, T, T, AS_IS, (int64_t)a, (int64_t)a)
#define CASTS_FROM_ROW_BOOL(SFX, T)
#define CASTS_FROM_ROW_FLOAT(SFX, T)
CAST_EVAL_(DISPATCH_FORALL_DTYPES(CASTS_FROM_ROW_))
CASTS_FROM(f16, dispatch_half, double, HALF_TO_DOUBLE, FLOAT_TO_I64((double)a),
           FLOAT_TO_I32((double)a))
CASTS_FROM(f32, float, float, AS_IS, FLOAT_TO_I64((double)a), FLOAT_TO_I32((double)a))
CASTS_FROM(f64, double, double, AS_IS, FLOAT_TO_I64((double)a), FLOAT_TO_I32((double)a))
/* From every narrow float stored as its bits, read as float (exact). */
#define CASTS_FROM_BITS_(NAME, sfx, T, E, M, NANS)                                        \
    CASTS_FROM(sfx, T, float, float_to_##sfx, FLOAT_TO_I64((double)a), FLOAT_TO_I32((double)a))
DISPATCH_FORALL_BITS_FLOATS(CASTS_FROM_BITS_)

#define CAST_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) [DISPATCH_##NAME] = casts_from_##sfx,
const dispatch_loop_fn *const dispatch_reference_casts[DISPATCH_NUM_DTYPES] = {
    DISPATCH_FORALL_DTYPES(CAST_ROW_)
};
