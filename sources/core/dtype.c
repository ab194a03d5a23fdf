/* dtypes and PyTorch's type promotion; see dispatch/dtype.h. */
#include "dispatch/dtype.h"

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
} info[DISPATCH_NUM_DTYPES] = {
#define DTYPE_INFO_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                                \
    [DISPATCH_##NAME] = {name, sizeof(kind) == 1 ? ""                                        \
                               : size == 1 ? "|" kind #size : BYTE_ORDER_ kind #size, fmt,    \
                         size, DISPATCH_CAT_##CAT},
    DISPATCH_FORALL_DTYPES(DTYPE_INFO_)
#undef DTYPE_INFO_
};

#define DTYPE_SIZE_CHECK_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    _Static_assert(sizeof(T) == size, "the itemsize of " name " in DISPATCH_FORALL_DTYPES");
DISPATCH_FORALL_DTYPES(DTYPE_SIZE_CHECK_)
#undef DTYPE_SIZE_CHECK_

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

/*
 * Note [Type promotion]
 * ~~~~~~~~~~~~~~~~~~~~~
 * promote_types is a lattice: bool < every integer < every float. Among
 * integers the result holds both ranges (uint8 + int8 -> int16, the one case
 * where the result is wider than both); among floats the wider wins, and two
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
    /* two distinct integers */
    if (a == DISPATCH_UINT8 || b == DISPATCH_UINT8) {
        int other = a == DISPATCH_UINT8 ? b : a;
        return other == DISPATCH_INT8 ? DISPATCH_INT16 : other;
    }
    return a > b ? a : b;
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
