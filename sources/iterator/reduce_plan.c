/*
 * The reduction engine's entries (dispatch/reduce_engine.h) and its planner, beside
 * the elementwise engine (iterator.c) and built like it: over raw strided
 * operands, no tensor object. A reduction comes here checked once (Note
 * [One reduction check] in reduce_check.c: by its operator, or by
 * dispatch_iter_reduce for a raw caller) and goes on to the file of its
 * path by dtype, layout and the row of its reduction (dispatch/
 * reduction_table.h): float32/float64 (reduce_float.c), float16 and
 * bfloat16 dense rows and columns (reduce_half.c), other layouts of theirs
 * read in place in chunks (reduce_narrow.c), what is left of narrow floats
 * through a float32 copy, integers, bool, 0-dim and FOLD rows off their kernels
 * (reduce_integer.c), then max/min indices (reduce_indices.c). Device
 * reductions hang off the hook below. The files' jobs: reduce_internal.h.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "reduce_internal.h"

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    dispatch_format_shape(buf, cap, ndim, shape); /* the one formatter (core/error.c) */
}


/* Device reductions (Note [CUDA reduction plans] in sources/cuda/cuda_reduce_plan.c). */
static _Atomic(dispatch_device_reduce_fn) device_reduces[DISPATCH_NUM_DEVICES];

int dispatch_device_reduce_register(int device, dispatch_device_reduce_fn fn)
{
    if (device <= DISPATCH_DEVICE_CPU || device >= DISPATCH_NUM_DEVICES)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "device reductions: invalid device %d",
                                  device);
    atomic_store(&device_reduces[device], fn);
    return 0;
}

int dispatch_iter_device_reduce(int device, int op, int dtype, const char *in, int ndim,
                                const int64_t *shape, const int64_t *strides, uint32_t mask,
                                int out_dtype, char *out, int64_t *indices)
{
    dispatch_device_reduce_fn fn = device > DISPATCH_DEVICE_CPU && device < DISPATCH_NUM_DEVICES
                                       ? atomic_load(&device_reduces[device]) : NULL;
    const char *name = dispatch_reduce_name(op);
    if (!fn)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s: no %s reductions are registered",
                                  name ? name : "?", dispatch_device_name(device));
    char err[512];
    err[0] = '\0'; /* not the whole buffer: this runs on every device reduction */
    if (fn(op, dtype, in, ndim, shape, strides, mask, out_dtype, out, indices, err, sizeof err) != 0)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "%s", err[0] ? err : "device reduction failed");
    return 0;
}

/* The reduced dims (size-1 dims aside) all come before the kept ones:
 * sum(dim=0) of a matrix, the rows of a contiguous tensor over its columns. */
static int leading_dims(const dispatch_iter_operand *in, uint32_t mask)
{
    int kept_seen = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        if (!((mask >> d) & 1u)) kept_seen = 1;
        else if (kept_seen) return 0;
    }
    return 1;
}

/* The reduced dims are the last ones (a full sum, sum(dim=-1), ...). */
static int trailing_dims(int ndim, uint32_t mask)
{
    int d = ndim - 1;
    while (d >= 0 && ((mask >> d) & 1u)) d--;
    for (; d >= 0; d--)
        if ((mask >> d) & 1u) return 0;
    return 1;
}


/* A narrow float (Note [Narrow floats] in dtype.h) accumulates in float32,
 * as PyTorch's float16 and bfloat16: the same reduction of a float32 copy,
 * rounded once into out (any strides). The last resort: max/min off the
 * dense rows, and columns whose layout no one stride steps (reduce_narrow.c
 * reads the rest in place with these bits). */
static int reduce_via_float32(int op, const dispatch_iter_operand *in, uint32_t mask,
                              int keepdim, const dispatch_iter_operand *out, int64_t nout,
                              int64_t count)
{
    int64_t numel = 1, cstr[MAXD], ostr[MAXD];
    for (int d = 0; d < in->ndim; d++) numel *= in->shape[d];
    reduce_dense_strides(in->ndim, in->shape, 4, cstr);
    reduce_dense_strides(out->ndim, out->shape, 4, ostr);
    float *copy = malloc((size_t)numel * 4 + 4), *vals = malloc((size_t)nout * 4 + 4);
    int rc = -1;
    if (!copy || !vals) {
        reduce_out_of_memory(op);
    } else {
        dispatch_iter_operand c[2] = {{(char *)copy, in->ndim, in->shape, cstr, DISPATCH_FLOAT32},
                                      *in};
        dispatch_iter_operand v = {(char *)vals, out->ndim, out->shape, ostr, DISPATCH_FLOAT32};
        dispatch_iter_operand back[2] = {*out, v};
        /* the widening cast as the loop itself: through the COPY loop the
         * engine cast each chunk into a buffer and then copied it (a third
         * of prod(dim=0) of (512, 512) float16) */
        const int widen_dtypes[2] = {DISPATCH_FLOAT32, in->dtype};
        rc = dispatch_iter_elementwise_typed(dispatch_cast_loop_get(in->dtype, DISPATCH_FLOAT32),
                                             widen_dtypes, 2, c, NULL);
        if (rc == 0) /* the same dims and shapes: checked already */
            rc = reduce_planned(op, &c[0], mask, keepdim, &v, v.ndim, v.shape, count);
        if (rc == 0)
            rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, back, NULL);
    }
    free(copy), free(vals);
    return rc;
}

/* The reduction into dense outputs, every dtype but the float32/float64 of
 * reduce_float; each path gives the bits of the general one. */
static int reduce_dense(int op, const dispatch_iter_operand *in, uint32_t mask, int keepdim,
                        int64_t count, const dispatch_iter_operand *out, int64_t nout)
{
    int64_t numel = nout * count;
    int narrow = (in->dtype == DISPATCH_FLOAT16 || in->dtype == DISPATCH_BFLOAT16) &&
                 in->ndim > 0 && numel > 0;
    int half = narrow && reduce_is_dense(in);
    uint16_t *hout = (uint16_t *)(void *)out->data;
    const uint16_t *hin = (const uint16_t *)(const void *)in->data;
    if (half && dispatch_reduce_is_sum(op) && trailing_dims(in->ndim, mask)) {
        reduce_half_sum_rows(in->dtype, hin, op, nout, count, hout);
        return 0;
    }
    int fold = dispatch_reduce_is_fold(op); /* its narrow kernels: columns only */
    if (half && !fold && trailing_dims(in->ndim, mask) &&
        reduce_half_ext_rows(in->dtype, hin, op, nout, count, hout))
        return 0;
    if (half && count > 1 && nout > 1 && leading_dims(in, mask) &&
        (!fold || reduce_chosen_kernel(DISPATCH_RK_FOLD_COLS_OF(op), in->dtype) != NULL))
        return reduce_half_cols(in->dtype, in->data, (intptr_t)(nout * 2), op, nout, count,
                                hout);
    if (narrow) { /* any other layout, read in place where it can be */
        int rc = reduce_narrow_in_place(op, in, mask, count, nout, hout);
        if (rc != 1) return rc;
    }
    if (dispatch_dtype_is_narrow_float(in->dtype))
        return reduce_via_float32(op, in, mask, keepdim, out, nout, count);
    return reduce_accumulate(op, in, mask, count, nout, out->data, out->dtype);
}

/* The raw engine's entry: its arguments checked here, for callers that
 * built no tensor (dispatch.iterator, dot). */
int dispatch_iter_reduce(int op, const dispatch_iter_operand *in, uint32_t dim_mask, int keepdim,
                         const dispatch_iter_operand *out)
{
    int64_t oshape[MAXD], count = 0;
    int ond = 0;
    if (dispatch_iter_reduce_check(NULL, op, in->ndim, in->shape, -1, NULL, &dim_mask, keepdim,
                                   &ond, oshape, &count) < 0)
        return -1;
    int want = dispatch_reduce_result_dtype(op, in->dtype);
    if (want < 0) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s takes floating point tensors, got %s",
                                  dispatch_reduce_name(op), dispatch_dtype_name(in->dtype));
    }
    /* An integer sum or prod may also land in another integer dtype
     * (sum(dtype=int32) of integers: the int64 sum wrapped into it, as
     * PyTorch). */
    int int_sum = dispatch_reduce_integers(op) == DISPATCH_REDUCE_INTEGERS_INT64 &&
                  out->dtype != want &&
                  dispatch_dtype_is_valid(out->dtype) &&
                  dispatch_dtype_category_of(in->dtype) != DISPATCH_CAT_FLOAT &&
                  dispatch_dtype_category_of(out->dtype) != DISPATCH_CAT_FLOAT;
    if (out->dtype != want && !int_sum) {
        return dispatch_error_set(DISPATCH_ERR_TYPE, "reduction output must be %s, got %s",
                                  dispatch_dtype_name(want), dispatch_dtype_name(out->dtype));
    }
    int same = out->ndim == ond;
    for (int d = 0; same && d < ond; d++) same = out->shape[d] == oshape[d];
    if (!same) {
        char a[256], b[256];
        format_shape(a, sizeof a, out->ndim, out->shape);
        format_shape(b, sizeof b, ond, oshape);
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "reduction output has shape %s, expected %s", a, b);
    }
    return reduce_planned(op, in, dim_mask, keepdim, out, ond, oshape, count);
}

/*
 * Note [Gathered reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A reduction's order is decided by the shape and the reduced dims alone
 * (Note [Deterministic reductions] in reduce_float.c), so a dense copy of
 * the input, row-major in its logical shape, gives the same bits as the
 * input itself. An input with no dim of unit stride (every other column of
 * a matrix, a stepped view) is read an element at a time in place: sum of
 * a (512, 1024) float32 view's every other column took 737 us over dim 0
 * (torch 216), bfloat16's 545 over dim 1 (torch 69). Such an input is
 * copied dense first, by the copy loop's own strided paths, and reduced
 * there; but where the copy would be reduced in the rows order (not the
 * columns of Note [Column reductions]) and the kernels read a row of every
 * other element as they load, the input is read in place
 * (read_in_place_not_copied): float32/float64 sums and means along the
 * same tree, a row that one stride steps by the SUM kernel itself (Note
 * [Sums of every other element]), the elements of several dims a range of
 * the tree at a time, gathered into a buffer that stays in cache
 * (reduce_narrow.c's rows); float32/float64 max and min by the row
 * kernel's runs, each read by vectors where its elements are one or two
 * apart (Note [Extremes of every other element] in sum.dispatch.c), the
 * runs' answers joined in order; the exact sums and extremes of
 * int32/int64 and bool's extremes by the integer kernels (Note [Every
 * other integer]). float64 sum() of that (512, 1024) view: 92 -> 46 us,
 * amax() 92 -> 47, int64 amax() 91 -> 43 (NumPy 45), bool amax() 9.1 ->
 * 0.5 (it stops at the first True), and no copy's 2 MiB written. In the
 * columns order too, float32/float64 sums, means, max and min beside a
 * kept dim of every other element: the column kernels read it as they
 * load (columns_read_in_place, Note [Columns of every other element]). A
 * transposed or row-stepped view keeps a unit-stride dim and is read in
 * place, as the column and row kernels do
 * well (a transposed float32 view's sums still follow its memory order:
 * other bits than its dense copy's, seen and not yet mended). Never a view
 * with a stride-0 dim (Note [Broadcast reduced dims]) or whose elements
 * overlap (as_strided): its copy could be far larger than its storage; nor
 * when the copy finds no memory: the in-place path answers then. The copy
 * is made a slab at a time where that keeps its bits (Note [Gathered
 * reductions by slabs] in reduce_copies.c).
 */
/* No dim of more than one element steps by one element (Note [Gathered
 * reductions]). */
int reduce_reads_by_gathers(const dispatch_iter_operand *in)
{
    const int64_t isz = (int64_t)dispatch_dtype_itemsize(in->dtype);
    int64_t numel = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] > 1 && (in->strides[d] == isz || in->strides[d] == -isz)) return 0;
        numel *= in->shape[d];
    }
    return numel > 1;
}

/* Whether the dense copy of in would be reduced in the columns order
 * (Note [Column reductions] in sum.dispatch.c): the reduced dims (those of
 * more than one element) consecutive, a kept dim after them, more than one
 * element each. *last: the innermost reduced dim, -1 when none. */
int reduce_copy_takes_columns(const dispatch_iter_operand *in, uint32_t mask, int64_t count,
                              int *last)
{
    int first = -1, gap = 0, kept_after = 0;
    *last = -1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        if ((mask >> d) & 1u) {
            if (first >= 0 && kept_after) gap = 1;
            if (first < 0) first = d;
            *last = d;
        } else if (first >= 0) {
            kept_after = 1;
        }
    }
    return !gap && first >= 0 && kept_after && count > 1;
}

/* A reduction that its dense copy would reduce in the rows order (each
 * output's elements in row-major order of the reduced dims: not the
 * columns of Note [Column reductions], reduced dims consecutive with a kept
 * dim after them) whose innermost reduced dim steps by two elements, which
 * the kernels read as they load, so it is read in place (Note [Gathered
 * reductions]): float32 and float64 sums and means, along the same tree;
 * the exact sums and extremes of 4- and 8-byte integers (Note [Every other
 * integer]); bool's extremes, which stop early. 1- and 2-byte integers keep the copy (Note
 * [Every other element by mask] in gather_bits.h), whose contiguous sums
 * add in int32 lanes: int8 sum() of every other column took 19 us so, 45
 * read in place. So does a product: its strided and gathered folds took
 * 2-3x the copy and the contiguous fold (float32 prod() 50 -> 147 us). */
/* A reduction its dense copy would reduce in the columns order that the
 * float32/float64 column kernels read in place (Note [Columns of every other
 * element] in sources/kernels/sum.dispatch.c): sums, means, max and min,
 * and products (Note [Product columns of every other element]), whose
 * reduced dims step with one stride (reduce_float's outer-dim case, each
 * column down the same rows as in the copy) beside a kept dim of every
 * other element; the data aligned to its elements (reduce_cols_even_kernel
 * says which ops and dtypes). */
static int columns_read_in_place(int op, const dispatch_iter_operand *in, uint32_t mask)
{
    const int64_t isz = (int64_t)dispatch_dtype_itemsize(in->dtype);
    if (!reduce_cols_even_kernel(op, in->dtype) || (uintptr_t)in->data % (uintptr_t)isz != 0)
        return 0;
    int first = 1, even = 0;
    int64_t expect = 0;
    for (int d = in->ndim - 1; d >= 0; d--) {
        if (in->shape[d] == 1) continue;
        if (!((mask >> d) & 1u)) {
            even |= in->strides[d] == 2 * isz;
        } else if (in->strides[d] % isz != 0) {
            return 0;
        } else if (first) {
            expect = in->strides[d] * in->shape[d];
            first = 0;
        } else if (in->strides[d] == expect) {
            expect *= in->shape[d];
        } else {
            return 0;
        }
    }
    return even;
}

static int read_in_place_not_copied(int op, const dispatch_iter_operand *in, uint32_t mask,
                                    int64_t count)
{
    const int cat = dispatch_dtype_category_of(in->dtype);
    const size_t isz = dispatch_dtype_itemsize(in->dtype);
    int taken = in->dtype == DISPATCH_FLOAT32 || in->dtype == DISPATCH_FLOAT64
                    ? dispatch_reduce_is_sum(op) || dispatch_reduce_is_extreme(op)
                : in->dtype == DISPATCH_BOOL ? dispatch_reduce_is_extreme(op)
                : cat == DISPATCH_CAT_INT && isz >= 4 &&
                      (dispatch_reduce_is_extreme(op) ||
                       dispatch_reduce_family(op) == DISPATCH_REDUCE_FAMILY_SUM);
    int last;
    if (reduce_copy_takes_columns(in, mask, count, &last))
        return columns_read_in_place(op, in, mask);
    if (!taken) return 0;
    /* the kernels' runs: two elements apart (other steps read an element
     * at a time, no faster than the copy's) */
    return last >= 0 && in->strides[last] == 2 * (int64_t)isz;
}

/*
 * Note [Strided first extremes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max(dim)/min(dim)/argmax/argmin of a layout that neither one-pass kernel
 * reads (a run, or the columns of Note [Column first extremes]): every
 * other column of a matrix, the whole of a stepped or transposed view. In
 * place, the values' strided reduction and then the search, an element at
 * a time, cost 10x the contiguous case (argmax of a (512, 1024) float32
 * view's every other column 512 us, max(dim=1) 596 against torch's 240),
 * where the float32 copy that float16 went through took 47. So such an
 * input is copied dense first (reduce_through_copies), in its own dtype and logical
 * shape: the indices are row-major positions among the reduced elements,
 * the copy's as the view's, and the values the same elements' bits.
 */
static int extremes_of_dense_copy(int op, const dispatch_iter_operand *in, uint32_t mask,
                                  int keepdim, const dispatch_iter_operand *out, int64_t *indices)
{
    if (reduce_is_dense(in)) return 1;
    return reduce_through_copies(op, in, mask, keepdim, out, 0, indices);
}

int reduce_planned(int op, const dispatch_iter_operand *in, uint32_t dim_mask,
                   int keepdim, const dispatch_iter_operand *out, int ond,
                   const int64_t *oshape, int64_t count)
{
    int nd = in->ndim;
    int64_t nout = 1;
    for (int d = 0; d < ond; d++) {
        if (__builtin_mul_overflow(nout, oshape[d], &nout)) {
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "reduction: the number of elements overflows int64");
        }
    }
    /* max and min read one element of each (Note [Broadcast reduced dims]). */
    int64_t cshape[MAXD];
    dispatch_iter_operand collapsed;
    if (dispatch_reduce_is_extreme(op) && count > 0) {
        int any = 0;
        for (int d = 0; d < nd; d++) {
            cshape[d] = in->shape[d];
            if (((dim_mask >> d) & 1u) && in->strides[d] == 0 && in->shape[d] > 1) {
                count /= cshape[d];
                cshape[d] = 1;
                any = 1;
            }
        }
        if (any) {
            collapsed = *in;
            collapsed.shape = cshape;
            in = &collapsed;
        }
    }
    if (nd > 0 && count > 0 && reduce_reads_by_gathers(in) &&
        !read_in_place_not_copied(op, in, dim_mask, count)) { /* Note [Gathered reductions] */
        int rc = reduce_through_copies(op, in, dim_mask, keepdim, out, count, NULL);
        if (rc <= 0) return rc;
    }
    if ((in->dtype == DISPATCH_FLOAT32 || in->dtype == DISPATCH_FLOAT64) && nd > 0)
        return reduce_float(op, in, dim_mask, keepdim, out, ond, count);
    if (nout == 0) return 0;
    if (reduce_is_dense(out)) return reduce_dense(op, in, dim_mask, keepdim, count, out, nout);
    /* Another layout: into a dense buffer, then copied. */
    size_t osz = dispatch_dtype_itemsize(out->dtype);
    int64_t tstr[MAXD];
    reduce_dense_strides(ond, oshape, (int64_t)osz, tstr);
    char *tmp = malloc((size_t)nout * osz + 1);
    if (!tmp) return reduce_out_of_memory(op);
    dispatch_iter_operand t = {tmp, ond, oshape, tstr, out->dtype};
    int rc = reduce_dense(op, in, dim_mask, keepdim, count, &t, nout);
    dispatch_iter_operand cp[2] = {*out, t};
    if (rc == 0) rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, cp, NULL);
    free(tmp);
    return rc;
}

int dispatch_iter_reduce_on(int device, int op, const dispatch_iter_operand *in,
                            uint32_t dim_mask, int keepdim, const dispatch_iter_operand *out,
                            int64_t *indices)
{
    if (device != DISPATCH_DEVICE_CPU)
        return dispatch_iter_device_reduce(device, op, in->dtype, in->data, in->ndim, in->shape,
                                           in->strides, dim_mask, out->dtype, out->data, indices);
    /* Checked already (the operator's dispatch_iter_reduce_check made out
     * of the shape it answered): only the count is read off again. */
    int64_t count = 1;
    for (int d = 0; d < in->ndim; d++)
        if ((dim_mask >> d) & 1u) count *= in->shape[d];
    /* max and min with indices: one pass where it can (Note [One-pass first extremes]) */
    if (indices && count > 0 && reduce_first_extremes(op, in, dim_mask, out->data, indices))
        return 0;
    if (indices && count > 0) {
        int rc = extremes_of_dense_copy(op, in, dim_mask, keepdim, out, indices);
        if (rc != 1) return rc;
    }
    if (reduce_planned(op, in, dim_mask, keepdim, out, out->ndim, out->shape, count) < 0)
        return -1;
    return indices ? dispatch_iter_reduce_indices(in, dim_mask, out->data, indices) : 0;
}
