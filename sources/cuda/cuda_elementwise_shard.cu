/*
 * One shard of the elementwise loop table (Note [CUDA shards] in
 * cuda_device_types.cuh): compiled once per shard with -DDCU_SHARD=K, it
 * instantiates the kernels of every (loop, dtype) pair whose dtype is the
 * shard's and whose loop exists for that dtype's category (has_loop), and
 * exports their launchers as dcu_ew_shard_<K>; the other entries are null.
 */
#include "cuda_elementwise.cuh"

#ifndef DCU_SHARD
#error "compile with -DDCU_SHARD=K, 0 <= K < DCU_SHARDS (sources/cuda/meson.build)"
#endif
static_assert(DCU_SHARD >= 0 && DCU_SHARD < DCU_SHARDS, "DCU_SHARD out of range");

/* `if constexpr`, not ?:, so a pair outside this shard, or a loop the
 * dtype's category lacks, instantiates no kernel at all. */
template <int LOOP, int DT> constexpr piece_fn entry() {
    if constexpr (DCU_IN_THIS_SHARD(DT) && has_loop(LOOP, kCategory[DT]))
        return &launch_piece<LOOP, typename DevType<DT>::type, DT>;
    else
        return nullptr;
}

#define DCU_DTYPE_ENTRY_(LOOP, NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    entry<LOOP, DISPATCH_##NAME>(),
#define DCU_LOOP_ROW_(NAME, name, nin, ctx, mask) \
    {DISPATCH_FORALL_DTYPES_WITH(DCU_DTYPE_ENTRY_, DISPATCH_LOOP_##NAME)},
extern const loop_table DCU_THIS_SHARD(dcu_ew_shard) = {DISPATCH_FORALL_LOOPS(DCU_LOOP_ROW_)};
