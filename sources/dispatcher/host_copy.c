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

#include "dispatch/error.h"
#include "dispatch/strided.h"

typedef struct {
    const dispatch_strided_plan *plan;
    dispatch_loop_fn loop;
    void *ctx;
} walk_job;

static void walk_range(void *arg, int64_t begin, int64_t end) {
    const walk_job *j = arg;
    dispatch_strided_plan_walk(j->plan, begin, end, j->loop, j->ctx);
}

int dispatch_kernels_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops,
                                 void *ctx) {
    if (!loop) return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for this operation and dtype");
    if (ops[0]->numel == 0) return 0;
    dispatch_strided_plan p;
    dispatch_strided_plan_of(&p, nops, ops);
    walk_job j = {&p, loop, ctx};
    /* 64-element boundaries: a thread's range starts on a cache line of the
     * output wherever the output is contiguous */
    dispatch_parallel_for(p.numel, DISPATCH_ITER_GRAIN, 64, walk_range, &j);
    return 0;
}

int dispatch_kernels_host_copy_(dispatch_tensor *dst, dispatch_tensor *src) {
    dispatch_tensor *view;
    dispatch_loop_fn loop;
    int work = dispatch_tensor_copy_prepare(dst, src, &view, &loop);
    if (work <= 0) return work;
    dispatch_tensor *ops[2] = {dst, view};
    int rc = dispatch_kernels_strided_run(loop, 2, ops, NULL);
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
    if (t->is_contiguous) {
        dispatch_tensor_incref(t);
        return t;
    }
    return copy_as(t, t->dtype);
}

dispatch_tensor *dispatch_kernels_to_dtype(dispatch_tensor *t, int dtype) {
    if (!dispatch_dtype_is_valid(dtype)) {
        dispatch_error_set(DISPATCH_ERR_TYPE, "invalid dtype %d", dtype);
        return NULL;
    }
    if (dtype == t->dtype) {
        dispatch_tensor_incref(t);
        return t;
    }
    return copy_as(t, dtype);
}
