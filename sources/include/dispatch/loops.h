/*
 * The inner-loop interface between the operators (sources/dispatcher) and the
 * elementwise engine + SIMD kernels (sources/iterator, sources/kernels).
 *
 * A loop runs one operation on n elements of one dtype:
 *
 *   void loop(char **data, const intptr_t *byte_strides, intptr_t n, void *ctx);
 *
 *   data[0]          the output, data[1..nin] the inputs (outputs first, as in
 *                    PyTorch's TensorIterator);
 *   byte_strides[i]  the step of operand i in bytes (0 for a broadcast operand);
 *   ctx              per-call extra data, described per loop in the table (the
 *                    doc of each [[loop]] of operators.toml), else NULL.
 *
 * Operands all have the loop's dtype except where noted (comparisons write
 * bool; WHERE reads a bool condition). Integer arithmetic wraps (two's
 * complement) and never traps; floats follow IEEE (maximum/minimum propagate
 * NaN).
 *
 * Every (loop, dtype) slot starts with the portable strided loop of
 * sources/core/cpu_loops_reference.c. A faster implementation replaces one
 * with dispatch_loop_register() (e.g. once, at load, with the SIMD variant
 * the CPU dispatch chose); operators look the pointer up per call, so the
 * replacement takes effect at once. See Note [Loop table] in
 * sources/core/loops.c.
 */
#ifndef DISPATCH_LOOPS_H_
#define DISPATCH_LOOPS_H_

#include <stdint.h>

typedef void (*dispatch_loop_fn)(char **data, const intptr_t *byte_strides, intptr_t n, void *ctx);

/*
 * Note [2-D loops]
 * ~~~~~~~~~~~~~~~~
 * A loop's 2-D loop runs `rows` runs of n elements, run r being the loop on
 * data[k] + r * outer_strides[k] with the inner strides byte_strides[k]:
 *
 *   for (r = 0; r < rows; r++) loop(data + r * outer_strides, byte_strides, n, ctx);
 *
 * and gives exactly those bits. A plan whose inner dim is short (a (512, 512)
 * tensor with a broadcast row or column: 512 runs of 512) otherwise pays the
 * walk's index arithmetic, an indirect call and the loop's layout checks per
 * run, about 8 ns each on a Zen 4: as much as the run itself for rows of 64
 * bytes. A 2-D loop steps its pointers in registers and runs its 1-D loop's
 * body per row (PyTorch's loop2d has this shape). It is registered with the
 * 1-D loop it belongs to and found only with it (dispatch_loop2d_get), so a
 * loop registered without one never runs beside another's 2-D loop;
 * dispatch_strided_plan_walk2d (strided.h) gives it every whole row of a
 * range, the 1-D loop a partial first or last row.
 */
typedef void (*dispatch_loop2d_fn)(char **data, const intptr_t *byte_strides,
                                   const intptr_t *outer_strides, intptr_t n, intptr_t rows,
                                   void *ctx);

/*
 * Note [One table]
 * ~~~~~~~~~~~~~~~~
 * The loops are declared once, as `[[loop]]` entries of
 * sources/dispatcher/operators.toml, beside the operators that run them.
 * tools/opgen.py turns them into the X-macro DISPATCH_FORALL_LOOPS(X) of the
 * generated dispatch/_loops.h (written into the build tree beside
 * dispatch/_cpu_dispatch.h by sources/include/dispatch/meson.build), and
 * everything that lists loops expands it: the enum below, the names, input counts and ctx kinds of
 * loops.c, the reference loops of cpu_loops_reference.c. Python reads the ids
 * from C (dispatch/_tables.py), so an entry inserted anywhere renumbers every
 * side at once, and tests/test_tables_agree.py checks that they agree.
 *
 * Why the TOML table and not a hand-written X-macro header: an operator and
 * its loop are one change (docs/contributing.md, "Adding an operator"), so
 * they are one file; the generator validates the entry (a bad nin or ctx is
 * an error naming its line, not a compile error somewhere else); and the
 * table stays data, readable by tools without a C preprocessor.
 */
#include "dispatch/_loops.h" /* generated: DISPATCH_FORALL_LOOPS(X) */

/* What a loop reads from ctx. */
typedef enum dispatch_loop_ctx {
    DISPATCH_LOOP_CTX_NONE = 0,     /* nothing: ctx is ignored */
    DISPATCH_LOOP_CTX_OPTIONAL = 1, /* a scalar; NULL means its default (alpha: 1) */
    DISPATCH_LOOP_CTX_REQUIRED = 2, /* a scalar, const T * (value) */
} dispatch_loop_ctx;

typedef enum dispatch_loop_id {
#define DISPATCH_LOOP_ENUM_(NAME, name, nin, ctx, bools) DISPATCH_LOOP_##NAME,
    DISPATCH_FORALL_LOOPS(DISPATCH_LOOP_ENUM_)
#undef DISPATCH_LOOP_ENUM_
    DISPATCH_NUM_LOOPS,
} dispatch_loop_id;

/* Number of inputs of a loop (ADD: 2, NEG: 1, ADDCMUL: 3, WHERE: 3, FILL: 0); -1
 * out of range. */
int dispatch_loop_nin(int loop);
const char *dispatch_loop_name(int loop); /* "add"; "?" out of range */
/* What the loop reads from ctx (dispatch_loop_ctx); -1 out of range. */
int dispatch_loop_ctx_kind(int loop);
/* The dtype of operand k (0 = output) of `loop` run for `dtype`: bool for the
 * table's bool_operands (a comparison's output, WHERE's condition), else dtype
 * itself. */
int dispatch_loop_operand_dtype(int loop, int k, int dtype);

/* The loop for (loop, dtype), or NULL when the pair is not supported (e.g.
 * SQRT on int32, NEG on bool). */
dispatch_loop_fn dispatch_loop_get(int loop, int dtype);
/* Replace the loop for (loop, dtype); returns the previous one. Thread-safe. */
dispatch_loop_fn dispatch_loop_register(int loop, int dtype, dispatch_loop_fn fn);
/* Replace the loop for (loop, dtype) by fn and its 2-D loop fn2d (NULL:
 * none; Note [2-D loops]); returns the previous 1-D loop. */
dispatch_loop_fn dispatch_loop_register2d(int loop, int dtype, dispatch_loop_fn fn,
                                          dispatch_loop2d_fn fn2d);
/* The 2-D loop registered with the pair's loop `fn` (what
 * dispatch_loop_get returned), or NULL: none, or fn is no longer the pair's. */
dispatch_loop2d_fn dispatch_loop2d_get(int loop, int dtype, dispatch_loop_fn fn);
/* The portable reference loop of the pair (what dispatch_loop_get returns
 * until someone registers another); NULL when unsupported. */
dispatch_loop_fn dispatch_loop_reference(int loop, int dtype);
/* 1 when the pair has a loop (a reference one), else 0. */
int dispatch_loop_supported(int loop, int dtype);

/* Cast loops: data[0] is dst (dtype `to`), data[1] is src (dtype `from`).
 * Float -> integer of an out-of-range value gives an unspecified value, not UB. */
dispatch_loop_fn dispatch_cast_loop_get(int from, int to);
/* Replace the cast loop of (from, to) (NULL: back to the reference); returns
 * the previous one. Thread-safe. */
dispatch_loop_fn dispatch_cast_loop_register(int from, int to, dispatch_loop_fn fn);
/* The portable reference cast (the truth every registered cast gives the bits of). */
dispatch_loop_fn dispatch_cast_loop_reference(int from, int to);

#endif /* DISPATCH_LOOPS_H_ */
