/*
 * One shard of the reduction table (Note [CUDA shards] in
 * cuda_device_types.cuh): compiled once per shard with -DDCU_SHARD=K, it
 * instantiates sum, max and min for the shard's dtypes and exports them as
 * dcr_shard_K; the other rows are null.
 */
#include "cuda_reduce.cuh"

#ifndef DCU_SHARD
#error "compile with -DDCU_SHARD=K, 0 <= K < DCU_SHARDS (sources/cuda/meson.build)"
#endif
static_assert(DCU_SHARD >= 0 && DCU_SHARD < DCU_SHARDS, "DCU_SHARD out of range");

template <int DT, int OP> constexpr run_fn entry() {
    if constexpr (DCU_IN_THIS_SHARD(DT)) return &run<typename DevType<DT>::type, OP>;
    else return nullptr;
}

/* Each row lists the combines in their order (the kernel combines of
 * dispatch/reduction_table.h that run_table is indexed by). */
static_assert(OP_SUM == 0 && OP_MAX == 1 && OP_MIN == 2 && DCR_NUM_COMBINES == 3,
              "the rows of the table below list OP_SUM, OP_MAX, OP_MIN in index order");

#define DCR_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) \
    {entry<DISPATCH_##NAME, OP_SUM>(), entry<DISPATCH_##NAME, OP_MAX>(), \
     entry<DISPATCH_##NAME, OP_MIN>()},
extern const run_table DCU_THIS_SHARD(dcr_shard) = {DISPATCH_FORALL_DTYPES(DCR_ROW_)};
