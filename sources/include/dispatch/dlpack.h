/*
 * DLPack: the structs of the DLPack ABI (written from the DLPack 1.1
 * specification, https://dmlc.github.io/dlpack/latest/c_api.html) and the
 * runtime's export and import of CPU and CUDA tensors through them. The Python
 * protocol (capsules, __dlpack__, from_dlpack) is in dispatch/_fastpath_dlpack.c
 * and dispatch/_tensor.py, _interop.py: Note [DLPack] in sources/core/dlpack.c.
 */
#ifndef DISPATCH_DLPACK_H_
#define DISPATCH_DLPACK_H_

#include <stdint.h>

#include "dispatch/tensor.h"

/* The same guard as upstream's dlpack.h: a translation unit including both
 * sees one definition of each type (they are the same ABI). */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
    kDLMAIA = 17,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
    kDLFloat8_e3m4 = 7U,
    kDLFloat8_e4m3 = 8U,
    kDLFloat8_e4m3b11fnuz = 9U,
    kDLFloat8_e4m3fn = 10U,
    kDLFloat8_e4m3fnuz = 11U,
    kDLFloat8_e5m2 = 12U,
    kDLFloat8_e5m2fnuz = 13U,
    kDLFloat8_e8m0fnu = 14U,
    kDLFloat6_e2m3fn = 15U,
    kDLFloat6_e3m2fn = 16U,
    kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

typedef struct {
    uint8_t code; /* a DLDataTypeCode */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data; /* the first element is at (char *)data + byte_offset */
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL means C-contiguous */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* DLPACK_DLPACK_H_ */

/* A new DLManagedTensorVersioned (versioned != 0) or DLManagedTensor viewing
 * t's memory, shape, strides (in elements) and offset, without a copy, on
 * kDLCPU or, for a cuda tensor, kDLCUDA device 0 (no stream work here). It
 * holds a reference to t's storage until its deleter runs. A versioned one
 * carries DLPACK_FLAG_BITMASK_READ_ONLY when t's storage is read-only and
 * DLPACK_FLAG_BITMASK_IS_COPIED when copied != 0 (t is a copy made for the
 * export). NULL with the error set for a tensor on another device (meta). */
void *dispatch_tensor_to_dlpack(dispatch_tensor *t, int versioned, int copied);

/* A tensor over the memory of managed (a DLManagedTensorVersioned when
 * versioned != 0, else a DLManagedTensor), without a copy: a foreign storage
 * whose release calls managed's deleter, on the CPU, or on device "cuda" for
 * kDLCUDA device 0 when an allocator is registered for "cuda". Takes
 * ownership of managed in every case: on failure (another device or CUDA
 * device id, CUDA not available, an unsupported dtype, a
 * negative stride, a newer major version, ...) the deleter has run already
 * and the error is set. A read-only versioned tensor gives a read-only
 * storage. */
dispatch_tensor *dispatch_tensor_from_dlpack(void *managed, int versioned);

/* The DLPack device type (kDLCPU, kDLCUDA, ...) of managed (as in
 * dispatch_tensor_from_dlpack) and, through device_id when not NULL, its
 * device id; -1 with the error set for NULL. Reads only: managed stays the
 * caller's. */
int dispatch_dlpack_device(const void *managed, int versioned, int *device_id);

#endif /* DISPATCH_DLPACK_H_ */
