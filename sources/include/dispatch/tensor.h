/*
 * Tensor: a view (sizes, strides and offset in elements, dtype) over a
 * storage. Views share the storage; every function returning a tensor returns
 * a new reference (refcount 1) or NULL with the error set (see error.h).
 */
#ifndef DISPATCH_TENSOR_H_
#define DISPATCH_TENSOR_H_

#include <stdint.h>

#include "dispatch/dtype.h"
#include "dispatch/storage.h"

#define DISPATCH_MAX_DIMS 16

typedef struct dispatch_tensor {
    /* Read-only outside sources/core. */
    int64_t ndim;
    int64_t sizes[DISPATCH_MAX_DIMS];
    int64_t strides[DISPATCH_MAX_DIMS]; /* in elements, >= 0 */
    int64_t offset;                     /* in elements */
    int64_t numel;
    int32_t dtype;
    int32_t device;
    uint64_t keyset;        /* the dispatch keys of the tensor (dispatcher.h) */
    int32_t wrapped_number; /* a Python number wrapped for an operator call */
    int32_t is_contiguous;  /* recomputed by every function that changes the view */
    char *data;             /* storage data + offset * itemsize; NULL on meta */
    dispatch_storage *storage;
    long refcount; /* atomic; use dispatch_tensor_incref/decref */
} dispatch_tensor;

/* Allocation ------------------------------------------------------------- */
dispatch_tensor *dispatch_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device);
/* A new CPU tensor every element of which is `value` cast to dtype (zeros(),
 * ones()), filled in the calling thread: made for small tensors, where one
 * call is the cost (Note [New tensors in C] in dispatch/_fastpath_factories.c). */
dispatch_tensor *dispatch_tensor_filled(int ndim, const int64_t *sizes, int dtype, int64_t value);
/* A view of an existing storage (takes a new reference to it); strides NULL
 * means contiguous. Bounds are checked against the storage. */
dispatch_tensor *dispatch_tensor_from_storage(dispatch_storage *s, int ndim, const int64_t *sizes,
                                              const int64_t *strides, int64_t offset, int dtype);
/* A 0-dim CPU tensor holding a Python number, flagged as wrapped. */
dispatch_tensor *dispatch_tensor_wrap_double(double v);
dispatch_tensor *dispatch_tensor_wrap_int(int64_t v);
dispatch_tensor *dispatch_tensor_wrap_bool(int v);
void dispatch_tensor_incref(dispatch_tensor *t);
void dispatch_tensor_decref(dispatch_tensor *t);
long dispatch_tensor_refcount(const dispatch_tensor *t);
/* Live tensor objects in the process (for leak tests). */
long dispatch_tensor_live_count(void);

/* Contiguity as PyTorch defines it: size-1 dims are ignored, numel 0 is contiguous. */
int dispatch_compute_contiguous(int ndim, const int64_t *sizes, const int64_t *strides);

/* Views (share the storage) ----------------------------------------------- */
dispatch_tensor *dispatch_tensor_as_strided(dispatch_tensor *t, int ndim, const int64_t *sizes,
                                            const int64_t *strides, int64_t offset);
/* sizes may hold one -1. Fails (RuntimeError) when the strides do not allow a view. */
dispatch_tensor *dispatch_tensor_view(dispatch_tensor *t, int ndim, const int64_t *sizes);
/* Like view, copying only when a view is impossible. */
dispatch_tensor *dispatch_tensor_reshape(dispatch_tensor *t, int ndim, const int64_t *sizes);
dispatch_tensor *dispatch_tensor_transpose(dispatch_tensor *t, int64_t d0, int64_t d1);
dispatch_tensor *dispatch_tensor_permute(dispatch_tensor *t, int ndim, const int64_t *dims);
/* Reverse all dims (Tensor.T). */
dispatch_tensor *dispatch_tensor_t(dispatch_tensor *t);
/* t[..., start:stop:step] along dim, normalized like a Python slice (step > 0). */
dispatch_tensor *dispatch_tensor_slice(dispatch_tensor *t, int64_t dim, int64_t start, int64_t stop,
                                       int64_t step, int has_start, int has_stop);
dispatch_tensor *dispatch_tensor_select(dispatch_tensor *t, int64_t dim, int64_t index);
dispatch_tensor *dispatch_tensor_unsqueeze(dispatch_tensor *t, int64_t dim);
/* NumPy broadcast_to; -1 keeps a size. */
dispatch_tensor *dispatch_tensor_expand(dispatch_tensor *t, int ndim, const int64_t *sizes);

/* Copies -------------------------------------------------------------------- */
dispatch_tensor *dispatch_tensor_contiguous(dispatch_tensor *t); /* t itself (new ref) if contiguous */
dispatch_tensor *dispatch_tensor_clone(dispatch_tensor *t);
dispatch_tensor *dispatch_tensor_to_dtype(dispatch_tensor *t, int dtype); /* new ref to t if same */
/* Elementwise dst[...] = (dst dtype) src[...], src broadcast to dst; handles
 * overlap. One thread: the dispatcher's dispatch_kernels_copy_ (and its
 * clone, contiguous, to) split the same walk across the pool's threads
 * (dispatch_tensor_copy_prepare in strided.h). */
int dispatch_tensor_copy_(dispatch_tensor *dst, dispatch_tensor *src);
/* 0 when t may be written, else -1 with a ValueError naming `what` (an
 * operator's name): t's storage is read-only (dispatch_storage_set_readonly).
 * dispatch_call() checks it for every Tensor(a!) argument, copy_ here. */
int dispatch_tensor_check_writable(const dispatch_tensor *t, const char *what);
/* 0, or -1 with torch's error when two elements of t share memory (a written-to
 * tensor must not: copy_, and every device's copy). */
int dispatch_tensor_check_no_internal_overlap(const dispatch_tensor *t);
/* The bytes [*lo, *hi) that t's elements span (t has elements): two tensors
 * whose ranges do not meet share no memory. */
void dispatch_tensor_byte_range(const dispatch_tensor *t, uintptr_t *lo, uintptr_t *hi);

/* Broadcasting ------------------------------------------------------------- */
/* NumPy's rule; on mismatch a ValueError naming both shapes. */
int dispatch_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                              int64_t *out);

/* Element access (used by tolist/item and tests): element at a linear index
 * in C order, converted to double / int64. */
double dispatch_tensor_get_double(const dispatch_tensor *t, int64_t linear);
int64_t dispatch_tensor_get_int(const dispatch_tensor *t, int64_t linear);

#endif /* DISPATCH_TENSOR_H_ */
