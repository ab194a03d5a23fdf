/*
 * The CUDA elementwise loops, shared by the translation units of the module
 * that instantiate them: cuda_elementwise.cu (the host entry and the cast
 * kernels) and cuda_elementwise_shard.cu, compiled once per shard
 * (Note [CUDA shards] in cuda_device_types.cuh). One device loop per (loop id, loop dtype) of
 * the CPU's loop table (dispatch/loops.h), run over a plan the host built
 * with the CPU's engine (dispatch_iter_device_op in sources/iterator): only
 * the loop differs from the CPU. Note [CUDA launch plans] (cuda_launch.c)
 * says how a plan becomes launches; this file is PyTorch's gpu_kernel_impl
 * shape, written for this runtime:
 *
 *   vectorized<VEC>  every operand contiguous, none cast: each thread loads
 *                    and stores VEC elements per operand as one aligned
 *                    vector (VEC 4 or 2), the tail of numel % VEC elements by
 *                    single loads;
 *   generic          contiguous with casts (offset = index * itemsize, each
 *                    operand loaded in its own dtype and converted as the
 *                    CPU's cast table converts), or strided/broadcast (each
 *                    thread turns its linear index into per-operand byte
 *                    offsets with the plan's 32-bit fast dividers). Scalar
 *                    operands (0-dim CPU tensors, Python numbers) are kernel
 *                    arguments, never memory.
 *
 * Arithmetic mirrors sources/core/cpu_loops_reference.c: integers wrap
 * (computed in uint64), narrow floats (float16, bfloat16, Note [CUDA narrow
 * floats]) compute in float and round once, maximum
 * and minimum propagate NaN, and the module is built with -fmad=false so
 * a + alpha * b is never contracted into an FMA: the same bits as the CPU.
 * exp, log and sqrt use CUDA's expf/logf/sqrtf (sqrt correctly rounded; exp
 * and log within 2 ulp, inside the CPU's documented bounds).
 */
#ifndef DISPATCH_CUDA_ELEMENTWISE_CUH_
#define DISPATCH_CUDA_ELEMENTWISE_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <utility>
#include <type_traits>

#include "cuda_device_types.cuh"
#include "cuda_launch.h"
#include "dispatch/dtype.h"
#include "dispatch/loops.h"

/* ---- dtypes ----------------------------------------------------------------
 * The device type of each dtype: DevType<DISPATCH_<NAME>> (cuda_device_types.cuh). */

#define DCU_CAT_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) DISPATCH_CAT_##CAT,
static constexpr int kCategory[] = {DISPATCH_FORALL_DTYPES(DCU_CAT_)};
#define DCU_SIZE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) size,
static constexpr int kItemsize[] = {DISPATCH_FORALL_DTYPES(DCU_SIZE_)};
#define DCU_DTYPE_NAME_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) name,
static const char *const kDtypeName[] = {DISPATCH_FORALL_DTYPES(DCU_DTYPE_NAME_)};
#define DCU_LOOP_NAME_(NAME, name, nin, ctx, mask) #name,
static const char *const kLoopName[] = {DISPATCH_FORALL_LOOPS(DCU_LOOP_NAME_)};
#define DCU_CHECK_TYPE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                 \
    static_assert(sizeof(DevType<DISPATCH_##NAME>::type) == size, "device type size " \
                                                                   "of " name);
DISPATCH_FORALL_DTYPES(DCU_CHECK_TYPE_)

/* The value every element is read as on its way between dtypes, as the
 * CPU's cast table reads it: uint8 0/1 for bool, int64 for integers, double
 * for floats (float16 exact in double). */
struct Carrier {
    int cat;
    int64_t i;
    double f;
};

template <typename T> __device__ __forceinline__ Carrier to_carrier(T v) { /* integers, narrow floats */
    if constexpr (NarrowTraits<T>::is_narrow)
        return Carrier{DISPATCH_CAT_FLOAT, 0, (double)NarrowTraits<T>::to_float(v)};
    else
        return Carrier{DISPATCH_CAT_INT, (int64_t)v, 0.0};
}
template <> __device__ __forceinline__ Carrier to_carrier(dcu_bool8 v) {
    return Carrier{DISPATCH_CAT_BOOL, v.v, 0.0};
}
template <> __device__ __forceinline__ Carrier to_carrier(float v) {
    return Carrier{DISPATCH_CAT_FLOAT, 0, (double)v};
}
template <> __device__ __forceinline__ Carrier to_carrier(double v) {
    return Carrier{DISPATCH_CAT_FLOAT, 0, v};
}

/* Integers: a float by the rule of dcu_float_to_i32/i64 (int64 targets
 * through int64, the narrower ones through int32), then wrapped to T. A
 * narrow float: rounded once from the double or the integer. */
template <typename T> __device__ __forceinline__ T from_carrier(Carrier c) { /* integers, narrow floats */
    if constexpr (NarrowTraits<T>::is_narrow) {
        return c.cat == DISPATCH_CAT_FLOAT ? NarrowTraits<T>::from_double(c.f)
                                           : NarrowTraits<T>::from_i64(c.i);
    } else {
        int64_t v = c.cat != DISPATCH_CAT_FLOAT ? c.i
                    : sizeof(T) < 8             ? (int64_t)dcu_float_to_i32(c.f)
                                                : dcu_float_to_i64(c.f);
        return (T)(uint64_t)v;
    }
}
template <> __device__ __forceinline__ dcu_bool8 from_carrier(Carrier c) {
    return dcu_bool8{(uint8_t)(c.cat == DISPATCH_CAT_FLOAT ? c.f != 0 : c.i != 0)};
}
template <> __device__ __forceinline__ float from_carrier(Carrier c) {
    return c.cat == DISPATCH_CAT_FLOAT ? (float)c.f : (float)c.i;
}
template <> __device__ __forceinline__ double from_carrier(Carrier c) {
    return c.cat == DISPATCH_CAT_FLOAT ? c.f : (double)c.i;
}

#define DCU_READ_CASE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    case DISPATCH_##NAME:                                            \
        return to_carrier(*(const DevType<DISPATCH_##NAME>::type *)p);
static __device__ __noinline__ Carrier read_carrier(const char *p, int dt) {
    switch (dt) {
        DISPATCH_FORALL_DTYPES(DCU_READ_CASE_)
    }
    return Carrier{DISPATCH_CAT_INT, 0, 0.0};
}
#define DCU_WRITE_CASE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                    \
    case DISPATCH_##NAME:                                                                \
        *(DevType<DISPATCH_##NAME>::type *)p = from_carrier<DevType<DISPATCH_##NAME>::type>(c); \
        return;
static __device__ __noinline__ void write_carrier(char *p, int dt, Carrier c) {
    switch (dt) {
        DISPATCH_FORALL_DTYPES(DCU_WRITE_CASE_)
    }
}

/* ---- arithmetic ------------------------------------------------------------
 * Acc<T>: what T computes in (a narrow float: float32, Note [CUDA narrow
 * floats]). Ops take and give Acc values. */
template <typename T> struct Acc {
    typedef typename std::conditional<NarrowTraits<T>::is_narrow, float, T>::type type;
};
template <typename T> __device__ __forceinline__ typename Acc<T>::type widen(T v) {
    if constexpr (NarrowTraits<T>::is_narrow) return NarrowTraits<T>::to_float(v);
    else return v;
}
template <typename T> __device__ __forceinline__ T narrow(typename Acc<T>::type v) {
    if constexpr (NarrowTraits<T>::is_narrow) return NarrowTraits<T>::from_float(v);
    else return v;
}

template <typename A> __device__ __forceinline__ bool isnan_(A a) { return a != a; }

/* The float-only loops (div and the math functions) are never registered for
 * integer or bool dtypes, and no kernel is instantiated for them (has_loop);
 * these stand-ins only let Compute's switch, which names every loop's math,
 * compile for those dtypes. */
template <typename A> struct NoFloatMath {
    static __device__ A div(A a, A b) { return a; }
    static __device__ A sqrt(A a) { return a; }
    static __device__ A exp(A a) { return a; }
    static __device__ A log(A a) { return a; }
    static __device__ A expm1(A a) { return a; }
    static __device__ A log1p(A a) { return a; }
    static __device__ A tanh(A a) { return a; }
};

template <typename T, bool NARROW = NarrowTraits<T>::is_narrow>
struct Arith : NoFloatMath<typename Acc<T>::type> { /* integers: wrap in uint64 */
    typedef typename Acc<T>::type A;
    static __device__ A add(A a, A b, A s) { return (A)((uint64_t)a + (uint64_t)s * (uint64_t)b); }
    static __device__ A sub(A a, A b, A s) { return (A)((uint64_t)a - (uint64_t)s * (uint64_t)b); }
    static __device__ A mul(A a, A b) { return (A)((uint64_t)a * (uint64_t)b); }
    static __device__ A max(A a, A b) { return a > b ? a : b; }
    static __device__ A min(A a, A b) { return a < b ? a : b; }
    static __device__ A neg(A a) { return (A)(0 - (uint64_t)a); }
    static __device__ A abs(A a) { return ((uint64_t)a >> 63) ? (A)(0 - (uint64_t)a) : a; }
    static __device__ A addcmul(A a, A b, A c, A v) {
        return (A)((uint64_t)a + (uint64_t)v * (uint64_t)b * (uint64_t)c);
    }
};
template <typename A> struct FloatArith {
    static __device__ A add(A a, A b, A s) { return a + s * b; }
    static __device__ A sub(A a, A b, A s) { return a - s * b; }
    static __device__ A mul(A a, A b) { return a * b; }
    static __device__ A div(A a, A b) { return a / b; }
    static __device__ A max(A a, A b) { return isnan_(a) ? a : isnan_(b) ? b : a > b ? a : b; }
    static __device__ A min(A a, A b) { return isnan_(a) ? a : isnan_(b) ? b : a < b ? a : b; }
    static __device__ A neg(A a) { return -a; }
    static __device__ A abs(A a) { return fabs(a); }
    static __device__ A sqrt(A a) { return ::sqrt(a); }
    static __device__ A exp(A a) { return ::exp(a); }
    static __device__ A log(A a) { return ::log(a); }
    static __device__ A expm1(A a) { return ::expm1(a); }
    static __device__ A log1p(A a) { return ::log1p(a); }
    static __device__ A tanh(A a) { return ::tanh(a); }
    static __device__ A addcmul(A a, A b, A c, A v) { return a + v * b * c; }
};
template <> struct Arith<float> : FloatArith<float> {
    static __device__ float abs(float a) { return fabsf(a); }
    static __device__ float sqrt(float a) { return sqrtf(a); }
    static __device__ float exp(float a) { return expf(a); }
    static __device__ float log(float a) { return logf(a); }
    static __device__ float expm1(float a) { return expm1f(a); }
    static __device__ float log1p(float a) { return log1pf(a); }
    static __device__ float tanh(float a) { return tanhf(a); }
};
template <typename T> struct Arith<T, true> : Arith<float> {}; /* narrow floats: float's math */
template <> struct Arith<double> : FloatArith<double> {};
template <> struct Arith<dcu_bool8> : NoFloatMath<dcu_bool8> { /* bool: or, and (the CPU's bool row) */
    typedef dcu_bool8 A;
    static __device__ A add(A a, A b, A s) { return A{(uint8_t)((a.v | (s.v & b.v)) != 0)}; }
    static __device__ A sub(A a, A b, A s) { return a; }
    static __device__ A mul(A a, A b) { return A{(uint8_t)(a.v & b.v)}; }
    static __device__ A max(A a, A b) { return A{(uint8_t)(a.v | b.v)}; }
    static __device__ A min(A a, A b) { return A{(uint8_t)(a.v & b.v)}; }
    static __device__ A neg(A a) { return a; }
    static __device__ A abs(A a) { return a; }
    static __device__ A addcmul(A a, A b, A c, A v) { return a; }
};
__device__ __forceinline__ bool operator==(dcu_bool8 a, dcu_bool8 b) { return a.v == b.v; }
__device__ __forceinline__ bool operator!=(dcu_bool8 a, dcu_bool8 b) { return a.v != b.v; }
__device__ __forceinline__ bool operator<(dcu_bool8 a, dcu_bool8 b) { return a.v < b.v; }
__device__ __forceinline__ bool operator<=(dcu_bool8 a, dcu_bool8 b) { return a.v <= b.v; }
__device__ __forceinline__ bool operator>(dcu_bool8 a, dcu_bool8 b) { return a.v > b.v; }
__device__ __forceinline__ bool operator>=(dcu_bool8 a, dcu_bool8 b) { return a.v >= b.v; }

/* Which loops each category has: the CPU's rows (cpu_loops_reference.c). */
__host__ __device__ constexpr bool has_loop(int loop, int cat) {
    return loop == DISPATCH_LOOP_EQ || loop == DISPATCH_LOOP_NE || loop == DISPATCH_LOOP_LT ||
           loop == DISPATCH_LOOP_LE || loop == DISPATCH_LOOP_GT || loop == DISPATCH_LOOP_GE ||
           loop == DISPATCH_LOOP_COPY || loop == DISPATCH_LOOP_WHERE ||
           loop == DISPATCH_LOOP_FILL || loop == DISPATCH_LOOP_ADD || loop == DISPATCH_LOOP_MUL ||
           loop == DISPATCH_LOOP_MAXIMUM || loop == DISPATCH_LOOP_MINIMUM ||
           loop == DISPATCH_LOOP_ABS ||
           (cat >= DISPATCH_CAT_INT && (loop == DISPATCH_LOOP_SUB || loop == DISPATCH_LOOP_NEG ||
                                        loop == DISPATCH_LOOP_ADDCMUL)) ||
           (cat == DISPATCH_CAT_FLOAT && (loop == DISPATCH_LOOP_DIV || loop == DISPATCH_LOOP_SQRT ||
                                          loop == DISPATCH_LOOP_EXP || loop == DISPATCH_LOOP_LOG ||
                                          loop == DISPATCH_LOOP_EXPM1 || loop == DISPATCH_LOOP_LOG1P ||
                                          loop == DISPATCH_LOOP_TANH));
}

/* The loop ids' operand counts and bool operands, from the loop table. */
#define DCU_NIN_(NAME, name, nin, ctx, mask) nin,
#define DCU_MASK_(NAME, name, nin, ctx, mask) mask,
static constexpr int kNin[] = {DISPATCH_FORALL_LOOPS(DCU_NIN_)};
static constexpr int kBoolMask[] = {DISPATCH_FORALL_LOOPS(DCU_MASK_)};

/* Operand K's type in loop LOOP of dtype T: bool where the table says so. */
template <int LOOP, typename T, int K> struct OpType {
    typedef typename std::conditional<(kBoolMask[LOOP] >> K) & 1, dcu_bool8, T>::type type;
};

/* ---- the kernel arguments ------------------------------------------------- */
struct Args {
    dcu_piece piece;
    int32_t dtype[DCU_MAX_OPS]; /* each operand's own dtype */
    uint32_t scalar_mask;       /* operands passed by value, in scalar[k] */
    uint32_t cast_mask;         /* operands whose dtype is not the loop's */
    uint64_t scalar[DCU_MAX_OPS]; /* the value's bytes, in the operand's loop dtype */
    uint64_t value;               /* alpha / value / fill value in the loop dtype */
    int32_t has_value;
};

template <typename T> __device__ __forceinline__ T from_bytes(uint64_t raw) {
    T v;
    memcpy(&v, &raw, sizeof v);
    return v;
}

/* Compute one element from the loaded inputs (in their loop types): one
 * branch per loop, chosen at compile time; a loop with no branch is a
 * compile error (the static_assert at the end), never its input returned.
 * tests/test_cuda_compute_cases.py checks has_loop against these branches. */
template <int LOOP, typename T> struct Compute {
    typedef typename Acc<T>::type A;
    typedef Arith<T> M;
    typedef typename OpType<LOOP, T, 0>::type Out;
    template <typename I1, typename I2, typename I3>
    static __device__ __forceinline__ Out run(I1 x, I2 y, I3 z, const Args &a) {
        A v = a.has_value ? widen(from_bytes<T>(a.value)) : one();
        if constexpr (LOOP == DISPATCH_LOOP_ADD) return out(M::add(wa(x), wa(y), v));
        else if constexpr (LOOP == DISPATCH_LOOP_SUB) return out(M::sub(wa(x), wa(y), v));
        else if constexpr (LOOP == DISPATCH_LOOP_MUL) return out(M::mul(wa(x), wa(y)));
        else if constexpr (LOOP == DISPATCH_LOOP_DIV) return out(M::div(wa(x), wa(y)));
        else if constexpr (LOOP == DISPATCH_LOOP_MAXIMUM) return out(M::max(wa(x), wa(y)));
        else if constexpr (LOOP == DISPATCH_LOOP_MINIMUM) return out(M::min(wa(x), wa(y)));
        else if constexpr (LOOP == DISPATCH_LOOP_EQ) return cmp(wa(x) == wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_NE) return cmp(wa(x) != wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_LT) return cmp(wa(x) < wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_LE) return cmp(wa(x) <= wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_GT) return cmp(wa(x) > wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_GE) return cmp(wa(x) >= wa(y));
        else if constexpr (LOOP == DISPATCH_LOOP_NEG) return out(M::neg(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_ABS) return out(M::abs(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_SQRT) return out(M::sqrt(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_EXP) return out(M::exp(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_LOG) return out(M::log(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_EXPM1) return out(M::expm1(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_LOG1P) return out(M::log1p(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_TANH) return out(M::tanh(wa(x)));
        else if constexpr (LOOP == DISPATCH_LOOP_ADDCMUL) return out(M::addcmul(wa(x), wa(y), wa(z), v));
        else if constexpr (LOOP == DISPATCH_LOOP_WHERE) return pick(x, y, z);
        else if constexpr (LOOP == DISPATCH_LOOP_FILL) return out(v);
        else if constexpr (LOOP == DISPATCH_LOOP_COPY) return out(wa(x));
        else /* never a silent copy: a loop of has_loop needs its case above */
            static_assert(LOOP != LOOP, "Compute: a loop that has_loop lists has no case here "
                                        "(docs/contributing.md, 'A CUDA kernel for an existing "
                                        "operator')");
    }
    static __device__ __forceinline__ A one() { return from_carrier<A>(Carrier{DISPATCH_CAT_INT, 1, 0.0}); }
    template <typename I> static __device__ __forceinline__ A wa(I x) {
        return widen(from_bytes<T>(bytes_of(x)));
    }
    template <typename I> static __device__ __forceinline__ uint64_t bytes_of(I x) {
        uint64_t r = 0;
        memcpy(&r, &x, sizeof x < sizeof r ? sizeof x : sizeof r);
        return r;
    }
    static __device__ __forceinline__ Out out(A v) { return from_bytes<Out>(bytes_of(narrow<T>(v))); }
    static __device__ __forceinline__ Out cmp(bool b) {
        return from_bytes<Out>((uint64_t)(b ? 1 : 0));
    }
    template <typename C, typename I2, typename I3>
    static __device__ __forceinline__ Out pick(C c, I2 y, I3 z) {
        return from_bytes<Out>(bytes_of(bytes_of(c) & 0xff ? y : z));
    }
};

/* Operand K at byte offset off (or its scalar), in its loop type L. */
template <typename L, int K>
__device__ __forceinline__ L load_op(const Args &a, int64_t off) {
    if (a.scalar_mask >> K & 1) return from_bytes<L>(a.scalar[K]);
    const char *p = a.piece.data[K] + off;
    if (a.cast_mask >> K & 1) return from_carrier<L>(read_carrier(p, a.dtype[K]));
    return *(const L *)p;
}

/* Element i of contiguous operand K, no cast (or its scalar). */
template <typename L, int K> __device__ __forceinline__ L load_plain(const Args &a, uint32_t i) {
    if (a.scalar_mask >> K & 1) return from_bytes<L>(a.scalar[K]);
    return ((const L *)a.piece.data[K])[i];
}

template <int LOOP, typename T> struct Types {
    typedef typename OpType<LOOP, T, 0>::type O;
    typedef typename OpType<LOOP, T, 1>::type I1;
    typedef typename OpType<LOOP, T, 2>::type I2;
    typedef typename OpType<LOOP, T, 3>::type I3;
};

/* One element at byte offsets off[0..nin]: load (converting), compute, store. */
template <int LOOP, typename T>
__device__ __forceinline__ void one_element(const Args &a, const int64_t *off) {
    typedef Types<LOOP, T> Ty;
    constexpr int nin = kNin[LOOP];
    typename Ty::I1 x{};
    typename Ty::I2 y{};
    typename Ty::I3 z{};
    if (nin >= 1) x = load_op<typename Ty::I1, 1>(a, off[1]);
    if (nin >= 2) y = load_op<typename Ty::I2, 2>(a, off[2]);
    if (nin >= 3) z = load_op<typename Ty::I3, 3>(a, off[3]);
    typename Ty::O r = Compute<LOOP, T>::run(x, y, z, a);
    char *o = a.piece.data[0] + off[0];
    if (a.cast_mask & 1) write_carrier(o, a.dtype[0], to_carrier(r));
    else *(typename Ty::O *)o = r;
}

/* The generic loop: contiguous with casts, or strided through the dividers.
 * Each thread takes DCU_UNROLL elements per step, a block's threads adjacent
 * (coalesced); the linear index is split into dim indices once for every
 * operand. */
template <int LOOP, typename T, int DT>
__global__ void __launch_bounds__(128) generic_kernel(Args a, int contiguous) {
    constexpr int nin = kNin[LOOP];
    uint32_t n = (uint32_t)a.piece.numel;
    uint32_t step = gridDim.x * blockDim.x * DCU_UNROLL;
    for (uint32_t b = blockIdx.x * blockDim.x * DCU_UNROLL + threadIdx.x; b < n; b += step) {
#pragma unroll
        for (int u = 0; u < DCU_UNROLL; u++) {
            uint32_t i = b + u * blockDim.x;
            if (i >= n) break;
            int64_t off[4] = {0, 0, 0, 0};
            if (contiguous) {
#pragma unroll
                for (int k = 0; k <= nin; k++) off[k] = (int64_t)i * a.piece.strides[k][0];
            } else {
                uint32_t lin = i;
                for (int d = 0; d < a.piece.ndim; d++) {
                    uint32_t q = dcu_divider_div(&a.piece.div[d], lin);
                    int64_t idx = lin - q * a.piece.div[d].divisor;
#pragma unroll
                    for (int k = 0; k <= nin; k++) off[k] += idx * a.piece.strides[k][d];
                    lin = q;
                }
            }
            one_element<LOOP, T>(a, off);
        }
    }
}

/* A strided piece by rows (dcu_strided_by_rows): grid y walks the rows
 * (the outer dims, their offsets computed once per row), grid x the inner
 * dim, DCU_UNROLL elements per thread; an input whose inner stride is 0 is
 * loaded once per row and thread. */
template <int LOOP, typename T, int DT>
__global__ void __launch_bounds__(128) strided_rows_kernel(Args a) {
    typedef Types<LOOP, T> Ty;
    constexpr int nin = kNin[LOOP];
    const dcu_piece &p = a.piece;
    uint32_t n0 = p.div[0].divisor, rows = (uint32_t)(p.numel / n0);
    uint32_t xstep = gridDim.x * blockDim.x * DCU_UNROLL;
    for (uint32_t row = blockIdx.y; row < rows; row += gridDim.y) {
        int64_t base[4] = {0, 0, 0, 0};
        uint32_t lin = row;
        for (int d = 1; d < p.ndim; d++) {
            uint32_t q = dcu_divider_div(&p.div[d], lin);
            int64_t idx = lin - q * p.div[d].divisor;
#pragma unroll
            for (int k = 0; k <= nin; k++) base[k] += idx * p.strides[k][d];
            lin = q;
        }
        /* the inputs constant along the row: once */
        typename Ty::I1 x0{};
        typename Ty::I2 y0{};
        typename Ty::I3 z0{};
        bool zx = nin >= 1 && p.strides[1][0] == 0, zy = nin >= 2 && p.strides[2][0] == 0,
             zz = nin >= 3 && p.strides[3][0] == 0;
        if (zx) x0 = load_op<typename Ty::I1, 1>(a, base[1]);
        if (zy) y0 = load_op<typename Ty::I2, 2>(a, base[2]);
        if (zz) z0 = load_op<typename Ty::I3, 3>(a, base[3]);
        for (uint32_t c0 = blockIdx.x * blockDim.x * DCU_UNROLL + threadIdx.x; c0 < n0; c0 += xstep) {
#pragma unroll
            for (int u = 0; u < DCU_UNROLL; u++) {
                uint32_t c = c0 + u * blockDim.x;
                if (c >= n0) break;
                typename Ty::I1 x = x0;
                typename Ty::I2 y = y0;
                typename Ty::I3 z = z0;
                if (nin >= 1 && !zx) x = load_op<typename Ty::I1, 1>(a, base[1] + (int64_t)c * p.strides[1][0]);
                if (nin >= 2 && !zy) y = load_op<typename Ty::I2, 2>(a, base[2] + (int64_t)c * p.strides[2][0]);
                if (nin >= 3 && !zz) z = load_op<typename Ty::I3, 3>(a, base[3] + (int64_t)c * p.strides[3][0]);
                typename Ty::O r = Compute<LOOP, T>::run(x, y, z, a);
                char *o = p.data[0] + base[0] + (int64_t)c * p.strides[0][0];
                if (a.cast_mask & 1) write_carrier(o, a.dtype[0], to_carrier(r));
                else *(typename Ty::O *)o = r;
            }
        }
    }
}

template <typename E, int VEC> struct alignas(sizeof(E) * VEC) Vec {
    E v[VEC];
};

/* The vectorized loop: no casts, every operand contiguous and aligned to VEC. */
template <int LOOP, typename T, int VEC>
__global__ void __launch_bounds__(128) vector_kernel(Args a) {
    typedef Types<LOOP, T> Ty;
    constexpr int nin = kNin[LOOP];
    uint32_t n = (uint32_t)a.piece.numel, nvec = n / VEC;
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride) {
        Vec<typename Ty::I1, VEC> x{};
        Vec<typename Ty::I2, VEC> y{};
        Vec<typename Ty::I3, VEC> z{};
        if (nin >= 1 && !(a.scalar_mask >> 1 & 1)) x = ((const Vec<typename Ty::I1, VEC> *)a.piece.data[1])[i];
        if (nin >= 2 && !(a.scalar_mask >> 2 & 1)) y = ((const Vec<typename Ty::I2, VEC> *)a.piece.data[2])[i];
        if (nin >= 3 && !(a.scalar_mask >> 3 & 1)) z = ((const Vec<typename Ty::I3, VEC> *)a.piece.data[3])[i];
        Vec<typename Ty::O, VEC> r;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            if (a.scalar_mask >> 1 & 1) x.v[j] = from_bytes<typename Ty::I1>(a.scalar[1]);
            if (a.scalar_mask >> 2 & 1) y.v[j] = from_bytes<typename Ty::I2>(a.scalar[2]);
            if (a.scalar_mask >> 3 & 1) z.v[j] = from_bytes<typename Ty::I3>(a.scalar[3]);
            r.v[j] = Compute<LOOP, T>::run(x.v[j], y.v[j], z.v[j], a);
        }
        ((Vec<typename Ty::O, VEC> *)a.piece.data[0])[i] = r;
    }
    /* the tail */
    for (uint32_t i = nvec * VEC + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        typename Ty::I1 x{};
        typename Ty::I2 y{};
        typename Ty::I3 z{};
        if (nin >= 1) x = load_plain<typename Ty::I1, 1>(a, i);
        if (nin >= 2) y = load_plain<typename Ty::I2, 2>(a, i);
        if (nin >= 3) z = load_plain<typename Ty::I3, 3>(a, i);
        ((typename Ty::O *)a.piece.data[0])[i] = Compute<LOOP, T>::run(x, y, z, a);
    }
}

/* The floating dtypes (the FLOAT rows of the list, in its order) and each
 * dtype's index among them (its slot in the cast table), or -1. */
#define DCU_FLOAT_ID_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) DCU_FLOAT_ID_##CAT(NAME)
#define DCU_FLOAT_ID_FLOAT(NAME) DISPATCH_##NAME,
#define DCU_FLOAT_ID_INT(NAME)
#define DCU_FLOAT_ID_BOOL(NAME)
static constexpr int kFloatDtypes[] = {DISPATCH_FORALL_DTYPES(DCU_FLOAT_ID_)};
#undef DCU_FLOAT_ID_
#undef DCU_FLOAT_ID_FLOAT
#undef DCU_FLOAT_ID_INT
#undef DCU_FLOAT_ID_BOOL
constexpr int DCU_NUM_FLOATS = (int)(sizeof kFloatDtypes / sizeof kFloatDtypes[0]);
struct FloatSlots {
    int slot[DISPATCH_NUM_DTYPES];
};
constexpr FloatSlots float_slots() {
    FloatSlots s{};
    for (int d = 0; d < DISPATCH_NUM_DTYPES; d++) s.slot[d] = -1;
    for (int i = 0; i < DCU_NUM_FLOATS; i++) s.slot[kFloatDtypes[i]] = i;
    return s;
}
static constexpr FloatSlots kFloatSlots = float_slots();
static inline int float_slot(int dt) {
    return dt >= 0 && dt < DISPATCH_NUM_DTYPES ? kFloatSlots.slot[dt] : -1;
}
#define DCU_CHECK_SLOT_(NAME, sfx, E, M, NANS) \
    static_assert(kFloatSlots.slot[DISPATCH_##NAME] >= 0, "narrow float " #NAME " has a cast slot");
DISPATCH_FORALL_NARROW_FLOATS(DCU_CHECK_SLOT_)
#undef DCU_CHECK_SLOT_

typedef void (*cast_fn)(dim3, const Args &);
/* The cast kernels' launchers (Note [CUDA casts]), defined in cuda_elementwise.cu:
 * f[W][source slot][destination slot], W as cast_entry says there. */
struct CastTable {
    cast_fn f[2][DCU_NUM_FLOATS][DCU_NUM_FLOATS];
};
extern const CastTable dcu_cast_table;

/* ---- launching ------------------------------------------------------------ */
/* The last launch error of this thread (defined in cuda_elementwise.cu). */
extern thread_local char dcu_elementwise_error[512];

static inline int grid_for(int64_t work, int threads) {
    int64_t blocks = (work + threads - 1) / threads;
    if (blocks > 65536) blocks = 65536; /* grid-stride beyond */
    return blocks < 1 ? 1 : (int)blocks;
}

template <int LOOP, typename T, int DT> static int launch_piece(const dcu_piece *p, void *ctx) {
    Args a = *(const Args *)ctx;
    a.piece = *p;
    const int threads = 128;
    const int cs = LOOP == DISPATCH_LOOP_COPY && p->nops == 2 && !a.scalar_mask &&
                           a.cast_mask != 3
                       ? float_slot(a.dtype[1]) : -1;
    const int cd = cs >= 0 ? float_slot(a.dtype[0]) : -1;
    if (p->path == DCU_PATH_VECTOR && p->vec == 4)
        vector_kernel<LOOP, T, 4><<<grid_for(p->numel / 4 + 1, threads), threads>>>(a);
    else if (p->path == DCU_PATH_VECTOR && p->vec == 2)
        vector_kernel<LOOP, T, 2><<<grid_for(p->numel / 2 + 1, threads), threads>>>(a);
    else if (p->path == DCU_PATH_CAST && cd >= 0 && cs != cd) /* Note [CUDA casts] */
        dcu_cast_table.f[a.cast_mask & 1 ? 0 : 1][cs][cd](grid_for(p->numel / DCU_UNROLL + 1, threads), a);
    else if (dcu_strided_by_rows(p)) {
        int64_t rows = p->numel / p->div[0].divisor;
        dim3 grid(grid_for((p->div[0].divisor + DCU_UNROLL - 1) / DCU_UNROLL, threads),
                  (unsigned)(rows < 65535 ? rows : 65535));
        strided_rows_kernel<LOOP, T, DT><<<grid, threads>>>(a);
    } else
        generic_kernel<LOOP, T, DT><<<grid_for((p->numel + DCU_UNROLL - 1) / DCU_UNROLL, threads),
                                      threads>>>(a, p->path != DCU_PATH_STRIDED);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(dcu_elementwise_error, sizeof dcu_elementwise_error, "%s<<<...>>> (loop %s): %s (%d): %s",
                 p->path == DCU_PATH_STRIDED ? "generic_kernel" : "vector_kernel",
                 kLoopName[LOOP], cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

typedef int (*piece_fn)(const dcu_piece *, void *);
/* A shard's launchers, [loop][dtype], null where the pair has none. */
typedef piece_fn loop_table[DISPATCH_NUM_LOOPS][DISPATCH_NUM_DTYPES];


#endif /* DISPATCH_CUDA_ELEMENTWISE_CUH_ */
