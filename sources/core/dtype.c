/* dtypes and PyTorch's type promotion; see dispatch/dtype.h. */
#include "dispatch/dtype.h"

#include <float.h>

#include "dispatch/narrow_float.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BYTE_ORDER_ ">"
#else
#define BYTE_ORDER_ "<"
#endif

/* Everything about a dtype, from the one list (Note [One dtype list] in
 * dtype.h). An empty kind (bfloat16: NumPy has none) gives no typestr. */
static const struct {
    const char *name, *typestr, *format;
    size_t itemsize;
    int category;
    int64_t min, max; /* Note [Integer facts] in dtype.h */
} info[DISPATCH_NUM_DTYPES] = {
#define DTYPE_INFO_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                                \
    [DISPATCH_##NAME] = {name, sizeof(kind) == 1 ? ""                                        \
                               : size == 1 ? "|" kind #size : BYTE_ORDER_ kind #size, fmt,    \
                         size, DISPATCH_CAT_##CAT, DISPATCH_INT_MIN_##CAT(T, size),        \
                         DISPATCH_INT_MAX_##CAT(T, size)},
    DISPATCH_FORALL_DTYPES(DTYPE_INFO_)
#undef DTYPE_INFO_
};

#define DTYPE_SIZE_CHECK_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    _Static_assert(sizeof(T) == size, "the itemsize of " name " in DISPATCH_FORALL_DTYPES");
DISPATCH_FORALL_DTYPES(DTYPE_SIZE_CHECK_)
#undef DTYPE_SIZE_CHECK_

/* Every integer value fits int64 (Note [Integer facts]): no unsigned
 * integer of 8 bytes, none wider than 8. */
#define DTYPE_INT64_CHECK_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                      \
    _Static_assert(FITS_INT64_##CAT(T, size),                                             \
                   name ": every value of an integer dtype must fit int64 (Note [Integer facts])");
#define FITS_INT64_BOOL(T, size) 1
#define FITS_INT64_FLOAT(T, size) 1
#define FITS_INT64_INT(T, size) ((size) < 8 || ((size) == 8 && DISPATCH_INT_IS_SIGNED(T)))
DISPATCH_FORALL_DTYPES(DTYPE_INT64_CHECK_)
#undef DTYPE_INT64_CHECK_

int dispatch_dtype_is_valid(int dtype) { return dtype >= 0 && dtype < DISPATCH_NUM_DTYPES; }

size_t dispatch_dtype_itemsize(int dtype) {
    return dispatch_dtype_is_valid(dtype) ? info[dtype].itemsize : 0;
}

const char *dispatch_dtype_name(int dtype) {
    return dispatch_dtype_is_valid(dtype) ? info[dtype].name : "?";
}

int dispatch_dtype_category_of(int dtype) {
    return dispatch_dtype_is_valid(dtype) ? info[dtype].category : -1;
}

const char *dispatch_dtype_typestr(int dtype) {
    return dispatch_dtype_is_valid(dtype) ? info[dtype].typestr : "";
}

const char *dispatch_dtype_format(int dtype) {
    return dispatch_dtype_is_valid(dtype) ? info[dtype].format : "";
}

int dispatch_dtype_is_narrow_float(int dtype) {
    switch (dtype) {
#define NARROW_CASE_(NAME, sfx, E, M, NANS) case DISPATCH_##NAME:
        DISPATCH_FORALL_NARROW_FLOATS(NARROW_CASE_)
#undef NARROW_CASE_
        return 1;
    default: return 0;
    }
}

double dispatch_dtype_float_max(int dtype) {
    switch (dtype) {
    case DISPATCH_FLOAT32: return FLT_MAX;
    case DISPATCH_FLOAT64: return DBL_MAX;
#define NARROW_MAX_(NAME, sfx, E, M, NANS)                                                  \
    case DISPATCH_##NAME:                                                                   \
        return (double)dispatch_narrow_to_float(                                            \
            dispatch_narrow_max_bits(E, M, DISPATCH_NARROW_##NANS), E, M, DISPATCH_NARROW_##NANS);
        DISPATCH_FORALL_NARROW_FLOATS(NARROW_MAX_)
#undef NARROW_MAX_
    default: return 0.0;
    }
}

int64_t dispatch_dtype_min(int dtype) { return dispatch_dtype_is_valid(dtype) ? info[dtype].min : 0; }

int64_t dispatch_dtype_max(int dtype) { return dispatch_dtype_is_valid(dtype) ? info[dtype].max : 0; }

/*
 * Note [Type promotion]
 * ~~~~~~~~~~~~~~~~~~~~~
 * promote_types is a lattice: bool < every integer < every float. Among
 * integers the result is the narrowest integer holding both ranges (uint8 +
 * int8 -> int16, wider than both; by the ranges of Note [Integer facts], not
 * by ids); among floats the wider wins, and two
 * of one width (float16 and bfloat16: neither holds the other's values) give
 * the narrowest wider float, float32; an integer with a float gives the
 * float, whatever the widths (int64 + float16 -> float16, bool + bfloat16 ->
 * bfloat16), as in PyTorch. Floats are compared by item size, never by id,
 * so a dtype can be appended to the list anywhere.
 *
 * For an operation, PyTorch keeps one promoted dtype per priority class:
 * tensors with dims, 0-dim tensors, wrapped Python numbers (a float number
 * counts as the default dtype float32, an int number as int64). Classes are
 * then combined from the lowest up: a lower class changes the result only
 * when its category is higher (bool < int < float); then the two are promoted.
 */
int dispatch_promote_types(int a, int b) {
    if (a == b) return a;
    int ca = dispatch_dtype_category_of(a), cb = dispatch_dtype_category_of(b);
    if (ca != cb) return ca > cb ? a : b;
    if (ca == DISPATCH_CAT_FLOAT) {
        size_t sa = dispatch_dtype_itemsize(a), sb = dispatch_dtype_itemsize(b);
        if (sa != sb) return sa > sb ? a : b;
        int best = -1; /* the narrowest float wider than both */
        for (int d = 0; d < DISPATCH_NUM_DTYPES; d++)
            if (info[d].category == DISPATCH_CAT_FLOAT && info[d].itemsize > sa &&
                (best < 0 || info[d].itemsize < info[best].itemsize))
                best = d;
        return best;
    }
    /* Two distinct integers: the narrowest integer holding both ranges (Note
     * [Integer facts]); one of a given size at most holds them (the signed
     * one holds a negative value, the unsigned one the larger maximum). */
    int64_t lo = info[a].min < info[b].min ? info[a].min : info[b].min;
    int64_t hi = info[a].max > info[b].max ? info[a].max : info[b].max;
    int best = -1;
    for (int d = 0; d < DISPATCH_NUM_DTYPES; d++)
        if (info[d].category == DISPATCH_CAT_INT && info[d].min <= lo && info[d].max >= hi &&
            (best < 0 || info[d].itemsize < info[best].itemsize))
            best = d;
    return best; /* int64 holds every integer (DTYPE_INT64_CHECK_ above) */
}

void dispatch_result_type_init(dispatch_result_type *st) {
    st->dim = st->zero = st->wrapped = -1;
}

static int promote_skip_undefined(int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return dispatch_promote_types(a, b);
}

void dispatch_result_type_update(dispatch_result_type *st, int dtype, int ndim, int is_wrapped) {
    if (is_wrapped) {
        if (dtype == DISPATCH_FLOAT64) dtype = DISPATCH_FLOAT32;
        st->wrapped = promote_skip_undefined(st->wrapped, dtype);
    } else if (ndim == 0) {
        st->zero = promote_skip_undefined(st->zero, dtype);
    } else {
        st->dim = promote_skip_undefined(st->dim, dtype);
    }
}

static int combine_categories(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    if (dispatch_dtype_category_of(higher) == DISPATCH_CAT_FLOAT) return higher;
    if (higher == DISPATCH_BOOL || dispatch_dtype_category_of(lower) == DISPATCH_CAT_FLOAT)
        return dispatch_promote_types(higher, lower);
    return higher;
}

int dispatch_result_type_get(const dispatch_result_type *st) {
    return combine_categories(st->dim, combine_categories(st->zero, st->wrapped));
}
