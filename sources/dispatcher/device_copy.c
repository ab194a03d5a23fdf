/* copy_ when a device tensor takes part: dispatch_kernels_copy_ (operators.h).
 *
 * Note [Copies that touch a device]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * core's dispatch_tensor_copy_ walks host memory only, so a copy with a
 * device tensor on either side is done here, in C, by the device's two
 * registered entries: its COPY loop (dispatch_iter_device_op) and its byte
 * copy (dispatch_iter_device_memcpy). Issue 38 measured o.copy_(a) of 2^20
 * float32 on an H100 at 20.8 us against torch's 6.9: the copy was a Python
 * kernel around a host-synchronous cudaMemcpy. Now no Python runs, and:
 *  - same device, same dtype and shape, both contiguous, their bytes apart
 *    (or the same bytes: nothing to do): one byte copy on the device's
 *    stream, the host not waiting;
 *  - same device otherwise, or a 0-dim CPU source (passed by value): the
 *    COPY loop (casts, broadcasting, any layout, overlapping inputs);
 *  - a CPU source into a device tensor: the host casts and broadcasts into
 *    a contiguous host tensor of dst's shape and dtype, one upload, straight
 *    into dst when dst is contiguous, else into a contiguous device tensor
 *    that the COPY loop scatters into dst's layout;
 *  - a device source into a CPU tensor: made contiguous on the device first
 *    (the COPY loop) when it is not, one download of src's own elements,
 *    then the host casts and broadcasts into dst.
 * The device keeps one order (its stream): a download waits for the work
 * queued before it, so a copy to the host sees every earlier write.
 */
#include "operators.h"

#include <string.h>

#include "dispatch/error.h"
#include "dispatch/iterator.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"

static int64_t nbytes_of(const dispatch_tensor *t) {
    return t->numel * (int64_t)dispatch_dtype_itemsize(t->dtype);
}

static int same_sizes(const dispatch_tensor *a, const dispatch_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d]) return 0;
    return 1;
}

/* dst = src on dst's device by its COPY loop; src on that device or a 0-dim
 * CPU tensor (host_value). */
static int copy_by_device_loop(dispatch_tensor *dst, dispatch_tensor *src, int host_value) {
    dispatch_tensor *e = dispatch_tensor_expand(src, (int)dst->ndim, dst->sizes);
    if (!e) return -1;
    dispatch_tensor *ts[2] = {dst, e};
    dispatch_iter_operand ops[2];
    int64_t strides[2][DISPATCH_MAX_DIMS];
    for (int k = 0; k < 2; k++) {
        int64_t isz = (int64_t)dispatch_dtype_itemsize(ts[k]->dtype);
        for (int d = 0; d < ts[k]->ndim; d++) strides[k][d] = ts[k]->strides[d] * isz;
        ops[k] = (dispatch_iter_operand){ts[k]->data, (int)ts[k]->ndim, ts[k]->sizes, strides[k],
                                         ts[k]->dtype};
    }
    _Alignas(16) char value[16];
    if (host_value && src->dtype != dst->dtype) { /* the value, in the loop's dtype */
        char *cd[2] = {value, src->data};
        intptr_t cs[2] = {0, 0};
        dispatch_cast_loop_get(src->dtype, dst->dtype)(cd, cs, 1, NULL);
        ops[1].data = value;
        ops[1].dtype = dst->dtype;
    }
    int rc = dispatch_iter_device_op((int)dst->device, DISPATCH_LOOP_COPY, dst->dtype, 2, ops,
                                     host_value ? 2u : 0u, NULL);
    dispatch_tensor_decref(e);
    return rc;
}

/* Both on one device: a byte copy where it is one, else the COPY loop. */
static int copy_within_device(dispatch_tensor *dst, dispatch_tensor *src) {
    if (dst->dtype == src->dtype && same_sizes(dst, src) && dst->is_contiguous &&
        src->is_contiguous) {
        int64_t n = nbytes_of(dst);
        if (n == 0 || dst->data == src->data) return 0;
        if (dst->data + n <= src->data || src->data + n <= dst->data)
            return dispatch_iter_device_memcpy((int)dst->device, dst->data, src->data, (size_t)n,
                                               DISPATCH_MEMCPY_DEVICE_TO_DEVICE);
    }
    return copy_by_device_loop(dst, src, 0);
}

/* A CPU src into device tensor dst. */
static int upload(dispatch_tensor *dst, dispatch_tensor *src) {
    dispatch_tensor *host =
        dispatch_tensor_empty((int)dst->ndim, dst->sizes, dst->dtype, DISPATCH_DEVICE_CPU);
    if (!host) return -1;
    int rc = dispatch_kernels_host_copy_(host, src); /* the host's casts and broadcasting */
    if (rc == 0 && dst->is_contiguous) {
        rc = dispatch_iter_device_memcpy((int)dst->device, dst->data, host->data,
                                         (size_t)nbytes_of(dst), DISPATCH_MEMCPY_HOST_TO_DEVICE);
    } else if (rc == 0) {
        dispatch_tensor *staged =
            dispatch_tensor_empty((int)dst->ndim, dst->sizes, dst->dtype, (int)dst->device);
        rc = staged ? dispatch_iter_device_memcpy((int)dst->device, staged->data, host->data,
                                                  (size_t)nbytes_of(dst),
                                                  DISPATCH_MEMCPY_HOST_TO_DEVICE)
                    : -1;
        if (rc == 0) rc = copy_by_device_loop(dst, staged, 0);
        if (staged) dispatch_tensor_decref(staged);
    }
    dispatch_tensor_decref(host);
    return rc;
}

/* Device tensor src into CPU tensor dst. */
static int download(dispatch_tensor *dst, dispatch_tensor *src) {
    dispatch_tensor *dense = src;
    dispatch_tensor_incref(src);
    int rc = 0;
    if (!src->is_contiguous) {
        dense = dispatch_tensor_empty((int)src->ndim, src->sizes, src->dtype, (int)src->device);
        rc = dense ? copy_by_device_loop(dense, src, 0) : -1;
        dispatch_tensor_decref(src);
    }
    if (rc < 0) {
        if (dense) dispatch_tensor_decref(dense);
        return -1;
    }
    dispatch_tensor *host =
        dispatch_tensor_empty((int)src->ndim, src->sizes, src->dtype, DISPATCH_DEVICE_CPU);
    rc = host ? dispatch_iter_device_memcpy((int)src->device, host->data, dense->data,
                                            (size_t)nbytes_of(src), DISPATCH_MEMCPY_DEVICE_TO_HOST)
              : -1;
    if (rc == 0) rc = dispatch_kernels_host_copy_(dst, host); /* the host's casts and broadcasting */
    if (host) dispatch_tensor_decref(host);
    dispatch_tensor_decref(dense);
    return rc;
}

int dispatch_kernels_copy_(dispatch_tensor *dst, dispatch_tensor *src) {
    int dst_dev = (int)dst->device, src_dev = (int)src->device;
    int host_value = src_dev == DISPATCH_DEVICE_CPU && src->ndim == 0;
    if (dst_dev == DISPATCH_DEVICE_META || src_dev == DISPATCH_DEVICE_META ||
        (dst_dev == DISPATCH_DEVICE_CPU && src_dev == DISPATCH_DEVICE_CPU))
        return dispatch_kernels_host_copy_(dst, src);
    if (dispatch_tensor_check_writable(dst, "copy_") < 0) return -1;
    if (dispatch_tensor_check_no_internal_overlap(dst) < 0) return -1;
    if (dst_dev == src_dev) return copy_within_device(dst, src);
    if (host_value) return copy_by_device_loop(dst, src, 1);
    /* src broadcasts to dst: refuse a bad pair before any byte moves */
    dispatch_tensor *e = dispatch_tensor_expand(src, (int)dst->ndim, dst->sizes);
    if (!e) return -1;
    dispatch_tensor_decref(e);
    if (dst->numel == 0) return 0;
    if (src_dev == DISPATCH_DEVICE_CPU) return upload(dst, src);
    if (dst_dev == DISPATCH_DEVICE_CPU) return download(dst, src);
    return dispatch_error_set(DISPATCH_ERR_RUNTIME, "copy_: from %s to %s is not supported",
                              dispatch_device_name(src_dev), dispatch_device_name(dst_dev));
}
