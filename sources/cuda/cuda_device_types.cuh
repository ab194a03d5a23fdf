/*
 * What every CUDA source of the module shares: the export macro of its C ABI
 * (dispatch/cuda.py loads the symbols with ctypes) and the device type of
 * each dtype (Note [One dtype list] in dispatch/dtype.h), one line per
 * dtype, for the elementwise loops and the reductions alike. A dtype missing
 * here is a compile error where a kernel table is built for every dtype.
 */
#ifndef DISPATCH_CUDA_DEVICE_TYPES_CUH_
#define DISPATCH_CUDA_DEVICE_TYPES_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "dispatch/dtype.h"

#define DCU_API extern "C" __attribute__((visibility("default")))

/* bool as one byte, kept apart from uint8_t so loops can tell them apart. */
struct dcu_bool8 {
    uint8_t v;
};
template <int DT> struct DevType;
#define DCU_DEVICE_TYPE(NAME, T) \
    template <> struct DevType<DISPATCH_##NAME> { typedef T type; };
DCU_DEVICE_TYPE(BOOL, dcu_bool8)
DCU_DEVICE_TYPE(INT8, int8_t)
DCU_DEVICE_TYPE(UINT8, uint8_t)
DCU_DEVICE_TYPE(INT16, int16_t)
DCU_DEVICE_TYPE(INT32, int32_t)
DCU_DEVICE_TYPE(INT64, int64_t)
DCU_DEVICE_TYPE(FLOAT16, __half)
DCU_DEVICE_TYPE(FLOAT32, float)
DCU_DEVICE_TYPE(FLOAT64, double)
DCU_DEVICE_TYPE(BFLOAT16, __nv_bfloat16)
#undef DCU_DEVICE_TYPE

#endif /* DISPATCH_CUDA_DEVICE_TYPES_CUH_ */
