/*
 * The first index of each max/min (Note [max and min with indices]): after
 * the values are reduced, the row-major position among the reduced
 * elements of the first element equal to each, for max(dim), min(dim),
 * argmax and argmin (the rows with indices in dispatch/reduction_table.h: MAX
 * and MIN).
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch/narrow_float.h"
#include "reduce_internal.h"

/*
 * A narrow float (Note [Narrow floats] in dtype.h) is searched by its bits,
 * stored as the unsigned integer of its width: a value matches the same
 * bits, a zero either zero, a NaN any NaN (magnitude bits above its format's
 * DISPATCH_NARROW_NAN_ABOVE_). Each row's constants come from its format
 * (DISPATCH_FORALL_NARROW_FLOATS), so a new row is searched the same way.
 * Their max(dim)/min(dim)/argmax/argmin searched a float32 copy before.
 */
#define EQ_NARROW_NAN(x, y) (((x) & mag_) > nan_above_)
#define EQ_NARROW_ZERO(x, y) (((x) & mag_) == 0)
/* SEARCH(T, ANY) on a narrow float row, T its bits' type by its width, with
 * the row's mag_ and nan_above_ in scope */
#define SEARCHED_NARROW_(SEARCH, NAME, sfx, E, M, NANS)                                    \
    case DISPATCH_##NAME: {                                                                \
        const uint32_t mag_ = DISPATCH_NARROW_SIGN_(E, M) - 1u,                            \
                       nan_above_ = DISPATCH_NARROW_NAN_ABOVE_(E, M, DISPATCH_NARROW_##NANS); \
        if (1 + (E) + (M) == 16) SEARCH(uint16_t, int16_t);                                 \
        else SEARCH(uint8_t, int8_t);                                                      \
        break;                                                                             \
    }

/* Whether the elements at a and b are equal, NaN matching NaN: a case per
 * bool and integer row of the list, compared as its storage type (Note
 * [Integer facts] in dtype.h); any other float as double, by its cast (the
 * fallback of first_match, whose typed cases take every dtype of the list). */
#define SAME_BOOL(NAME, T) case DISPATCH_##NAME: return (*a != 0) == (*b != 0);
#define SAME_INT(NAME, T)                                                                 \
    case DISPATCH_##NAME: {                                                               \
        T x, y;                                                                           \
        memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);                                 \
        return x == y;                                                                    \
    }
#define SAME_FLOAT(NAME, T)
#define SAME_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) SAME_##CAT(NAME, T)
static int same_value(const char *a, const char *b, int dtype) {
    switch (dtype) {
    case DISPATCH_FLOAT32: {
        float x, y;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        return x == y || (x != x && y != y);
    }
    case DISPATCH_FLOAT64: {
        double x, y;
        memcpy(&x, a, 8), memcpy(&y, b, 8);
        return x == y || (x != x && y != y);
    }
    DISPATCH_FORALL_DTYPES(SAME_)
    default: {
        double x, y;
        char *data[2];
        intptr_t steps[2] = {0, 0};
        dispatch_loop_fn cast = dispatch_cast_loop_get(dtype, DISPATCH_FLOAT64);
        data[0] = (char *)&x, data[1] = (char *)a, cast(data, steps, 1, NULL);
        data[0] = (char *)&y, data[1] = (char *)b, cast(data, steps, 1, NULL);
        return x == y || (x != x && y != y);
    }
    }
}
#undef SAME_

/*
 * Note [max and min with indices]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max(dim)/min(dim) return (values, indices) and argmax/argmin the indices,
 * with PyTorch's rules: NaN propagates and its index is the first NaN's; of
 * equal values the first (in row-major order of the reduced dims) wins.
 * The values come from the reduction kernel; the index of each is then the
 * first reduced element equal to it (NaN equal to NaN), and the value is
 * re-read from there, so a tie of -0.0 and 0.0 reports the first one's
 * sign as PyTorch does.
 */
/*
 * Note [Broadcast reduced dims]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A reduced dim of stride 0 (an expand()ed view) holds one element many
 * times. max and min of it are that element's, so they reduce the view with
 * such dims at size 1: nothing to gather, where the general layout copied
 * the whole broadcast first (argmax of zeros(2, 1).expand(2, 2**31 + 1) asked
 * for 16 GiB and failed). The first index of a value (Note [max and min with
 * indices]) has index 0 in every such dim: a match at another index there
 * is the same element as at 0, earlier in row-major order. So the search runs
 * over the other reduced dims and maps its position back to the row-major
 * position among all of them. Sums, means and products keep every element:
 * their order of additions is the copy's, and they still gather.
 */
typedef struct first_ctx {
    int dtype, nr;
    int64_t isz, count;
    int64_t rshape[DISPATCH_MAX_DIMS], rstride[DISPATCH_MAX_DIMS];
    int64_t rstep[DISPATCH_MAX_DIMS]; /* a searched dim's step in the row-major position */
} first_ctx;

/* Equality as the typed searches below take it (x and y of the dtype's
 * storage type): a bool by its truth, an integer by value, a float by
 * value or both NaN (as same_value; | and & so a block's compares
 * vectorize), or, searching for a NaN, x a NaN. */
#define EQ_TRUTH(x, y) (((x) != 0) == ((y) != 0))
#define EQ_VALUE(x, y) ((x) == (y))
#define EQ_FLOAT(x, y) (((x) == (y)) | (((x) != (x)) & ((y) != (y))))
#define EQ_NAN(x, y) ((x) != (x))
/* a block's flag as wide as T (ANY_<size>): its compares OR-ed lane by lane */
#define ANY_1 int8_t
#define ANY_2 int16_t
#define ANY_4 int32_t
#define ANY_8 int64_t
/* The cases of a switch on the dtype that SEARCH(T, EQ, ANY) serves for
 * every bool and integer row, each ending in break (the floats are each
 * search's own cases). */
#define SEARCHED_INTEGERS(SEARCH) DISPATCH_FORALL_DTYPES_WITH(SEARCHED_ROW_, SEARCH)
#define SEARCHED_ROW_(SEARCH, NAME, name, sfx, T, size, CAT, kind, fmt, dl)               \
    SEARCHED_##CAT(SEARCH, NAME, T, ANY_##size)
#define SEARCHED_BOOL(SEARCH, NAME, T, ANY) case DISPATCH_##NAME: SEARCH(T, EQ_TRUTH, ANY); break;
#define SEARCHED_INT(SEARCH, NAME, T, ANY) case DISPATCH_##NAME: SEARCH(T, EQ_VALUE, ANY); break;
#define SEARCHED_FLOAT(SEARCH, NAME, T, ANY)

/* The first r < count whose element (stride bytes apart from base) equals
 * the value at v, NaN matching NaN; count when none does. A scan typed by
 * the dtype's storage (a bool by its truth), where same_value's switch per
 * element made the search of an integer max(dim) cost more than its values'
 * reduction. */
static int64_t first_match(const char *base, int64_t stride, int64_t count, const char *v,
                           int dtype)
{
    int64_t r = 0;
    /* A contiguous run is tested a block of 64 at a time with no early exit
     * (a loop the compiler vectorizes), then the block that holds the match
     * is scanned: argmax of 256K float32 took 140 us searching one element at
     * a time, NumPy's 19. */
#define FIRST_MATCH(T, EQ, ANY)                                                         \
    do {                                                                                  \
        T want, x;                                                                        \
        memcpy(&want, v, sizeof want);                                                   \
        if (stride == (int64_t)sizeof(T)) {                                               \
            const T *run = (const T *)(const void *)base;                                 \
            for (; r + 64 <= count; r += 64) {                                            \
                ANY any = 0;                                                              \
                for (int j = 0; j < 64; j++) {                                            \
                    x = run[r + j];                                                       \
                    any |= (ANY)EQ(x, want);                                              \
                }                                                                         \
                if (any) break;                                                           \
            }                                                                             \
        }                                                                                 \
        for (; r < count; r++) {                                                          \
            memcpy(&x, base + r * stride, sizeof x);                                      \
            if (EQ(x, want)) break;                                                       \
        }                                                                                 \
    } while (0)
    switch (dtype) {
    /* a float: its value, or the first NaN when it is one (a lighter test
     * per element than EQ_FLOAT's: argmax of 256K float64 108 us against 240) */
    case DISPATCH_FLOAT32: {
        float w;
        memcpy(&w, v, sizeof w);
        if (w != w) FIRST_MATCH(float, EQ_NAN, int32_t);
        else FIRST_MATCH(float, EQ_VALUE, int32_t);
        break;
    }
    case DISPATCH_FLOAT64: {
        double w;
        memcpy(&w, v, sizeof w);
        if (w != w) FIRST_MATCH(double, EQ_NAN, int64_t);
        else FIRST_MATCH(double, EQ_VALUE, int64_t);
        break;
    }
    SEARCHED_INTEGERS(FIRST_MATCH)
    /* a narrow float: as a float above, by its bits; a zero matches either zero */
#define FIRST_MATCH_NARROW(T, ANY)                                                        \
    do {                                                                                  \
        T w;                                                                              \
        memcpy(&w, v, sizeof w);                                                          \
        if ((w & mag_) > nan_above_) FIRST_MATCH(T, EQ_NARROW_NAN, ANY);                   \
        else if ((w & mag_) == 0) FIRST_MATCH(T, EQ_NARROW_ZERO, ANY);                     \
        else FIRST_MATCH(T, EQ_VALUE, ANY);                                               \
    } while (0)
#define FIRST_NARROW_(NAME, sfx, E, M, NANS)                                              \
    SEARCHED_NARROW_(FIRST_MATCH_NARROW, NAME, sfx, E, M, NANS)
    DISPATCH_FORALL_NARROW_FLOATS(FIRST_NARROW_)
    default:
        for (; r < count; r++)
            if (same_value(base + r * stride, v, dtype)) break;
    }
    return r;
#undef FIRST_NARROW_
#undef FIRST_MATCH_NARROW
#undef FIRST_MATCH
}

/* The engine's inner function: n outputs, each a value at ptrs[0] whose first
 * position among the reduced elements from ptrs[2] goes to ptrs[1]. */
static void first_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg) {
    const first_ctx *c = arg;
    for (intptr_t e = 0; e < n; e++) {
        const char *base = ptrs[2] + e * steps[2];
        char *v = ptrs[0] + e * steps[0];
        int64_t found = 0;
        if (c->nr <= 1) { /* one reduced dim, or none (a 0-dim input): a typed scan */
            int64_t r = first_match(base, c->rstride[0], c->count, v, c->dtype);
            if (r >= c->count) r = 0;
            memcpy(v, base + r * c->rstride[0], (size_t)c->isz);
            found = r * c->rstep[0];
        } else {
            /* several reduced dims: the innermost one's runs in row-major
             * order, each a typed scan, where a test per element through
             * same_value's switch made argmax of a (512, 512) float32 view's
             * every other column take 260 us, its values 20 */
            const int in = c->nr - 1;
            const int64_t len = c->rshape[in];
            int64_t ridx[DISPATCH_MAX_DIMS] = {0};
            for (int64_t seen = 0; seen < c->count; seen += len) {
                const char *p = base;
                for (int d = 0; d < in; d++) p += ridx[d] * c->rstride[d];
                const int64_t r = first_match(p, c->rstride[in], len, v, c->dtype);
                if (r < len) {
                    for (int d = 0; d < in; d++) found += ridx[d] * c->rstep[d];
                    found += r * c->rstep[in];
                    memcpy(v, p + r * c->rstride[in], (size_t)c->isz);
                    break;
                }
                for (int d = in - 1; d >= 0 && ++ridx[d] == c->rshape[d]; d--) ridx[d] = 0;
            }
        }
        memcpy(ptrs[1] + e * steps[1], &found, sizeof found);
    }
}

/*
 * Note [Column searches]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * max(dim=0) of a row-major matrix searches each column for its first
 * element equal to the column's value: one column at a time, that read one
 * element per cache line down every column (argmax(dim=0) of (512, 512)
 * float32: 280 us; its values' own reduction, the column kernel, 30). So
 * columns whose outputs are contiguous are searched together, row by row
 * in memory order: each row's columns tested COL_BLOCK at a time with no
 * early exit (vectorized), a block with a candidate then scanned for the
 * columns not yet found, until every column has its row. The answers are
 * the one-column search's: a column's first equal row, its value re-read
 * from there.
 */
enum { COL_BLOCK = 64 };

#define COL_SEARCH(T, EQ, ANY)                                                         \
    do {                                                                                  \
        T *want = (T *)(void *)vals;                                                      \
        int64_t left = c1 - c0;                                                           \
        for (int64_t r = 0; r < count && left > 0; r++) {                                 \
            const T *row = (const T *)(const void *)(base + r * rstride);                 \
            for (int64_t b = c0; b < c1; b += COL_BLOCK) {                                \
                const int64_t w = c1 - b < COL_BLOCK ? c1 - b : COL_BLOCK;                \
                ANY any = 0;                                                              \
                for (int64_t j = 0; j < w; j++) {                                         \
                    const T x = row[b + j], y = want[b + j];                              \
                    any |= (ANY)EQ(x, y);                                                 \
                }                                                                         \
                if (!any) continue;                                                       \
                for (int64_t j = b; j < b + w; j++) {                                     \
                    const T x = row[j], y = want[j];                                      \
                    if (done[j - c0] || !EQ(x, y)) continue;                              \
                    done[j - c0] = 1, left--;                                             \
                    want[j] = x; /* re-read: a tie of -0.0 and 0.0 keeps the first's */  \
                    idx[j] = r * rstep;                                                   \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* Columns [c0, c1) of count rows rstride bytes apart, their values (and
 * the found ones' values re-read) at vals, contiguous, their indices at
 * idx; 0, or -1 for a dtype with no typed search or no memory for the
 * flags (the caller walks the columns one at a time then). */
static int first_match_cols(int dtype, const char *base, int64_t rstride, int64_t count,
                            int64_t rstep, int64_t c0, int64_t c1, char *vals, int64_t *idx)
{
    unsigned char *done = calloc((size_t)(c1 - c0) + 1, 1);
    if (!done) return -1;
    int rc = 0;
    switch (dtype) {
    case DISPATCH_FLOAT32: COL_SEARCH(float, EQ_FLOAT, int32_t); break;
    case DISPATCH_FLOAT64: COL_SEARCH(double, EQ_FLOAT, int64_t); break;
    SEARCHED_INTEGERS(COL_SEARCH)
    default: rc = -1;
    }
    free(done);
    return rc;
}
#undef COL_SEARCH

typedef struct first_job {
    dispatch_strided_plan plan;
    const first_ctx *c;
} first_job;

static void first_cols_range(void *arg, int64_t begin, int64_t end) {
    first_job *j = arg;
    const first_ctx *c = j->c;
    const dispatch_strided_plan *p = &j->plan;
    if (first_match_cols(c->dtype, p->data[2], c->rstride[0], c->count, c->rstep[0], begin, end,
                         p->data[0], (int64_t *)(void *)p->data[1]) != 0)
        dispatch_strided_plan_walk(p, begin, end, first_inner, (void *)c);
}

static void first_range(void *arg, int64_t begin, int64_t end) {
    const first_job *j = arg;
    dispatch_strided_plan_walk(&j->plan, begin, end, first_inner, (void *)j->c);
}

/* The search's context and plan for the kept dims walked by the engine
 * (Note [One strided engine] in sources/core/strided.c): operands (vals,
 * idx, in), vals and idx fresh and contiguous over the kept dims. */
static void first_setup(const dispatch_iter_operand *in, uint32_t mask, char *vals, int64_t *idx,
                        first_ctx *c, first_job *j)
{
    int nd = in->ndim, nk = 0;
    *c = (first_ctx){.dtype = in->dtype, .isz = (int64_t)dispatch_dtype_itemsize(in->dtype),
                     .count = 1};
    int64_t kshape[DISPATCH_MAX_DIMS];
    intptr_t bs[3][DISPATCH_MAX_DIMS];
    int64_t step = 1; /* row-major over all reduced dims, innermost first */
    for (int d = nd - 1; d >= 0; d--) {
        if (!((mask >> d) & 1u)) continue;
        if (in->strides[d] != 0 || in->shape[d] <= 1) c->nr++;
    }
    for (int d = nd - 1, k = c->nr; d >= 0; d--) {
        if ((mask >> d) & 1u) {
            if (in->strides[d] != 0 || in->shape[d] <= 1) { /* Note [Broadcast reduced dims] */
                k--;
                c->rshape[k] = in->shape[d], c->rstride[k] = in->strides[d], c->rstep[k] = step;
                c->count *= in->shape[d];
            }
            step *= in->shape[d];
        }
    }
    for (int d = 0; d < nd; d++) {
        if (!((mask >> d) & 1u)) {
            kshape[nk] = in->shape[d];
            bs[2][nk++] = (intptr_t)in->strides[d];
        }
    }
    if (nk == 0 && c->nr > 1 && reduce_is_dense(in)) { /* all dims of a contiguous tensor: one */
        c->nr = 1, c->rshape[0] = c->count, c->rstride[0] = c->isz, c->rstep[0] = 1;
    }
    /* reduced dims that are one run in memory and in the row-major position
     * (the last two of a contiguous tensor): one dim */
    for (int k = c->nr - 2; k >= 0; k--) {
        if (c->rstride[k] != c->rshape[k + 1] * c->rstride[k + 1] ||
            c->rstep[k] != c->rshape[k + 1] * c->rstep[k + 1])
            continue;
        c->rshape[k] *= c->rshape[k + 1], c->rstride[k] = c->rstride[k + 1];
        c->rstep[k] = c->rstep[k + 1];
        for (int m = k + 1; m < c->nr - 1; m++)
            c->rshape[m] = c->rshape[m + 1], c->rstride[m] = c->rstride[m + 1],
            c->rstep[m] = c->rstep[m + 1];
        c->nr--;
    }
    intptr_t vs = (intptr_t)c->isz, is = 8;
    for (int d = nk - 1; d >= 0; d--) {
        bs[0][d] = kshape[d] == 1 ? 0 : vs;
        bs[1][d] = kshape[d] == 1 ? 0 : is;
        if (kshape[d] == 1) bs[2][d] = 0;
        vs *= (intptr_t)kshape[d], is *= (intptr_t)kshape[d];
    }
    char *data[3] = {vals, (char *)idx, in->data};
    j->c = c;
    dispatch_strided_plan_init(&j->plan, 3, data, nk, kshape, bs);
}

/* One reduced dim down the rows of contiguous columns, whose values and
 * indices are contiguous: the layout of Note [Column searches] and of the
 * ARG_COLS kernels. */
static int first_cols_layout(const first_ctx *c, const dispatch_strided_plan *p) {
    return c->nr == 1 && c->count > 1 && p->ndim == 1 && p->strides[2][0] == c->isz &&
           p->strides[0][0] == c->isz && p->strides[1][0] == 8 && c->rstride[0] != c->isz;
}

static void first_indices(const dispatch_iter_operand *in, uint32_t mask, char *vals,
                          int64_t *idx)
{
    first_ctx c;
    first_job j;
    first_setup(in, mask, vals, idx, &c, &j);
    /* each output's search reads only its own elements: any split, the same answers */
    if (first_cols_layout(&c, &j.plan)) {
        /* Note [Column searches] */
        dispatch_parallel_for(j.plan.numel, dispatch_parallel_grain(c.count), COL_BLOCK,
                              first_cols_range, &j);
        return;
    }
    dispatch_parallel_for(j.plan.numel, dispatch_parallel_grain(c.count), 1, first_range, &j);
}

/*
 * The one-pass search (Note [One-pass first extremes] in
 * sources/kernels/argext.dispatch.c): where each output's reduced elements
 * are one contiguous run, the ARG kernel finds each output's value and
 * index at once. Outputs split between threads as the search's do; one
 * output's run splits in parts of ARG_PART_BYTES (whole elements), each part's
 * answer (value, index) kept, and the parts' answers are the run of a last
 * ARG search, whose first extreme (a first NaN, else the first part whose
 * value no earlier part's beats, its index the first there) is the whole
 * run's: the same answer for any split.
 */
enum { ARG_PART_BYTES = 131072 }; /* two parts a thread at least: 512 KB to split */

typedef struct arg_job {
    first_job first;
    dispatch_rk_arg_fn kernel;
    dispatch_rk_arg_cols_fn cols; /* or NULL */
    int is_min;
    char *part_vals;   /* per part: the first extreme's value and index */
    int64_t *part_idx; /* -1: the part was not searched (not its range's first) */
} arg_job;

static void arg_inner(char **ptrs, const intptr_t *steps, intptr_t n, void *arg) {
    const arg_job *a = arg;
    const int64_t count = a->first.c->count, step = a->first.c->rstep[0];
    for (intptr_t e = 0; e < n; e++) {
        int64_t i = a->kernel(a->is_min, ptrs[2] + e * steps[2], count, ptrs[0] + e * steps[0]);
        i *= step;
        memcpy(ptrs[1] + e * steps[1], &i, sizeof i);
    }
}

static void arg_range(void *arg, int64_t begin, int64_t end) {
    arg_job *a = arg;
    dispatch_strided_plan_walk(&a->first.plan, begin, end, arg_inner, a);
}

/* Parts [begin, end) of one output's run: searched as one run, the answer
 * kept as part begin's. */
static void arg_parts(void *arg, int64_t begin, int64_t end) {
    arg_job *a = arg;
    const first_ctx *c = a->first.c;
    const int64_t part = ARG_PART_BYTES / c->isz;
    const int64_t lo = begin * part, hi = end * part < c->count ? end * part : c->count;
    a->part_idx[begin] = lo + a->kernel(a->is_min, a->first.plan.data[2] + lo * c->isz, hi - lo,
                                        a->part_vals + begin * c->isz);
}

/* Columns [begin, end) of the ARG_COLS layout (first_cols_layout). */
static void arg_cols_range(void *arg, int64_t begin, int64_t end) {
    const arg_job *a = arg;
    const first_ctx *c = a->first.c;
    const dispatch_strided_plan *p = &a->first.plan;
    a->cols(a->is_min, p->data[2] + begin * c->isz, (intptr_t)c->rstride[0], (intptr_t)c->count,
            (intptr_t)(end - begin), c->rstep[0], p->data[0] + begin * c->isz,
            (int64_t *)(void *)p->data[1] + begin);
}

int reduce_first_extremes(int op, const dispatch_iter_operand *in, uint32_t mask, char *vals,
                          int64_t *idx)
{
    if (!dispatch_reduce_is_extreme(op)) return 0;
    dispatch_rk_arg_fn kernel = (dispatch_rk_arg_fn)reduce_chosen_kernel(DISPATCH_RK_ARG, in->dtype);
    dispatch_rk_arg_cols_fn cols =
        (dispatch_rk_arg_cols_fn)reduce_chosen_kernel(DISPATCH_RK_ARG_COLS, in->dtype);
    if (!kernel && !cols) return 0;
    first_ctx c;
    arg_job a = {.kernel = kernel, .cols = cols,
                 .is_min = dispatch_reduce_family(op) == DISPATCH_REDUCE_FAMILY_MIN};
    first_setup(in, mask, vals, idx, &c, &a.first);
    if (a.cols && first_cols_layout(&c, &a.first.plan)) { /* Note [Column first extremes] */
        dispatch_parallel_for(a.first.plan.numel, dispatch_parallel_grain(c.count), COL_BLOCK,
                              arg_cols_range, &a);
        return 1;
    }
    /* a narrow float has columns only: its other layouts reduce, then search */
    if (!kernel || c.nr != 1 || c.rstride[0] != c.isz || c.count < 1) return 0;
    const int64_t part = ARG_PART_BYTES / c.isz, parts = (c.count + part - 1) / part;
    if (a.first.plan.numel != 1 || parts < 2 || dispatch_get_num_threads() < 2) {
        if (a.first.plan.numel > 0)
            dispatch_parallel_for(a.first.plan.numel, dispatch_parallel_grain(c.count), 1,
                                  arg_range, &a);
        return 1;
    }
    a.part_vals = malloc((size_t)(parts * c.isz));
    a.part_idx = malloc((size_t)parts * sizeof(int64_t));
    if (!a.part_vals || !a.part_idx) {
        free(a.part_vals), free(a.part_idx);
        dispatch_parallel_for(1, 1, 1, arg_range, &a);
        return 1;
    }
    for (int64_t p = 0; p < parts; p++) a.part_idx[p] = -1;
    dispatch_parallel_for(parts, 2, 1, arg_parts, &a);
    /* the searched parts' answers, in order, and the first extreme of them */
    int64_t kept = 0;
    for (int64_t p = 0; p < parts; p++) {
        if (a.part_idx[p] < 0) continue;
        memmove(a.part_vals + kept * c.isz, a.part_vals + p * c.isz, (size_t)c.isz);
        a.part_idx[kept++] = a.part_idx[p];
    }
    const int64_t w = kernel(a.is_min, a.part_vals, kept, vals);
    idx[0] = a.part_idx[w] * c.rstep[0];
    free(a.part_vals), free(a.part_idx);
    return 1;
}

int dispatch_iter_reduce_indices(const dispatch_iter_operand *in, uint32_t dim_mask, char *vals,
                                 int64_t *indices)
{
    first_indices(in, dim_mask, vals, indices);
    return 0;
}
