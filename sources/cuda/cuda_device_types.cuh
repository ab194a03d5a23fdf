/*
 * What every CUDA source of the module shares: the export macro of its C ABI
 * (dispatch/cuda.py loads the symbols with ctypes), the device type of each
 * dtype (Note [One dtype list] in dispatch/dtype.h) and what a narrow float
 * is on the device (Note [CUDA narrow floats]), for the elementwise loops and
 * the reductions alike. Every device type derives from the two lists: a
 * dtype of DISPATCH_FORALL_DTYPES gets one without a line here.
 */
#ifndef DISPATCH_CUDA_DEVICE_TYPES_CUH_
#define DISPATCH_CUDA_DEVICE_TYPES_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"

#define DCU_API extern "C" __attribute__((visibility("default")))

/* bool as one byte, kept apart from uint8_t so loops can tell them apart. */
struct dcu_bool8 {
    uint8_t v;
};

/*
 * Note [CUDA narrow floats]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * A float of DISPATCH_FORALL_NARROW_FLOATS (Note [Narrow floats] in
 * dtype.h) computes in float32 and rounds once per result, as on the CPU.
 * Its device type is the hardware one where CUDA has it and it is named
 * below (NarrowHardware: float16 is __half, bfloat16 __nv_bfloat16, with
 * CUDA's own conversions), else dcu_narrow<DT>: its bits, converted by
 * narrow_float.h's functions with its row's E, M and NANS (the CPU's
 * conversions of the same format). NarrowTraits<T> is all the kernels ask
 * of a narrow type: is_narrow, to_float (exact), from_float and from_double
 * (rounded once), from_i64 (an integer as the CPU casts one: through
 * double) and quiet_nan (a sum's NaN: the format's positive quiet NaN).
 * So a new narrow float needs no edit in sources/cuda/; naming a hardware
 * type means one NarrowHardware line and its NarrowTraits, which must give
 * the bits narrow_float.h gives, NaNs' too (HardwareNarrowTraits: CUDA's
 * own conversions make every NaN one; cuda_fp8.h's __nv_fp8_e4m3 constructors
 * saturate, where float8_e4m3fn's overflow is NaN: its traits would call
 * __nv_cvt_float_to_fp8 with __NV_NOSAT).
 */

/* The row of DISPATCH_FORALL_NARROW_FLOATS of dtype DT: E, M, NANS. */
template <int DT> struct NarrowFormat { static constexpr bool listed = false; };
#define DCU_NARROW_FORMAT_(NAME, sfx, E_, M_, NANS_)                \
    template <> struct NarrowFormat<DISPATCH_##NAME> {             \
        static constexpr bool listed = true;                       \
        static constexpr int E = E_, M = M_;                       \
        static constexpr int nans = DISPATCH_NARROW_##NANS_;       \
    };
DISPATCH_FORALL_NARROW_FLOATS(DCU_NARROW_FORMAT_)
#undef DCU_NARROW_FORMAT_

/* The unsigned integer of `size` bytes: a narrow float's bits. */
template <int size> struct DcuBits;
template <> struct DcuBits<1> { typedef uint8_t type; };
template <> struct DcuBits<2> { typedef uint16_t type; };

/* The bytes of one element of each dtype (the list's size). */
template <int DT> struct DcuSize;
#define DCU_SIZE_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    template <> struct DcuSize<DISPATCH_##NAME> { static constexpr int value = size; };
DISPATCH_FORALL_DTYPES(DCU_SIZE_ROW_)
#undef DCU_SIZE_ROW_

/* A narrow float without a hardware type: its bits. */
template <int DT> struct dcu_narrow {
    typename DcuBits<DcuSize<DT>::value>::type bits;
};

/* The hardware type of a narrow float, where one is named; void: none. */
template <int DT> struct NarrowHardware { typedef void type; };
template <> struct NarrowHardware<DISPATCH_FLOAT16> { typedef __half type; };
template <> struct NarrowHardware<DISPATCH_BFLOAT16> { typedef __nv_bfloat16 type; };

/* A narrow float's device type: the hardware one, else dcu_narrow<DT>. */
template <int DT> struct NarrowDevType {
    typedef typename NarrowHardware<DT>::type hw;
    typedef typename std::conditional<std::is_void<hw>::value, dcu_narrow<DT>, hw>::type type;
};

template <typename T> struct NarrowTraits { static constexpr bool is_narrow = false; };
/* What the hardware types share: CUDA's conversions, except a NaN's bits,
 * which CUDA's make one NaN (0x7fff): a NaN keeps its sign and payload as
 * on the CPU (Note [NaN bits on the device] in narrow_float.h). D names
 * the type's own functions: of_bits, cuda_from_float, cuda_from_double. */
template <typename D, typename T, int E, int M> struct HardwareNarrowTraits {
    static constexpr bool is_narrow = true;
    static __device__ __forceinline__ T from_float(float v) {
        if (v != v) return D::of_bits((unsigned short)dispatch_narrow_nan_from_float_bits(
                               __float_as_uint(v), E, M, DISPATCH_NARROW_IEEE));
        return D::cuda_from_float(v);
    }
    static __device__ __forceinline__ T from_double(double v) {
        if (v != v) return D::of_bits((unsigned short)dispatch_narrow_format_from_double(
                               v, E, M, DISPATCH_NARROW_IEEE)); /* a NaN: read by its bits */
        return D::cuda_from_double(v);
    }
};
template <> struct NarrowTraits<__half> : HardwareNarrowTraits<NarrowTraits<__half>, __half, 5, 10> {
    static __device__ __forceinline__ __half of_bits(unsigned short b) { return __ushort_as_half(b); }
    static __device__ __forceinline__ __half cuda_from_float(float v) { return __float2half_rn(v); }
    static __device__ __forceinline__ __half cuda_from_double(double v) { return __double2half(v); }
    static __device__ __forceinline__ float to_float(__half v) {
        const unsigned short b = __half_as_ushort(v);
        if ((b & 0x7fffu) > 0x7c00u) return dispatch_narrow_format_to_float(b, 5, 10, DISPATCH_NARROW_IEEE);
        return __half2float(v);
    }
    static __device__ __forceinline__ __half from_i64(int64_t v) { return __ll2half_rn(v); }
    static __device__ __forceinline__ __half quiet_nan() { return __ushort_as_half(0x7e00); }
};
template <>
struct NarrowTraits<__nv_bfloat16> : HardwareNarrowTraits<NarrowTraits<__nv_bfloat16>, __nv_bfloat16, 8, 7> {
    typedef __nv_bfloat16 T;
    static __device__ __forceinline__ T of_bits(unsigned short b) { return __ushort_as_bfloat16(b); }
    static __device__ __forceinline__ T cuda_from_float(float v) { return __float2bfloat16_rn(v); }
    static __device__ __forceinline__ T cuda_from_double(double v) { return __double2bfloat16(v); }
    /* the top half of a float32, NaNs included: exact */
    static __device__ __forceinline__ float to_float(T v) {
        return __uint_as_float((uint32_t)__bfloat16_as_ushort(v) << 16);
    }
    static __device__ __forceinline__ T from_i64(int64_t v) { return __ll2bfloat16_rn(v); }
    static __device__ __forceinline__ T quiet_nan() { return __ushort_as_bfloat16(0x7fc0); }
};
template <int DT> struct NarrowTraits<dcu_narrow<DT>> {
    typedef NarrowFormat<DT> F;
    typedef dcu_narrow<DT> T;
    typedef decltype(T::bits) Bits;
    static_assert(F::listed, "dcu_narrow of a dtype DISPATCH_FORALL_NARROW_FLOATS lacks");
    static constexpr bool is_narrow = true;
    /* __host__ too: tests/test_cuda_narrow_floats.py runs them on the CPU */
    static __host__ __device__ __forceinline__ float to_float(T v) {
        return dispatch_narrow_to_float(v.bits, F::E, F::M, F::nans);
    }
    /* float -> double is exact: one rounding, the double's; a NaN by its
     * bits, which a device's float -> double need not keep */
    static __host__ __device__ __forceinline__ T from_float(float v) {
        if (v != v) {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            return T{(Bits)dispatch_narrow_nan_from_float_bits(u, F::E, F::M, F::nans)};
        }
        return from_double((double)v);
    }
    static __host__ __device__ __forceinline__ T from_double(double v) { /* a NaN by its bits */
        return T{(Bits)dispatch_narrow_from_double(v, F::E, F::M, F::nans)};
    }
    static __host__ __device__ __forceinline__ T from_i64(int64_t v) {
        return from_double((double)v);
    }
    static __host__ __device__ __forceinline__ T quiet_nan() { return from_double(NAN); }
};

template <int DT> struct DevType;
/* Each row of the list by its category: bool's byte, an integer's C storage
 * type (Note [Integer facts] in dtype.h), a narrow float's NarrowDevType,
 * another float's C type (float, double). */
#define DCU_DEVICE_TYPE_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    template <> struct DevType<DISPATCH_##NAME> { typedef DCU_DEVICE_TYPE_##CAT(NAME, T) type; };
#define DCU_DEVICE_TYPE_BOOL(NAME, T) dcu_bool8
#define DCU_DEVICE_TYPE_INT(NAME, T) T
#define DCU_DEVICE_TYPE_FLOAT(NAME, T)                                            \
    typename std::conditional<NarrowFormat<DISPATCH_##NAME>::listed,               \
                              typename NarrowDevType<DISPATCH_##NAME>::type, T>::type
DISPATCH_FORALL_DTYPES(DCU_DEVICE_TYPE_ROW_)
#undef DCU_DEVICE_TYPE_ROW_
#undef DCU_DEVICE_TYPE_INT
#undef DCU_DEVICE_TYPE_BOOL
#undef DCU_DEVICE_TYPE_FLOAT

/* Checked once for the lists: each narrow float is a FLOAT row of the dtype
 * list, has a device type of its size that NarrowTraits knows, and every
 * other FLOAT row's device type is a C floating type. */
#define DCU_CHECK_NARROW_(NAME, sfx, E, M, NANS)                                             \
    static_assert(sizeof(DevType<DISPATCH_##NAME>::type) == DcuSize<DISPATCH_##NAME>::value, \
                  "the CUDA device type of " #NAME " has the size of its list line");        \
    static_assert(NarrowTraits<DevType<DISPATCH_##NAME>::type>::is_narrow,                   \
                  "NarrowTraits lacks the CUDA device type of narrow float " #NAME);
DISPATCH_FORALL_NARROW_FLOATS(DCU_CHECK_NARROW_)
#undef DCU_CHECK_NARROW_
#define DCU_CHECK_FLOAT_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                         \
    static_assert(DISPATCH_CAT_##CAT != DISPATCH_CAT_FLOAT ||                                  \
                      NarrowFormat<DISPATCH_##NAME>::listed ||                                 \
                      std::is_floating_point<DevType<DISPATCH_##NAME>::type>::value,           \
                  "float " name " is neither a C floating type nor a line of "                 \
                  "DISPATCH_FORALL_NARROW_FLOATS");                                            \
    static_assert(!NarrowFormat<DISPATCH_##NAME>::listed ||                                   \
                      DISPATCH_CAT_##CAT == DISPATCH_CAT_FLOAT,                                \
                  "narrow float " name " is not a FLOAT line of DISPATCH_FORALL_DTYPES");
DISPATCH_FORALL_DTYPES(DCU_CHECK_FLOAT_)
#undef DCU_CHECK_FLOAT_

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
