/*
 * Views that no kernel reads (no dim of unit stride: every other column of
 * a matrix, a stepped view) reduced through dense copies of them (Note
 * [Gathered reductions] in reduce_plan.c says which), a slab at a time
 * where the slabs keep the whole copy's bits.
 *
 * Note [Gathered reductions by slabs]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The copy used to be the whole input, in malloc's fresh pages: amax() of
 * every other column of a (32768, 1024) float64 matrix wrote 128 MiB a
 * call, half of its time the kernel clearing those pages, and read them
 * back: 81 ms, NumPy 8.5 in place. Now the input is copied and reduced
 * COPY_SLAB_BYTES of its outermost dim (of more than one element) at a
 * time, whole slabs, one at least, through one buffer that stays in cache,
 * where that keeps the whole copy's bits:
 *   - the dim is kept (max(dim=1), argmax(dim=1) of a matrix): each output
 *     reads only its own slab, its elements the same in the same order, so
 *     its value and its index are the whole copy's;
 *   - the dim is reduced and the reduction exact in any grouping: sums,
 *     products, max and min of integers and bool (wrapping, so modulo
 *     2^bits in any order), max and min of floats without indices (the
 *     first NaN, else the first of equal extremes, Note [Which zero, which
 *     NaN]: slab by slab in order, each slab's answer joined to the earlier
 *     ones' by that rule, is the first of the whole). Each slab is reduced
 *     into a buffer of the outputs and joined to those before it.
 * Float sums and products follow a tree of the whole shape, and indices
 * count over all reduced elements: those copy the whole input, into a
 * buffer from the CPU allocator, as a tensor's data (Note [CPU
 * allocations] in sources/core/storage.c: huge pages, and a freed large
 * block kept for the next call of its size).
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch/narrow_float.h"
#include "dispatch/storage.h"
#include "reduce_internal.h"

#define COPY_SLAB_BYTES (512 * 1024)

/* Whether in can be copied dense: no stride-0 dim (its copy would hold
 * every repeat, Note [Broadcast reduced dims]), elements that do not
 * overlap (an as_strided view's copy could be far larger than its storage);
 * *bytes: the copy's size. */
static int dense_copy_fits(const dispatch_iter_operand *in, int64_t *bytes)
{
    const int64_t isz = (int64_t)dispatch_dtype_itemsize(in->dtype);
    int64_t numel = 1, span = isz; /* span: the bytes from its first element to its last */
    for (int d = 0; d < in->ndim; d++) {
        if (in->strides[d] == 0 && in->shape[d] > 1) return 0;
        if (__builtin_mul_overflow(numel, in->shape[d], &numel)) return 0;
        span += (in->shape[d] - 1) * (in->strides[d] < 0 ? -in->strides[d] : in->strides[d]);
    }
    return !__builtin_mul_overflow(numel, isz, bytes) && *bytes <= span &&
           (uint64_t)*bytes < SIZE_MAX;
}

/* in copied into buf, dense in its dtype and shape, as *c (strides: c's,
 * MAXD of them): 0, -1 on an error of the copy. */
static int dense_copy_into(const dispatch_iter_operand *in, char *buf, int64_t *strides,
                           dispatch_iter_operand *c)
{
    reduce_dense_strides(in->ndim, in->shape, (int64_t)dispatch_dtype_itemsize(in->dtype),
                         strides);
    *c = (dispatch_iter_operand){buf, in->ndim, in->shape, strides, in->dtype};
    dispatch_iter_operand ops[2] = {*c, *in};
    return dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, in->dtype, 2, ops, NULL);
}

/* Whether op over dtype gives the same bits in any grouping of its elements
 * (the second case of Note [Gathered reductions by slabs]). */
static int joins_exactly(int op, int dtype)
{
    if (dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT)
        return dispatch_reduce_is_extreme(op);
    return !dispatch_reduce_is_mean(op) && dispatch_reduce_int_kernel_op(op) != DISPATCH_COMBINE_NONE;
}

/* acc[i] = acc[i] joined with part[i] (the later slab's), n outputs of out_dtype. */
#define JOIN_INTS_(T, U)                                                                   \
    {                                                                                      \
        T *a = (T *)(void *)acc;                                                           \
        const T *b = (const T *)(const void *)part;                                        \
        for (int64_t i = 0; i < n; i++)                                                    \
            a[i] = how == DISPATCH_COMBINE_ADD   ? (T)((U)a[i] + (U)b[i])                  \
                   : how == DISPATCH_COMBINE_MUL ? (T)((U)a[i] * (U)b[i])                  \
                   : how == DISPATCH_COMBINE_MAX ? (b[i] > a[i] ? b[i] : a[i])             \
                                                 : (b[i] < a[i] ? b[i] : a[i]);            \
    }
/* The first NaN, else the first of equal extremes: acc (the earlier) unless
 * it is not NaN and part's is NaN or beyond it. */
#define JOIN_FLOATS_(T, VALUE)                                                             \
    {                                                                                      \
        T *a = (T *)(void *)acc;                                                           \
        const T *b = (const T *)(const void *)part;                                        \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const double x = VALUE(a[i]), y = VALUE(b[i]);                                 \
            if (x == x && (y != y || (how == DISPATCH_COMBINE_MIN ? y < x : y > x))) a[i] = b[i]; \
        }                                                                                  \
    }
#define AS_IS_(v) (v)
static void join_slab(int op, int out_dtype, char *acc, const char *part, int64_t n)
{
    const int how = dispatch_dtype_category_of(out_dtype) == DISPATCH_CAT_FLOAT
                        ? dispatch_reduce_kernel_op(op)
                        : dispatch_reduce_int_kernel_op(op);
    switch (out_dtype) {
    case DISPATCH_BOOL:
    case DISPATCH_UINT8: JOIN_INTS_(uint8_t, uint8_t) break;
    case DISPATCH_INT8: JOIN_INTS_(int8_t, uint8_t) break;
    case DISPATCH_INT16: JOIN_INTS_(int16_t, uint16_t) break;
    case DISPATCH_INT32: JOIN_INTS_(int32_t, uint32_t) break;
    case DISPATCH_INT64: JOIN_INTS_(int64_t, uint64_t) break;
    case DISPATCH_FLOAT16: JOIN_FLOATS_(uint16_t, dispatch_half_to_float_inline) break;
    case DISPATCH_BFLOAT16: JOIN_FLOATS_(uint16_t, dispatch_bfloat16_to_float_inline) break;
    case DISPATCH_FLOAT32: JOIN_FLOATS_(float, AS_IS_) break;
    case DISPATCH_FLOAT64: JOIN_FLOATS_(double, AS_IS_) break;
    default: break;
    }
}

int reduce_through_copies(int op, const dispatch_iter_operand *in, uint32_t mask, int keepdim,
                          const dispatch_iter_operand *out, int64_t count, int64_t *indices)
{
    int64_t bytes;
    if (!dense_copy_fits(in, &bytes) || bytes == 0) return 1;
    int d0 = 0; /* the outermost dim of more than one element, if any */
    while (d0 < in->ndim && in->shape[d0] == 1) d0++;
    const int64_t rows = d0 < in->ndim ? in->shape[d0] : 1, row_bytes = bytes / rows;
    const int kept = d0 < in->ndim && !((mask >> d0) & 1u);
    const int joined = !kept && !indices && joins_exactly(op, in->dtype);
    int64_t step = rows; /* the rows of d0 a copy holds */
    if ((kept || joined) && COPY_SLAB_BYTES / row_bytes < rows)
        step = COPY_SLAB_BYTES / row_bytes > 1 ? COPY_SLAB_BYTES / row_bytes : 1;
    const dispatch_allocator *al = dispatch_allocator_get(DISPATCH_DEVICE_CPU);
    char *buf = al ? al->alloc((size_t)(row_bytes * step) + 1, al->ctx) : NULL;
    if (!buf) return 1;
    /* reduced by slabs: d0's dim among out's (kept), or the outputs of each
     * slab, dense, and of those before it (joined) */
    const int od = keepdim ? d0 : d0 - __builtin_popcount(mask & ((1u << d0) - 1u));
    const size_t osz = dispatch_dtype_itemsize(out->dtype);
    int64_t ishape[MAXD], oshape[MAXD], dstr[MAXD], ostr[MAXD], outs_per_row = 1, nout = 1;
    memcpy(ishape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    memcpy(oshape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    for (int d = 0; d < out->ndim; d++) nout *= out->shape[d];
    for (int d = od + 1; kept && d < out->ndim; d++) outs_per_row *= out->shape[d];
    char *outs = step < rows && joined ? malloc(2 * (size_t)nout * osz + 1) : NULL;
    if (step < rows && joined && !outs) { /* no memory: the caller reads in place */
        al->free(buf, al->ctx);
        return 1;
    }
    reduce_dense_strides(out->ndim, out->shape, (int64_t)osz, ostr);
    dispatch_iter_operand acc = {outs, out->ndim, out->shape, ostr, out->dtype}, part = acc;
    part.data = outs ? outs + (size_t)nout * osz : NULL;
    int rc = 0;
    for (int64_t r = 0; rc == 0 && r < rows; r += step) {
        dispatch_iter_operand slab = *in, o = *out, c;
        int64_t n = count;
        if (step < rows) {
            ishape[d0] = rows - r < step ? rows - r : step;
            slab.shape = ishape, slab.data += r * in->strides[d0];
            if (joined) {
                o = r == 0 ? acc : part;
                n = count / rows * ishape[d0];
            } else {
                oshape[od] = ishape[d0];
                o.shape = oshape, o.data += r * out->strides[od];
            }
        }
        rc = dense_copy_into(&slab, buf, dstr, &c);
        if (rc == 0)
            rc = indices ? dispatch_iter_reduce_on(DISPATCH_DEVICE_CPU, op, &c, mask, keepdim, &o,
                                                   indices + r * outs_per_row)
                         : reduce_planned(op, &c, mask, keepdim, &o, o.ndim, o.shape, n);
        if (rc == 0 && joined && r > 0) join_slab(op, out->dtype, acc.data, part.data, nout);
    }
    if (rc == 0 && outs) { /* the joined outputs into out (any strides) */
        dispatch_iter_operand cp[2] = {*out, acc};
        rc = dispatch_iter_elementwise_op(DISPATCH_LOOP_COPY, out->dtype, 2, cp, NULL);
    }
    free(outs);
    al->free(buf, al->ctx);
    return rc;
}
