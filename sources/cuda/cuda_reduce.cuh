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
#include <math.h>
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

/* An element as combine OP reads it: a sum's float16 by CUDA's own
 * conversion, which gives every NaN one set of bits, where max/min keep a
 * NaN's (NarrowTraits' to_float, a test and a branch an element): a sum or
 * mean that is NaN is stored as the quiet NaN whichever NaN it met
 * (sum_store), so its loops need not carry one's bits. */
template <int OP, typename T> __device__ __forceinline__ typename RAcc<T>::type up_for(T v) {
    if constexpr (OP == OP_SUM && std::is_same<T, __half>::value) return __half2float(v);
    else return up(v);
}

template <typename T> __device__ __forceinline__ T down(typename RAcc<T>::type v) {
    if constexpr (NarrowTraits<T>::is_narrow) return NarrowTraits<T>::from_float(v);
    else return (T)(uint64_t)v; /* integers wrap */
}
template <> __device__ __forceinline__ dcu_bool8 down<dcu_bool8>(int64_t v) { return dcu_bool8{(uint8_t)(v != 0)}; }
template <> __device__ __forceinline__ float down<float>(float v) { return v; }
template <> __device__ __forceinline__ double down<double>(double v) { return v; }

/* An accumulated value and, for max/min, the reduced index it came from. */
template <typename A> struct Val {
    A v;
    int64_t i;
};

template <typename A> __device__ __forceinline__ bool isnan_(A a) { return a != a; }

/* Note [Max and min, element by element]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * max/min keep (value, index): NaN wins and the first NaN's index is kept,
 * ties go to the lower index (so -0.0 and 0.0, or two NaNs, give the first
 * one's bits, as the CPU's). Two combines:
 *
 *   - add(a, b), for values from anywhere (the trees, the partials): both
 *     NaN tests, then the value, then the index on a tie;
 *   - step(acc, v, i), for the next element of one accumulator's walk,
 *     whose indices only grow: v replaces acc when it is greater (less),
 *     or a NaN while acc is not one; a tie or a later NaN keeps acc. Three
 *     compares and two selects: the general combine in the loops, with its
 *     "no value yet" tests, the NaN tests of both sides and the index on
 *     ties, made amax(dim=0) of (8192, 8192) 1.6x (float32) and 2.5x
 *     (float16) the sum's time on the same plan on an H200.
 *
 * So no accumulator needs "no value yet": each starts (start(i)) at the
 * value every other value beats or ties, -inf (the type's lowest for
 * integers) for max, with the index i of its first element; an element
 * equal to it keeps that index, which is its own. An accumulator that gets
 * no element keeps an index past its range's end, so it loses every tie to
 * one that got some (and the trees' padding, identity(), loses every tie).
 */
template <int OP, typename A> struct Combine {
    /* what every value beats or ties, for max (min: the other end) */
    static __device__ __forceinline__ A worst() {
        if constexpr (std::is_floating_point<A>::value) return OP == OP_MAX ? -(A)INFINITY : (A)INFINITY;
        else return OP == OP_MAX ? (A)INT64_MIN : (A)INT64_MAX;
    }
    static __device__ __forceinline__ Val<A> start(int64_t i) {
        if (OP == OP_SUM) return Val<A>{(A)0, 0};
        return Val<A>{worst(), i};
    }
    static __device__ __forceinline__ Val<A> identity() { return start(INT64_MAX); }
    static __device__ __forceinline__ Val<A> add(Val<A> a, Val<A> b) {
        if (OP == OP_SUM) {
            if (std::is_integral<A>::value) /* int64: wrap */
                return Val<A>{(A)((uint64_t)a.v + (uint64_t)b.v), 0};
            return Val<A>{a.v + b.v, 0};
        }
        bool an = isnan_(a.v), bn = isnan_(b.v);
        if (an || bn) return an && bn ? (a.i < b.i ? a : b) : an ? a : b;
        if (a.v == b.v) return a.i < b.i ? a : b;
        return (OP == OP_MAX ? a.v > b.v : a.v < b.v) ? a : b;
    }
    /* element (v, i) of a walk after every element acc holds */
    static __device__ __forceinline__ Val<A> step(Val<A> acc, A v, int64_t i) {
        if (OP == OP_SUM) return add(acc, Val<A>{v, 0});
        /* !(v <= acc): v greater, or v NaN; never past a NaN held */
        bool take = OP == OP_MAX ? !(v <= acc.v) : !(v >= acc.v);
        if (std::is_floating_point<A>::value) take = take && !isnan_(acc.v);
        return take ? Val<A>{v, i} : acc;
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

/* Where split s of output o keeps its partial: [output][split] on the
 * inner and strided paths (an output's ctpo threads read its splits side by
 * side), [split][output] on the outer path (a block's threads read the
 * adjacent outputs of one split side by side: Note [The outer combine]). */
template <typename A> __device__ __forceinline__ Val<A> *partial_at(const RArgs &a, int64_t o, int64_t s) {
    int64_t k = a.p.path == DCR_PATH_OUTER ? s * a.p.nout + o : o * a.p.splits + s;
    return (Val<A> *)a.partial + k;
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
            const Val<A> *part = partial_at<A>(a, o, 0); /* the inner layout: splits adjacent */
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
    int64_t g = b + G * (int64_t)t, step = G * (int64_t)tpo;
#pragma unroll
    for (int j = 0; j < G; j++) acc[j] = C::start(g + j); /* Note [Max and min, element by element] */
    if (!STRIDED && VEC > 1) {
        struct alignas(sizeof(T) * VEC) V { T v[VEC]; };
        /* four steps' loads in flight, then added in the steps' order: the
         * same additions as one step at a time (one 16-byte load a thread
         * in flight read a full float32 sum of 2^26 at 1.17x torch's time on
         * an H200, four at 0.99x) */
        for (; g + 3 * step + G <= e; g += 4 * step) {
            V v[4][G / VEC];
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int h = 0; h < G / VEC; h++)
                    v[u][h] = ((const V *)(base + (g + u * step) * (int64_t)sizeof(T)))[h];
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int h = 0; h < G / VEC; h++)
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        acc[h * VEC + j] = C::step(acc[h * VEC + j], up_for<OP>(v[u][h].v[j]),
                                                   g + u * step + h * VEC + j);
        }
    }
    for (; g < e; g += step) {
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
                    acc[h * VEC + j] = C::step(acc[h * VEC + j], up_for<OP>(v[h].v[j]), g + h * VEC + j);
        } else {
#pragma unroll
            for (int j = 0; j < G; j++) {
                if (g + j >= e) break;
                int64_t off = STRIDED ? dims_offset(p.nr, p.rshape, p.rstride, g + j, small)
                                      : (g + j) * (int64_t)sizeof(T);
                acc[j] = C::step(acc[j], up_for<OP>(*(const T *)(base + off)), g + j);
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
    if (lead) *partial_at<A>(a, o, blockIdx.y) = v;
    if (last_of_column(a.counters)) combine_column<T, OP>(a, (int64_t)blockIdx.x * opb, opb);
}

/* The lanes' tree of the outer path: v[y] += v[y + s], s = lanes/2 .. 1, in
 * the block's shared memory ([lanes][tx][CV]); lane 0's acc holds the
 * result after it. Every thread of the block calls it (barriers inside). */
template <int OP, typename A, int CV>
__device__ __forceinline__ void lanes_tree(Val<A> (&acc)[CV], int x, int y, int tx, int lanes) {
    typedef Combine<OP, A> C;
    if (lanes == 1) return;
    extern __shared__ unsigned char lane_mem[];
    Val<A> *sh = (Val<A> *)lane_mem;
    __syncthreads(); /* the block's earlier tree, if any, has been read */
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

/* Note [The outer combine]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * The last block of a column of splits (Note [One launch per reduction])
 * combines its tx * CV columns' partials with its own thread layout: lane y
 * of column thread x takes splits y, y + lanes, .. in order, then the
 * lanes' tree, all the block's columns at once. It used to take them ctpo =
 * 32 threads an output, 8 outputs a pass: 16 passes for a float32 column
 * block, 32 for float16's, each waiting on its loads from L2 and a barrier
 * while the rest of the GPU had finished. On an H200, sum(dim=0) of (8192,
 * 8192) float16 (then 1024 blocks) took 164 us that way and 110 this way
 * (torch 46); float32's 97 and 84 (torch 71-74). The partials lie
 * [split][output] (partial_at), so one split's loads are adjacent across
 * the column threads.
 */

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
    for (int j = 0; j < CV; j++) acc[j] = C::start(b + y); /* Note [Max and min, element by element] */
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
                    acc[j] = C::step(acc[j], up_for<OP>(v[u].v[j]), r + u * (int64_t)lanes);
        }
        for (; r < e; r += lanes) {
            int64_t off = p.nr <= 1 ? r * st : dims_offset(p.nr, p.rshape, p.rstride, r, small);
            V v = *(const V *)(base + off);
#pragma unroll
            for (int j = 0; j < CV; j++) acc[j] = C::step(acc[j], up_for<OP>(v.v[j]), r);
        }
    }
    lanes_tree<OP, A, CV>(acc, x, y, tx, lanes);
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
        for (int j = 0; j < CV; j++) *partial_at<A>(a, o + j, blockIdx.y) = acc[j];
    }
    if (!last_of_column(a.counters)) return;
    /* Note [The outer combine]: lane y takes splits y, y + lanes, .. of its
     * columns in order, then the lanes' tree */
#pragma unroll
    for (int j = 0; j < CV; j++) acc[j] = C::identity();
    if (live) {
        for (int64_t s = y; s < p.splits; s += lanes) {
            Val<A> v[CV];
#pragma unroll
            for (int j = 0; j < CV; j++) /* every load first */
                v[j] = load_partial(partial_at<A>(a, o + j, s));
#pragma unroll
            for (int j = 0; j < CV; j++) acc[j] = C::add(acc[j], v[j]);
        }
    }
    lanes_tree<OP, A, CV>(acc, x, y, tx, lanes);
    if (lead) {
#pragma unroll
        for (int j = 0; j < CV; j++) finish_one<T, OP>(a, o + j, acc[j]);
    }
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
