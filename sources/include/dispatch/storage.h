/*
 * Storage: refcounted bytes from a per-device allocator, or foreign memory
 * whose owner is kept alive until the last reference goes.
 */
#ifndef DISPATCH_STORAGE_H_
#define DISPATCH_STORAGE_H_

#include <stddef.h>
#include <stdint.h>

/* X(NAME, name) per device, in id order (Python reads them from C). META:
 * shapes and dtypes only, storages have no data. */
#define DISPATCH_FORALL_DEVICES(X) X(CPU, "cpu") X(CUDA, "cuda") X(META, "meta")

typedef enum dispatch_device_type {
#define DISPATCH_DEVICE_ENUM_(NAME, name) DISPATCH_DEVICE_##NAME,
    DISPATCH_FORALL_DEVICES(DISPATCH_DEVICE_ENUM_)
#undef DISPATCH_DEVICE_ENUM_
    DISPATCH_NUM_DEVICES,
} dispatch_device_type;

const char *dispatch_device_name(int device); /* "cpu", "cuda", "meta" */

/* CPU allocations are aligned to this many bytes (one cache line, and enough
 * for any SIMD load of the kernels). */
#define DISPATCH_CPU_ALIGNMENT 64

typedef struct dispatch_allocator {
    const char *name;
    /* Returns NULL on failure (the storage then reports a MemoryError).
     * Called with nbytes == 0 too; may return NULL for it. */
    void *(*alloc)(size_t nbytes, void *ctx);
    void (*free)(void *ptr, void *ctx);
    void *ctx;
    /* Optional (NULL: a generic message): after alloc returned NULL, why, for
     * the MemoryError (the CUDA allocator says what was asked and is held). */
    const char *(*failure_message)(void *ctx);
} dispatch_allocator;

/* The allocator table: one per device type. Registering replaces the previous
 * one (atomically); storages remember the allocator that made them. */
void dispatch_allocator_register(int device, const dispatch_allocator *allocator);
const dispatch_allocator *dispatch_allocator_get(int device);

typedef struct dispatch_storage dispatch_storage;

/* A new storage of nbytes on device, refcount 1. NULL + MemoryError naming the
 * size on failure, RuntimeError when the device has no allocator. */
dispatch_storage *dispatch_storage_new(int device, size_t nbytes);
/* Wrap memory owned by someone else. release(ctx) runs exactly once, when the
 * last reference is dropped (it is how the owner is kept alive). */
dispatch_storage *dispatch_storage_from_foreign(int device, void *data, size_t nbytes,
                                                void (*release)(void *ctx), void *ctx);
void dispatch_storage_incref(dispatch_storage *s);
void dispatch_storage_decref(dispatch_storage *s);
void *dispatch_storage_data(const dispatch_storage *s);
size_t dispatch_storage_nbytes(const dispatch_storage *s);
int dispatch_storage_device(const dispatch_storage *s);
long dispatch_storage_refcount(const dispatch_storage *s);
/* Read-only storages (foreign memory that must not be written: a NumPy array
 * whose writeable flag is False, a read-only memmap, bytes). The flag is set
 * once, right after dispatch_storage_from_foreign and before any tensor
 * shares the storage, and never cleared; every tensor on the storage (views
 * included) is then read-only: see dispatch_tensor_check_writable. */
void dispatch_storage_set_readonly(dispatch_storage *s);
int dispatch_storage_is_readonly(const dispatch_storage *s); /* 0 for NULL */

/* Number of storages alive in the process (for leak tests). */
long dispatch_storage_live_count(void);

#endif /* DISPATCH_STORAGE_H_ */
