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
static _Atomic(dispatch_loop_fn) casts[DISPATCH_NUM_DTYPES][DISPATCH_NUM_DTYPES];
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
        for (int e = 0; e < DISPATCH_NUM_DTYPES; e++) {
            dispatch_loop_fn expected = NULL;
            atomic_compare_exchange_strong(&casts[d][e], &expected, dispatch_reference_casts[d][e]);
        }
    }
    atomic_store_explicit(&initialized, 1, memory_order_release);
}

static const int nin[DISPATCH_NUM_LOOPS] = {
    [DISPATCH_LOOP_ADD] = 2, [DISPATCH_LOOP_SUB] = 2, [DISPATCH_LOOP_MUL] = 2,
    [DISPATCH_LOOP_DIV] = 2, [DISPATCH_LOOP_MAXIMUM] = 2, [DISPATCH_LOOP_MINIMUM] = 2,
    [DISPATCH_LOOP_EQ] = 2, [DISPATCH_LOOP_NE] = 2, [DISPATCH_LOOP_LT] = 2,
    [DISPATCH_LOOP_LE] = 2, [DISPATCH_LOOP_GT] = 2, [DISPATCH_LOOP_GE] = 2,
    [DISPATCH_LOOP_NEG] = 1, [DISPATCH_LOOP_ABS] = 1, [DISPATCH_LOOP_SQRT] = 1,
    [DISPATCH_LOOP_EXP] = 1, [DISPATCH_LOOP_LOG] = 1, [DISPATCH_LOOP_COPY] = 1,
    [DISPATCH_LOOP_ADDCMUL] = 3, [DISPATCH_LOOP_WHERE] = 3, [DISPATCH_LOOP_FILL] = 0,
};

static const char *const names[DISPATCH_NUM_LOOPS] = {
    "add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "neg", "abs", "sqrt", "exp", "log", "copy", "addcmul", "where", "fill",
};

int dispatch_loop_nin(int loop) { return loop >= 0 && loop < DISPATCH_NUM_LOOPS ? nin[loop] : -1; }

const char *dispatch_loop_name(int loop) {
    return loop >= 0 && loop < DISPATCH_NUM_LOOPS ? names[loop] : "?";
}

int dispatch_loop_operand_dtype(int loop, int k, int dtype) {
    if (k == 0 && loop >= DISPATCH_LOOP_EQ && loop <= DISPATCH_LOOP_GE) return DISPATCH_BOOL;
    if (k == 1 && loop == DISPATCH_LOOP_WHERE) return DISPATCH_BOOL;
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

dispatch_loop_fn dispatch_loop_register(int loop, int dtype, dispatch_loop_fn fn) {
    if (!valid(loop, dtype)) return NULL;
    ensure_init();
    return atomic_exchange(&table[dtype][loop], fn);
}

dispatch_loop_fn dispatch_loop_reference(int loop, int dtype) {
    return valid(loop, dtype) ? dispatch_reference_loops[dtype][loop] : NULL;
}

dispatch_loop_fn dispatch_cast_loop_get(int from, int to) {
    if (!dispatch_dtype_is_valid(from) || !dispatch_dtype_is_valid(to)) return NULL;
    ensure_init();
    return atomic_load_explicit(&casts[from][to], memory_order_relaxed);
}

dispatch_loop_fn dispatch_cast_loop_register(int from, int to, dispatch_loop_fn fn) {
    if (!dispatch_dtype_is_valid(from) || !dispatch_dtype_is_valid(to)) return NULL;
    ensure_init();
    return atomic_exchange(&casts[from][to], fn);
}
