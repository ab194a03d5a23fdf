/* The loop table of loops.h. */
#include "dispatch/loops.h"

#include <stdatomic.h>

#include "dispatch/dtype.h"
#include "loops_internal.h"

/*
 * Note [Loop table]
 * ~~~~~~~~~~~~~~~~~
 * One atomic function pointer per (loop, dtype), initialised lazily from the
 * reference table so that no static initializer runs code. The kernels issue
 * overwrites slots at load (after the CPU dispatch has chosen its targets);
 * operators read the slot on every call with a relaxed atomic load, which on
 * x86 is a plain move: the indirection costs one load, and a replacement is
 * seen by the next call without any lock.
 */
static _Atomic(dispatch_loop_fn) table[DISPATCH_NUM_DTYPES][DISPATCH_NUM_LOOPS];
static atomic_int initialized;

static void ensure_init(void) {
    if (atomic_load_explicit(&initialized, memory_order_acquire)) return;
    /* Racing initialisers store the same values: harmless. Only fill slots
     * that nobody registered yet (compare-exchange from NULL). */
    for (int d = 0; d < DISPATCH_NUM_DTYPES; d++) {
        for (int l = 0; l < DISPATCH_NUM_LOOPS; l++) {
            dispatch_loop_fn expected = NULL;
            atomic_compare_exchange_strong(&table[d][l], &expected, dispatch_reference_loops[d][l]);
        }
    }
    atomic_store_explicit(&initialized, 1, memory_order_release);
}

/* The facts of each loop, from the one table (Note [One table] in loops.h). */
static const struct {
    const char *name;
    int nin, ctx;
    unsigned bool_operands;
} info[DISPATCH_NUM_LOOPS] = {
#define LOOP_INFO_(NAME, name, nin, ctx, bools) [DISPATCH_LOOP_##NAME] = {#name, nin, ctx, bools},
    DISPATCH_FORALL_LOOPS(LOOP_INFO_)
#undef LOOP_INFO_
};

static int in_range(int loop) { return loop >= 0 && loop < DISPATCH_NUM_LOOPS; }

int dispatch_loop_nin(int loop) { return in_range(loop) ? info[loop].nin : -1; }

const char *dispatch_loop_name(int loop) { return in_range(loop) ? info[loop].name : "?"; }

int dispatch_loop_ctx_kind(int loop) { return in_range(loop) ? info[loop].ctx : -1; }

int dispatch_loop_operand_dtype(int loop, int k, int dtype) {
    if (in_range(loop) && k >= 0 && k < 8 && (info[loop].bool_operands >> k & 1u))
        return DISPATCH_BOOL;
    return dtype;
}

static int valid(int loop, int dtype) {
    return loop >= 0 && loop < DISPATCH_NUM_LOOPS && dispatch_dtype_is_valid(dtype);
}

dispatch_loop_fn dispatch_loop_get(int loop, int dtype) {
    if (!valid(loop, dtype)) return NULL;
    ensure_init();
    return atomic_load_explicit(&table[dtype][loop], memory_order_relaxed);
}

/* The 2-D loops (Note [2-D loops] in loops.h) and the 1-D loop each
 * was registered with: a reader takes the form only while its owner is the
 * loop it runs. A register clears the owner before it writes the form, so a
 * reader racing it sees no form or the new pair, never a mixed one (a loop
 * is always registered with the same form). */
static _Atomic(dispatch_loop2d_fn) table2d[DISPATCH_NUM_DTYPES][DISPATCH_NUM_LOOPS];
static _Atomic(dispatch_loop_fn) owner2d[DISPATCH_NUM_DTYPES][DISPATCH_NUM_LOOPS];

dispatch_loop_fn dispatch_loop_register2d(int loop, int dtype, dispatch_loop_fn fn,
                                          dispatch_loop2d_fn fn2d) {
    if (!valid(loop, dtype)) return NULL;
    ensure_init();
    atomic_store(&owner2d[dtype][loop], NULL);
    atomic_store(&table2d[dtype][loop], fn2d);
    if (fn2d) atomic_store(&owner2d[dtype][loop], fn);
    return atomic_exchange(&table[dtype][loop], fn);
}

dispatch_loop_fn dispatch_loop_register(int loop, int dtype, dispatch_loop_fn fn) {
    return dispatch_loop_register2d(loop, dtype, fn, NULL);
}

dispatch_loop2d_fn dispatch_loop2d_get(int loop, int dtype, dispatch_loop_fn fn) {
    if (!valid(loop, dtype) || fn == NULL) return NULL;
    if (atomic_load(&owner2d[dtype][loop]) != fn) return NULL;
    dispatch_loop2d_fn fn2d = atomic_load(&table2d[dtype][loop]);
    return atomic_load(&owner2d[dtype][loop]) == fn ? fn2d : NULL;
}

dispatch_loop_fn dispatch_loop_reference(int loop, int dtype) {
    return valid(loop, dtype) ? dispatch_reference_loops[dtype][loop] : NULL;
}

int dispatch_loop_supported(int loop, int dtype) { return dispatch_loop_reference(loop, dtype) != NULL; }

/* Casts: the reference loops, and slots the kernels replace for the pairs
 * they have SIMD variants of (float16 <-> float32), as the loop table. */
static _Atomic(dispatch_loop_fn) casts[DISPATCH_NUM_DTYPES][DISPATCH_NUM_DTYPES];

dispatch_loop_fn dispatch_cast_loop_get(int from, int to) {
    if (!dispatch_dtype_is_valid(from) || !dispatch_dtype_is_valid(to)) return NULL;
    dispatch_loop_fn fn = atomic_load_explicit(&casts[from][to], memory_order_relaxed);
    return fn ? fn : dispatch_reference_casts[from][to];
}

dispatch_loop_fn dispatch_cast_loop_register(int from, int to, dispatch_loop_fn fn) {
    if (!dispatch_dtype_is_valid(from) || !dispatch_dtype_is_valid(to)) return NULL;
    dispatch_loop_fn old = atomic_exchange(&casts[from][to], fn);
    return old ? old : dispatch_reference_casts[from][to];
}

dispatch_loop_fn dispatch_cast_loop_reference(int from, int to) {
    if (!dispatch_dtype_is_valid(from) || !dispatch_dtype_is_valid(to)) return NULL;
    return dispatch_reference_casts[from][to];
}
