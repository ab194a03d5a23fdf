/*
 * The reduction table: one row per reduction, read by the CPU engine
 * (sources/iterator/reduce_*.c), the operators (sources/dispatcher/
 * operators_reduce.c), the kernels' exported tables (a FOLD row's kernels, through
 * dispatch/reduce_kernel_table.h) and the CUDA module (sources/cuda/cuda_reduce*).
 * Nothing else names a reduction by its number: the engines ask the row
 * (dispatch_reduce_family and the helpers below), never `op == 3`.
 * Adding a reduction: docs/contributing.md, "Adding a reduction".
 */
#ifndef DISPATCH_REDUCTION_TABLE_H_
#define DISPATCH_REDUCTION_TABLE_H_

#include <stddef.h> /* NULL */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Note [The reduction table]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * X(NAME, name, FAMILY, INTEGERS, IDENTITY, COMBINE_F, COMBINE_I, CUDA), in id
 * order (ids are places in this list; Python reads them from C, so a row
 * may go anywhere):
 *   FAMILY     how the engine computes it, and with which kernels:
 *              SUM   the pairwise sums of sum.dispatch.c (Note [Deterministic
 *                    reductions]); the result's NaN and zero as Note [The
 *                    NaN and the zero of a sum];
 *              MEAN  SUM, then divided by the count;
 *              MAX, MIN  the extremes: NaN propagates, an empty set has no
 *                    identity (an error), the first index of each is known
 *                    (max(dim), argmax), broadcast dims read once;
 *              FOLD  one kernel call per output over its elements, in
 *                    float64 (float32 and float64: the row's own kernels,
 *                    kind DISPATCH_RK_FOLD_<NAME> of reduce_kernel_table.h); the
 *                    other dtypes fold COMBINE_I (integers, bool: wrapping
 *                    int64) or COMBINE_F (0-dim floats) from IDENTITY.
 *   INTEGERS   the result of an integer or bool input: INT64 (widened, as
 *              PyTorch's sum and prod), SAME (the input's dtype) or NONE
 *              (refused: floating point only).
 *   IDENTITY, COMBINE_F, COMBINE_I
 *              the start and step `a = f(a, x)` of the SUM and FOLD rows'
 *              scalar accumulators (a double and an int64); MAX and MIN fold
 *              by the NaN rule of Note [Which zero, which NaN] instead and
 *              leave these unread.
 *   CUDA       1 when the CUDA module computes it (cuda_reduce.cuh's
 *              kernels over the family's combine), else 0: the CUDA call is
 *              then a RuntimeError naming it, never another reduction.
 */
#define DISPATCH_WRAP_ADD_I64(a, x) ((int64_t)((uint64_t)(a) + (uint64_t)(x)))
#define DISPATCH_WRAP_MUL_I64(a, x) ((int64_t)((uint64_t)(a) * (uint64_t)(x)))

#define DISPATCH_FORALL_REDUCTIONS(X)                                                      \
    X(SUM, "sum", SUM, INT64, 0, a + x, DISPATCH_WRAP_ADD_I64(a, x), 1)                    \
    X(MEAN, "mean", MEAN, NONE, 0, a + x, DISPATCH_WRAP_ADD_I64(a, x), 1)                  \
    X(MAX, "max", MAX, SAME, 0, a, a, 1)                                                   \
    X(MIN, "min", MIN, SAME, 0, a, a, 1)                                                   \
    X(PROD, "prod", FOLD, INT64, 1, a * x, DISPATCH_WRAP_MUL_I64(a, x), 0)

enum dispatch_reduce_op {
#define DISPATCH_REDUCE_ENUM_(NAME, ...) DISPATCH_REDUCE_##NAME,
    DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_ENUM_)
#undef DISPATCH_REDUCE_ENUM_
    DISPATCH_NUM_REDUCTIONS
};

/* The families of FAMILY, and the kernels' combine of each: the SIMD
 * column and integer kernels and CUDA's Combine take 0 add, 1 max, 2 min
 * (dispatch_reduce_kernel_op). */
enum dispatch_reduce_family {
    DISPATCH_REDUCE_FAMILY_SUM,
    DISPATCH_REDUCE_FAMILY_MEAN,
    DISPATCH_REDUCE_FAMILY_MAX,
    DISPATCH_REDUCE_FAMILY_MIN,
    DISPATCH_REDUCE_FAMILY_FOLD
};
enum dispatch_reduce_combine {
    DISPATCH_COMBINE_ADD = 0,
    DISPATCH_COMBINE_MAX = 1,
    DISPATCH_COMBINE_MIN = 2,
    DISPATCH_COMBINE_MUL = 3, /* the integer kernels' wrapping int64 product */
    DISPATCH_COMBINE_NONE = -1 /* FOLD: the row's own kernel */
};
enum dispatch_reduce_integers {
    DISPATCH_REDUCE_INTEGERS_INT64,
    DISPATCH_REDUCE_INTEGERS_SAME,
    DISPATCH_REDUCE_INTEGERS_NONE
};

/* "sum", ...; NULL out of range. */
static inline const char *dispatch_reduce_name(int op)
{
    static const char *const names[] = {
#define DISPATCH_REDUCE_NAME_(NAME, name, ...) name,
        DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_NAME_)
#undef DISPATCH_REDUCE_NAME_
    };
    return op >= 0 && op < DISPATCH_NUM_REDUCTIONS ? names[op] : NULL;
}

/* The row's FAMILY (enum dispatch_reduce_family); -1 out of range. */
static inline int dispatch_reduce_family(int op)
{
    static const signed char families[] = {
#define DISPATCH_REDUCE_FAMILY_ROW_(NAME, name, FAMILY, ...) DISPATCH_REDUCE_FAMILY_##FAMILY,
        DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_FAMILY_ROW_)
#undef DISPATCH_REDUCE_FAMILY_ROW_
    };
    return op >= 0 && op < DISPATCH_NUM_REDUCTIONS ? families[op] : -1;
}

/* The row's INTEGERS (enum dispatch_reduce_integers). */
static inline int dispatch_reduce_integers(int op)
{
    static const signed char rule[] = {
#define DISPATCH_REDUCE_INTS_(NAME, name, FAMILY, INTEGERS, ...)                            \
    DISPATCH_REDUCE_INTEGERS_##INTEGERS,
        DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_INTS_)
#undef DISPATCH_REDUCE_INTS_
    };
    return op >= 0 && op < DISPATCH_NUM_REDUCTIONS ? rule[op] : DISPATCH_REDUCE_INTEGERS_NONE;
}

/* The row's CUDA column: 1 when the CUDA module computes op. */
static inline int dispatch_reduce_on_cuda(int op)
{
    static const signed char cuda[] = {
#define DISPATCH_REDUCE_CUDA_(NAME, name, FAMILY, INTEGERS, IDENTITY, CF, CI, CUDA) CUDA,
        DISPATCH_FORALL_REDUCTIONS(DISPATCH_REDUCE_CUDA_)
#undef DISPATCH_REDUCE_CUDA_
    };
    return op >= 0 && op < DISPATCH_NUM_REDUCTIONS && cuda[op];
}

/* The kernels' combine of op (enum dispatch_reduce_combine): MEAN runs
 * SUM's kernels; FOLD has its own (DISPATCH_COMBINE_NONE). */
static inline int dispatch_reduce_kernel_op(int op)
{
    switch (dispatch_reduce_family(op)) {
    case DISPATCH_REDUCE_FAMILY_SUM:
    case DISPATCH_REDUCE_FAMILY_MEAN: return DISPATCH_COMBINE_ADD;
    case DISPATCH_REDUCE_FAMILY_MAX: return DISPATCH_COMBINE_MAX;
    case DISPATCH_REDUCE_FAMILY_MIN: return DISPATCH_COMBINE_MIN;
    default: return DISPATCH_COMBINE_NONE;
    }
}

/* The integer kernels' combine of op over bool and integer inputs (Note
 * [Integer reductions] in sources/kernels/int_reduce.dispatch.c): the
 * family's, or for prod the wrapping int64 product (exact, so its lanes and
 * threads may split it anywhere); DISPATCH_COMBINE_NONE for a FOLD row the
 * kernels do not know, which the engine folds by COMBINE_I instead. */
static inline int dispatch_reduce_int_kernel_op(int op)
{
    if (op == DISPATCH_REDUCE_PROD) return DISPATCH_COMBINE_MUL;
    return dispatch_reduce_kernel_op(op);
}

/* A sum or a mean: pairwise-summed, stored by Note [The NaN and the zero of a sum]. */
static inline int dispatch_reduce_is_sum(int op)
{
    int f = dispatch_reduce_family(op);
    return f == DISPATCH_REDUCE_FAMILY_SUM || f == DISPATCH_REDUCE_FAMILY_MEAN;
}

/* max or min: NaN propagates, indices exist, an empty set is an error. */
static inline int dispatch_reduce_is_extreme(int op)
{
    int f = dispatch_reduce_family(op);
    return f == DISPATCH_REDUCE_FAMILY_MAX || f == DISPATCH_REDUCE_FAMILY_MIN;
}

static inline int dispatch_reduce_is_mean(int op)
{
    return dispatch_reduce_family(op) == DISPATCH_REDUCE_FAMILY_MEAN;
}

static inline int dispatch_reduce_is_fold(int op)
{
    return dispatch_reduce_family(op) == DISPATCH_REDUCE_FAMILY_FOLD;
}

/* The dtype of op's result over dtype, the one place of the rule: the row's
 * INTEGERS for an integer or bool dtype (int64, the dtype, or -1 when
 * refused), else dtype; -1 for a bad op or dtype. */
int dispatch_reduce_result_dtype(int op, int dtype);

#ifdef __cplusplus
}
#endif
#endif /* DISPATCH_REDUCTION_TABLE_H_ */
