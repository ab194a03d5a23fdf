/* The reduction operators (operators.h): sum/mean/prod/max/min and the
 * rest of the reduction table, all or along dims, with out= and dtype=;
 * max/min with indices; dot. The front of the reduction engine: the
 * arguments read here, their one check and the result's shape from
 * dispatch_iter_reduce_check (sources/iterator/reduce_check.c), the
 * reduction itself from dispatch_iter_reduce_on (reduce_plan.c). */
#include "operators.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels.h"
#include "dispatch/reduce_engine.h"
#include "dispatch/reduce_kernel_table.h"

/* t as an engine operand, its strides in bytes (into strides). */
static void byte_operand(const dispatch_tensor *t, int64_t *strides, dispatch_iter_operand *o) {
    int64_t isz = (int64_t)dispatch_dtype_itemsize(t->dtype);
    for (int d = 0; d < t->ndim; d++) strides[d] = t->strides[d] * isz;
    *o = (dispatch_iter_operand){t->data, (int)t->ndim, t->sizes, strides, t->dtype};
}

/* What the caller of reduce_values asks besides the result, as arguments:
 * out= to write in place (reduce_out), or the result's tensor alone
 * (reduce_index: the values and their indices are then one reduction, Note
 * [CUDA reduction plans] in sources/cuda/cuda_reduce_plan.c). */
typedef struct reduce_call {
    /* out= of a reduction written in place (Note [out=]): the result is
     * `into` when the float32/float64 CPU loop would write a result of its
     * exact shape and dtype, from that very input `into_in` (not a dtype= or
     * float16 copy), and it shares no byte with it; took_into then says so.
     * Otherwise a fresh result, which the caller copies into out. */
    dispatch_tensor *into;
    const dispatch_tensor *into_in;
    int took_into;
    int values_later; /* allocate the result, reduce nothing; then: */
    uint32_t mask;    /* the reduced dims, as the check answered them */
    int keep;         /* keepdim */
} reduce_call;

static dispatch_tensor *take_reduce_into(const dispatch_operator *op, reduce_call *call,
                                         const dispatch_tensor *in, int nd,
                                         const int64_t *shape, int dtype) {
    dispatch_tensor *out = call->into;
    if (!out || call->into_in != in || out->dtype != dtype || out->device != in->device ||
        out->ndim != nd || memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) != 0)
        return NULL;
    if (out->numel > 0 && in->numel > 0) {
        uintptr_t olo, ohi, ilo, ihi;
        dispatch_tensor_byte_range(out, &olo, &ohi);
        dispatch_tensor_byte_range(in, &ilo, &ihi);
        if (!(ohi <= ilo || olo >= ihi)) return NULL;
    }
    dispatch_tensor *const ins[1] = {(dispatch_tensor *)in};
    if (operator_check_out(op, out, (int)in->device, nd, shape, dtype, ins, 1) < 0) {
        dispatch_error_clear();
        return NULL; /* operator_into_out gives the error after the fresh result */
    }
    call->took_into = 1;
    dispatch_tensor_incref(out);
    return out;
}

/* The reduction of in over mask into out (and indices), on in's device,
 * through the engine's one entry (dispatch_iter_reduce_on: the CPU engine or
 * the device's hook); on failure out is released and rets[0] cleared. */
static int run_reduce(int kind, const dispatch_tensor *in, uint32_t mask, int keep,
                      dispatch_tensor *out, int64_t *indices, dispatch_ivalue *rets) {
    if (in->device == DISPATCH_DEVICE_META) return 0; /* shapes only */
    dispatch_iter_operand src, dst;
    int64_t istr[DISPATCH_MAX_DIMS], ostr[DISPATCH_MAX_DIMS];
    byte_operand(in, istr, &src);
    byte_operand(out, ostr, &dst);
    if (dispatch_iter_reduce_on((int)in->device, kind, &src, mask, keep, &dst, indices) == 0)
        return 0;
    dispatch_tensor_decref(out);
    rets[0].tag = DISPATCH_IV_NONE;
    return -1;
}

static int reduce_values(const dispatch_operator *op, dispatch_ivalue *args,
                         dispatch_ivalue *rets, void *ctx, reduce_call *call);

/* dtype= of a view with broadcast (stride-0) dims, on the CPU: only its
 * distinct elements cast (the view cut to size 1 in those dims, cast, then
 * expanded back), so a sum of a 2^31-element broadcast reads the one
 * element it holds instead of a cast copy of 2^31. Taken where the result
 * cannot depend on the cast's layout: an integer or bool result (exact), a
 * narrow float (its reduction is the dense copy's whatever the layout: Note
 * [Narrow floats without the copy] in sources/iterator/reduce_narrow.c), or
 * a full reduction (one row-major sequence in every layout). */
static dispatch_tensor *cast_for_reduce(dispatch_tensor *in, int dtype, uint32_t mask) {
    int any = 0, all_reduced = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->sizes[d] > 1 && in->strides[d] == 0) any = 1;
        if (in->sizes[d] > 1 && !((mask >> d) & 1u)) all_reduced = 0;
    }
    int layout_free = dispatch_dtype_category_of(dtype) != DISPATCH_CAT_FLOAT ||
                      dispatch_dtype_is_narrow_float(dtype) || all_reduced;
    if (!any || !layout_free || in->device != DISPATCH_DEVICE_CPU)
        return dispatch_kernels_to_dtype(in, dtype);
    dispatch_tensor *small = in;
    dispatch_tensor_incref(small);
    for (int d = 0; d < in->ndim && small; d++) {
        if (in->sizes[d] <= 1 || in->strides[d] != 0) continue;
        dispatch_tensor *cut = dispatch_tensor_slice(small, d, 0, 1, 1, 1, 1);
        dispatch_tensor_decref(small);
        small = cut;
    }
    if (!small) return NULL;
    dispatch_tensor *cast = dispatch_kernels_to_dtype(small, dtype);
    dispatch_tensor_decref(small);
    if (!cast) return NULL;
    dispatch_tensor *wide = dispatch_tensor_expand(cast, (int)in->ndim, in->sizes);
    dispatch_tensor_decref(cast);
    return wide;
}

/* A reduction's out= (Note [out=]): as PyTorch, out's dtype is the dtype=
 * when none is given (sum(int32 x, out=int32) sums in int32's result
 * dtype; mean into an integer out is refused as mean(dtype=int64) is);
 * overloads without dtype= (max/min) want out's dtype to be the input's.
 * The functional call with out hidden, its result copied into out. */
static int reduce_out(const dispatch_operator *op, dispatch_ivalue *args, dispatch_ivalue *rets,
                      void *ctx, dispatch_tensor *out) {
    const dispatch_schema *s = dispatch_op_schema(op);
    dispatch_tensor *in = args[0].v.t;
    dispatch_ivalue *dtype_arg = NULL;
    for (int i = 1; i < s->nargs; i++)
        if (strcmp(s->args[i].name, "dtype") == 0) dtype_arg = &args[i];
    dispatch_ivalue saved_out = args[s->nargs - 1], saved_dtype = {0};
    if (dtype_arg && dtype_arg->tag == DISPATCH_IV_INT && dtype_arg->v.i != out->dtype)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: Expected out tensor to have dtype %s, but got %s instead",
                                  dispatch_op_name(op), dispatch_dtype_name((int)dtype_arg->v.i),
                                  dispatch_dtype_name(out->dtype));
    if (!dtype_arg && in->dtype != out->dtype)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "%s: Expected the dtype for input and out to match, but got %s "
                                  "for input's dtype and %s for out's dtype.",
                                  dispatch_op_name(op), dispatch_dtype_name(in->dtype),
                                  dispatch_dtype_name(out->dtype));
    if (dtype_arg) {
        saved_dtype = *dtype_arg;
        dtype_arg->tag = DISPATCH_IV_INT;
        dtype_arg->v.i = out->dtype;
    }
    args[s->nargs - 1].tag = DISPATCH_IV_NONE;
    reduce_call call = {.into = out, .into_in = in};
    int rc = reduce_values(op, args, rets, ctx, &call);
    args[s->nargs - 1] = saved_out;
    if (dtype_arg) *dtype_arg = saved_dtype;
    if (rc < 0) return -1;
    /* took_into: written in place */
    return call.took_into ? 0 : operator_into_out(op, out, &in, 1, rets);
}

DISPATCH_BOXED_KERNEL(reduce) {
    UNUSED_KS;
    reduce_call call = {0};
    return reduce_values(op, args, rets, ctx, &call);
}

/* The reduce kernel's body: a reduction's result (rets[0]), its out= and
 * its values-only call as `call` says. */
static int reduce_values(const dispatch_operator *op, dispatch_ivalue *args,
                         dispatch_ivalue *rets, void *ctx, reduce_call *call) {
    int kind = (int)(intptr_t)ctx;
    /* the operator's own name in messages: amax/amin run this kernel too */
    char name_buf[32];
    const char *opname = dispatch_op_name(op), *dot = strchr(opname, '.');
    size_t len = dot ? (size_t)(dot - opname) : strlen(opname);
    const char *name = dispatch_reduce_name(kind);
    if (len < sizeof name_buf) {
        memcpy(name_buf, opname, len);
        name_buf[len] = '\0';
        name = name_buf;
    }
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
    dispatch_tensor *out_given = operator_out_arg(op, args);
    if (out_given) return reduce_out(op, args, rets, ctx, out_given);
    dispatch_tensor *in = args[0].v.t;
    const dispatch_schema *s = dispatch_op_schema(op);
    /* Find the optional arguments by name: the overloads differ. */
    const dispatch_ivalue *dim = NULL, *keepdim = NULL, *dtype_arg = NULL;
    for (int i = 1; i < s->nargs; i++) {
        if (strcmp(s->args[i].name, "dim") == 0) dim = &args[i];
        else if (strcmp(s->args[i].name, "keepdim") == 0) keepdim = &args[i];
        else if (strcmp(s->args[i].name, "dtype") == 0) dtype_arg = &args[i];
    }
    int keep = keepdim && keepdim->tag == DISPATCH_IV_BOOL && keepdim->v.i;
    /* dims, the result's shape, the count: Note [One reduction check] in reduce_check.c */
    int all = !dim || dim->tag == DISPATCH_IV_NONE || (dim->tag == DISPATCH_IV_INTLIST && dim->n == 0);
    int64_t one_dim = dim && dim->tag == DISPATCH_IV_INT ? dim->v.i : 0;
    int ndims = all ? 0 : dim->tag == DISPATCH_IV_INTLIST ? dim->n : 1;
    const int64_t *dims = all ? &one_dim : dim->tag == DISPATCH_IV_INTLIST ? dim->list : &one_dim;
    uint32_t mask = 0;
    int64_t out_sizes[DISPATCH_MAX_DIMS], count = 0;
    int out_nd = 0;
    if (dispatch_iter_reduce_check(name, kind, (int)in->ndim, in->sizes, ndims, dims, &mask, keep,
                                   &out_nd, out_sizes, &count) < 0)
        return -1;
    /* dtypes */
    int src = in->dtype, given = dtype_arg && dtype_arg->tag == DISPATCH_IV_INT;
    if (given) src = (int)dtype_arg->v.i;
    if (!dispatch_dtype_is_valid(src))
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: dtype must be a dtype", name);
    /* The result's dtype is the table's rule (dispatch_reduce_result_dtype),
     * or the dtype= given; a row that refuses integers gets PyTorch's message. */
    int out_dtype = dispatch_reduce_result_dtype(kind, src);
    if (out_dtype < 0)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  given ? "%s(): could not infer output dtype. Optional dtype "
                                          "must be a floating point dtype. Got: %s"
                                        : "%s(): could not infer output dtype. Input dtype must "
                                          "be a floating point dtype, got: %s",
                                  dispatch_reduce_name(kind), dispatch_dtype_name(src));
    if (given) out_dtype = src;
    if (src != in->dtype) {
        /* dtype=: as PyTorch, cast the input first, then reduce in that
         * dtype (sum(dtype=int8) of 300. is int8 44; float16 of 70000 is
         * inf). The same call again on the cast input. */
        dispatch_tensor *cast = cast_for_reduce(in, src, mask);
        if (!cast) return -1;
        args[0].v.t = cast;
        int rc = reduce_values(op, args, rets, ctx, call);
        args[0].v.t = in;
        dispatch_tensor_decref(cast);
        return rc;
    }
    int float_loop = in->device == DISPATCH_DEVICE_CPU && in->ndim > 0 &&
                     (src == DISPATCH_FLOAT32 || src == DISPATCH_FLOAT64);
    dispatch_tensor *out =
        float_loop ? take_reduce_into(op, call, in, out_nd, out_sizes, out_dtype) : NULL;
    if (!out) out = dispatch_tensor_empty(out_nd, out_sizes, out_dtype, in->device);
    if (!out) return -1;
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    call->mask = mask;
    call->keep = keep;
    if (out->numel == 0 || call->values_later) return 0;
    /* The engine plans every dtype, layout and thread split: Note
     * [Deterministic reductions] in sources/iterator/reduce_float.c. */
    return run_reduce(kind, in, mask, keep, out, NULL, rets);
}

/* max.dim/min.dim -> (values, indices); argmax/argmin -> indices (Note [max
 * and min with indices] in sources/iterator/reduce_indices.c). */
DISPATCH_BOXED_KERNEL(reduce_index) {
    const dispatch_schema *s = dispatch_op_schema(op);
    if (operator_expect_tensor(op, &args[0], "self") < 0) return -1;
    (void)ks; /* one kernel for every key: the engine reads the device off the tensor */
    dispatch_tensor *in = args[0].v.t;
    const dispatch_ivalue *dim = &args[1];
    int kind = (int)(intptr_t)ctx;
    const char *name = s->nrets == 2 ? dispatch_reduce_name(kind)
                                      : dispatch_reduce_kernel_op(kind) == DISPATCH_COMBINE_MAX ? "argmax" : "argmin";
    if (in->dtype == DISPATCH_BOOL && s->nrets == 1)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"%s_cpu\" not implemented for 'Bool'",
                                  name);
    if (in->numel == 0 && (dim->tag == DISPATCH_IV_NONE || in->ndim == 0))
        return dispatch_error_set(DISPATCH_ERR_INDEX, /* torch's type for argmax, not amax's */
                                  "%s(): Expected reduction dim to be specified for "
                                  "input.numel() == 0.", name);
    if (dim->tag == DISPATCH_IV_INT && in->ndim > 0) {
        int64_t d = dim->v.i < 0 ? dim->v.i + in->ndim : dim->v.i;
        if (d >= 0 && d < in->ndim && in->sizes[d] == 0)
            return dispatch_error_set(DISPATCH_ERR_INDEX,
                                      "%s(): Expected reduction dim %lld to have non-zero size.",
                                      name, (long long)d);
    }
    /* The values' tensor: the reduce kernel reads dim (an int or None) and
     * keepdim by name from the same schema, checks them once and answers the
     * mask; the values and their indices are then one reduction. */
    reduce_call values_later = {.values_later = 1};
    if (reduce_values(op, args, rets, ctx, &values_later) < 0) return -1;
    dispatch_tensor *vals = rets[0].v.t;
    dispatch_tensor *idx = dispatch_tensor_empty((int)vals->ndim, vals->sizes, DISPATCH_INT64,
                                                 in->device);
    if (!idx) {
        dispatch_ivalue_release(rets, 1);
        return -1;
    }
    if (vals->numel > 0) {
        dispatch_tensor_incref(vals);
        int rc = run_reduce(kind, in, values_later.mask, values_later.keep, vals,
                            (int64_t *)(void *)idx->data, rets);
        dispatch_tensor_decref(vals); /* on failure the last reference: rets[0] is cleared */
        if (rc < 0) {
            dispatch_tensor_decref(idx);
            return -1;
        }
    }
    if (s->nrets == 2) {
        rets[1].tag = DISPATCH_IV_TENSOR;
        rets[1].v.t = idx;
    } else {
        dispatch_tensor_decref(vals);
        rets[0].v.t = idx;
    }
    return 0;
}

/* dot on CPU without a DOT kernel for its dtype (none is missing today):
 * the products by the engine's MUL loop in float64 for floats (exact for
 * float16/float32 inputs; a and b cast chunk by chunk on the way in) or in
 * wrapping int64 for integers, then for floats the engine's pairwise
 * float64 sum of them, for integers their wrapping sum, into *total (a
 * double or an int64_t). The DOT kernels give the same bits in one pass
 * (Note [Dot order] in sources/kernels/dot.dispatch.c). */
static int dot_via_buffer(const dispatch_tensor *a, const dispatch_tensor *b, int compute,
                          void *total) {
    int64_t n = a->sizes[0];
    size_t bytes;
    if (__builtin_mul_overflow((size_t)n, (size_t)8, &bytes))
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "dot: %lld elements are too many",
                                  (long long)n);
    char *prod = malloc(bytes ? bytes : 1);
    if (!prod)
        return dispatch_error_set(DISPATCH_ERR_MEMORY, "dot: out of memory for %lld products",
                                  (long long)n);
    int64_t isz = (int64_t)dispatch_dtype_itemsize(a->dtype), eight = 8, zero_stride = 0;
    int64_t sa = a->strides[0] * isz, sb = b->strides[0] * isz;
    dispatch_iter_operand ops[3] = {{prod, 1, &n, &eight, compute},
                                    {a->data, 1, a->sizes, &sa, a->dtype},
                                    {b->data, 1, b->sizes, &sb, b->dtype}};
    int rc = n ? dispatch_iter_elementwise_op(DISPATCH_LOOP_MUL, compute, 3, ops, NULL) : 0;
    if (rc == 0 && n && compute == DISPATCH_FLOAT64) {
        dispatch_iter_operand dst = {(char *)total, 0, NULL, &zero_stride, DISPATCH_FLOAT64};
        rc = dispatch_iter_reduce(DISPATCH_REDUCE_SUM, &ops[0], 1u, 0, &dst);
    } else if (rc == 0) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x;
            memcpy(&x, prod + i * 8, 8);
            acc += (uint64_t)x;
        }
        int64_t itotal = (int64_t)acc;
        memcpy(total, &itotal, 8);
    }
    free(prod);
    return rc;
}

/* A long dot cut for the threads along the top levels of its kernel's
 * tree (Note [Dot order]: leaves of DOT_TREE_LEAF products), at most
 * 2^DOT_SPLIT_DEPTH parts, and added back in the tree's order: the bits of
 * one call. Integers add their parts wrapping, in any order. */
#define DOT_TREE_LEAF 512
#define DOT_SPLIT_DEPTH 4

typedef struct dot_split {
    dispatch_rk_dot_fn fn;
    const char *a, *b;
    intptr_t sa, sb;
    int nparts;
    int64_t begin[1 << DOT_SPLIT_DEPTH], count[1 << DOT_SPLIT_DEPTH];
    double fpart[1 << DOT_SPLIT_DEPTH];
    int64_t ipart[1 << DOT_SPLIT_DEPTH];
    int is_float;
} dot_split;

static void dot_cut(dot_split *s, int64_t begin, int64_t n, int depth) {
    if (depth == 0 || n <= DOT_TREE_LEAF * 8) {
        s->begin[s->nparts] = begin;
        s->count[s->nparts++] = n;
        return;
    }
    int64_t h = ((n / DOT_TREE_LEAF + 1) / 2) * DOT_TREE_LEAF;
    dot_cut(s, begin, h, depth - 1);
    dot_cut(s, begin + h, n - h, depth - 1);
}

static double dot_join(const dot_split *s, int64_t n, int depth, int *i) {
    if (depth == 0 || n <= DOT_TREE_LEAF * 8) return s->fpart[(*i)++];
    int64_t h = ((n / DOT_TREE_LEAF + 1) / 2) * DOT_TREE_LEAF;
    double lo = dot_join(s, h, depth - 1, i);
    double hi = dot_join(s, n - h, depth - 1, i);
    return lo + hi;
}

static void dot_parts(void *arg, int64_t begin, int64_t end) {
    dot_split *s = arg;
    for (int64_t p = begin; p < end; p++) {
        s->fn(s->a + s->begin[p] * s->sa, s->sa, s->b + s->begin[p] * s->sb, s->sb,
              (intptr_t)s->count[p], s->is_float ? (void *)&s->fpart[p] : (void *)&s->ipart[p]);
    }
}

/* dot on CPU: the dtype's DOT kernel (multiply and sum in one pass, Note
 * [Dot order] in sources/kernels/dot.dispatch.c: for floats the products
 * in float64 summed pairwise as the engine sums, the same bits for any
 * thread count; for integers the wrapping sum), its float result stored
 * as a sum is (Note [The NaN and the zero of a sum] in reduce_float.c) and
 * rounded once to out's dtype. */
static int dot_cpu(const dispatch_tensor *a, const dispatch_tensor *b, dispatch_tensor *out) {
    int is_float = dispatch_dtype_category_of(a->dtype) == DISPATCH_CAT_FLOAT;
    int compute = is_float ? DISPATCH_FLOAT64 : DISPATCH_INT64;
    int64_t n = a->sizes[0];
    double dtotal = 0;
    int64_t itotal = 0;
    dispatch_rk_dot_fn fn = dispatch_kernels_simd_init() == 0
                                ? (dispatch_rk_dot_fn)dispatch_reduce_kernel_get(DISPATCH_RK_DOT,
                                                                                 a->dtype)
                                : NULL;
    void *total = is_float ? (void *)&dtotal : (void *)&itotal;
    if (!fn) {
        if (dot_via_buffer(a, b, compute, total) < 0) return -1;
    } else if (n > 0) {
        int64_t isz = (int64_t)dispatch_dtype_itemsize(a->dtype);
        dot_split s = {.fn = fn, .a = a->data, .b = b->data, .is_float = is_float,
                       .sa = (intptr_t)(a->strides[0] * isz), .sb = (intptr_t)(b->strides[0] * isz)};
        if (n >= 2 * DISPATCH_ITER_GRAIN && dispatch_get_num_threads() > 1) {
            dot_cut(&s, 0, n, DOT_SPLIT_DEPTH);
            dispatch_parallel_for(s.nparts, 1, 1, dot_parts, &s);
            int i = 0;
            if (is_float) {
                dtotal = dot_join(&s, n, DOT_SPLIT_DEPTH, &i);
            } else {
                uint64_t acc = 0;
                for (int p = 0; p < s.nparts; p++) acc += (uint64_t)s.ipart[p];
                itotal = (int64_t)acc;
            }
        } else {
            fn(s.a, s.sa, s.b, s.sb, (intptr_t)n, total);
        }
    }
    if (is_float) dtotal = dtotal != dtotal ? __builtin_nan("") : dtotal + 0.0;
    char *data[2] = {out->data, (char *)total};
    intptr_t zero[2] = {0, 0};
    dispatch_cast_loop_get(compute, out->dtype)(data, zero, 1, NULL);
    return 0;
}

DISPATCH_BOXED_KERNEL(dot) {
    UNUSED_KS;
    (void)ctx;
    if (operator_expect_tensor(op, &args[0], "self") < 0 ||
        operator_expect_tensor(op, &args[1], "tensor") < 0)
        return -1;
    dispatch_tensor *a = args[0].v.t, *b = args[1].v.t;
    if (a->ndim != 1 || b->ndim != 1)
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "1D tensors expected, but got %lldD and %lldD tensors",
                                  (long long)a->ndim, (long long)b->ndim);
    if (a->dtype != b->dtype)
        return dispatch_error_set(DISPATCH_ERR_TYPE,
                                  "dot : expected both vectors to have same dtype, but found %s "
                                  "and %s", dispatch_dtype_name(a->dtype),
                                  dispatch_dtype_name(b->dtype));
    if (a->dtype == DISPATCH_BOOL)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "\"dot\" not implemented for 'bool'");
    if (a->sizes[0] != b->sizes[0])
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "inconsistent tensor size, expected tensor [%lld] and src "
                                  "[%lld] to have the same number of elements",
                                  (long long)a->sizes[0], (long long)b->sizes[0]);
    dispatch_tensor *ins[2] = {a, b};
    int device = 0;
    if (operator_common_device("dot", ins, 2, &device) < 0) return -1;
    dispatch_tensor *out = dispatch_tensor_empty(0, NULL, a->dtype, device);
    if (!out) return -1;
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = out;
    if (device != DISPATCH_DEVICE_CPU) return 0;
    if (dot_cpu(a, b, out) < 0) {
        dispatch_tensor_decref(out);
        rets[0].tag = DISPATCH_IV_NONE;
        return -1;
    }
    return 0;
}
