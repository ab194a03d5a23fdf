/* Tensors as views over storages; see dispatch/tensor.h. */
#include "dispatch/tensor.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/loops.h"
#include "dispatch/strided.h"

static atomic_long live_tensors;

/* The dispatch key of a device: key = device + 1 (see Note [Key order] in
 * sources/dispatcher/dispatcher.c, whose _Static_asserts check the two agree). */
static uint64_t device_keyset(int device) { return (uint64_t)1 << (device + 1); }

static void format_shape(char *buf, size_t size, int ndim, const int64_t *sizes) {
    dispatch_format_shape(buf, size, ndim, sizes); /* the one formatter (error.c) */
}

int dispatch_compute_contiguous(int ndim, const int64_t *sizes, const int64_t *strides) {
    for (int d = 0; d < ndim; d++)
        if (sizes[d] == 0) return 1;
    int64_t expected = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (sizes[d] == 1) continue;
        if (strides[d] != expected) return 0;
        expected *= sizes[d];
    }
    return 1;
}

static void contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t acc = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = acc;
        acc *= sizes[d] > 1 ? sizes[d] : 1; /* fits: see checked_numel */
    }
}

static int check_ndim(int ndim) {
    if (ndim < 0 || ndim > DISPATCH_MAX_DIMS) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "tensors have at most %d dims, got %d",
                           DISPATCH_MAX_DIMS, ndim);
        return -1; /* visibly: lets gcc bound ndim in the callers' memcpy */
    }
    return 0;
}

/* numel of sizes, or -1 with a ValueError on a negative size or overflow. */
static int64_t checked_numel(int ndim, const int64_t *sizes) {
    char buf[256];
    int empty = 0;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] < 0) {
            format_shape(buf, sizeof buf, ndim, sizes);
            dispatch_error_set(DISPATCH_ERR_VALUE, "negative dimension %lld in shape %s",
                               (long long)sizes[d], buf);
            return -1;
        }
        empty |= sizes[d] == 0;
    }
    /* The product of the nonzero sizes must fit too, even when a size is 0:
     * the contiguous strides are made of it. */
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] && __builtin_mul_overflow(n, sizes[d], &n)) {
            format_shape(buf, sizeof buf, ndim, sizes);
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "shape %s is too large: the number of elements overflows int64",
                               buf);
            return -1;
        }
    }
    return empty ? 0 : n;
}

/* The bytes a view needs from its storage, or -1 with the error set. */
static int check_bounds(const dispatch_storage *s, int ndim, const int64_t *sizes,
                        const int64_t *strides, int64_t offset, int dtype, int64_t numel) {
    if (offset < 0)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "negative storage offset %lld",
                                  (long long)offset);
    for (int d = 0; d < ndim; d++)
        if (strides[d] < 0)
            return dispatch_error_set(DISPATCH_ERR_VALUE, "negative stride %lld at dim %d",
                                      (long long)strides[d], d);
    int64_t last = offset, term, need = 0;
    if (numel == 0) { /* nothing is read, but the data pointer is still made */
        if (__builtin_mul_overflow(offset, (int64_t)dispatch_dtype_itemsize(dtype), &need))
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "storage offset %lld is too large: in bytes it overflows "
                                      "int64", (long long)offset);
        return 0;
    }
    int overflow = 0;
    for (int d = 0; d < ndim && !overflow; d++)
        overflow = __builtin_mul_overflow(sizes[d] - 1, strides[d], &term) ||
                   __builtin_add_overflow(last, term, &last);
    overflow = overflow || __builtin_add_overflow(last, 1, &need) ||
               __builtin_mul_overflow(need, (int64_t)dispatch_dtype_itemsize(dtype), &need);
    if (overflow || (uint64_t)need > dispatch_storage_nbytes(s)) {
        char buf[256], sbuf[256], nbuf[64];
        format_shape(buf, sizeof buf, ndim, sizes);
        format_shape(sbuf, sizeof sbuf, ndim, strides);
        if (overflow)
            snprintf(nbuf, sizeof nbuf, "more than %lld", (long long)INT64_MAX);
        else
            snprintf(nbuf, sizeof nbuf, "%lld", (long long)need);
        return dispatch_error_set(
            DISPATCH_ERR_VALUE,
            "setStorage: sizes %s, strides %s, storage offset %lld and itemsize %zu require a "
            "storage of at least %s bytes, but the storage has %zu bytes",
            buf, sbuf, (long long)offset, dispatch_dtype_itemsize(dtype), nbuf,
            dispatch_storage_nbytes(s));
    }
    return 0;
}

/* numel of a tensor with these sizes and dtype, or -1 with the error set
 * (too many dims, an invalid dtype, a negative size or overflow). */
static int64_t checked_shape(int ndim, const int64_t *sizes, int dtype) {
    if (check_ndim(ndim) < 0) return -1;
    if (!dispatch_dtype_is_valid(dtype)) {
        dispatch_error_set(DISPATCH_ERR_TYPE, "invalid dtype %d", dtype);
        return -1;
    }
    return checked_numel(ndim, sizes);
}

/* The one constructor: fills every field; takes a new reference to s, or
 * (steal) takes over the caller's, which it drops on failure. */
static dispatch_tensor *make_ref(dispatch_storage *s, int ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset, int dtype, int check,
                                 int steal);
static dispatch_tensor *make_header(dispatch_storage *s, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset, int dtype, int check);

static dispatch_tensor *make(dispatch_storage *s, int ndim, const int64_t *sizes,
                             const int64_t *strides, int64_t offset, int dtype, int check) {
    return make_ref(s, ndim, sizes, strides, offset, dtype, check, 0);
}

static dispatch_tensor *make_ref(dispatch_storage *s, int ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset, int dtype, int check,
                                 int steal) {
    dispatch_tensor *t = NULL;
    if (!(t = make_header(s, ndim, sizes, strides, offset, dtype, check)) && steal)
        dispatch_storage_decref(s);
    if (t && !steal) dispatch_storage_incref(s);
    return t;
}

/* A tensor header over s (no reference taken), or NULL with the error set. */
static dispatch_tensor *make_header(dispatch_storage *s, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset, int dtype, int check) {
    int64_t numel = checked_shape(ndim, sizes, dtype);
    if (numel < 0) return NULL;
    int64_t st[DISPATCH_MAX_DIMS];
    if (!strides) {
        contiguous_strides(ndim, sizes, st);
        strides = st;
    }
    if (check && check_bounds(s, ndim, sizes, strides, offset, dtype, numel) < 0) return NULL;
    dispatch_tensor *t = malloc(sizeof *t);
    if (!t) {
        dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory allocating a tensor header");
        return NULL;
    }
    /* Field by field, not memset: gcc would turn malloc + memset into calloc,
     * which glibc serves without its per-thread cache (Note [Small calls] in
     * sources/dispatcher/operators_elementwise.c). */
    t->ndim = ndim;
    for (int d = 0; d < DISPATCH_MAX_DIMS; d++) {
        t->sizes[d] = d < ndim ? sizes[d] : 0;
        t->strides[d] = d < ndim ? strides[d] : 0;
    }
    t->wrapped_number = 0;
    t->offset = offset;
    t->numel = numel;
    t->dtype = dtype;
    t->device = dispatch_storage_device(s);
    t->keyset = device_keyset(t->device);
    t->is_contiguous = dispatch_compute_contiguous(ndim, t->sizes, t->strides);
    char *base = dispatch_storage_data(s);
    t->data = base ? base + offset * (int64_t)dispatch_dtype_itemsize(dtype) : NULL;
    t->storage = s;
    t->refcount = 1;
    atomic_fetch_add(&live_tensors, 1);
    return t;
}

dispatch_tensor *dispatch_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device) {
    int64_t numel = checked_shape(ndim, sizes, dtype);
    if (numel < 0) return NULL;
    int64_t nbytes;
    if (__builtin_mul_overflow(numel, (int64_t)dispatch_dtype_itemsize(dtype), &nbytes)) {
        char buf[256];
        format_shape(buf, sizeof buf, ndim, sizes);
        dispatch_error_set(DISPATCH_ERR_MEMORY, "cannot allocate a tensor of shape %s and dtype "
                           "%s: its size in bytes overflows", buf, dispatch_dtype_name(dtype));
        return NULL;
    }
    dispatch_storage *s = dispatch_storage_new(device, (size_t)nbytes);
    if (!s) return NULL;
    return make_ref(s, ndim, sizes, NULL, 0, dtype, 0, 1);
}

dispatch_tensor *dispatch_tensor_filled(int ndim, const int64_t *sizes, int dtype, int64_t value) {
    dispatch_tensor *t = dispatch_tensor_empty(ndim, sizes, dtype, DISPATCH_DEVICE_CPU);
    if (!t || t->numel == 0) return t;
    unsigned char one[8] = {0}; /* one element of value, by the cast fill_ uses */
    if (value != 0) {
        char *d[2] = {(char *)one, (char *)&value};
        intptr_t st[2] = {0, 0};
        dispatch_cast_loop_get(DISPATCH_INT64, dtype)(d, st, 1, NULL);
    }
    const size_t n = (size_t)t->numel;
#define FILL_AS_(T)                                                                        \
    {                                                                                      \
        T v, *o = (T *)(void *)t->data; /* a typed loop: the compiler vectorizes it */    \
        memcpy(&v, one, sizeof v);                                                         \
        for (size_t i = 0; i < n; i++) o[i] = v;                                           \
    }
    switch (dispatch_dtype_itemsize(dtype)) {
    case 1: memset(t->data, one[0], n); break;
    case 2: FILL_AS_(uint16_t) break;
    case 4: FILL_AS_(uint32_t) break;
    default: FILL_AS_(uint64_t) break;
    }
#undef FILL_AS_
    return t;
}

dispatch_tensor *dispatch_tensor_from_storage(dispatch_storage *s, int ndim, const int64_t *sizes,
                                              const int64_t *strides, int64_t offset, int dtype) {
    return make(s, ndim, sizes, strides, offset, dtype, 1);
}

static dispatch_tensor *wrap_scalar(int dtype, const void *value) {
    dispatch_tensor *t = dispatch_tensor_empty(0, NULL, dtype, DISPATCH_DEVICE_CPU);
    if (!t) return NULL;
    memcpy(t->data, value, dispatch_dtype_itemsize(dtype));
    t->wrapped_number = 1;
    return t;
}

dispatch_tensor *dispatch_tensor_wrap_double(double v) { return wrap_scalar(DISPATCH_FLOAT64, &v); }
dispatch_tensor *dispatch_tensor_wrap_int(int64_t v) { return wrap_scalar(DISPATCH_INT64, &v); }
dispatch_tensor *dispatch_tensor_wrap_bool(int v) {
    _Bool b = v != 0;
    return wrap_scalar(DISPATCH_BOOL, &b);
}

void dispatch_tensor_incref(dispatch_tensor *t) {
    __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED);
}

void dispatch_tensor_decref(dispatch_tensor *t) {
    if (!t) return;
    if (__atomic_fetch_sub(&t->refcount, 1, __ATOMIC_ACQ_REL) != 1) return;
    dispatch_storage_decref(t->storage);
    free(t);
    atomic_fetch_sub(&live_tensors, 1);
}

long dispatch_tensor_refcount(const dispatch_tensor *t) {
    return __atomic_load_n(&t->refcount, __ATOMIC_RELAXED);
}

long dispatch_tensor_live_count(void) { return atomic_load(&live_tensors); }

/* Views ------------------------------------------------------------------ */

static int wrap_dim(int64_t dim, int64_t ndim, int64_t *out) {
    int64_t lo = ndim ? -ndim : -1, hi = ndim ? ndim - 1 : 0;
    if (dim < lo || dim > hi) {
        dispatch_error_set(DISPATCH_ERR_INDEX,
                           "Dimension out of range (expected to be in range of [%lld, %lld], but "
                           "got %lld)", (long long)lo, (long long)hi, (long long)dim);
        return -1;
    }
    *out = dim < 0 ? dim + (ndim ? ndim : 1) : dim;
    return 0;
}

dispatch_tensor *dispatch_tensor_as_strided(dispatch_tensor *t, int ndim, const int64_t *sizes,
                                            const int64_t *strides, int64_t offset) {
    return make(t->storage, ndim, sizes, strides, offset, t->dtype, 1);
}

/* Replace one -1 in sizes by what numel asks; ValueError when impossible. */
static int infer_size(int ndim, const int64_t *in, int64_t numel, int64_t *out) {
    int infer = -1, zero = 0;
    int64_t nonzero = 1;
    char buf[256];
    for (int d = 0; d < ndim; d++) {
        out[d] = in[d];
        if (in[d] == -1) {
            if (infer >= 0)
                return dispatch_error_set(DISPATCH_ERR_VALUE, "only one dimension can be inferred");
            infer = d;
        } else if (in[d] < 0) {
            return dispatch_error_set(DISPATCH_ERR_VALUE, "invalid shape dimension %lld",
                                      (long long)in[d]);
        } else if (in[d] && __builtin_mul_overflow(nonzero, in[d], &nonzero)) {
            format_shape(buf, sizeof buf, ndim, in);
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "shape '%s' is too large: the number of elements overflows "
                                      "int64", buf);
        } else if (in[d] == 0) {
            zero = 1;
        }
    }
    int64_t prod = zero ? 0 : nonzero;
    if (infer >= 0) {
        if (prod == 0 || numel % prod != 0) {
            format_shape(buf, sizeof buf, ndim, in);
            return dispatch_error_set(DISPATCH_ERR_VALUE, "shape '%s' is invalid for input of size %lld",
                                      buf, (long long)numel);
        }
        out[infer] = numel / prod;
    } else if (prod != numel) {
        format_shape(buf, sizeof buf, ndim, in);
        return dispatch_error_set(DISPATCH_ERR_VALUE, "shape '%s' is invalid for input of size %lld",
                                  buf, (long long)numel);
    }
    return 0;
}

/* Strides for viewing (sizes, strides) as newsizes without a copy; 0 on
 * success, 1 when impossible. The chunks of old dims that are contiguous with
 * each other may be split or merged freely (PyTorch's computeStride). */
static int view_strides(int ndim, const int64_t *sizes, const int64_t *strides, int64_t numel,
                        int nnew, const int64_t *newsizes, int64_t *newstrides) {
    if (ndim == 0 || numel == 0) {
        contiguous_strides(nnew, newsizes, newstrides);
        return 0;
    }
    int view_d = nnew - 1;
    int64_t chunk_base_stride = strides[ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        tensor_numel *= sizes[d];
        int64_t next; /* overflows only for strides of size-1 dims: not contiguous then */
        if (d == 0 || (sizes[d - 1] != 1 &&
                       (__builtin_mul_overflow(tensor_numel, chunk_base_stride, &next) ||
                        strides[d - 1] != next))) {
            while (view_d >= 0 && (view_numel < tensor_numel || newsizes[view_d] == 1)) {
                if (__builtin_mul_overflow(view_numel, chunk_base_stride, &newstrides[view_d]))
                    return 1;
                view_numel *= newsizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return 1;
            if (d > 0) {
                chunk_base_stride = strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d != -1;
}

dispatch_tensor *dispatch_tensor_view(dispatch_tensor *t, int ndim, const int64_t *sizes) {
    int64_t ns[DISPATCH_MAX_DIMS], nst[DISPATCH_MAX_DIMS];
    if (check_ndim(ndim) < 0 || infer_size(ndim, sizes, t->numel, ns) < 0) return NULL;
    if (view_strides((int)t->ndim, t->sizes, t->strides, t->numel, ndim, ns, nst)) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME,
                           "view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.");
        return NULL;
    }
    return make(t->storage, ndim, ns, nst, t->offset, t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_reshape(dispatch_tensor *t, int ndim, const int64_t *sizes) {
    int64_t ns[DISPATCH_MAX_DIMS], nst[DISPATCH_MAX_DIMS];
    if (check_ndim(ndim) < 0 || infer_size(ndim, sizes, t->numel, ns) < 0) return NULL;
    if (!view_strides((int)t->ndim, t->sizes, t->strides, t->numel, ndim, ns, nst))
        return make(t->storage, ndim, ns, nst, t->offset, t->dtype, 0);
    dispatch_tensor *c = dispatch_tensor_clone(t);
    if (!c) return NULL;
    dispatch_tensor *r = make(c->storage, ndim, ns, NULL, 0, t->dtype, 0);
    dispatch_tensor_decref(c);
    return r;
}

dispatch_tensor *dispatch_tensor_transpose(dispatch_tensor *t, int64_t d0, int64_t d1) {
    int64_t a = 0, b = 0;
    if (wrap_dim(d0, t->ndim, &a) < 0 || wrap_dim(d1, t->ndim, &b) < 0) return NULL;
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof sz);
    memcpy(st, t->strides, sizeof st);
    if (t->ndim) {
        sz[a] = t->sizes[b], sz[b] = t->sizes[a];
        st[a] = t->strides[b], st[b] = t->strides[a];
    }
    return make(t->storage, (int)t->ndim, sz, st, t->offset, t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_permute(dispatch_tensor *t, int ndim, const int64_t *dims) {
    if (ndim != t->ndim) {
        dispatch_error_set(DISPATCH_ERR_VALUE,
                           "permute: number of dims don't match (the tensor has %lld dims, the "
                           "permutation %d)", (long long)t->ndim, ndim);
        return NULL;
    }
    int seen[DISPATCH_MAX_DIMS] = {0};
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int64_t d = 0;
        if (wrap_dim(dims[i], ndim, &d) < 0) return NULL;
        if (seen[d]++) {
            dispatch_error_set(DISPATCH_ERR_VALUE, "permute: dim %lld appears more than once",
                               (long long)d);
            return NULL;
        }
        sz[i] = t->sizes[d];
        st[i] = t->strides[d];
    }
    return make(t->storage, ndim, sz, st, t->offset, t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_t(dispatch_tensor *t) {
    int64_t dims[DISPATCH_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) dims[i] = t->ndim - 1 - i;
    return dispatch_tensor_permute(t, (int)t->ndim, dims);
}

dispatch_tensor *dispatch_tensor_slice(dispatch_tensor *t, int64_t dim, int64_t start, int64_t stop,
                                       int64_t step, int has_start, int has_stop) {
    int64_t d;
    if (t->ndim == 0) {
        dispatch_error_set(DISPATCH_ERR_INDEX, "cannot slice a 0-dim tensor");
        return NULL;
    }
    if (wrap_dim(dim, t->ndim, &d) < 0) return NULL;
    if (step <= 0) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "slice step must be positive, got %lld",
                           (long long)step);
        return NULL;
    }
    /* Normalised as Python's slice.indices and PyTorch do, without overflow:
     * n >= 0, so start + n and stop + n cannot overflow when negative. */
    int64_t n = t->sizes[d];
    if (!has_start) start = 0;
    if (!has_stop) stop = n;
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = start < 0 ? 0 : (start > n ? n : start);
    stop = stop < start ? start : (stop > n ? n : stop);
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof sz);
    memcpy(st, t->strides, sizeof st);
    sz[d] = stop > start ? (stop - start - 1) / step + 1 : 0; /* 0 <= stop - start <= n */
    /* PyTorch's stride is step * stride. A result of 0 or 1 elements never
     * steps, so where that product (or its size in bytes) would overflow it
     * keeps the old stride; 2 or more elements that far apart cannot be in
     * one storage. */
    int64_t bytes;
    if (__builtin_mul_overflow(t->strides[d], step, &st[d]) ||
        __builtin_mul_overflow(st[d], (int64_t)dispatch_dtype_itemsize(t->dtype), &bytes)) {
        if (sz[d] > 1) {
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "slice step %lld on dim %lld (stride %lld) gives a stride that "
                               "overflows int64", (long long)step, (long long)d,
                               (long long)t->strides[d]);
            return NULL;
        }
        st[d] = t->strides[d];
    }
    int64_t offset = sz[d] ? t->offset + start * t->strides[d] : t->offset;
    return make(t->storage, (int)t->ndim, sz, st, offset, t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_select(dispatch_tensor *t, int64_t dim, int64_t index) {
    int64_t d;
    if (t->ndim == 0) {
        dispatch_error_set(DISPATCH_ERR_INDEX, "invalid index of a 0-dim tensor");
        return NULL;
    }
    if (wrap_dim(dim, t->ndim, &d) < 0) return NULL;
    int64_t n = t->sizes[d];
    if (index < -n || index >= n) {
        dispatch_error_set(DISPATCH_ERR_INDEX,
                           "index %lld is out of bounds for dimension %lld with size %lld",
                           (long long)index, (long long)d, (long long)n);
        return NULL;
    }
    if (index < 0) index += n;
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d) sz[k] = t->sizes[i], st[k++] = t->strides[i];
    return make(t->storage, k, sz, st, t->offset + index * t->strides[d], t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_unsqueeze(dispatch_tensor *t, int64_t dim) {
    int64_t d;
    if (wrap_dim(dim, t->ndim + 1, &d) < 0) return NULL;
    if (check_ndim((int)t->ndim + 1) < 0) return NULL;
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    int k = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == d) {
            sz[i] = 1;
            /* any stride serves a size-1 dim: 1 where PyTorch's would overflow */
            if (i >= t->ndim || __builtin_mul_overflow(t->strides[k], t->sizes[k], &st[i]))
                st[i] = 1;
        } else {
            sz[i] = t->sizes[k];
            st[i] = t->strides[k++];
        }
    }
    return make(t->storage, (int)t->ndim + 1, sz, st, t->offset, t->dtype, 0);
}

dispatch_tensor *dispatch_tensor_expand(dispatch_tensor *t, int ndim, const int64_t *sizes) {
    if (check_ndim(ndim) < 0) return NULL;
    char a[256], b[256];
    if (ndim < t->ndim) {
        format_shape(a, sizeof a, ndim, sizes);
        format_shape(b, sizeof b, (int)t->ndim, t->sizes);
        dispatch_error_set(DISPATCH_ERR_VALUE,
                           "expand: the number of sizes provided (%d) must be greater or equal "
                           "to the number of dimensions in the tensor (%lld); target %s, tensor %s",
                           ndim, (long long)t->ndim, a, b);
        return NULL;
    }
    int64_t sz[DISPATCH_MAX_DIMS], st[DISPATCH_MAX_DIMS];
    int lead = ndim - (int)t->ndim;
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - lead;
        if (j < 0) {
            if (sizes[i] < 0) {
                format_shape(a, sizeof a, ndim, sizes);
                dispatch_error_set(DISPATCH_ERR_VALUE,
                                   "expand: -1 is not allowed in a leading, new dimension; "
                                   "target sizes %s", a);
                return NULL;
            }
            sz[i] = sizes[i];
            st[i] = 0;
        } else if (sizes[i] == -1 || sizes[i] == t->sizes[j]) {
            sz[i] = t->sizes[j];
            st[i] = t->strides[j];
        } else if (t->sizes[j] == 1 && sizes[i] >= 0) {
            sz[i] = sizes[i];
            st[i] = 0;
        } else {
            format_shape(a, sizeof a, ndim, sizes);
            format_shape(b, sizeof b, (int)t->ndim, t->sizes);
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "The expanded size of the tensor (%lld) must match the existing "
                               "size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                               "Tensor sizes: %s",
                               (long long)sizes[i], (long long)t->sizes[j], i, a, b);
            return NULL;
        }
    }
    return make(t->storage, ndim, sz, st, t->offset, t->dtype, 0);
}

int dispatch_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                              int64_t *out) {
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char x[256], y[256];
            format_shape(x, sizeof x, na, a);
            format_shape(y, sizeof y, nb, b);
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "shapes %s and %s cannot be broadcast together (size %lld "
                                      "vs %lld at dim %d of the result)",
                                      x, y, (long long)sa, (long long)sb, i);
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return 0;
}

/* Copies ------------------------------------------------------------------ */

/* 1 when two elements of t share memory (Note [Overlapping outputs] in
 * strided.c), 0 when none do, -1 with the error set. */
static int has_internal_overlap(const dispatch_tensor *t) {
    int64_t isz = (int64_t)dispatch_dtype_itemsize(t->dtype), bst[DISPATCH_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && __builtin_mul_overflow(t->strides[d], isz, &bst[d])) return 1;
        else if (t->sizes[d] <= 1) bst[d] = 0;
    return dispatch_overlaps_itself((int)t->ndim, t->sizes, bst, isz);
}

int dispatch_tensor_check_no_internal_overlap(const dispatch_tensor *t) {
    int self_overlap = has_internal_overlap(t);
    if (self_overlap < 0) return -1;
    if (self_overlap)
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "unsupported operation: more than one element of the written-to "
                                  "tensor refers to a single memory location. Please clone() the "
                                  "tensor before performing the operation.");
    return 0;
}

/* Address range [lo, hi) a non-empty tensor touches (strides are >= 0). */
void dispatch_tensor_byte_range(const dispatch_tensor *t, uintptr_t *lo, uintptr_t *hi) {
    int64_t last = 0;
    for (int d = 0; d < t->ndim; d++) last += (t->sizes[d] - 1) * t->strides[d];
    int64_t isz = (int64_t)dispatch_dtype_itemsize(t->dtype);
    *lo = (uintptr_t)t->data;
    *hi = *lo + (uintptr_t)((last + 1) * isz);
}

int dispatch_tensor_check_writable(const dispatch_tensor *t, const char *what) {
    if (!dispatch_storage_is_readonly(t->storage)) return 0;
    return dispatch_error_set(DISPATCH_ERR_VALUE,
                              "%s: the tensor is read-only (its memory is a read-only NumPy "
                              "array, memmap or buffer); clone() it, or pass a writable array "
                              "to from_numpy", what);
}

int dispatch_tensor_copy_prepare(dispatch_tensor *dst, dispatch_tensor *src,
                                 dispatch_tensor **view, dispatch_loop_fn *loop) {
    *view = NULL;
    if (dispatch_tensor_check_writable(dst, "copy_") < 0) return -1;
    if (dispatch_tensor_check_no_internal_overlap(dst) < 0) return -1;
    dispatch_tensor *e = dispatch_tensor_expand(src, (int)dst->ndim, dst->sizes);
    if (!e) return -1;
    if (dst->device == DISPATCH_DEVICE_META || dst->numel == 0) {
        dispatch_tensor_decref(e);
        return 0;
    }
    if (dst->device != src->device) {
        dispatch_tensor_decref(e);
        return dispatch_error_set(DISPATCH_ERR_RUNTIME, "copy_: cannot copy from %s to %s",
                                  dispatch_device_name(src->device),
                                  dispatch_device_name(dst->device));
    }
    /* The strided engine walks memory on the host: device memory is copied by
     * its device's copy_ kernel (dispatch/cuda.py), never here. */
    if (dst->device != DISPATCH_DEVICE_CPU) {
        dispatch_tensor_decref(e);
        return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                                  "copy_: cannot walk %s memory on the host (the CPU copy loop "
                                  "reads host memory only); copy %s tensors with the %s copy_ "
                                  "kernel of the dispatcher",
                                  dispatch_device_name(dst->device),
                                  dispatch_device_name(dst->device),
                                  dispatch_device_name(dst->device));
    }
    /* Two storages may share memory too (from_numpy of two views of one
     * array): compare addresses, not storages. */
    if (src->numel) {
        uintptr_t a0, a1, b0, b1;
        dispatch_tensor_byte_range(dst, &a0, &a1);
        dispatch_tensor_byte_range(src, &b0, &b1);
        if (a0 < b1 && b0 < a1) { /* may overlap: read from a private copy */
            dispatch_tensor *c = dispatch_tensor_clone(e);
            dispatch_tensor_decref(e);
            if (!c) return -1;
            e = c;
        }
    }
    *loop = src->dtype == dst->dtype ? dispatch_loop_get(DISPATCH_LOOP_COPY, dst->dtype)
                                     : dispatch_cast_loop_get(src->dtype, dst->dtype);
    *view = e;
    return 1;
}

int dispatch_tensor_copy_(dispatch_tensor *dst, dispatch_tensor *src) {
    dispatch_tensor *e;
    dispatch_loop_fn fn;
    int work = dispatch_tensor_copy_prepare(dst, src, &e, &fn);
    if (work <= 0) return work;
    dispatch_tensor *ops[2] = {dst, e};
    int rc = dispatch_strided_run(fn, 2, ops, NULL);
    dispatch_tensor_decref(e);
    return rc;
}

static dispatch_tensor *copy_as(dispatch_tensor *t, int dtype) {
    dispatch_tensor *out = dispatch_tensor_empty((int)t->ndim, t->sizes, dtype, t->device);
    if (!out) return NULL;
    if (dispatch_tensor_copy_(out, t) < 0) {
        dispatch_tensor_decref(out);
        return NULL;
    }
    return out;
}

dispatch_tensor *dispatch_tensor_contiguous(dispatch_tensor *t) {
    if (t->is_contiguous) {
        dispatch_tensor_incref(t);
        return t;
    }
    return copy_as(t, t->dtype);
}

dispatch_tensor *dispatch_tensor_clone(dispatch_tensor *t) { return copy_as(t, t->dtype); }

dispatch_tensor *dispatch_tensor_to_dtype(dispatch_tensor *t, int dtype) {
    if (!dispatch_dtype_is_valid(dtype)) {
        dispatch_error_set(DISPATCH_ERR_TYPE, "invalid dtype %d", dtype);
        return NULL;
    }
    if (dtype == t->dtype) {
        dispatch_tensor_incref(t);
        return t;
    }
    return copy_as(t, dtype);
}

/* Element access ------------------------------------------------------------ */

static const char *element_at(const dispatch_tensor *t, int64_t linear) {
    int64_t off = 0;
    for (int d = (int)t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return t->data + off * (int64_t)dispatch_dtype_itemsize(t->dtype);
}

double dispatch_tensor_get_double(const dispatch_tensor *t, int64_t linear) {
    double out;
    char *data[2] = {(char *)&out, (char *)element_at(t, linear)};
    intptr_t strides[2] = {0, 0};
    dispatch_cast_loop_get(t->dtype, DISPATCH_FLOAT64)(data, strides, 1, NULL);
    return out;
}

int64_t dispatch_tensor_get_int(const dispatch_tensor *t, int64_t linear) {
    int64_t out;
    char *data[2] = {(char *)&out, (char *)element_at(t, linear)};
    intptr_t strides[2] = {0, 0};
    dispatch_cast_loop_get(t->dtype, DISPATCH_INT64)(data, strides, 1, NULL);
    return out;
}
