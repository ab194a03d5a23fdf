/* The portable strided engine; see dispatch/strided.h. */
#include "dispatch/strided.h"

#include <string.h>

#include "dispatch/error.h"

int dispatch_strided_run(dispatch_loop_fn loop, int nops, dispatch_tensor *const *ops, void *ctx) {
    if (!loop) return dispatch_error_set(DISPATCH_ERR_TYPE, "no loop for this operation and dtype");
    const dispatch_tensor *out = ops[0];
    if (out->numel == 0) return 0;
    /* Byte strides per dim per operand, size-1 dims dropped, then adjacent
     * dims merged where every operand steps through them as one. */
    int64_t sizes[DISPATCH_MAX_DIMS];
    intptr_t strides[DISPATCH_MAX_DIMS][DISPATCH_MAX_OPERANDS];
    int nd = 0;
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1) continue;
        sizes[nd] = out->sizes[d];
        for (int k = 0; k < nops; k++)
            strides[nd][k] = (intptr_t)(ops[k]->strides[d] *
                                        (int64_t)dispatch_dtype_itemsize(ops[k]->dtype));
        if (nd > 0) {
            int merge = 1;
            for (int k = 0; k < nops && merge; k++)
                merge = strides[nd - 1][k] == strides[nd][k] * sizes[nd];
            if (merge) {
                sizes[nd - 1] *= sizes[nd];
                memcpy(strides[nd - 1], strides[nd], sizeof strides[nd]);
                continue;
            }
        }
        nd++;
    }
    char *base[DISPATCH_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) base[k] = ops[k]->data;
    if (nd == 0) {
        intptr_t zero[DISPATCH_MAX_OPERANDS] = {0};
        loop(base, zero, 1, ctx);
        return 0;
    }
    intptr_t inner = (intptr_t)sizes[nd - 1];
    int64_t index[DISPATCH_MAX_DIMS] = {0};
    char *ptrs[DISPATCH_MAX_OPERANDS];
    for (;;) {
        memcpy(ptrs, base, sizeof(char *) * (size_t)nops);
        for (int d = 0; d < nd - 1; d++)
            for (int k = 0; k < nops; k++) ptrs[k] += index[d] * strides[d][k];
        loop(ptrs, strides[nd - 1], inner, ctx);
        int d = nd - 2;
        while (d >= 0 && ++index[d] == sizes[d]) index[d--] = 0;
        if (d < 0) return 0;
    }
}
