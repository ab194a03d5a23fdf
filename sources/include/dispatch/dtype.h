/*
 * Element types of tensors and PyTorch's type promotion over them.
 */
#ifndef DISPATCH_DTYPE_H_
#define DISPATCH_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

/*
 * Note [One dtype list]
 * ~~~~~~~~~~~~~~~~~~~~~
 * Every dtype is one line of DISPATCH_FORALL_DTYPES, the way c10's
 * AT_FORALL_SCALAR_TYPES lists PyTorch's: X(NAME, name, sfx, T, size, CAT,
 * kind, fmt, dl) gives
 *   NAME  the enum member DISPATCH_<NAME>; ids are the order of the list
 *   name  its name ("float32") as a string
 *   sfx   the suffix of its loops' functions (add_f32, cast_f32_i64)
 *   T     the C type an element is stored as (bool: uint8_t, 0 or 1;
 *         float16: dispatch_half; bfloat16: its bits, dispatch_bfloat16),
 *         of `size` bytes
 *   CAT   its category, DISPATCH_CAT_<CAT>: BOOL, INT or FLOAT
 *   kind  NumPy's kind letter ("b", "i", "u", "f"): with size, the typestr;
 *         "" when NumPy has no such type (bfloat16): no typestr then
 *   fmt   the struct / buffer-protocol format of one element ("" when
 *         Python's struct has none: bfloat16)
 *   dl    its DLPack type code, kDL<dl> (with 8 * size bits)
 * Everything that lists dtypes expands it: this enum, dtype.c's names,
 * sizes and categories, the rows of the reference loop and cast tables in
 * cpu_loops_reference.c, dlpack.c's type codes, the SIMD chooser's table
 * (indexed by dtype); Python reads the list
 * from C (dispatch/_tables.py). Adding a dtype starts with one line here;
 * its loops and the ranges, conversions and CUDA types the list cannot
 * carry are listed in docs/contributing.md, "Adding a dtype". A new dtype
 * is appended, so ids already given (and saved by users: DLPack and pickles carry names,
 * not ids, but the C ABI has them) keep their values; nothing relies on the
 * order (dispatch_promote_types compares item sizes, not ids).
 */
#define DISPATCH_FORALL_DTYPES(X) DISPATCH_FORALL_DTYPES_WITH(DISPATCH_DTYPE_CALL_, X)
/* The same with one more argument A first, X(A, NAME, ...), for an X that
 * needs more than the list: e.g. the cast table's row of one source dtype. */
#define DISPATCH_DTYPE_CALL_(X, ...) X(__VA_ARGS__)
#define DISPATCH_FORALL_DTYPES_WITH(X, A)                                   \
    X(A, BOOL,    "bool",    b8,  uint8_t,       1, BOOL,  "b", "?", Bool)  \
    X(A, INT8,    "int8",    i8,  int8_t,        1, INT,   "i", "b", Int)   \
    X(A, UINT8,   "uint8",   u8,  uint8_t,       1, INT,   "u", "B", UInt)  \
    X(A, INT16,   "int16",   i16, int16_t,       2, INT,   "i", "h", Int)   \
    X(A, INT32,   "int32",   i32, int32_t,       4, INT,   "i", "i", Int)   \
    X(A, INT64,   "int64",   i64, int64_t,       8, INT,   "i", "q", Int)   \
    X(A, FLOAT16, "float16", f16, dispatch_half, 2, FLOAT, "f", "e", Float) \
    X(A, FLOAT32, "float32", f32, float,         4, FLOAT, "f", "f", Float) \
    X(A, FLOAT64, "float64", f64, double,        8, FLOAT, "f", "d", Float) \
    X(A, BFLOAT16, "bfloat16", bf16, dispatch_bfloat16, 2, FLOAT, "", "", Bfloat)

/* The order is part of the ABI of dispatch._core (Python reads it from C). */
typedef enum dispatch_dtype {
#define DISPATCH_DTYPE_ENUM_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) DISPATCH_##NAME,
    DISPATCH_FORALL_DTYPES(DISPATCH_DTYPE_ENUM_)
#undef DISPATCH_DTYPE_ENUM_
    DISPATCH_NUM_DTYPES,
} dispatch_dtype;

/* float16: IEEE binary16. Compilers with _Float16 arithmetic (gcc >= 12 and
 * clang >= 15 on x86-64, aarch64) store it as _Float16; others (clang 14 on
 * x86-64) as its bits, converted with the functions below. Either way the
 * loops compute in float and round once per result, like NumPy. */
#if defined(__FLT16_MAX__) && !defined(DISPATCH_SOFT_HALF)
#define DISPATCH_HALF_NATIVE 1
typedef _Float16 dispatch_half;
#else
#define DISPATCH_HALF_NATIVE 0
typedef uint16_t dispatch_half;
#endif

/* binary16 bits <-> float/double, round to nearest even (NaN stays NaN,
 * overflow gives inf); exact where the value fits. Portable C. */
float dispatch_half_bits_to_float(uint16_t h);
uint16_t dispatch_half_bits_from_double(double x);

/* bfloat16: the upper half of a binary32 (8 exponent bits, 7 stored
 * mantissa bits), stored as its bits: no compiler arithmetic type is
 * assumed. Loops widen it to float (exact: a shift), compute in float and
 * round once per result, as PyTorch's CPU loops do. */
typedef uint16_t dispatch_bfloat16;

/* bfloat16 bits -> float (exact); float/double -> bfloat16 bits, rounded to
 * nearest even once (a double is not rounded to float first); a NaN stays a
 * NaN of the same sign, made quiet; overflow gives inf. Portable C (narrow_float.h). */
float dispatch_bfloat16_bits_to_float(uint16_t b);
uint16_t dispatch_bfloat16_bits_from_float(float x);
uint16_t dispatch_bfloat16_bits_from_double(double x);

/*
 * Note [Narrow floats]
 * ~~~~~~~~~~~~~~~~~~~~
 * A float narrower than float32 is computed in float32 and rounded once per
 * result (PyTorch's CPU rule), and reduced in a float32 accumulator. Its
 * format is one row of DISPATCH_FORALL_NARROW_FLOATS, X(NAME, sfx, E, M,
 * NANS), beside its line in DISPATCH_FORALL_DTYPES (same NAME and sfx):
 *   E, M  its exponent and stored mantissa bits (binary16: 5, 10)
 *   NANS  IEEE: the all-ones exponent is inf or a NaN; FN: finite, the one
 *         NaN has every bit set, overflow gives NaN (float8_e4m3fn)
 * float16 is written here (it may be _Float16, with loops of its own); every
 * other narrow float is stored as its bits and is a row of
 * DISPATCH_FORALL_BITS_FLOATS, X(NAME, sfx, T, E, M, NANS), T its storage
 * type from its DISPATCH_FORALL_DTYPES line (uint8_t, uint16_t), which the
 * narrow list includes. A new narrow float is those two lines; everything
 * else derives from its format: its conversions (narrow_float.h), largest
 * finite value (scalar range checks), quiet NaN (reductions), the reference
 * loops and casts (cpu_loops_reference.c), the reductions through float32
 * (reduce_plan.c), the CUDA device type (cuda_device_types.cuh: a struct of
 * its bits unless a hardware type is named there, as __half and
 * __nv_bfloat16 are) and Python's view of it (read from C). A format NumPy
 * and struct lack (an empty kind and format in its list line) has no NumPy
 * export; its values reach Python through float32.
 */
#define DISPATCH_FORALL_NARROW_FLOATS(X) \
    X(FLOAT16, f16, 5, 10, IEEE)          \
    DISPATCH_FORALL_BITS_FLOATS_WITH(DISPATCH_NARROW_ROW_, X)
#define DISPATCH_NARROW_ROW_(X, NAME, sfx, T, E, M, NANS) X(NAME, sfx, E, M, NANS)
#define DISPATCH_FORALL_BITS_FLOATS(X) DISPATCH_FORALL_BITS_FLOATS_WITH(DISPATCH_BITS_CALL_, X)
#define DISPATCH_BITS_CALL_(X, ...) X(__VA_ARGS__)
#define DISPATCH_FORALL_BITS_FLOATS_WITH(X, A) \
    X(A, BFLOAT16, bf16, dispatch_bfloat16, 8, 7, IEEE)

/* 1 for a dtype of DISPATCH_FORALL_NARROW_FLOATS, else 0. */
int dispatch_dtype_is_narrow_float(int dtype);
/* The largest finite value of a float dtype (65504 for float16); 0 for
 * another dtype. */
double dispatch_dtype_float_max(int dtype);
/* A narrow float's bits <-> double, by dtype (narrow_float.h's conversions
 * of its row); 0 for another dtype. For Python and code not in a loop. */
double dispatch_narrow_bits_to_double(int dtype, uint32_t bits);
uint32_t dispatch_narrow_bits_from_double(int dtype, double x);

typedef enum dispatch_dtype_category {
    DISPATCH_CAT_BOOL = 0,
    DISPATCH_CAT_INT = 1,
    DISPATCH_CAT_FLOAT = 2,
} dispatch_dtype_category;

/*
 * Note [Integer facts]
 * ~~~~~~~~~~~~~~~~~~~~
 * What an integer dtype is beyond the list's line: its range, whether it is
 * signed, how one element is read. All follow from the line's C
 * storage type T and size, through the macros below, so nothing that needs
 * them names a dtype: dtype.c's table (dispatch_dtype_min/_max, which
 * Python's range checks read through cffi), scalar ranges in operators_shared.c,
 * the identities of max/min in reduce_integer.c, same_value in
 * reduce_indices.c, the integer reduction kernels of int_reduce.dispatch.c,
 * the reference loops and casts, integer promotion (the smallest integer
 * holding both ranges). A list expansion picks the macro of its row's
 * category by pasting: DISPATCH_INT_MIN_##CAT(T, size). Bool is 0..1; a
 * float has none (0). Every integer value fits int64, so an unsigned
 * integer has fewer than 8 bytes (dtype.c checks it at compile time: a
 * uint64 needs more than this list).
 */
#define DISPATCH_INT_IS_SIGNED(T) ((T)-1 < (T)1) /* (not "< 0": gcc's -Wtype-limits) */
#define DISPATCH_INT_MIN_BOOL(T, size) ((int64_t)0)
#define DISPATCH_INT_MAX_BOOL(T, size) ((int64_t)1)
#define DISPATCH_INT_MIN_INT(T, size)                                                      \
    (DISPATCH_INT_IS_SIGNED(T) ? -(int64_t)(UINT64_MAX >> (65 - 8 * (size))) - 1 : (int64_t)0)
#define DISPATCH_INT_MAX_INT(T, size)                                                      \
    ((int64_t)(UINT64_MAX >> (DISPATCH_INT_IS_SIGNED(T) ? 65 - 8 * (size) : 64 - 8 * (size))))
#define DISPATCH_INT_MIN_FLOAT(T, size) ((int64_t)0)
#define DISPATCH_INT_MAX_FLOAT(T, size) ((int64_t)0)

size_t dispatch_dtype_itemsize(int dtype);
const char *dispatch_dtype_name(int dtype); /* "float32"; "?" when out of range */
int dispatch_dtype_category_of(int dtype);  /* -1 when out of range */
/* NumPy's typestr of an element in native byte order ("<f4", "|b1"); the
 * struct format of one element ("f", "?"); "" when out of range. */
const char *dispatch_dtype_typestr(int dtype);
const char *dispatch_dtype_format(int dtype);
int dispatch_dtype_is_valid(int dtype);
/* The range of bool (0, 1) or an integer dtype (Note [Integer facts]); 0 for
 * a float or out of range. */
int64_t dispatch_dtype_min(int dtype);
int64_t dispatch_dtype_max(int dtype);

/* torch.promote_types: the smallest dtype both convert to without losing the
 * category (uint8 + int8 -> int16, int64 + float16 -> float16, float16 +
 * bfloat16 -> float32). */
int dispatch_promote_types(int a, int b);

/*
 * Result-type state of one operation, in PyTorch's three priority classes:
 * tensors with dimensions, 0-dim tensors, and wrapped Python numbers. A lower
 * class only counts when its category is higher (int32 tensor + float64 0-dim
 * -> float64; int64 tensor + 2.5 -> float32). See Note [Type promotion] in
 * sources/core/dtype.c.
 */
typedef struct dispatch_result_type {
    int dim;     /* -1 when no operand of the class was seen */
    int zero;
    int wrapped;
} dispatch_result_type;

void dispatch_result_type_init(dispatch_result_type *st);
/* is_wrapped: the operand is a wrapped Python number (float counts as the default float32). */
void dispatch_result_type_update(dispatch_result_type *st, int dtype, int ndim, int is_wrapped);
int dispatch_result_type_get(const dispatch_result_type *st);

#endif /* DISPATCH_DTYPE_H_ */
