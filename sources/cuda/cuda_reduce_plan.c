/*
 * Note [CUDA reduction plans]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The host half of a CUDA reduction (cuda_reduce.cu runs the plan). From the
 * input's shape, byte strides and the mask of reduced dims:
 *
 *   1. the kept dims and the reduced dims are put apart, each group keeping
 *      its dims' order (the output is row-major over the kept dims; the
 *      index argmax reports is row-major over the reduced dims), size-1 dims
 *      dropped, and each group coalesced (dim d merged into d+1 when
 *      stride[d] == stride[d+1] * shape[d+1]);
 *   2. the path: "inner" when the reduced elements are one contiguous run
 *      (a block or a warp per output, each thread loading 4 consecutive
 *      elements at a time, as one vector when aligned); "outer" when the
 *      innermost kept dim is contiguous (consecutive threads take
 *      consecutive outputs and each walks its reduced elements in order: the
 *      warp's loads coalesce); else "strided" (inner's thread layout, each
 *      element's offset computed from the reduced dims). A reduction of
 *      nothing (no reduced dim of size > 1: a copy) takes "outer";
 *   3. the split: few outputs with many elements each (a full sum) cut each
 *      output's reduced range into `splits` chunks of `chunk` elements, one
 *      block each, writing a partial to scratch; a second kernel combines the
 *      partials of each output in split order;
 *   4. the index math: 32-bit when every output and reduced index is below
 *      2^31 (idx64 0), else 64-bit; offsets are 64-bit always.
 *
 * Note [Deterministic CUDA reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The same input gives the same bits on every run and every GPU. There are
 * no floating-point atomics, and the order of every addition is a function
 * of the shape and strides alone, never of the SM count, the timing or the
 * stream:
 *
 *   - inner/strided: thread t of an output's tpo threads (tpo from the
 *     shape) takes, within its split's range [b, e), the groups of 4
 *     elements starting at b + 4t, b + 4t + 4 tpo, ...; element j of each
 *     group goes to its own accumulator acc[j] (0.0 to start), in order; the
 *     thread's value is (acc[0] + acc[1]) + (acc[2] + acc[3]). Whether the 4
 *     are loaded as one vector or one by one (the pointer's alignment) does
 *     not change that order. The tpo values are added by a fixed tree:
 *     v[i] += v[i + s] for s = 16, 8, 4, 2, 1 within each warp, then (tpo
 *     256) the 8 warps' results, padded with zeros to 32, by the same tree;
 *   - outer: the thread of an output adds its range's elements in order,
 *     from 0.0;
 *   - the splits (a function of nout and count: dcr_plan_make) are added in
 *     split order by one thread per output.
 *
 * dcr_emulate_sum_f32/f64 run exactly these additions on the host, so a GPU
 * test can ask for the device's bits. The order differs from the CPU's
 * pairwise sum (Note [Deterministic reductions] in reduce.c), so the two
 * agree within the documented bound, not bit for bit. max/min/argmax are
 * exact whatever the order (ties go to the lower index).
 */
#include "cuda_reduce_plan.h"

#include <stdio.h>
#include <string.h>

static int coalesce(int n, int64_t *shape, int64_t *stride) {
    int m = 0;
    for (int d = 0; d < n; d++) {
        if (m > 0 && stride[m - 1] == stride[d] * shape[d]) {
            shape[m - 1] *= shape[d];
            stride[m - 1] = stride[d];
        } else {
            shape[m] = shape[d], stride[m] = stride[d], m++;
        }
    }
    return m;
}

int dcr_plan_make(dcr_plan *p, int ndim, const int64_t *shape, const int64_t *strides,
                  uint32_t mask, int itemsize, uintptr_t data, char *err, size_t errcap) {
    memset(p, 0, sizeof *p);
    if (ndim < 0 || ndim > DCR_MAX_DIMS) {
        snprintf(err, errcap, "reduction of a %d-dim tensor: at most %d dims", ndim, DCR_MAX_DIMS);
        return -1;
    }
    p->itemsize = itemsize;
    p->nout = 1, p->count = 1;
    for (int d = 0; d < ndim; d++) {
        if (mask >> d & 1u) {
            p->count *= shape[d];
            if (shape[d] != 1) p->rshape[p->nr] = shape[d], p->rstride[p->nr++] = strides[d];
        } else {
            p->nout *= shape[d];
            if (shape[d] != 1) p->kshape[p->nk] = shape[d], p->kstride[p->nk++] = strides[d];
        }
    }
    p->nk = coalesce(p->nk, p->kshape, p->kstride);
    p->nr = coalesce(p->nr, p->rshape, p->rstride);
    p->idx64 = p->count >= ((int64_t)1 << 31) || p->nout >= ((int64_t)1 << 31);
    if (p->nr == 0) p->path = DCR_PATH_OUTER;
    else if (p->nr == 1 && p->rstride[0] == itemsize) p->path = DCR_PATH_INNER;
    else if (p->nk > 0 && p->kstride[p->nk - 1] == itemsize) p->path = DCR_PATH_OUTER;
    else p->path = DCR_PATH_STRIDED;
    p->vec = 1;
    if (p->path == DCR_PATH_OUTER) {
        p->tpo = 1;
    } else {
        p->tpo = p->count > 1024 || p->nout <= 64 ? DCR_THREADS : DCR_WARP;
        if (p->path == DCR_PATH_INNER) {
            for (int v = 4; v >= 2 && p->vec == 1; v /= 2) {
                int64_t bytes = (int64_t)v * itemsize;
                int ok = bytes <= 16 && data % (uintptr_t)bytes == 0;
                for (int d = 0; d < p->nk && ok; d++) ok = p->kstride[d] % bytes == 0;
                if (ok) p->vec = v;
            }
        }
    }
    /* the split: by nout and count alone */
    p->splits = 1, p->chunk = p->count;
    if (p->count >= 2 * DCR_SPLIT_MIN) {
        int64_t blocks = p->tpo == DCR_THREADS ? p->nout
                         : p->tpo == DCR_WARP ? (p->nout + 7) / 8 : (p->nout + DCR_THREADS - 1) / DCR_THREADS;
        int64_t want = blocks < DCR_MAX_BLOCKS ? DCR_MAX_BLOCKS / (blocks < 1 ? 1 : blocks) : 1;
        int64_t by_size = p->count / DCR_SPLIT_MIN;
        int64_t s = want < by_size ? want : by_size;
        if (s > 1) {
            int64_t q = 4 * DCR_THREADS;
            int64_t chunk = (p->count + s - 1) / s;
            chunk = (chunk + q - 1) / q * q;
            p->chunk = chunk;
            p->splits = (int)((p->count + chunk - 1) / chunk);
        }
    }
    return 0;
}

static int64_t offset_of(int n, const int64_t *shape, const int64_t *stride, int64_t i) {
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        int64_t q = i / shape[d];
        off += (i - q * shape[d]) * stride[d];
        i = q;
    }
    return off;
}

int64_t dcr_out_offset(const dcr_plan *p, int64_t o) {
    return offset_of(p->nk, p->kshape, p->kstride, o);
}

int64_t dcr_red_offset(const dcr_plan *p, int64_t r) {
    return offset_of(p->nr, p->rshape, p->rstride, r);
}

/* The device's additions (Note [Deterministic CUDA reductions]) for T. */
#define DCR_EMULATE(NAME, T)                                                                 \
    static T NAME##_tree(T *v) { /* v[0..32): v[i] += v[i + s], s = 16 .. 1 */             \
        for (int s = 16; s >= 1; s /= 2)                                                     \
            for (int i = 0; i < s; i++) v[i] = v[i] + v[i + s];                              \
        return v[0];                                                                         \
    }                                                                                        \
    static T NAME##_range(const dcr_plan *p, const char *base, int64_t b, int64_t e) {     \
        if (p->tpo == 1) {                                                                   \
            T acc = 0;                                                                       \
            for (int64_t r = b; r < e; r++) acc = acc + *(const T *)(base + dcr_red_offset(p, r)); \
            return acc;                                                                      \
        }                                                                                    \
        T w[DCR_THREADS / DCR_WARP][DCR_WARP];                                               \
        for (int t = 0; t < p->tpo; t++) {                                                   \
            T acc[4] = {0, 0, 0, 0};                                                         \
            for (int64_t g = b + 4 * (int64_t)t; g < e; g += 4 * (int64_t)p->tpo)            \
                for (int j = 0; j < 4 && g + j < e; j++)                                     \
                    acc[j] = acc[j] + *(const T *)(base + dcr_red_offset(p, g + j));         \
            w[t / DCR_WARP][t % DCR_WARP] = (acc[0] + acc[1]) + (acc[2] + acc[3]);           \
        }                                                                                    \
        if (p->tpo == DCR_WARP) return NAME##_tree(w[0]);                                    \
        T top[DCR_WARP] = {0};                                                               \
        for (int k = 0; k < DCR_THREADS / DCR_WARP; k++) top[k] = NAME##_tree(w[k]);         \
        return NAME##_tree(top);                                                             \
    }                                                                                        \
    void dcr_emulate_##NAME(const dcr_plan *p, const char *in, T *out) {                     \
        for (int64_t o = 0; o < p->nout; o++) {                                              \
            const char *base = in + dcr_out_offset(p, o);                                    \
            T acc = 0;                                                                       \
            for (int s = 0; s < p->splits; s++) {                                            \
                int64_t b = s * p->chunk, e = b + p->chunk < p->count ? b + p->chunk : p->count; \
                T part = NAME##_range(p, base, b, e);                                        \
                acc = s == 0 ? part : acc + part;                                            \
            }                                                                                \
            out[o] = p->count == 0 ? (T)0 : acc;                                             \
        }                                                                                    \
    }
DCR_EMULATE(sum_f32, float)
DCR_EMULATE(sum_f64, double)
