/* copy_, fill_, clone, contiguous and to on the host, split across the
 * pool's threads (dispatcher.h: dispatch_kernels_strided_run and the rest).
 *
 * Note [Copies across threads]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * core owns copy_'s checks and its single-threaded walk (the layers go one
 * way down: core never calls the iterator's pool). So the copies a user or an
 * operator asks for come through here: core's checks and plan
 * (dispatch_tensor_copy_prepare, dispatch_strided_plan_of), then the plan's
 * elements split in ranges of DISPATCH_ITER_GRAIN or more across the pool,
 * as the elementwise engine splits its own. A copy or cast of an element
 * depends on that element alone, so every split gives the same bits. At 256K
 * elements and 2 threads, casts took their 1-thread time (26 of 90 rows at
 * or below torch's; torch splits them) before this. */
#include "operators.h"

#include <string.h>

#include "dispatch/error.h"
#include "dispatch/strided.h"

typedef struct {
    const dispatch_strided_plan *plan;
    dispatch_loop_fn loop;
    dispatch_loop2d_fn loop2d;
    void *ctx;
} walk_job;

static void walk_range(void *arg, int64_t begin, int64_t end) {
    const walk_job *j = arg;
    dispatch_strided_plan_walk2d(j->plan, begin, end, j->loop, j->loop2d, j->ctx);
}

/* The 2-D loop of `loop` when it is the table's copy (same dtypes) or fill
 * of the operands' dtype, else NULL (a cast: Note [2-D loops]). */
static dispatch_loop2d_fn loop2d_of(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops) {
    if (nops == 1) return dispatch_loop2d_get(DISPATCH_LOOP_FILL, ops[0]->dtype, loop);
    if (nops == 2 && ops[0]->dtype == ops[1]->dtype)
        return dispatch_loop2d_get(DISPATCH_LOOP_COPY, ops[0]->dtype, loop);
    return NULL;
}

int dispatch_kernels_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops,
                                 void *ctx) {
    if (!loop) return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for this operation and dtype");
    if (ops[0]->numel == 0) return 0;
    dispatch_strided_plan p;
    dispatch_strided_plan_of(&p, nops, ops);
    walk_job j = {&p, loop, loop2d_of(loop, nops, ops), ctx};
    /* 64-element boundaries: a thread's range starts on a cache line of the
     * output wherever the output is contiguous */
    dispatch_parallel_for(p.numel, DISPATCH_ITER_GRAIN, 64, walk_range, &j);
    return 0;
}

/*
 * Note [Copies of a repeated block]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A contiguous dst written from a source broadcast along its outer dims (a
 * row copied into every row of a matrix, expand(...).contiguous()) holds one
 * block, the source's inner dims, repeated. Walked, that is one loop call per
 * row (512 rows of 512 int16: 1.9x torch's time); instead the first block is
 * copied (cast) by the walk and the rest doubled from dst itself up to 4 KiB,
 * then that span copied again and again by the table's uint8 copy (vector
 * stores on dst's lines, the span read from L1). memcpy's rep movsb on 16
 * KiB spans took 33 us to fill 2 MB (a float64 row into 512 rows), this 25
 * (torch 25). The spans go to the copy's 2-D loop, a call for each thread's
 * spans, so those past 16 MiB stream (Note [Stores past the caches] in
 * line_head.h). The bytes are those of the walk's copies.
 * One value of dst's own dtype (x.copy_(scalar tensor)) is walked instead:
 * the plan merges it into one run of the copy loop's broadcast path, a fill.
 */

/* Whether `view` (src broadcast to dst's sizes) reads one element only. */
static int is_one_element(const dispatch_tensor *dst, const dispatch_tensor *view) {
    for (int d = 0; d < dst->ndim; d++)
        if (view->strides[d] != 0 && dst->sizes[d] != 1) return 0;
    return 1;
}

/* The number of leading dims along which `view` repeats (its strides 0)
 * for a contiguous dst, 0 when the walk should run: always for a copy
 * without a cast that the pool splits, whose walk (the copy's 2-D loop on
 * each thread's rows) scales where the doubling's memcpy calls did not
 * (x.copy_(row) of (256, 512) int32 at 2 threads: 6.6 us doubled, 4.3
 * walked, torch 4.4; 1 MiB: 9.5 and 7.6, torch 6.9). */
static int repeated_dims(const dispatch_tensor *dst, const dispatch_tensor *view) {
    if (!dst->is_contiguous || dst->ndim < 2) return 0;
    if (dst->dtype == view->dtype && dispatch_get_num_threads() > 1 &&
        dst->numel >= 2 * DISPATCH_ITER_GRAIN)
        return 0;
    /* one value into every element: the walk's single fill-like run (the
     * copy loop's broadcast path) writes each line once, where a block of
     * one row doubled by memcpy took 34 us for 256K int64 against its 25 */
    if (dst->dtype == view->dtype && is_one_element(dst, view)) return 0;
    int k = 0;
    while (k < dst->ndim - 1 && (view->strides[k] == 0 || dst->sizes[k] == 1)) k++;
    int64_t reps = 1;
    for (int d = 0; d < k; d++) reps *= dst->sizes[d];
    return reps > 1 ? k : 0;
}

#define REPEAT_SPAN (4 * 1024)      /* bytes */
#define PARALLEL_BYTES (512 * 1024) /* bytes */

/* k bytes from a to o (not overlapping) by `bytes`, the table's uint8 copy:
 * its vector stores on o's lines beat memcpy's rep movsb on these spans. */
static void copy_bytes(dispatch_loop_fn bytes, char *o, const char *a, size_t k) {
    char *d[2] = {o, (char *)a};
    const intptr_t st[2] = {1, 1};
    if (bytes) bytes(d, st, (intptr_t)k, NULL);
    else memcpy(o, a, k);
}

/* Copies of dst's first `span` bytes into pieces [begin, end) of the rest:
 * the whole ones by one call of the bytes' 2-D loop (`rows`, a row a span,
 * read again and again from dst's start), the last one maybe short. */
typedef struct {
    char *base;
    size_t span, total;
    dispatch_loop_fn bytes;
    dispatch_loop2d_fn rows;
} span_job;

static void copy_spans(void *arg, int64_t begin, int64_t end) {
    const span_job *j = arg;
    int64_t whole = end; /* piece i is [span * (i + 1), span * (i + 2)) */
    if (j->span * (size_t)(end + 1) > j->total) whole = end - 1;
    if (j->rows && whole > begin) {
        char *d[2] = {j->base + j->span * (size_t)(begin + 1), j->base};
        const intptr_t st[2] = {1, 1}, outer[2] = {(intptr_t)j->span, 0};
        j->rows(d, st, outer, (intptr_t)j->span, (intptr_t)(whole - begin), NULL);
        begin = whole;
    }
    for (int64_t i = begin; i < end; i++) {
        size_t at = j->span * (size_t)(i + 1);
        copy_bytes(j->bytes, j->base + at, j->base,
                   j->span < j->total - at ? j->span : j->total - at);
    }
}

/* The first block of dst (every repeated dim at 0) copied from view's by
 * the walk, then doubled: Note [Copies of a repeated block]. */
static int copy_block_then_double(dispatch_tensor *dst, dispatch_tensor *view,
                                  dispatch_loop_fn loop, int k) {
    dispatch_tensor *block[2] = {dst, view};
    dispatch_tensor_incref(dst);
    dispatch_tensor_incref(view);
    for (int d = 0; d < k; d++) {
        for (int j = 0; j < 2; j++) {
            dispatch_tensor *inner = block[j] ? dispatch_tensor_select(block[j], 0, 0) : NULL;
            if (block[j]) dispatch_tensor_decref(block[j]);
            block[j] = inner;
        }
    }
    int rc = -1;
    if (block[0] && block[1]) {
        rc = dispatch_kernels_strided_run(loop, 2, block, NULL);
        size_t isz = dispatch_dtype_itemsize(dst->dtype);
        size_t have = (size_t)block[0]->numel * isz, total = (size_t)dst->numel * isz;
        /* doubling up to a span that stays in L1, then that span again and
         * again (across the pool's threads): each byte of dst written once,
         * the source read from cache */
        dispatch_loop_fn bytes = dispatch_loop_get(DISPATCH_LOOP_COPY, DISPATCH_UINT8);
        for (; rc == 0 && have < total && have < REPEAT_SPAN; have *= 2)
            copy_bytes(bytes, dst->data + have, dst->data,
                       have < total - have ? have : total - have);
        if (rc == 0 && have < total) {
            span_job j = {dst->data, have, total, bytes,
                          bytes ? dispatch_loop2d_get(DISPATCH_LOOP_COPY, DISPATCH_UINT8, bytes)
                                : NULL};
            int64_t pieces = (int64_t)((total - 1) / have); /* spans after the first */
            /* a thread's part at least 512 KiB: below that a memcpy is
             * faster than waking a worker (256K bytes: 3.5 us on one thread,
             * 7 on two) */
            size_t part = DISPATCH_ITER_GRAIN * isz > PARALLEL_BYTES ? DISPATCH_ITER_GRAIN * isz
                                                                     : PARALLEL_BYTES;
            int64_t grain = (int64_t)(part / have) + 1;
            dispatch_parallel_for(pieces, grain, 1, copy_spans, &j);
        }
    }
    for (int j = 0; j < 2; j++)
        if (block[j]) dispatch_tensor_decref(block[j]);
    return rc;
}

/*
 * Note [One value cast once]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x.copy_(3) copies a 0-d int64 tensor (a Python number's) into x: into
 * int64 that is a fill (the copy loop's broadcast path, Note [Fills in
 * vector stores]), into any other dtype a cast, whose loop converted the
 * one value again for every element (a row of them, then that row doubled:
 * Note [Copies of a repeated block]). A cast of one element depends on
 * that element alone, so the value is cast once, into a 0-d tensor of dst's
 * dtype, and that is copied: a fill, the same bits. From DISPATCH_ITER_GRAIN
 * elements on (below it the extra tensor costs more than the casts).
 * x.copy_(number), 1 thread, old and new build in alternating processes:
 * 16M uint8 2.0-2.2 -> 0.8-0.9 ms, float32 8.3-12.4 -> 3.2-3.5 (a fill past
 * the caches streams: Note [Stores past the caches]; NumPy 1.4-2.0 and
 * 5.5-10.3); 256K float32 27-32 -> 21-25 us (NumPy 46-53).
 */
static int is_one_value(const dispatch_tensor *dst, const dispatch_tensor *view) {
    return dst->dtype != view->dtype && dst->numel >= DISPATCH_ITER_GRAIN &&
           is_one_element(dst, view);
}

static int copy_one_value(dispatch_tensor *dst, const dispatch_tensor *view, dispatch_loop_fn cast) {
    dispatch_tensor *value = dispatch_tensor_empty(0, NULL, dst->dtype, DISPATCH_DEVICE_CPU);
    if (!value) return -1;
    char *d[2] = {value->data, view->data};
    const intptr_t st[2] = {0, 0};
    cast(d, st, 1, NULL);
    int rc = dispatch_kernels_host_copy_(dst, value); /* one dtype: the fill */
    dispatch_tensor_decref(value);
    return rc;
}

int dispatch_kernels_host_copy_(dispatch_tensor *dst, dispatch_tensor *src) {
    dispatch_tensor *view;
    dispatch_loop_fn loop;
    int work = dispatch_tensor_copy_prepare(dst, src, &view, &loop);
    if (work <= 0) return work;
    if (loop && is_one_value(dst, view)) { /* Note [One value cast once] */
        int rc = copy_one_value(dst, view, loop);
        dispatch_tensor_decref(view);
        return rc;
    }
    int k = repeated_dims(dst, view);
    int rc;
    if (k == 0) {
        dispatch_tensor *ops[2] = {dst, view};
        rc = dispatch_kernels_strided_run(loop, 2, ops, NULL);
    } else { /* Note [Copies of a repeated block] */
        rc = copy_block_then_double(dst, view, loop, k);
    }
    dispatch_tensor_decref(view);
    return rc;
}

/* A new tensor of t's sizes, dtype and device, with t's elements. */
static dispatch_tensor *copy_as(dispatch_tensor *t, int dtype) {
    dispatch_tensor *out = dispatch_tensor_empty((int)t->ndim, t->sizes, dtype, t->device);
    if (out && dispatch_kernels_copy_(out, t) < 0) {
        dispatch_tensor_decref(out);
        return NULL;
    }
    return out;
}

dispatch_tensor *dispatch_kernels_clone(dispatch_tensor *t) { return copy_as(t, t->dtype); }

dispatch_tensor *dispatch_kernels_contiguous(dispatch_tensor *t) {
    if (t->is_contiguous) return dispatch_tensor_contiguous(t); /* t itself */
    return copy_as(t, t->dtype);
}

dispatch_tensor *dispatch_kernels_to_dtype(dispatch_tensor *t, int dtype) {
    if (!dispatch_dtype_is_valid(dtype) || dtype == t->dtype)
        return dispatch_tensor_to_dtype(t, dtype); /* its TypeError, or t itself */
    return copy_as(t, dtype);
}
