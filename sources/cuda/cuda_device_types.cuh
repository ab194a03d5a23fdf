/*
 * What every CUDA source of the module shares: the export macro of its C ABI
 * (dispatch/cuda.py loads the symbols with ctypes) and the device type of
 * each dtype (Note [One dtype list] in dispatch/dtype.h): the integers'
 * from the list, one line for bool and each float, for the elementwise
 * loops and the reductions alike. A dtype missing
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
/* Every integer row of the list: its C storage type (Note [Integer facts]
 * in dtype.h); bool and the floats have device types of their own. */
#define DCU_DEVICE_TYPE_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    DCU_DEVICE_TYPE_##CAT(NAME, T)
#define DCU_DEVICE_TYPE_INT(NAME, T) DCU_DEVICE_TYPE(NAME, T)
#define DCU_DEVICE_TYPE_BOOL(NAME, T)
#define DCU_DEVICE_TYPE_FLOAT(NAME, T)
DISPATCH_FORALL_DTYPES(DCU_DEVICE_TYPE_ROW_)
#undef DCU_DEVICE_TYPE_ROW_
#undef DCU_DEVICE_TYPE_INT
#undef DCU_DEVICE_TYPE_BOOL
#undef DCU_DEVICE_TYPE_FLOAT
DCU_DEVICE_TYPE(FLOAT16, __half)
DCU_DEVICE_TYPE(FLOAT32, float)
DCU_DEVICE_TYPE(FLOAT64, double)
DCU_DEVICE_TYPE(BFLOAT16, __nv_bfloat16)
#undef DCU_DEVICE_TYPE

/* Float -> integer, the CPU's rule (Note [Float to integer casts] in
 * sources/core/cpu_loops_reference.c, its FLOAT_TO_I32/FLOAT_TO_I64): the
 * value truncated where it fits, else INT32_MIN/INT64_MIN (NaN and +-inf
 * too), not what the GPU's own conversion would give (it clamps). int8,
 * uint8 and int16 wrap the int32 result. The range is tested before
 * converting: out of range, the conversion is undefined. */
__device__ __forceinline__ int32_t dcu_float_to_i32(double x) {
    return x > -2147483649.0 && x < 2147483648.0 ? (int32_t)x : INT32_MIN;
}
__device__ __forceinline__ int64_t dcu_float_to_i64(double x) {
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (int64_t)x : INT64_MIN;
}

/*
 * Note [CUDA shards]
 * ~~~~~~~~~~~~~~~~~~
 * The kernels of the elementwise loops (four per (loop, dtype) pair, some
 * 200 pairs) and of the reductions (per dtype and op) are most of the
 * module's nvcc time (issue 34). cuda_elementwise_shard.cu and
 * cuda_reduce_shard.cu instantiate the kernels of the dtypes whose id
 * % DCU_SHARDS is their DCU_SHARD, and sources/cuda/meson.build compiles each
 * once per shard (it reads the count below), so ninja runs the shards side by
 * side, and each shard is a module of its own on the device: a build that
 * carries only PTX has the driver JIT-compile a shard when a kernel of it
 * first runs, not the whole module. Five shards pair each floating dtype with
 * an integer or bool one, so their costs are even; the device code is the
 * same whatever the count. Each shard exports its table as <name>_K; the
 * host entries find dtype d's in shard d % DCU_SHARDS.
 */
#define DCU_SHARDS 5
#define DCU_FORALL_SHARDS_WITH(X, T, name) X(T, name, 0) X(T, name, 1) X(T, name, 2) X(T, name, 3) X(T, name, 4)
#define DCU_SHARD_DECLARE_(T, name, k) extern const T name##_##k;
#define DCU_SHARD_ADDRESS_(T, name, k) &name##_##k,
/* In a host entry: declares each shard's table name_K (of type T) and
 * `shards`, their addresses by shard number. */
#define DCU_SHARD_TABLES(T, name)                                                          \
    DCU_FORALL_SHARDS_WITH(DCU_SHARD_DECLARE_, T, name)                                    \
    static const T *const shards[] = {DCU_FORALL_SHARDS_WITH(DCU_SHARD_ADDRESS_, T, name)}; \
    static_assert(sizeof shards / sizeof shards[0] == DCU_SHARDS,                          \
                  "DCU_FORALL_SHARDS_WITH lists DCU_SHARDS shards");
#define DCU_SHARD_NAME__(name, k) name##_##k
#define DCU_SHARD_NAME_(name, k) DCU_SHARD_NAME__(name, k)
/* The table `name` of the shard being compiled (-DDCU_SHARD=K). */
#define DCU_THIS_SHARD(name) DCU_SHARD_NAME_(name, DCU_SHARD)
/* In a shard: is dtype DT this shard's? */
#define DCU_IN_THIS_SHARD(DT) ((DT) % DCU_SHARDS == DCU_SHARD)

#endif /* DISPATCH_CUDA_DEVICE_TYPES_CUH_ */
