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
 *      (a block or a warp per output, each thread loading `group`
 *      consecutive elements at a time, as vectors of up to 16 bytes when
 *      aligned: 4 float32s, 8 float16s, so a float16 sum reads as many bytes
 *      per load as a float32 one); "outer" when the innermost kept dim is
 *      contiguous (Note [Outer reductions]); else "strided" (inner's thread
 *      layout, each element's offset computed from the reduced dims). A
 *      reduction of nothing (no reduced dim of size > 1: a copy) takes
 *      "outer";
 *   3. the split: when the outputs alone cannot fill the GPU (DCR_FILL_THREADS:
 *      a constant, never the device's SM count) each output's reduced range
 *      is cut into `splits` chunks of `chunk` elements, one block each along
 *      grid y, writing a partial to scratch; the last block of each column
 *      of splits to finish combines that column's outputs, in the same
 *      launch (Note [One launch per reduction] in cuda_reduce.cuh), ctpo
 *      threads per output (a warp, or a block past 256 partials), in a tree
 *      of fixed shape;
 *   4. the index math: 32-bit when every output and reduced index is below
 *      2^31 (idx64 0), else 64-bit; offsets are 64-bit always.
 *
 * Note [Outer reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~
 * sum(dim=0) of a (8192, 8192) has 8192 outputs: a thread per output was 32
 * blocks, an eighth of an H100, each thread walking 8192 rows with a few
 * loads in flight at most (295 us, 26% of DRAM). amax(dim=0) took 3406 us
 * on the same path: read from the code, its loop (max's combine branches
 * on NaN, ties and "no value yet") leaves one 4-byte load in flight per
 * thread, and 8192 x 4 bytes per ~0.4 us of latency is the 80 GB/s that
 * 3.4 ms means; the host does nothing else for it (no sync, no copy).
 * So a block of 256 threads is tx threads across the columns times `lanes`
 * threads along the rows (tx up to 32: a warp reads 512 contiguous bytes of
 * a row), each thread takes `vec` adjacent columns as one vector load (16
 * bytes where the layout allows; columns are independent, so the width never
 * changes a sum's bits), lane y walks rows b + y, b + y + lanes, .. of its
 * split [b, e) four rows per step (four loads in flight), the lanes' values
 * meet in shared memory by a fixed tree, and the rows are split over grid y
 * until the launch fills the GPU, each lane keeping DCR_OUTER_MIN_ROWS rows
 * or more, and no more blocks than the fill (DCR_FILL_THREADS, rounded
 * down). Rounded up, as until issue 48, sum(dim=0) of (8192, 8192) float32
 * planned 576 blocks where 528 fit at once (4 an SM: ptxas gives the kernel
 * 64 registers a thread): read from the plan, a last wave of 48 blocks, one
 * on each of 48 SMs, with a 16th of an SM's loads in flight; it took 110 us
 * on an H200, torch 77. Now 1024 blocks: two nearly full waves at 4 an SM.
 * tx, lanes and the splits come from nout, count and the itemsize alone
 * (as if each thread took `cpt` columns: as many as 16 bytes hold, at most
 * 4), the vector width from the alignment only. float16 and the 8- and
 * 16-bit integers load 8 columns a thread where aligned, so they launch
 * half the blocks planned: fewer and longer. Planned as 8 a thread
 * (float16's sum(dim=0) of (8192, 8192): 1024 blocks, not 512), on an
 * H200 that sum took 164 us with the old combine where 288 blocks had taken
 * 95 (torch 46): a float16 block's own costs (its trees over 8 columns a
 * thread, its partials, its turn at the counter) weigh more than a float32
 * one's, and more blocks cost more than the fuller GPU gained.
 *
 * Note [Deterministic CUDA reductions]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The same input gives the same bits on every run and every GPU. There are
 * no floating-point atomics, and the order of every addition is a function
 * of the shape and strides alone, never of the SM count, the timing or the
 * stream:
 *
 *   - inner/strided: thread t of an output's tpo threads (tpo from the
 *     shape) takes, within its split's range [b, e), the groups of g
 *     elements (g = group: 4, or 8 for 2-byte dtypes) starting at b + g t,
 *     b + g t + g tpo, ...; element j of each group goes to its own
 *     accumulator acc[j] (0.0 to start), in order; the thread's value is
 *     the pairwise (acc[0] + acc[1]) + (acc[2] + acc[3]) (and so on for 8).
 *     Whether the g are loaded as vectors or one by one (the pointer's
 *     alignment) does not change that order. The tpo values are added by a fixed tree:
 *     v[i] += v[i + s] for s = 16, 8, 4, 2, 1 within each warp, then (tpo
 *     256) the 8 warps' results, padded with zeros to 32, by the same tree;
 *   - outer: lane y of the block adds rows b + y, b + y + lanes, .. of its
 *     split in order, from 0.0; the lanes' values are added by the tree
 *     v[y] += v[y + s] for s = lanes/2, .., 1;
 *   - the splits (a function of nout and count: dcr_plan_make) are added by
 *     the combine: thread t of an output's ctpo takes partials t, t + ctpo,
 *     .. in order, from 0.0, and the ctpo values go through the warp tree
 *     above (then the warps' tree when ctpo is 256); on the outer path ctpo
 *     is the lanes, and their values go through the lanes' tree (Note [The
 *     outer combine] in cuda_reduce.cuh, since issue 48). Since issue 38 the
 *     combine runs in the last block of each column of splits to finish
 *     (which block that is depends on the timing; the additions it does do
 *     not), not in a second kernel: Note [One launch per reduction] in
 *     cuda_reduce.cuh. That kernel has been compiled but not yet run on a
 *     GPU.
 *
 * dcr_emulate_sum_f32/f64 run exactly these additions on the host, so a GPU
 * test can ask for the device's bits. The order differs from the CPU's
 * pairwise sum (Note [Deterministic reductions] in sources/iterator/reduce_float.c), so the two
 * agree within the documented bound, not bit for bit. max/min/argmax are
 * exact whatever the order (ties go to the lower index).
 */
#include "cuda_reduce_plan.h"

#include <stdio.h>
#include <stdlib.h>
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

static int64_t pow2_ceil(int64_t n) {
    int64_t v = 1;
    while (v < n) v *= 2;
    return v;
}

static int64_t pow2_floor(int64_t n) {
    int64_t v = 1;
    while (v * 2 <= n) v *= 2;
    return v;
}

/* Widest of v = vmax, vmax/2, .., 2 elements (1 if none) such that the base
 * and every stride in strides[0..n) are multiples of v * itemsize. */
static int widest(int vmax, int itemsize, uintptr_t data, int n, const int64_t *strides) {
    for (int v = vmax; v >= 2; v /= 2) {
        int64_t bytes = (int64_t)v * itemsize;
        int ok = data % (uintptr_t)bytes == 0;
        for (int d = 0; d < n && ok; d++) ok = strides[d] % bytes == 0;
        if (ok) return v;
    }
    return 1;
}

/* Cut count into about s chunks, each a multiple of q: p->chunk, p->splits. */
static void split_into(dcr_plan *p, int64_t s, int64_t q) {
    if (s <= 1) return;
    int64_t chunk = (p->count + s - 1) / s;
    chunk = (chunk + q - 1) / q * q;
    p->chunk = chunk;
    p->splits = (int)((p->count + chunk - 1) / chunk);
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
    /* 16 bytes per load where the layout allows (8 float16s as 4 float32s) */
    int vmax = 16 / itemsize > 8 ? 8 : 16 / itemsize < 1 ? 1 : 16 / itemsize;
    p->vec = 1;
    p->splits = 1, p->chunk = p->count;
    if (p->path == DCR_PATH_OUTER) {
        p->tpo = 1;
        /* columns per thread: a vector never crosses the innermost kept dim */
        if (p->nk > 0 && p->kshape[p->nk - 1] % vmax == 0) {
            int64_t st[2 * DCR_MAX_DIMS];
            int n = 0;
            for (int d = 0; d + 1 < p->nk; d++) st[n++] = p->kstride[d];
            for (int d = 0; d < p->nr; d++) st[n++] = p->rstride[d];
            p->vec = widest(vmax, itemsize, data, n, st) == vmax ? vmax : 1;
        }
        /* The block's shape, from the shape and the dtype alone (as if cpt
         * columns per thread): up to 32 threads across the columns, the
         * rest of the block's 256 along the rows (lanes), no more lanes
         * than rows. */
        const int cpt = vmax < 4 ? vmax : 4;
        int64_t tx = pow2_ceil((p->nout + cpt - 1) / cpt);
        if (tx > DCR_WARP) tx = DCR_WARP;
        int64_t lanes = DCR_THREADS / tx, rows = pow2_floor(p->count < 1 ? 1 : p->count);
        p->lanes = (int)(lanes < rows ? lanes : rows);
        /* splits along the rows until the GPU is full, each lane walking
         * DCR_OUTER_MIN_ROWS rows or more */
        if (p->count >= 2 * (int64_t)p->lanes * DCR_OUTER_MIN_ROWS) {
            int64_t per = (int64_t)(DCR_THREADS / p->lanes) * cpt; /* columns a block */
            int64_t bx = (p->nout + per - 1) / per;
            /* at most the fill (Note [Outer reductions]: a second wave of a
             * few blocks costs as much as the first) */
            int64_t fill = DCR_FILL_THREADS / DCR_THREADS;
            int64_t want = fill / bx < 1 ? 1 : fill / bx;
            int64_t by_size = p->count / ((int64_t)p->lanes * DCR_OUTER_MIN_ROWS);
            split_into(p, want < by_size ? want : by_size, p->lanes);
        }
    } else {
        p->group = itemsize == 2 ? 8 : 4;
        p->tpo = p->count > 1024 || p->nout <= 64 ? DCR_THREADS : DCR_WARP;
        if (p->path == DCR_PATH_INNER)
            p->vec = widest(vmax < p->group ? vmax : p->group, itemsize, data, p->nk, p->kstride);
        /* the split: by nout and count alone */
        if (p->count >= 2 * DCR_SPLIT_MIN) {
            int64_t blocks = p->tpo == DCR_THREADS ? p->nout : (p->nout + 7) / 8;
            int64_t want = blocks < DCR_MAX_BLOCKS ? DCR_MAX_BLOCKS / (blocks < 1 ? 1 : blocks) : 1;
            int64_t by_size = p->count / DCR_SPLIT_MIN;
            split_into(p, want < by_size ? want : by_size, (int64_t)p->group * DCR_THREADS);
        }
    }
    /* the combine's threads per output: the outer path's lanes (Note [The
     * outer combine] in cuda_reduce.cuh), else a warp or a block */
    p->ctpo = p->splits == 1                 ? 0
              : p->path == DCR_PATH_OUTER    ? p->lanes
              : p->splits > 256              ? DCR_THREADS
                                             : DCR_WARP;
    p->launches = 1; /* a split is combined by its last block: Note [One launch per reduction] */
    return 0;
}

int64_t dcr_blocks_x(const dcr_plan *p) {
    int64_t per = p->path == DCR_PATH_OUTER ? (int64_t)(DCR_THREADS / p->lanes) * p->vec
                                            : DCR_THREADS / p->tpo;
    return (p->nout + per - 1) / per;
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
    static T NAME##_tree(T *v, int n) { /* v[0..n): v[i] += v[i + s], s = n/2 .. 1 */      \
        for (int s = n / 2; s >= 1; s /= 2)                                                  \
            for (int i = 0; i < s; i++) v[i] = v[i] + v[i + s];                              \
        return v[0];                                                                         \
    }                                                                                        \
    /* n values of n threads (32 or 256): each warp's tree, then the warps' */               \
    static T NAME##_block(T *v, int n) {                                                     \
        if (n == DCR_WARP) return NAME##_tree(v, DCR_WARP);                                  \
        T top[DCR_WARP] = {0};                                                               \
        for (int k = 0; k < n / DCR_WARP; k++) top[k] = NAME##_tree(v + k * DCR_WARP, DCR_WARP); \
        return NAME##_tree(top, DCR_WARP);                                                   \
    }                                                                                        \
    static T NAME##_at(const dcr_plan *p, const char *base, int64_t r) {                     \
        return *(const T *)(base + dcr_red_offset(p, r));                                    \
    }                                                                                        \
    static T NAME##_range(const dcr_plan *p, const char *base, int64_t b, int64_t e) {     \
        T w[DCR_THREADS];                                                                    \
        if (p->path == DCR_PATH_OUTER) { /* lanes walk rows b + y, b + y + lanes, .. */      \
            for (int y = 0; y < p->lanes; y++) {                                             \
                T acc = 0;                                                                   \
                for (int64_t r = b + y; r < e; r += p->lanes) acc = acc + NAME##_at(p, base, r); \
                w[y] = acc;                                                                  \
            }                                                                                \
            return NAME##_tree(w, p->lanes);                                                 \
        }                                                                                    \
        int g = p->group;                                                                    \
        for (int t = 0; t < p->tpo; t++) {                                                   \
            T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                             \
            for (int64_t s = b + (int64_t)g * t; s < e; s += (int64_t)g * p->tpo)            \
                for (int j = 0; j < g && s + j < e; j++)                                     \
                    acc[j] = acc[j] + NAME##_at(p, base, s + j);                             \
            for (int h = 1; h < g; h *= 2) /* (acc0 + acc1) + (acc2 + acc3), .. */           \
                for (int j = 0; j < g; j += 2 * h) acc[j] = acc[j] + acc[j + h];             \
            w[t] = acc[0];                                                                   \
        }                                                                                    \
        return NAME##_block(w, p->tpo);                                                      \
    }                                                                                        \
    void dcr_emulate_##NAME(const dcr_plan *p, const char *in, T *out) {                     \
        T *part = malloc(sizeof(T) * (size_t)p->splits);                                     \
        for (int64_t o = 0; o < p->nout; o++) {                                              \
            const char *base = in + dcr_out_offset(p, o);                                    \
            for (int s = 0; s < p->splits; s++) {                                            \
                int64_t b = s * p->chunk, e = b + p->chunk < p->count ? b + p->chunk : p->count; \
                part[s] = NAME##_range(p, base, b, e);                                       \
            }                                                                                \
            T acc = part[0];                                                                 \
            if (p->splits > 1) { /* the combine: thread t takes partials t, t + ctpo, .. */  \
                T w[DCR_THREADS];                                                            \
                for (int t = 0; t < p->ctpo; t++) {                                          \
                    w[t] = 0;                                                                \
                    for (int s = t; s < p->splits; s += p->ctpo) w[t] = w[t] + part[s];      \
                }                                                                            \
                acc = p->path == DCR_PATH_OUTER ? NAME##_tree(w, p->ctpo) /* the lanes' tree */ \
                                                : NAME##_block(w, p->ctpo);                  \
            }                                                                                \
            out[o] = p->count == 0 ? (T)0 : acc;                                             \
        }                                                                                    \
        free(part);                                                                          \
    }
DCR_EMULATE(sum_f32, float)
DCR_EMULATE(sum_f64, double)
