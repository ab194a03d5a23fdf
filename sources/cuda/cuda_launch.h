/*
 * Launch planning for the CUDA elementwise loops: plain host C, no CUDA.
 * See Note [CUDA launch plans] in cuda_launch.c. The CUDA module
 * (cuda_module.cu) compiles it in; test_cuda_launch.c tests it on the host.
 *
 * Input: the strided engine's plan (dispatch/strided.h: coalesced sizes,
 * innermost first, and byte strides per operand, operand 0 the output), each
 * operand's element size, and whether any operand is cast on the way. Output:
 * one or more pieces, each indexable with 32-bit math, and for each the path
 * (vectorized, contiguous with casts, or strided through an offset
 * calculator), the vector width and the offset calculator's fast dividers.
 */
#ifndef DISPATCH_CUDA_LAUNCH_H_
#define DISPATCH_CUDA_LAUNCH_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define DCU_HD __host__ __device__ __forceinline__ /* the same code on both sides */
#else
#define DCU_HD static inline
#endif

#define DCU_MAX_DIMS 16 /* DISPATCH_MAX_DIMS */
#define DCU_MAX_OPS 8   /* DISPATCH_MAX_OPERANDS */
#define DCU_ROW_MIN 256 /* inner elements from which a strided piece runs by rows */
#define DCU_UNROLL 4    /* elements per thread per step on the cast and strided paths */

enum dcu_path {
    DCU_PATH_VECTOR = 0, /* contiguous, no cast: vectorized loads and stores */
    DCU_PATH_CAST = 1,   /* contiguous, some operand cast: unrolled load with cast */
    DCU_PATH_STRIDED = 2 /* strided or broadcast: offset calculator */
};

/* n / d and n % d for 0 <= n < 2^31 by a multiply-high and a shift
 * (Granlund-Montgomery, as PyTorch's IntDivider): q = (umulhi(n, magic) + n) >> shift. */
typedef struct dcu_divider {
    uint32_t divisor, magic, shift;
} dcu_divider;

/* One launch: data[k] and strides[k][d] (bytes, 32-bit) over sizes[0..ndim)
 * (innermost first), numel < 2^31. */
typedef struct dcu_piece {
    int32_t nops, ndim, path, vec;
    int64_t numel;
    char *data[DCU_MAX_OPS];
    int32_t strides[DCU_MAX_OPS][DCU_MAX_DIMS];
    dcu_divider div[DCU_MAX_DIMS]; /* div[d].divisor == sizes[d] */
} dcu_piece;

/* What a launch did, readable back by tests (dcu_last_launch). */
typedef struct dcu_launch_record {
    int32_t path, vec, pieces, ndim;
    int64_t numel;
} dcu_launch_record;

/* The strided engine's plan, as the planner reads it (the layout of
 * dispatch_strided_plan with the operand count of DCU_MAX_OPS). */
typedef struct dcu_plan_in {
    int nops, ndim;
    int64_t numel;
    int64_t shape[DCU_MAX_DIMS];
    intptr_t strides[DCU_MAX_OPS][DCU_MAX_DIMS];
    char *data[DCU_MAX_OPS];
} dcu_plan_in;

void dcu_divider_init(dcu_divider *d, uint32_t divisor);
DCU_HD uint32_t dcu_divider_div(const dcu_divider *d, uint32_t n) {
#ifdef __CUDA_ARCH__
    uint32_t hi = __umulhi(n, d->magic);
#else
    uint32_t hi = (uint32_t)(((uint64_t)n * d->magic) >> 32);
#endif
    return (hi + n) >> d->shift;
}

/* Widest vector (4, 2 or 1) every operand's pointer is aligned for (v *
 * itemsize[k] bytes) and that numel fills at least once. */
int dcu_vector_size(int nops, char *const *data, const int *itemsize, int64_t numel);

/* Whether strided piece p runs row by row (its innermost dim has
 * DCU_ROW_MIN elements or more and there is an outer dim): Note [CUDA
 * launch plans]. */
int dcu_strided_by_rows(const dcu_piece *p);

/* Whether the piece can be indexed with 32-bit math: numel < 2^31 and every
 * operand's furthest byte offset fits int32. */
int dcu_fits_32bit(const dcu_plan_in *p, const int *itemsize);

/* Call emit(piece, ctx) once per 32-bit-indexable piece of p, each with its
 * path and vector width chosen (cast: some operand is converted to or from
 * the loop's dtype; scalar_mask: operands that are kernel arguments, not
 * memory, which never make a call strided or unaligned). A contiguous piece
 * comes out as one dim of numel elements. Returns the number of pieces, or the first non-zero
 * value emit returned, negated if positive. A plan of numel 0 emits nothing.
 * record (may be NULL) gets what was chosen (the first piece's path and
 * vector width). */
int dcu_plan_launch(const dcu_plan_in *p, const int *itemsize, int cast, uint32_t scalar_mask,
                    int (*emit)(const dcu_piece *, void *), void *ctx, dcu_launch_record *record);

/* Byte offset of element `linear` (< piece numel) of operand k through the
 * piece's dividers: the offset calculator, as the device runs it. */
DCU_HD int64_t dcu_piece_offset(const dcu_piece *p, int k, uint32_t linear) {
    int64_t off = 0;
    for (int d = 0; d < p->ndim; d++) {
        uint32_t q = dcu_divider_div(&p->div[d], linear);
        off += (int64_t)(linear - q * p->div[d].divisor) * p->strides[k][d];
        linear = q;
    }
    return off;
}

#ifdef __cplusplus
}
#endif

#endif /* DISPATCH_CUDA_LAUNCH_H_ */
