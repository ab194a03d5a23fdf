/*
 * The CUDA reductions: sum, mean, max, min (values, and with indices for
 * max(dim)/min(dim)/argmax/argmin) over a plan from cuda_reduce_plan.c (Note
 * [CUDA reduction plans]); the order of the additions is Note
 * [Deterministic CUDA reductions] there. The CPU's rules: narrow floats
 * (float16, bfloat16, Note [CUDA narrow floats] in cuda_device_types.cuh)
 * accumulate in float32 and round once, float32 in float32, float64
 * in float64, integers and bool sum in wrapping int64, max/min propagate NaN
 * (the index is the first NaN's) and ties take the first index. The argument
 * checks and the result's shape and dtype are the CPU kernel's
 * (sources/dispatcher/operators_reduce.c), which calls dcu_reduce through
 * dispatch_iter_device_reduce. The kernels are instantiated by
 * cuda_reduce_shard.cu, once per shard (Note [CUDA shards] in
 * cuda_device_types.cuh); dcu_reduce, the host entry, is in cuda_reduce.cu.
 */
#ifndef DISPATCH_CUDA_REDUCE_CUH_
#define DISPATCH_CUDA_REDUCE_CUH_

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
#include "dispatch/reduction_table.h"
#include "dispatch/storage.h"


extern "C" const dispatch_allocator *dcu_allocator(void);

/* The combines the kernels instantiate: the reduction table's kernel
 * combines (dispatch/reduction_table.h), the CPU kernels' numbers. A row's CUDA
 * column says whether it runs here; dcu_reduce maps a row to its combine
 * with dispatch_reduce_kernel_op, never by its id. */
enum {
    OP_SUM = DISPATCH_COMBINE_ADD,
    OP_MAX = DISPATCH_COMBINE_MAX,
    OP_MIN = DISPATCH_COMBINE_MIN,
    DCR_NUM_COMBINES
};


/* The accumulator of each input type, and the conversions to and from it:
 * integers and bool int64, a narrow float float32 (NarrowTraits). */
template <typename T> struct RAcc {
    typedef typename std::conditional<NarrowTraits<T>::is_narrow, float, int64_t>::type type;
};
template <> struct RAcc<float> { typedef float type; };
template <> struct RAcc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ typename RAcc<T>::type up(T v) {
    if constexpr (NarrowTraits<T>::is_narrow) return NarrowTraits<T>::to_float(v);
    else return (typename RAcc<T>::type)v;
}
template <> __device__ __forceinline__ int64_t up(dcu_bool8 v) { return v.v != 0; }

template <typename T> __device__ __forceinline__ T down(typename RAcc<T>::type v) {
    if constexpr (NarrowTraits<T>::is_narrow) return NarrowTraits<T>::from_float(v);
    else return (T)(uint64_t)v; /* integers wrap */
}
template <> __device__ __forceinline__ dcu_bool8 down<dcu_bool8>(int64_t v) { return dcu_bool8{(uint8_t)(v != 0)}; }
template <> __device__ __forceinline__ float down<float>(float v) { return v; }
template <> __device__ __forceinline__ double down<double>(double v) { return v; }

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
    unsigned *counters; /* [blocks_x] zeros, splits > 1: Note [One launch per reduction] */
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

/* An accumulator as int64 (out_int64): integers as they are, a float (only
 * if a caller of dcu_reduce asked for one) by the casts' rule. */
__device__ __forceinline__ int64_t acc_to_i64(int64_t v) { return v; }
__device__ __forceinline__ int64_t acc_to_i64(double v) { return dcu_float_to_i64(v); }

/* The positive quiet NaN with no payload of each floating dtype (NumPy's and
 * torch's `nan`; a finite-only format's one NaN, sign 0): Note [The NaN and
 * the zero of a sum] in sources/iterator/reduce_float.c. */
template <typename T> __device__ __forceinline__ T quiet_nan() { /* narrow floats */
    return NarrowTraits<T>::quiet_nan();
}
template <> __device__ __forceinline__ float quiet_nan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double quiet_nan<double>() {
    return __longlong_as_double(0x7ff8000000000000LL);
}

/* A sum's or mean's result as stored, the CPU's rule (Note [The NaN and the
 * zero of a sum]): a NaN is the positive quiet NaN, whatever NaNs met on the
 * way (which one an addition returns is the hardware's choice), and -0.0 is
 * +0.0 (v + 0 is v for every other v). Once per output, never in a loop. */
template <typename T, typename A> __device__ __forceinline__ T sum_store(A v) {
    if constexpr (std::is_floating_point<A>::value) {
        if (v != v) return quiet_nan<T>();
        return down<T>(v + (A)0);
    } else {
        return down<T>(v);
    }
}

/* The final value of output o: mean's division, the result's dtype, the index. */
template <typename T, int OP>
__device__ __forceinline__ void finish_one(const RArgs &a, int64_t o, Val<typename RAcc<T>::type> acc) {
    typedef typename RAcc<T>::type A;
    if (a.mean) acc.v = acc.v / (A)a.p.count; /* 0/0: NaN, as the CPU's */
    if (a.out_int64) ((int64_t *)a.out)[o] = acc_to_i64(acc.v);
    else if (OP == OP_SUM) ((T *)a.out)[o] = sum_store<T>(acc.v);
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

/* The tree of Note [Deterministic CUDA reductions] over a block's 8 warps:
 * each warp's tree, then the warps' values (padded to 32) by the same tree.
 * Warp 0's lane 0 has the result. */
template <int OP, typename A> __device__ __forceinline__ Val<A> block_tree(Val<A> v) {
    typedef Combine<OP, A> C;
    __shared__ Val<A> top[DCR_THREADS / DCR_WARP];
    int lane = threadIdx.x % DCR_WARP, w = threadIdx.x / DCR_WARP;
    v = warp_tree<OP>(v);
    if (lane == 0) top[w] = v;
    __syncthreads();
    v = lane < DCR_THREADS / DCR_WARP ? top[lane] : C::identity();
    return warp_tree<OP>(v); /* every warp runs it; warp 0's is read */
}

/* Note [One launch per reduction]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A split reduction (splits > 1) used to be two launches: the blocks wrote
 * their partials, then a second kernel combined them. Now the block column
 * blockIdx.x (its splits along grid y) combines its own outputs in its last
 * block to finish: every block writes its partials, fences them to the whole
 * device, and one thread counts the block in on counters[blockIdx.x]; the
 * block whose count saw gridDim.y - 1 is last, puts the counter back to 0 (so
 * the next reduction on the stream finds it zeroed: the launches of this
 * runtime are ordered on the legacy default stream) and combines. Which block
 * is last depends on the timing; what it computes does not: the combine is
 * the old combine kernel's arithmetic, output by output (ctpo threads per
 * output, thread t taking partials t, t + ctpo, .. in order, then the warp's
 * or the block's tree), so the bits are those of Note [Deterministic CUDA
 * reductions] and of dcr_emulate_sum_f32/f64. Partials written by other
 * blocks are read with __ldcg (from L2, never a stale L1 line). Every thread
 * of a block reaches the barriers below: the kernels have no early return
 * before them (a dead warp computes nothing and writes nothing).
 */

/* Whether this block is the last of its column to finish (the same answer in
 * every thread); after it, the column's partials are visible to this block. */
__device__ __forceinline__ bool last_of_column(unsigned *counters) {
    __shared__ bool last;
    __threadfence(); /* this thread's partials reach the device before the count */
    __syncthreads();
    if (threadIdx.x == 0) {
        bool l = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
        if (l) {
            counters[blockIdx.x] = 0; /* every block of the column has counted */
            __threadfence();          /* the others' partials, seen through the count */
        }
        last = l;
    }
    __syncthreads();
    return last;
}

template <typename A> __device__ __forceinline__ Val<A> load_partial(const Val<A> *p) {
    return Val<A>{__ldcg(&p->v), __ldcg(&p->i)};
}

/* The partials of outputs [first, first + n) (those below nout): passes of
 * DCR_THREADS / ctpo outputs, ctpo threads per output, thread t taking
 * partials t, t + ctpo, .. in order, then the warp's (or block's) tree. The
 * loop's bounds are the same in every thread of the block. */
template <typename T, int OP> __device__ void combine_column(const RArgs &a, int64_t first, int64_t n) {
    typedef typename RAcc<T>::type A;
    typedef Combine<OP, A> C;
    const dcr_plan &p = a.p;
    int ctpo = p.ctpo, t = threadIdx.x % ctpo;
    int64_t end = first + n < p.nout ? first + n : p.nout;
    for (int64_t q = first; q < end; q += DCR_THREADS / ctpo) {
        int64_t o = q + threadIdx.x / ctpo;
        Val<A> acc = C::identity();
        if (o < end) {
            const Val<A> *part = (const Val<A> *)a.partial + o * p.splits;
            int s = t;
            for (; s + 3 * ctpo < p.splits; s += 4 * ctpo) { /* four loads in flight, added in order */
                Val<A> v0 = load_partial(part + s), v1 = load_partial(part + s + ctpo);
                Val<A> v2 = load_partial(part + s + 2 * ctpo), v3 = load_partial(part + s + 3 * ctpo);
                acc = C::add(C::add(C::add(C::add(acc, v0), v1), v2), v3);
            }
            for (; s < p.splits; s += ctpo) acc = C::add(acc, load_partial(part + s));
        }
        acc = ctpo == DCR_THREADS ? block_tree<OP>(acc) : warp_tree<OP>(acc);
        if (t == 0 && o < end) finish_one<T, OP>(a, o, acc);
        __syncthreads(); /* block_tree's shared top[] is written again by the next pass */
    }
}

/* Elements per thread step on inner/strided: 16 bytes of float32, 8 of float16. */
template <typename T> __host__ __device__ constexpr int group_of() { return sizeof(T) == 2 ? 8 : 4; }

/* inner and strided: tpo threads per output, group_of<T>() accumulators per thread. */
template <typename T, int OP, int VEC, bool STRIDED>
__global__ void __launch_bounds__(DCR_THREADS) rows_kernel(RArgs a) {
    typedef typename RAcc<T>::type A;
    typedef Combine<OP, A> C;
    constexpr int G = group_of<T>();
    const dcr_plan &p = a.p;
    int tpo = p.tpo, opb = DCR_THREADS / tpo;
    int t = threadIdx.x % tpo;
    int64_t o = (int64_t)blockIdx.x * opb + threadIdx.x / tpo;
    bool small = !p.idx64, live = o < p.nout; /* a dead warp still meets the block's barriers */
    const char *base = live ? a.in + dims_offset(p.nk, p.kshape, p.kstride, o, small) : a.in;
    int64_t b = (int64_t)blockIdx.y * p.chunk;
    int64_t e = !live ? b : b + p.chunk < p.count ? b + p.chunk : p.count;
    Val<A> acc[G];
#pragma unroll
    for (int j = 0; j < G; j++) acc[j] = C::identity();
    for (int64_t g = b + G * (int64_t)t; g < e; g += G * (int64_t)tpo) {
        if (!STRIDED && VEC > 1 && g + G <= e) {
            struct alignas(sizeof(T) * VEC) V { T v[VEC]; };
            const V *vp = (const V *)(base + g * (int64_t)sizeof(T));
            V v[G / VEC];
#pragma unroll
            for (int h = 0; h < G / VEC; h++) v[h] = vp[h]; /* every load first */
#pragma unroll
            for (int h = 0; h < G / VEC; h++)
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    acc[h * VEC + j] = C::add(acc[h * VEC + j], Val<A>{up(v[h].v[j]), g + h * VEC + j});
        } else {
#pragma unroll
            for (int j = 0; j < G; j++) {
                if (g + j >= e) break;
                int64_t off = STRIDED ? dims_offset(p.nr, p.rshape, p.rstride, g + j, small)
                                      : (g + j) * (int64_t)sizeof(T);
                acc[j] = C::add(acc[j], Val<A>{up(*(const T *)(base + off)), g + j});
            }
        }
    }
#pragma unroll
    for (int h = 1; h < G; h *= 2) /* (acc0 + acc1) + (acc2 + acc3), .. */
#pragma unroll
        for (int j = 0; j < G; j += 2 * h) acc[j] = C::add(acc[j], acc[j + h]);
    Val<A> v = tpo == DCR_THREADS ? block_tree<OP>(acc[0]) : warp_tree<OP>(acc[0]);
    bool lead = t == 0 && live;
    if (p.splits == 1) { /* the whole grid's y: no partials, no combine */
        if (lead) finish_one<T, OP>(a, o, v);
        return;
    }
    if (lead) ((Val<A> *)a.partial)[o * p.splits + blockIdx.y] = v;
    if (last_of_column(a.counters)) combine_column<T, OP>(a, (int64_t)blockIdx.x * opb, opb);
}

/* outer (Note [Outer reductions]): tx threads across the columns, each CV
 * adjacent columns as one load, times p.lanes lanes along the rows. */
template <typename T, int OP, int CV> __global__ void __launch_bounds__(DCR_THREADS) cols_kernel(RArgs a) {
    typedef typename RAcc<T>::type A;
    typedef Combine<OP, A> C;
    struct alignas(sizeof(T) * CV) V { T v[CV]; };
    const dcr_plan &p = a.p;
    int lanes = p.lanes, tx = DCR_THREADS / lanes;
    int x = threadIdx.x % tx, y = threadIdx.x / tx;
    int64_t o = ((int64_t)blockIdx.x * tx + x) * CV; /* the first of CV outputs */
    bool small = !p.idx64, live = o < p.nout;
    const char *base = live ? a.in + dims_offset(p.nk, p.kshape, p.kstride, o, small) : a.in;
    int64_t b = (int64_t)blockIdx.y * p.chunk;
    int64_t e = b + p.chunk < p.count ? b + p.chunk : p.count;
    Val<A> acc[CV];
#pragma unroll
    for (int j = 0; j < CV; j++) acc[j] = C::identity();
    if (live) {
        int64_t st = p.nr == 1 ? p.rstride[0] : 0;
        int64_t r = b + y;
        for (; r + 3 * (int64_t)lanes < e; r += 4 * (int64_t)lanes) { /* four loads in flight */
            V v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                int64_t ru = r + u * (int64_t)lanes;
                int64_t off = p.nr <= 1 ? ru * st : dims_offset(p.nr, p.rshape, p.rstride, ru, small);
                v[u] = *(const V *)(base + off);
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int j = 0; j < CV; j++)
                    acc[j] = C::add(acc[j], Val<A>{up(v[u].v[j]), r + u * (int64_t)lanes});
        }
        for (; r < e; r += lanes) {
            int64_t off = p.nr <= 1 ? r * st : dims_offset(p.nr, p.rshape, p.rstride, r, small);
            V v = *(const V *)(base + off);
#pragma unroll
            for (int j = 0; j < CV; j++) acc[j] = C::add(acc[j], Val<A>{up(v.v[j]), r});
        }
    }
    if (lanes > 1) { /* the lanes' tree: v[y] += v[y + s], s = lanes/2 .. 1 */
        extern __shared__ unsigned char lane_mem[];
        Val<A> *sh = (Val<A> *)lane_mem; /* [lanes][tx][CV] */
#pragma unroll
        for (int j = 0; j < CV; j++) sh[(y * tx + x) * CV + j] = acc[j];
        __syncthreads();
        for (int s = lanes / 2; s >= 1; s /= 2) {
            if (y < s) {
#pragma unroll
                for (int j = 0; j < CV; j++) {
                    Val<A> &d = sh[(y * tx + x) * CV + j];
                    d = C::add(d, sh[((y + s) * tx + x) * CV + j]);
                }
            }
            __syncthreads();
        }
        if (y == 0) {
#pragma unroll
            for (int j = 0; j < CV; j++) acc[j] = sh[x * CV + j];
        }
    }
    bool lead = y == 0 && live; /* lane 0 holds the lanes' tree */
    if (p.splits == 1) { /* the whole grid's y: no partials, no combine */
        if (lead) {
#pragma unroll
            for (int j = 0; j < CV; j++) finish_one<T, OP>(a, o + j, acc[j]);
        }
        return;
    }
    if (lead) {
#pragma unroll
        for (int j = 0; j < CV; j++) ((Val<A> *)a.partial)[(o + j) * p.splits + blockIdx.y] = acc[j];
    }
    if (last_of_column(a.counters)) combine_column<T, OP>(a, (int64_t)blockIdx.x * tx * CV, (int64_t)tx * CV);
}

/* The last launch error of this thread (defined in cuda_reduce.cu). */
extern thread_local char dcu_reduce_error[512];

static inline int launched(const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    snprintf(dcu_reduce_error, sizeof dcu_reduce_error, "%s<<<...>>>: %s (%d): %s", what, cudaGetErrorName(e),
             (int)e, cudaGetErrorString(e));
    return -1;
}

/* rows_kernel with VEC-element loads, where VEC divides the group and fits 16 bytes. */
template <typename T, int OP, int VEC> static void launch_rows(dim3 grid, RArgs &a) {
    if constexpr (VEC <= group_of<T>() && VEC * sizeof(T) <= 16)
        rows_kernel<T, OP, VEC, false><<<grid, DCR_THREADS>>>(a);
    else
        rows_kernel<T, OP, 1, false><<<grid, DCR_THREADS>>>(a); /* never planned */
}

/* The zeroed counters of Note [One launch per reduction], at least n of
 * them, for the current device (defined in cuda_reduce.cu). NULL with
 * dcu_reduce_error set. */
unsigned *dcr_counters(int64_t n);

template <typename T, int OP> static int run(RArgs &a) {
    typedef typename RAcc<T>::type A;
    const dcr_plan &p = a.p;
    const dispatch_allocator *al = nullptr;
    int64_t bx = dcr_blocks_x(&p);
    if (p.splits > 1) { /* scratch only for a split */
        size_t bytes = (size_t)p.nout * (size_t)p.splits * sizeof(Val<A>);
        if (!(a.counters = dcr_counters(bx))) return -1;
        al = dcu_allocator();
        a.partial = al->alloc(bytes, al->ctx);
        if (!a.partial) {
            snprintf(dcu_reduce_error, sizeof dcu_reduce_error,
                     "out of CUDA memory for the reduction's %zu-byte scratch buffer", bytes);
            return -1;
        }
    }
    int rc;
    dim3 grid((unsigned)bx, (unsigned)p.splits);
    if (p.path == DCR_PATH_OUTER) {
        constexpr int VMAX = 16 / sizeof(T) > 8 ? 8 : 16 / sizeof(T);
        size_t sh = p.lanes > 1 ? (size_t)DCR_THREADS * (size_t)p.vec * sizeof(Val<A>) : 0;
        if (p.vec == VMAX && VMAX > 1) cols_kernel<T, OP, VMAX><<<grid, DCR_THREADS, sh>>>(a);
        else cols_kernel<T, OP, 1><<<grid, DCR_THREADS, sh>>>(a);
        rc = launched("cols_kernel");
    } else {
        if (p.path == DCR_PATH_STRIDED) rows_kernel<T, OP, 1, true><<<grid, DCR_THREADS>>>(a);
        else if (p.vec == 8) launch_rows<T, OP, 8>(grid, a);
        else if (p.vec == 4) launch_rows<T, OP, 4>(grid, a);
        else if (p.vec == 2) launch_rows<T, OP, 2>(grid, a);
        else rows_kernel<T, OP, 1, false><<<grid, DCR_THREADS>>>(a);
        rc = launched("rows_kernel");
    }
    if (a.partial) al->free(a.partial, al->ctx); /* stream-ordered: reused only by later work */
    return rc;
}

typedef int (*run_fn)(RArgs &);
/* A shard's runs, [dtype][OP_SUM, OP_MAX, OP_MIN], null for other dtypes. */
typedef run_fn run_table[DISPATCH_NUM_DTYPES][DCR_NUM_COMBINES];

#endif /* DISPATCH_CUDA_REDUCE_CUH_ */
