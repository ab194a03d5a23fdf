/* Launch planning for the CUDA elementwise loops; see cuda_launch.h. */
#include "cuda_launch.h"

#include <stddef.h>
#include <string.h>

/*
 * Note [CUDA launch plans]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * The CUDA loops run on the plan the CPU's strided engine builds (Note [One
 * strided engine] in sources/core/strided.c): broadcasting, promotion, output
 * allocation, coalescing and the out= overlap rules are done on the host by
 * the same code; only the loop over the plan differs. Here, in plain C so the
 * choices are unit-tested on a machine without a GPU, that plan becomes
 * launches, the way PyTorch's gpu_kernel_impl does it:
 *
 *  - A piece is what one launch indexes with 32-bit math: fewer than 2^31
 *    elements and every operand's furthest byte offset within int32. A plan
 *    that is not one is cut in two along the dim whose extent (size times
 *    the largest |stride|) is greatest, and each half planned again, so a
 *    contiguous 2^31 + 1 element tensor makes 2 pieces.
 *  - Path: every operand contiguous (one coalesced dim, stride = its
 *    itemsize) and none cast -> DCU_PATH_VECTOR, loads and stores of `vec`
 *    elements; contiguous with a cast -> DCU_PATH_CAST, an unrolled
 *    load-convert-store; anything else (strided, broadcast stride 0,
 *    transposed) -> DCU_PATH_STRIDED, where each thread turns its linear
 *    index into per-operand byte offsets with one fast divider per dim.
 *  - vec: the widest of 4, 2, 1 such that every operand's pointer is aligned
 *    to vec * its itemsize and the piece has at least vec elements (on the
 *    cast path too: 4 float32s in, 4 float16s out).
 *  - A strided piece whose innermost dim has DCU_ROW_MIN elements or more
 *    runs row by row (dcu_strided_by_rows): the outer dims' offsets are
 *    computed once per row, the inner one is a multiply, and an operand
 *    whose inner stride is 0 (a (n, 1) broadcast) is read once per row and
 *    thread, not once per element. A view
 *    that starts one float32 past a 16-byte boundary gets 1, two floats past
 *    gets 2. (The device loop handles the tail of numel % vec elements.)
 *
 * A 0-dim CPU tensor or a Python scalar is never an operand: it reaches the
 * kernel as an argument (dispatch/cuda.py), so a broadcast scalar does not
 * turn a contiguous call into a strided one.
 */

void dcu_divider_init(dcu_divider *d, uint32_t divisor) {
    uint32_t shift = 0;
    while (shift < 32 && ((uint64_t)1 << shift) < divisor) shift++;
    uint64_t magic = (((uint64_t)1 << 32) * (((uint64_t)1 << shift) - divisor)) / divisor + 1;
    d->divisor = divisor;
    d->magic = (uint32_t)magic;
    d->shift = shift;
}

int dcu_vector_size(int nops, char *const *data, const int *itemsize, int64_t numel) {
    for (int v = 4; v > 1; v /= 2) {
        int ok = numel >= v;
        for (int k = 0; k < nops && ok; k++)
            ok = (uintptr_t)data[k] % ((uintptr_t)v * (uintptr_t)itemsize[k]) == 0;
        if (ok) return v;
    }
    return 1;
}

/* Furthest |byte offset| of operand k from its data pointer, plus its itemsize. */
static int64_t reach(const dcu_plan_in *p, int k, int itemsize) {
    int64_t r = itemsize, t;
    for (int d = 0; d < p->ndim; d++) {
        int64_t s = p->strides[k][d] < 0 ? -(int64_t)p->strides[k][d] : (int64_t)p->strides[k][d];
        if (p->shape[d] <= 1) continue;
        if (__builtin_mul_overflow(s, p->shape[d] - 1, &t) || __builtin_add_overflow(r, t, &r))
            return INT64_MAX;
    }
    return r;
}

int dcu_strided_by_rows(const dcu_piece *p) {
    return p->path == DCU_PATH_STRIDED && p->ndim >= 2 && p->div[0].divisor >= DCU_ROW_MIN;
}

int dcu_fits_32bit(const dcu_plan_in *p, const int *itemsize) {
    if (p->numel > INT32_MAX) return 0;
    for (int k = 0; k < p->nops; k++)
        if (reach(p, k, itemsize[k]) > INT32_MAX) return 0;
    return 1;
}

static int contiguous(const dcu_plan_in *p, const int *itemsize, uint32_t scalars) {
    if (p->numel <= 1) return 1;
    int inner = -1;
    for (int d = 0; d < p->ndim; d++) {
        if (p->shape[d] == 1) continue;
        if (inner >= 0) return 0; /* two dims of size > 1 did not coalesce */
        inner = d;
    }
    for (int k = 0; k < p->nops; k++)
        if (!(scalars >> k & 1) && p->strides[k][inner] != itemsize[k]) return 0;
    return 1;
}

typedef struct walk {
    const int *itemsize;
    int cast, pieces, status;
    uint32_t scalars;
    int (*emit)(const dcu_piece *, void *);
    void *ctx;
    dcu_launch_record *record;
} walk;

static void emit_piece(walk *w, const dcu_plan_in *p) {
    dcu_piece piece;
    memset(&piece, 0, sizeof piece);
    piece.nops = p->nops;
    piece.ndim = p->ndim;
    piece.numel = p->numel;
    for (int k = 0; k < p->nops; k++) piece.data[k] = p->data[k];
    for (int d = 0; d < p->ndim; d++) {
        dcu_divider_init(&piece.div[d], (uint32_t)p->shape[d]);
        for (int k = 0; k < p->nops; k++) piece.strides[k][d] = (int32_t)p->strides[k][d];
    }
    if (contiguous(p, w->itemsize, w->scalars)) {
        piece.path = w->cast ? DCU_PATH_CAST : DCU_PATH_VECTOR;
        /* the operands in memory decide, each in its own dtype (a cast too:
         * Note [CUDA casts] in cuda_elementwise.cu) */
        char *data[DCU_MAX_OPS] = {0};
        int isz[DCU_MAX_OPS] = {0}, n = 0;
        for (int k = 0; k < p->nops; k++)
            if (!(w->scalars >> k & 1)) data[n] = p->data[k], isz[n++] = w->itemsize[k];
        piece.vec = dcu_vector_size(n, data, isz, p->numel);
        piece.ndim = 1; /* one dim of numel elements */
        dcu_divider_init(&piece.div[0], (uint32_t)p->numel);
        for (int k = 0; k < p->nops; k++)
            piece.strides[k][0] = w->scalars >> k & 1 ? 0 : (int32_t)w->itemsize[k];
    } else {
        piece.path = DCU_PATH_STRIDED;
        piece.vec = 1;
    }
    if (w->pieces == 0 && w->record) {
        w->record->path = piece.path;
        w->record->vec = piece.vec;
        w->record->ndim = piece.ndim;
    }
    w->pieces++;
    int rc = w->emit ? w->emit(&piece, w->ctx) : 0;
    if (rc && !w->status) w->status = rc > 0 ? -rc : rc;
}

static void split(walk *w, const dcu_plan_in *p) {
    if (w->status || p->numel == 0) return;
    if (dcu_fits_32bit(p, w->itemsize)) {
        emit_piece(w, p);
        return;
    }
    /* Cut the dim of greatest extent in two. */
    int best = -1;
    int64_t best_extent = -1;
    for (int d = 0; d < p->ndim; d++) {
        if (p->shape[d] < 2) continue;
        int64_t m = 1;
        for (int k = 0; k < p->nops; k++) {
            int64_t s = p->strides[k][d] < 0 ? -(int64_t)p->strides[k][d]
                                             : (int64_t)p->strides[k][d];
            if (s > m) m = s;
        }
        int64_t e = (double)m * (double)p->shape[d] > 9e18 ? INT64_MAX : m * p->shape[d];
        if (e > best_extent) best_extent = e, best = d;
    }
    if (best < 0) { /* a single element cannot exceed 32 bits but for its offsets */
        emit_piece(w, p);
        return;
    }
    dcu_plan_in half = *p;
    int64_t lo = p->shape[best] / 2;
    half.shape[best] = lo;
    half.numel = p->numel / p->shape[best] * lo;
    split(w, &half);
    half.shape[best] = p->shape[best] - lo;
    half.numel = p->numel / p->shape[best] * half.shape[best];
    for (int k = 0; k < p->nops; k++) half.data[k] = p->data[k] + lo * p->strides[k][best];
    split(w, &half);
}

int dcu_plan_launch(const dcu_plan_in *p, const int *itemsize, int cast, uint32_t scalar_mask,
                    int (*emit)(const dcu_piece *, void *), void *ctx, dcu_launch_record *record) {
    walk w = {itemsize, cast, 0, 0, scalar_mask, emit, ctx, record};
    if (record) {
        memset(record, 0, sizeof *record);
        record->numel = p->numel;
        record->vec = 1;
        record->path = DCU_PATH_STRIDED;
    }
    split(&w, p);
    if (record) record->pieces = w.pieces;
    return w.status ? w.status : w.pieces;
}
