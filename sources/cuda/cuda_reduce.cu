/*
 * The CUDA reductions: sum, mean, max, min (values, and with indices for
 * max(dim)/min(dim)/argmax/argmin) over a plan from cuda_reduce_plan.c (Note
 * [CUDA reduction plans]); the order of the additions is Note
 * [Deterministic CUDA reductions] there. The CPU's rules: float16 and
 * bfloat16 accumulate in float32 and round once, float32 in float32, float64
 * in float64, integers and bool sum in wrapping int64, max/min propagate NaN
 * (the index is the first NaN's) and ties take the first index. The argument
 * checks and the result's shape and dtype are the CPU kernel's
 * (sources/dispatcher/operators.c), which calls dcu_reduce through
 * dispatch_iter_device_reduce.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include "cuda_device_types.cuh"
#include "cuda_reduce_plan.h"
#include "dispatch/dtype.h"
#include "dispatch/storage.h"


extern "C" const dispatch_allocator *dcu_allocator(void);

enum { OP_SUM = 0, OP_MAX = 1, OP_MIN = 2 };


/* The accumulator of each input type, and the conversions to and from it. */
template <typename T> struct RAcc { typedef int64_t type; };
template <> struct RAcc<__half> { typedef float type; };
template <> struct RAcc<__nv_bfloat16> { typedef float type; };
template <> struct RAcc<float> { typedef float type; };
template <> struct RAcc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ typename RAcc<T>::type up(T v) {
    return (typename RAcc<T>::type)v;
}
template <> __device__ __forceinline__ int64_t up(dcu_bool8 v) { return v.v != 0; }
template <> __device__ __forceinline__ float up(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float up(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T down(typename RAcc<T>::type v) {
    return (T)(uint64_t)v; /* integers wrap */
}
template <> __device__ __forceinline__ dcu_bool8 down<dcu_bool8>(int64_t v) { return dcu_bool8{(uint8_t)(v != 0)}; }
template <> __device__ __forceinline__ float down<float>(float v) { return v; }
template <> __device__ __forceinline__ double down<double>(double v) { return v; }
template <> __device__ __forceinline__ __half down<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 down<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

/* An accumulated value and, for max/min, the reduced index it came from (-1: none yet). */
template <typename A> struct Val {
    A v;
    int64_t i;
};

template <typename A> __device__ __forceinline__ bool isnan_(A a) { return a != a; }

template <int OP, typename A> struct Combine {
    static __device__ __forceinline__ Val<A> identity() { return Val<A>{(A)0, -1}; }
    static __device__ __forceinline__ Val<A> add(Val<A> a, Val<A> b) {
        if (OP == OP_SUM) {
            if (std::is_integral<A>::value) /* int64: wrap */
                return Val<A>{(A)((uint64_t)a.v + (uint64_t)b.v), 0};
            return Val<A>{a.v + b.v, 0};
        }
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        bool an = isnan_(a.v), bn = isnan_(b.v);
        if (an || bn) return an && bn ? (a.i < b.i ? a : b) : an ? a : b;
        if (a.v == b.v) return a.i < b.i ? a : b;
        return (OP == OP_MAX ? a.v > b.v : a.v < b.v) ? a : b;
    }
};

struct RArgs {
    dcr_plan p;
    const char *in;
    char *out;       /* contiguous over the outputs, out_dtype */
    int64_t *idx;    /* contiguous int64 indices, or NULL */
    void *partial;   /* [nout][splits] Val, splits > 1 */
    int out_int64;   /* out is int64 (an integer or bool sum), else the input's dtype */
    int mean;
};

__device__ __forceinline__ int64_t dims_offset(int n, const int64_t *shape, const int64_t *stride,
                                               int64_t i, bool small) {
    int64_t off = 0;
    if (small) {
        uint32_t u = (uint32_t)i;
        for (int d = n - 1; d >= 0; d--) {
            uint32_t sh = (uint32_t)shape[d], q = u / sh;
            off += (int64_t)(u - q * sh) * stride[d];
            u = q;
        }
    } else {
        for (int d = n - 1; d >= 0; d--) {
            int64_t q = i / shape[d];
            off += (i - q * shape[d]) * stride[d];
            i = q;
        }
    }
    return off;
}

/* The final value of output o: mean's division, the result's dtype, the index. */
template <typename T, int OP>
__device__ __forceinline__ void finish_one(const RArgs &a, int64_t o, Val<typename RAcc<T>::type> acc) {
    typedef typename RAcc<T>::type A;
    if (a.mean) acc.v = acc.v / (A)a.p.count; /* 0/0: NaN, as the CPU's */
    if (a.out_int64) ((int64_t *)a.out)[o] = (int64_t)acc.v;
    else ((T *)a.out)[o] = down<T>(acc.v);
    if (a.idx) a.idx[o] = acc.i;
}

template <typename A>
__device__ __forceinline__ A shfl_down(A v, int s) {
    return __shfl_down_sync(0xffffffffu, v, s);
}

/* The fixed tree over a warp: v[i] += v[i + s], s = 16 .. 1; lane 0 has the result. */
template <int OP, typename A> __device__ __forceinline__ Val<A> warp_tree(Val<A> x) {
#pragma unroll
    for (int s = 16; s >= 1; s /= 2) {
        Val<A> y{shfl_down(x.v, s), shfl_down(x.i, s)};
        x = Combine<OP, A>::add(x, y);
    }
    return x;
}

/* inner and strided: tpo threads per output, 4 accumulators per thread. */
template <typename T, int OP, int VEC, bool STRIDED>
__global__ void __launch_bounds__(DCR_THREADS) rows_kernel(RArgs a) {
    typedef typename RAcc<T>::type A;
    typedef Combine<OP, A> C;
    const dcr_plan &p = a.p;
    int tpo = p.tpo, opb = DCR_THREADS / tpo;
    int t = threadIdx.x % tpo;
    int64_t o = (int64_t)blockIdx.x * opb + threadIdx.x / tpo;
    bool small = !p.idx64;
    if (tpo == DCR_WARP && o >= p.nout) return; /* a whole warp */
    const char *base = a.in + dims_offset(p.nk, p.kshape, p.kstride, o, small);
    int64_t b = (int64_t)blockIdx.y * p.chunk;
    int64_t e = b + p.chunk < p.count ? b + p.chunk : p.count;
    Val<A> acc[4] = {C::identity(), C::identity(), C::identity(), C::identity()};
    for (int64_t g = b + 4 * (int64_t)t; g < e; g += 4 * (int64_t)tpo) {
        if (!STRIDED && VEC > 1 && g + 4 <= e) {
            struct alignas(sizeof(T) * VEC) V { T v[VEC]; };
            const V *vp = (const V *)(base + g * (int64_t)sizeof(T));
#pragma unroll
            for (int h = 0; h < 4 / VEC; h++) {
                V v = vp[h];
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    acc[h * VEC + j] = C::add(acc[h * VEC + j], Val<A>{up(v.v[j]), g + h * VEC + j});
            }
        } else {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (g + j >= e) break;
                int64_t off = STRIDED ? dims_offset(p.nr, p.rshape, p.rstride, g + j, small)
                                      : (g + j) * (int64_t)sizeof(T);
                acc[j] = C::add(acc[j], Val<A>{up(*(const T *)(base + off)), g + j});
            }
        }
    }
    Val<A> v = C::add(C::add(acc[0], acc[1]), C::add(acc[2], acc[3]));
    v = warp_tree<OP>(v);
    if (tpo == DCR_THREADS) {
        __shared__ Val<A> top[DCR_THREADS / DCR_WARP];
        int lane = threadIdx.x % DCR_WARP, w = threadIdx.x / DCR_WARP;
        if (lane == 0) top[w] = v;
        __syncthreads();
        if (w != 0) return;
        v = lane < DCR_THREADS / DCR_WARP ? top[lane] : C::identity();
        v = warp_tree<OP>(v);
    }
    if (t != 0) return;
    if (p.splits == 1) finish_one<T, OP>(a, o, v);
    else ((Val<A> *)a.partial)[o * p.splits + blockIdx.y] = v;
}

/* outer: a thread per output, its reduced elements in order. */
template <typename T, int OP> __global__ void __launch_bounds__(DCR_THREADS) cols_kernel(RArgs a) {
    typedef typename RAcc<T>::type A;
    typedef Combine<OP, A> C;
    const dcr_plan &p = a.p;
    int64_t o = (int64_t)blockIdx.x * DCR_THREADS + threadIdx.x;
    if (o >= p.nout) return;
    bool small = !p.idx64;
    const char *base = a.in + dims_offset(p.nk, p.kshape, p.kstride, o, small);
    int64_t b = (int64_t)blockIdx.y * p.chunk;
    int64_t e = b + p.chunk < p.count ? b + p.chunk : p.count;
    Val<A> acc = C::identity();
    if (p.nr <= 1) {
        int64_t st = p.nr == 1 ? p.rstride[0] : 0;
        for (int64_t r = b; r < e; r++)
            acc = C::add(acc, Val<A>{up(*(const T *)(base + r * st)), r});
    } else if (b < e) { /* (an empty range: no division by a 0 size) */
        int64_t ridx[DCR_MAX_DIMS], rem = b, off = 0;
        for (int d = p.nr - 1; d >= 0; d--) {
            ridx[d] = rem % p.rshape[d], rem /= p.rshape[d];
            off += ridx[d] * p.rstride[d];
        }
        for (int64_t r = b; r < e; r++) {
            acc = C::add(acc, Val<A>{up(*(const T *)(base + off)), r});
            for (int d = p.nr - 1; d >= 0; d--) {
                off += p.rstride[d];
                if (++ridx[d] < p.rshape[d]) break;
                off -= ridx[d] * p.rstride[d];
                ridx[d] = 0;
            }
        }
    }
    if (p.splits == 1) finish_one<T, OP>(a, o, acc);
    else ((Val<A> *)a.partial)[o * p.splits + blockIdx.y] = acc;
}

/* The partials of each output, in split order. */
template <typename T, int OP> __global__ void __launch_bounds__(DCR_THREADS) combine_kernel(RArgs a) {
    typedef typename RAcc<T>::type A;
    int64_t o = (int64_t)blockIdx.x * DCR_THREADS + threadIdx.x;
    if (o >= a.p.nout) return;
    const Val<A> *part = (const Val<A> *)a.partial + o * a.p.splits;
    Val<A> acc = part[0];
    for (int s = 1; s < a.p.splits; s++) acc = Combine<OP, A>::add(acc, part[s]);
    finish_one<T, OP>(a, o, acc);
}

static thread_local char reduce_error[512];
static dcr_record last_reduce;

static int launched(const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    snprintf(reduce_error, sizeof reduce_error, "%s<<<...>>>: %s (%d): %s", what, cudaGetErrorName(e),
             (int)e, cudaGetErrorString(e));
    return -1;
}

template <typename T, int OP> static int run(RArgs &a) {
    typedef typename RAcc<T>::type A;
    const dcr_plan &p = a.p;
    size_t bytes = 0;
    const dispatch_allocator *al = dcu_allocator();
    if (p.splits > 1) {
        bytes = (size_t)p.nout * (size_t)p.splits * sizeof(Val<A>);
        a.partial = al->alloc(bytes, al->ctx);
        if (!a.partial) {
            snprintf(reduce_error, sizeof reduce_error,
                     "out of CUDA memory for the reduction's %zu-byte scratch buffer", bytes);
            return -1;
        }
    }
    int rc;
    if (p.path == DCR_PATH_OUTER) {
        dim3 grid((unsigned)((p.nout + DCR_THREADS - 1) / DCR_THREADS), (unsigned)p.splits);
        cols_kernel<T, OP><<<grid, DCR_THREADS>>>(a);
        rc = launched("cols_kernel");
    } else {
        int opb = DCR_THREADS / p.tpo;
        dim3 grid((unsigned)((p.nout + opb - 1) / opb), (unsigned)p.splits);
        if (p.path == DCR_PATH_STRIDED) rows_kernel<T, OP, 1, true><<<grid, DCR_THREADS>>>(a);
        else if (p.vec == 4) rows_kernel<T, OP, 4, false><<<grid, DCR_THREADS>>>(a);
        else if (p.vec == 2) rows_kernel<T, OP, 2, false><<<grid, DCR_THREADS>>>(a);
        else rows_kernel<T, OP, 1, false><<<grid, DCR_THREADS>>>(a);
        rc = launched("rows_kernel");
    }
    if (rc == 0 && p.splits > 1) {
        combine_kernel<T, OP><<<(unsigned)((p.nout + DCR_THREADS - 1) / DCR_THREADS), DCR_THREADS>>>(a);
        rc = launched("combine_kernel");
    }
    if (a.partial) al->free(a.partial, al->ctx); /* stream-ordered: reused only by later work */
    return rc;
}

#define DCR_SIZE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) size,
static constexpr int kItemsize[] = {DISPATCH_FORALL_DTYPES(DCR_SIZE_)};

typedef int (*run_fn)(RArgs &);
#define DCR_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    {&run<DevType<DISPATCH_##NAME>::type, OP_SUM>, &run<DevType<DISPATCH_##NAME>::type, OP_MAX>, \
     &run<DevType<DISPATCH_##NAME>::type, OP_MIN>},
static const run_fn table[DISPATCH_NUM_DTYPES][3] = {DISPATCH_FORALL_DTYPES(DCR_ROW_)};

/*
 * The device reduction the host calls (dispatch_device_reduce_fn,
 * dispatch/iterator.h): op a dispatch_reduce_op (sum, mean, max, min) of the
 * input (dtype, data, ndim dims of shape and byte strides) over the dims in
 * mask into out (contiguous over the kept dims, out_dtype: the input's, or
 * int64 for an integer sum), indices (contiguous int64, or NULL) the
 * position of max/min among the reduced elements. 0, or -1 with err set.
 */
DCU_API int dcu_reduce(int op, int dtype, const char *in, int ndim, const int64_t *shape,
                       const int64_t *strides, uint32_t mask, int out_dtype, char *out,
                       int64_t *indices, char *err, size_t errcap) {
    if (op < 0 || op > 3 || dtype < 0 || dtype >= DISPATCH_NUM_DTYPES) {
        snprintf(err, errcap, "dcu_reduce: unknown reduction %d or dtype %d", op, dtype);
        return -1;
    }
    RArgs a;
    memset(&a, 0, sizeof a);
    if (dcr_plan_make(&a.p, ndim, shape, strides, mask, kItemsize[dtype],
                      (uintptr_t)in, err, errcap) < 0)
        return -1;
    a.in = in, a.out = out, a.idx = indices;
    a.mean = op == 1;
    a.out_int64 = out_dtype == DISPATCH_INT64 && dtype != DISPATCH_INT64;
    last_reduce = dcr_record{a.p.path, a.p.vec, a.p.tpo, a.p.splits, a.p.nout, a.p.count};
    if (a.p.nout == 0) return 0;
    int kop = op <= 1 ? OP_SUM : op == 2 ? OP_MAX : OP_MIN;
    if (table[dtype][kop](a) < 0) {
        snprintf(err, errcap, "%s", reduce_error);
        return -1;
    }
    return 0;
}

/* What the last CUDA reduction chose. */
DCU_API void dcu_last_reduce(dcr_record *out) { *out = last_reduce; }
