/*
 * The host entry of the CUDA elementwise loops (dcu_elementwise) and the
 * cast kernels between floating dtypes; the loops themselves are in
 * cuda_elementwise.cuh, instantiated by the shards (Note [CUDA shards] in
 * cuda_device_types.cuh). Arithmetic mirrors sources/core/cpu_loops_reference.c: integers
 * wrap (computed in uint64), narrow floats compute in float and round once,
 * maximum and minimum propagate NaN, and the module is built with -fmad=false
 * so a + alpha * b is never contracted into an FMA: the same bits as the
 * CPU. exp, log and sqrt use CUDA's expf/logf/sqrtf (sqrt correctly rounded;
 * exp and log within 2 ulp, inside the CPU's documented bounds).
 */
#include "cuda_elementwise.cuh"

/*
 * Note [CUDA casts]
 * ~~~~~~~~~~~~~~~~~
 * x.to(float16) is the COPY loop with one operand cast. The generic loop
 * converts through read_carrier/write_carrier, a call and a switch on the
 * dtype per element, one element a thread (52% of an H100's DRAM bandwidth
 * for float32 -> float16). Between the floating dtypes (the casts that move
 * the most data) a kernel per (loop dtype, source, destination) does the
 * same conversions inline: the source converted to the loop dtype if it is
 * not it, COPY in the loop dtype, the result converted to the destination's
 * (the generic loop's steps, so the same bits), DCU_UNROLL elements a thread
 * loaded and stored as vectors when the plan's vec is 4. Other pairs keep
 * the generic loop. The floating dtypes are the FLOAT rows of the dtype
 * list (kFloatDtypes), so the table grows with it. A conversion goes through
 * the carrier's double, exact from every float (a narrow one widens exactly
 * to float) and rounded once to the destination: a float16 -> bfloat16 or
 * float8 cast rounds once, as the CPU's does.
 */
template <typename To, typename From> __device__ __forceinline__ To convert(From v) {
    if constexpr (std::is_same<To, From>::value) return v;
    else return from_carrier<To>(to_carrier(v));
}

template <typename L, typename S, typename D>
__global__ void __launch_bounds__(128) cast_kernel(Args a) {
    constexpr int U = DCU_UNROLL;
    uint32_t n = (uint32_t)a.piece.numel, groups = n / U;
    const S *src = (const S *)a.piece.data[1];
    D *dst = (D *)a.piece.data[0];
    uint32_t stride = gridDim.x * blockDim.x;
    bool vec = a.piece.vec == U;
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
        Vec<S, U> in;
        if (vec) in = ((const Vec<S, U> *)src)[g];
        else
#pragma unroll
            for (int j = 0; j < U; j++) in.v[j] = src[g * U + j];
        Vec<D, U> out;
#pragma unroll
        for (int j = 0; j < U; j++)
            out.v[j] = convert<D>(Compute<DISPATCH_LOOP_COPY, L>::run(convert<L>(in.v[j]), L{}, L{}, a));
        if (vec) ((Vec<D, U> *)dst)[g] = out;
        else
#pragma unroll
            for (int j = 0; j < U; j++) dst[g * U + j] = out.v[j];
    }
    for (uint32_t i = groups * U + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = convert<D>(Compute<DISPATCH_LOOP_COPY, L>::run(convert<L>(src[i]), L{}, L{}, a));
}

template <typename L, typename S, typename D> static void launch_cast(dim3 grid, const Args &a) {
    cast_kernel<L, S, D><<<grid, 128>>>(a);
}
/* The device type of the floating dtype of slot i. */
#define DCU_F_(i) typename DevType<kFloatDtypes[i]>::type
/* W 0: the loop runs in the source's dtype (the destination is cast), 1: in
 * the destination's (the source is cast); a pair of one dtype is no cast */
template <int W, int S, int D> constexpr cast_fn cast_entry() {
    if constexpr (S == D) return nullptr;
    else return &launch_cast<DCU_F_(W ? D : S), DCU_F_(S), DCU_F_(D)>;
}
/* f[W][S][D] is entry I = (W * N + S) * N + D of the flattened table. */
constexpr int DCU_NF = DCU_NUM_FLOATS;
template <size_t... I> constexpr CastTable cast_table(std::index_sequence<I...>) {
    CastTable t{};
    ((t.f[I / (DCU_NF * DCU_NF)][I / DCU_NF % DCU_NF][I % DCU_NF] =
          cast_entry<I / (DCU_NF * DCU_NF), I / DCU_NF % DCU_NF, I % DCU_NF>()),
     ...);
    return t;
}
extern const CastTable dcu_cast_table =
    cast_table(std::make_index_sequence<2 * DCU_NF * DCU_NF>());

thread_local char dcu_elementwise_error[512];
static dcu_launch_record last_launch;

/* Each shard's table (cuda_elementwise_shard.cu); Note [CUDA shards]. */
DCU_SHARD_TABLES(loop_table, dcu_ew_shard)

/*
 * The device loop the host's engine calls (dispatch_device_loop_fn,
 * dispatch/iterator.h): plan p over nops operands of dtypes `dtypes`
 * (loop_dtypes: what the loop reads and writes; an operand of another dtype
 * is converted on the way), operands in scalar_mask read from host memory
 * once (their bytes are in the loop dtype), ctx the loop's host scalar.
 */
DCU_API int dcu_elementwise(int loop, int dtype, const dcu_plan_in *p, const int *dtypes,
                            const int *loop_dtypes, uint32_t scalar_mask, const void *ctx,
                            char *err, size_t errcap) {
    piece_fn fn = loop >= 0 && loop < DISPATCH_NUM_LOOPS && dtype >= 0 && dtype < DISPATCH_NUM_DTYPES
                      ? (*shards[dtype % DCU_SHARDS])[loop][dtype]
                      : nullptr;
    if (!fn) {
        snprintf(err, errcap, "\"%s\" has no CUDA loop for dtype %s",
                 loop >= 0 && loop < DISPATCH_NUM_LOOPS ? kLoopName[loop] : "?",
                 dtype >= 0 && dtype < DISPATCH_NUM_DTYPES ? kDtypeName[dtype] : "?");
        return -1;
    }
    Args a;
    memset(&a, 0, sizeof a);
    int itemsize[DCU_MAX_OPS];
    int cast = 0;
    dcu_plan_in q = *p;
    for (int k = 0; k < p->nops; k++) {
        a.dtype[k] = dtypes[k];
        itemsize[k] = kItemsize[dtypes[k]];
        if (scalar_mask >> k & 1) {
            /* read here, once; the host pointer stays in the plan (stride 0)
             * but the device never reads it */
            memcpy(&a.scalar[k], p->data[k], (size_t)kItemsize[loop_dtypes[k]]);
        } else if (dtypes[k] != loop_dtypes[k]) {
            a.cast_mask |= 1u << k;
            cast = 1;
        }
    }
    a.scalar_mask = scalar_mask;
    if (ctx) {
        memcpy(&a.value, ctx, (size_t)kItemsize[dtype]);
        a.has_value = 1;
    }
    int rc = dcu_plan_launch(&q, itemsize, cast, scalar_mask, fn, &a, &last_launch);
    if (rc < 0) {
        snprintf(err, errcap, "%s", dcu_elementwise_error);
        return -1;
    }
    return 0;
}

/* What the last elementwise call chose: path, vector width, pieces. */
DCU_API void dcu_last_launch(dcu_launch_record *out) { *out = last_launch; }
