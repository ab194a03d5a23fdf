/* The rules of the reduction table that are more than a column: see
 * dispatch/reduction_table.h. */
#include "dispatch/dtype.h"
#include "dispatch/reduction_table.h"

int dispatch_reduce_result_dtype(int op, int dtype)
{
    if (!dispatch_dtype_is_valid(dtype) || op < 0 || op >= DISPATCH_NUM_REDUCTIONS) return -1;
    if (dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT) return dtype;
    switch (dispatch_reduce_integers(op)) {
    case DISPATCH_REDUCE_INTEGERS_INT64: return DISPATCH_INT64;
    case DISPATCH_REDUCE_INTEGERS_SAME: return dtype;
    default: return -1;
    }
}
