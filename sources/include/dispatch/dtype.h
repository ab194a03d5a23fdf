/*
 * Element types of tensors and PyTorch's type promotion over them.
 */
#ifndef DISPATCH_DTYPE_H_
#define DISPATCH_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

/* The order is part of the ABI of dispatch._core (Python mirrors it). */
typedef enum dispatch_dtype {
    DISPATCH_BOOL = 0,
    DISPATCH_INT8,
    DISPATCH_UINT8,
    DISPATCH_INT16,
    DISPATCH_INT32,
    DISPATCH_INT64,
    DISPATCH_FLOAT16,
    DISPATCH_FLOAT32,
    DISPATCH_FLOAT64,
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

typedef enum dispatch_dtype_category {
    DISPATCH_CAT_BOOL = 0,
    DISPATCH_CAT_INT = 1,
    DISPATCH_CAT_FLOAT = 2,
} dispatch_dtype_category;

size_t dispatch_dtype_itemsize(int dtype);
const char *dispatch_dtype_name(int dtype); /* "float32"; "?" when out of range */
int dispatch_dtype_category_of(int dtype);
int dispatch_dtype_is_valid(int dtype);

/* torch.promote_types: the smallest dtype both convert to without losing the
 * category (uint8 + int8 -> int16, int64 + float16 -> float16). */
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
