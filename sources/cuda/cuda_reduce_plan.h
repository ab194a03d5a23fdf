/*
 * Reduction planning for the CUDA reductions: plain host C, no CUDA. See
 * Note [CUDA reduction plans] in cuda_reduce_plan.c. The CUDA module
 * (cuda_reduce.cu) compiles it in; test_cuda_reduce_plan.c tests it on the
 * host, including the host emulation of the device's summation order.
 */
#ifndef DISPATCH_CUDA_REDUCE_PLAN_H_
#define DISPATCH_CUDA_REDUCE_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DCR_MAX_DIMS 16   /* DISPATCH_MAX_DIMS */
#define DCR_THREADS 256   /* threads per block, every path */
#define DCR_WARP 32
#define DCR_MAX_BLOCKS 4096 /* outputs x splits aimed at when splitting */
#define DCR_SPLIT_MIN 8192  /* reduced elements per split, at least */
/* Threads a reduction aims to launch when its data allows: as many as an
 * H100's or H200's 132 SMs hold at once (2048 each: 8 blocks of 256), the
 * fill torch's reductions aim at. Half of it (4 blocks an SM, until issue
 * 48) left sum(dim=0) of (8192, 8192) float32 at 1.44x torch's time on an
 * H200. A constant, never the device's SM count: the plan, and so the order
 * of additions, is a function of the shape alone (Note [Deterministic CUDA
 * reductions]). */
#define DCR_FILL_THREADS (8 * 132 * DCR_THREADS)
#define DCR_OUTER_MIN_ROWS 16 /* rows each outer lane walks per split, at least */

enum dcr_path {
    DCR_PATH_INNER = 0,   /* reduced elements contiguous: a block or a warp per output */
    DCR_PATH_OUTER = 1,   /* a kept dim contiguous: a thread per output */
    DCR_PATH_STRIDED = 2  /* neither: a block or a warp per output, offset by dims */
};

typedef struct dcr_plan {
    int path, vec;        /* vec: elements per load: up to 16 bytes (inner), columns per thread (outer) */
    int tpo;              /* threads per output: 32 (a warp) or DCR_THREADS (inner/strided), 1 (outer) */
    int splits;           /* blocks along the reduced range of each output */
    int group;            /* inner/strided: consecutive elements per thread step, one accumulator each (4; 8 for 2-byte dtypes) */
    int lanes;            /* outer: threads of a block along the reduced rows (a power of two) */
    int ctpo;             /* the combine's threads per output (splits > 1, else 0): 32 or DCR_THREADS, the lanes on the outer path */
    int launches;         /* kernel launches: 1, the combine in the last block (Note [One launch per reduction]) */
    int64_t chunk;        /* reduced elements per split (the last may have fewer) */
    int64_t nout, count;  /* outputs, reduced elements per output */
    int idx64;            /* count or nout >= 2^31: 64-bit index math */
    int itemsize;
    /* kept dims (output order, innermost last) and reduced dims (row-major,
     * innermost last), each coalesced; byte strides of the input */
    int nk, nr;
    int64_t kshape[DCR_MAX_DIMS], kstride[DCR_MAX_DIMS];
    int64_t rshape[DCR_MAX_DIMS], rstride[DCR_MAX_DIMS];
} dcr_plan;

/* What the last CUDA reduction took, readable back by tests (dcu_last_reduce). */
typedef struct dcr_record {
    int32_t path, vec, tpo, splits;
    int64_t nout, count;
    int32_t lanes, ctpo;
    int64_t blocks; /* of the kernel, all splits */
    int32_t launches, pad_;
} dcr_record;

/* Plan the reduction of the input (ndim dims of shape, byte strides, base
 * pointer data for alignment) over the dims in mask. 0, or -1 with a message
 * in err (an unsupported rank). */
int dcr_plan_make(dcr_plan *p, int ndim, const int64_t *shape, const int64_t *strides,
                  uint32_t mask, int itemsize, uintptr_t data, char *err, size_t errcap);

/* Blocks of DCR_THREADS threads the kernel launches along the outputs
 * (times p->splits along the reduced range): the block columns, one counter
 * each when split. */
int64_t dcr_blocks_x(const dcr_plan *p);

/* Byte offset of output o's first reduced element and of reduced element r. */
int64_t dcr_out_offset(const dcr_plan *p, int64_t o);
int64_t dcr_red_offset(const dcr_plan *p, int64_t r);

/* The device's float32 sum, emulated on the host in the device's order of
 * additions (Note [Deterministic CUDA reductions]): out[o] for every output of
 * plan p over the input at host memory `in`. Bit-for-bit what the device's
 * sum writes. */
void dcr_emulate_sum_f32(const dcr_plan *p, const char *in, float *out);
void dcr_emulate_sum_f64(const dcr_plan *p, const char *in, double *out);

#ifdef __cplusplus
}
#endif

#endif /* DISPATCH_CUDA_REDUCE_PLAN_H_ */
