/* DLPack export and import of CPU and CUDA tensors; see dispatch/dlpack.h. */
#include "dispatch/dlpack.h"

#include <stdint.h>
#include <stdlib.h>

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/storage.h"

/*
 * Note [DLPack]
 * ~~~~~~~~~~~~~
 * Both directions are zero-copy, and ownership follows the DLPack rules:
 *   - export (dispatch_tensor_to_dlpack): one malloc'd block holds the
 *     managed tensor and its shape and strides; manager_ctx is t's storage,
 *     with a reference taken, and the deleter drops that reference and frees
 *     the block. The deleter is plain C (no Python), so a consumer may call it
 *     from any thread, with or without the GIL. data is t's first element,
 *     byte_offset 0 (as NumPy and PyTorch export: consumers that ignore
 *     byte_offset still see the right element).
 *   - import (dispatch_tensor_from_dlpack): the memory at data + byte_offset
 *     becomes a foreign storage (dispatch_storage_from_foreign) covering the
 *     tensor's extent; its release calls the producer's deleter, once, when
 *     the last view goes. Everything refused is refused after ownership was
 *     taken, so the deleter runs then.
 * CUDA tensors go the same way (kDLCUDA, device 0: the one device this runtime
 * uses): this file never touches their memory, it only describes it. The
 * stream handshake of __dlpack__(stream=...) and the CUDA availability check
 * are Python's (dispatch/_tensor.py, _interop.py, cuda.py); importing a kDLCUDA
 * tensor needs an allocator registered for device "cuda" (CUDA was found
 * usable), so that the tensor can be copied and freed like any CUDA tensor.
 * The capsules around these (names "dltensor" / "dltensor_versioned", renamed
 * "used_..." once consumed; a capsule destructor that calls the deleter only
 * for an unconsumed capsule) are dispatch/_fastpath_dlpack.c's: they need the
 * CPython API, which this library does not link.
 */

typedef struct {
    DLManagedTensor m;
    int64_t shape[DISPATCH_MAX_DIMS];
    int64_t strides[DISPATCH_MAX_DIMS];
} export_legacy;

typedef struct {
    DLManagedTensorVersioned m;
    int64_t shape[DISPATCH_MAX_DIMS];
    int64_t strides[DISPATCH_MAX_DIMS];
} export_versioned;

static void delete_legacy(DLManagedTensor *self) {
    if (!self) return;
    dispatch_storage_decref(self->manager_ctx);
    free(self); /* self is the first member of its export_legacy */
}

static void delete_versioned(DLManagedTensorVersioned *self) {
    if (!self) return;
    dispatch_storage_decref(self->manager_ctx);
    free(self);
}

static const struct {
    uint8_t code, bits;
} dl_types[] = { /* from the dtype list (Note [One dtype list] in dtype.h) */
#define DL_TYPE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) [DISPATCH_##NAME] = {kDL##dl, 8 * size},
    DISPATCH_FORALL_DTYPES(DL_TYPE_)
#undef DL_TYPE_
};
#define NUM_DL_TYPES ((int)(sizeof dl_types / sizeof dl_types[0]))

static void fill_tensor(DLTensor *out, dispatch_tensor *t, int64_t *shape, int64_t *strides) {
    for (int d = 0; d < t->ndim; d++) {
        shape[d] = t->sizes[d];
        strides[d] = t->strides[d];
    }
    out->data = t->data;
    out->device = (DLDevice){t->device == DISPATCH_DEVICE_CUDA ? kDLCUDA : kDLCPU, 0};
    out->ndim = (int32_t)t->ndim;
    out->dtype = (DLDataType){dl_types[t->dtype].code, dl_types[t->dtype].bits, 1};
    out->shape = shape;
    out->strides = strides;
    out->byte_offset = 0;
}

void *dispatch_tensor_to_dlpack(dispatch_tensor *t, int versioned, int copied) {
    if (t->device != DISPATCH_DEVICE_CPU && t->device != DISPATCH_DEVICE_CUDA) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME,
                           "DLPack export of a %s tensor is not supported (only cpu and cuda "
                           "tensors)",
                           dispatch_device_name(t->device));
        return NULL;
    }
    if (t->dtype < 0 || t->dtype >= NUM_DL_TYPES) {
        dispatch_error_set(DISPATCH_ERR_TYPE, "DLPack export: dtype %d has no DLPack type",
                           (int)t->dtype);
        return NULL;
    }
    if (versioned) {
        export_versioned *e = malloc(sizeof *e);
        if (!e) goto oom;
        e->m.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
        e->m.manager_ctx = t->storage;
        e->m.deleter = delete_versioned;
        e->m.flags = (dispatch_storage_is_readonly(t->storage) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) |
                     (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
        fill_tensor(&e->m.dl_tensor, t, e->shape, e->strides);
        dispatch_storage_incref(t->storage);
        return &e->m;
    }
    export_legacy *e = malloc(sizeof *e);
    if (!e) goto oom;
    e->m.manager_ctx = t->storage;
    e->m.deleter = delete_legacy;
    fill_tensor(&e->m.dl_tensor, t, e->shape, e->strides);
    dispatch_storage_incref(t->storage);
    return &e->m;
oom:
    dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory allocating a DLPack tensor");
    return NULL;
}

/* Storage releases: the producer's deleter, once. */
static void release_legacy(void *ctx) {
    DLManagedTensor *m = ctx;
    if (m->deleter) m->deleter(m);
}

static void release_versioned(void *ctx) {
    DLManagedTensorVersioned *m = ctx;
    if (m->deleter) m->deleter(m);
}

static const char *device_type_name(int type) {
    switch (type) {
    case kDLCUDA: return "CUDA";
    case kDLCUDAHost: return "CUDA host (pinned)";
    case kDLOpenCL: return "OpenCL";
    case kDLVulkan: return "Vulkan";
    case kDLMetal: return "Metal";
    case kDLVPI: return "VPI";
    case kDLROCM: return "ROCm";
    case kDLROCMHost: return "ROCm host";
    case kDLExtDev: return "ExtDev";
    case kDLCUDAManaged: return "CUDA managed";
    case kDLOneAPI: return "oneAPI";
    case kDLWebGPU: return "WebGPU";
    case kDLHexagon: return "Hexagon";
    case kDLMAIA: return "MAIA";
    default: return "unknown";
    }
}

static const char *type_code_name(uint8_t code) {
    switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLOpaqueHandle: return "opaque handle";
    case kDLBfloat: return "bfloat";
    case kDLComplex: return "complex";
    case kDLBool: return "bool";
    case kDLFloat8_e3m4: return "float8_e3m4";
    case kDLFloat8_e4m3: return "float8_e4m3";
    case kDLFloat8_e4m3b11fnuz: return "float8_e4m3b11fnuz";
    case kDLFloat8_e4m3fn: return "float8_e4m3fn";
    case kDLFloat8_e4m3fnuz: return "float8_e4m3fnuz";
    case kDLFloat8_e5m2: return "float8_e5m2";
    case kDLFloat8_e5m2fnuz: return "float8_e5m2fnuz";
    case kDLFloat8_e8m0fnu: return "float8_e8m0fnu";
    case kDLFloat6_e2m3fn: return "float6_e2m3fn";
    case kDLFloat6_e3m2fn: return "float6_e3m2fn";
    case kDLFloat4_e2m1fn: return "float4_e2m1fn";
    default: return "unknown type code";
    }
}

/* ", bool, int8, ...": the dtype list's names (skip the first two characters). */
#define DL_NAME_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ", " name
static const char supported_names[] = DISPATCH_FORALL_DTYPES(DL_NAME_);
#undef DL_NAME_

/* Our dtype of a DLPack dtype, or -1 with the error set. */
static int dtype_of(DLDataType t) {
    if (t.lanes == 1) {
        for (int d = 0; d < NUM_DL_TYPES; d++)
            if (dl_types[d].code == t.code && dl_types[d].bits == t.bits) return d;
    }
    dispatch_error_set(DISPATCH_ERR_TYPE,
                       "from_dlpack: unsupported DLPack dtype (%s, %u bits, %u lanes); supported: %s",
                       type_code_name(t.code), (unsigned)t.bits, (unsigned)t.lanes,
                       supported_names + 2);
    return -1;
}

/* Our device of dl's DLPack device, or -1 with the error set: kDLCPU, and
 * kDLCUDA device 0 where CUDA is usable (its allocator is registered). */
static int device_of(const DLTensor *dl) {
    int type = (int)dl->device.device_type, id = (int)dl->device.device_id;
    if (type == kDLCPU) return DISPATCH_DEVICE_CPU;
    if (type == kDLCUDA && id != 0) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME,
                           "from_dlpack: the tensor is on CUDA device %d (DLPack device (%d, %d)); "
                           "this runtime uses CUDA device 0 only",
                           id, type, id);
        return -1;
    }
    if (type == kDLCUDA) {
        if (!dispatch_allocator_get(DISPATCH_DEVICE_CUDA)) {
            dispatch_error_set(DISPATCH_ERR_RUNTIME,
                               "from_dlpack: the tensor is on CUDA device 0 (DLPack device (2, 0)), "
                               "but CUDA is not available here (no allocator is registered for "
                               "device 'cuda')");
            return -1;
        }
        return DISPATCH_DEVICE_CUDA;
    }
    dispatch_error_set(DISPATCH_ERR_RUNTIME,
                       "from_dlpack: the tensor is on a %s device (DLPack device type %d, id %d); "
                       "only CPU (kDLCPU) and CUDA device 0 (kDLCUDA) tensors can be imported",
                       device_type_name(type), type, id);
    return -1;
}

/* dl's dtype, its strides (in elements, >= 0) and the bytes it spans, or -1
 * with the error set. */
static int check(const DLTensor *dl, int64_t *strides, int64_t *nbytes) {
    int dtype = dtype_of(dl->dtype);
    if (dtype < 0) return -1;
    if (dl->ndim < 0 || dl->ndim > DISPATCH_MAX_DIMS) {
        dispatch_error_set(DISPATCH_ERR_VALUE,
                           "from_dlpack: %d dimensions (a tensor has 0 to %d)", (int)dl->ndim,
                           DISPATCH_MAX_DIMS);
        return -1;
    }
    int ndim = dl->ndim;
    int64_t itemsize = (int64_t)dispatch_dtype_itemsize(dtype);
    int64_t extent = 0, expected = 1, numel = 1; /* extent: offset of the last element */
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = dl->shape[d];
        if (n < 0) {
            dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: negative size %lld in dim %d",
                               (long long)n, d);
            return -1;
        }
        int64_t s = dl->strides ? dl->strides[d] : expected;
        if (n <= 1) s = s < 0 ? 0 : s; /* a dim that never steps: any stride will do */
        if (s < 0) {
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "from_dlpack: stride %lld of dim %d is negative; this is not "
                               "supported (copy the tensor first)",
                               (long long)s, d);
            return -1;
        }
        strides[d] = s;
        int64_t step;
        if (n > 0 && (__builtin_mul_overflow(n - 1, s, &step) ||
                      __builtin_add_overflow(extent, step, &extent))) {
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "from_dlpack: the tensor's extent overflows int64");
            return -1;
        }
        if (__builtin_mul_overflow(numel, n, &numel) ||
            (n > 0 && __builtin_mul_overflow(expected, n, &expected))) {
            dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: the tensor's size overflows int64");
            return -1;
        }
    }
    *nbytes = 0;
    if (numel > 0 && (__builtin_add_overflow(extent, 1, nbytes) ||
                      __builtin_mul_overflow(*nbytes, itemsize, nbytes))) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: the tensor's extent overflows int64");
        return -1;
    }
    if (numel > 0 && !dl->data) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: the tensor has elements but no data");
        return -1;
    }
    return dtype;
}

/* The tensor over dl, or NULL with the error set; either way release(ctx) runs
 * once (at once on failure, else when the tensor's storage goes). */
static dispatch_tensor *import(const DLTensor *dl, int readonly, void (*release)(void *),
                               void *ctx) {
    int64_t strides[DISPATCH_MAX_DIMS], nbytes;
    int device = device_of(dl);
    int dtype = device < 0 ? -1 : check(dl, strides, &nbytes);
    if (dtype < 0) {
        release(ctx);
        return NULL;
    }
    char *data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
    dispatch_storage *s =
        dispatch_storage_from_foreign(device, data, (size_t)nbytes, release, ctx);
    if (!s) {
        release(ctx);
        return NULL;
    }
    if (readonly) dispatch_storage_set_readonly(s); /* before any tensor shares s */
    dispatch_tensor *t = dispatch_tensor_from_storage(s, dl->ndim, dl->shape, strides, 0, dtype);
    dispatch_storage_decref(s); /* the tensor holds s now; or s goes, and release with it */
    return t;
}

dispatch_tensor *dispatch_tensor_from_dlpack(void *managed, int versioned) {
    if (!managed) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: NULL DLPack tensor");
        return NULL;
    }
    if (versioned) {
        DLManagedTensorVersioned *m = managed;
        if (m->version.major != DLPACK_MAJOR_VERSION) {
            dispatch_error_set(DISPATCH_ERR_RUNTIME,
                               "from_dlpack: DLPack version %u.%u is not supported (this build "
                               "reads major version %d)",
                               (unsigned)m->version.major, (unsigned)m->version.minor,
                               DLPACK_MAJOR_VERSION);
            release_versioned(m);
            return NULL;
        }
        int readonly = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
        return import(&m->dl_tensor, readonly, release_versioned, m);
    }
    return import(&((DLManagedTensor *)managed)->dl_tensor, 0, release_legacy, managed);
}

int dispatch_dlpack_device(const void *managed, int versioned, int *device_id) {
    if (!managed) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "from_dlpack: NULL DLPack tensor");
        return -1;
    }
    const DLTensor *dl = versioned ? &((const DLManagedTensorVersioned *)managed)->dl_tensor
                                   : &((const DLManagedTensor *)managed)->dl_tensor;
    if (device_id) *device_id = (int)dl->device.device_id;
    return (int)dl->device.device_type;
}
