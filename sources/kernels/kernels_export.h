/*
 * What a dispatchable kernel source exports: its table of kernels, one table
 * per compiled target, and (in its baseline compile) the chooser that picks
 * this CPU's table. kernels_chooser.c walks the chosen tables.
 *
 * Note [Exported kernel tables]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Each X.dispatch.c ends with its table, written once and compiled once per
 * target (the entries name this target's variants through
 * DISPATCH_CPU_DISPATCH_CURFX), and the four lines that choose among them
 * (a source without `baseline` in its @targets has no chooser to offer: it
 * cannot be one of loop_kernel_sources):
 *
 *   #include "kernels_export.h"
 *   DISPATCH_KERNELS_EXPORT(arith,
 *       DISPATCH_KERNELS_LOOP(ADD, FLOAT32, dispatch_kernel_add_f32)
 *       DISPATCH_KERNELS_REDUCE(SUM, FLOAT32, dispatch_kernel_sum_f32, 1)
 *   )
 *   #if DISPATCH_CPU_TARGET_IS_BASELINE
 *   #include "arith.dispatch.h"
 *   DISPATCH_KERNELS_CHOOSER(arith)
 *   #endif
 *
 * A LOOP entry fills the (loop, dtype) slot of loops.h's table, a
 * LOOP_WITH_2D entry the same slot and the loop's 2-D loop beside it (Note
 * [2-D loops] in loops.h: DISPATCH_KERNELS_LOOP2D writes one for any loop,
 * DISPATCH_KERNELS_LOOP2D_WITH one that inlines its common layouts per
 * row); a CAST entry
 * the (from, to) slot of its cast table; a REDUCE
 * entry the (kind, dtype) slot of the reduction engine's kernel table
 * (dispatch/reduce_kernel_table.h: the sums, rows, columns, extremes and integer
 * folds); a NAMED entry is one of the few other kernels with a signature
 * of their own (the triad, float16 by a float scalar:
 * DISPATCH_KERNELS_FORALL_NAMED below), which kernels.h's functions call;
 * the float16 <-> float32 casts are named too, and the chooser puts them in
 * the cast table of loops.h. The chooser (in the baseline compile,
 * where the generated X.dispatch.h says which targets exist) picks the
 * highest target this CPU runs, records every traced entry with
 * DISPATCH_CPU_DISPATCH_TRACE, and returns the table and the target's name.
 * The list of sources is meson's `loop_kernel_sources` (sources/kernels/
 * meson.build), written into the generated kernels_sources.h.
 *
 * Why exported tables and not a chooser generated from operators.toml: which
 * (loop, dtype) pairs a source implements is a fact of the source, so it is
 * written there, beside the kernels, as Highway's HWY_EXPORT and PyTorch's
 * REGISTER_DISPATCH do; the table needs no generator that knows the kernels'
 * function names, and a kernel added to a source is one line in that
 * source's table. Nothing else lists kernels by hand.
 */
#ifndef DISPATCH_KERNELS_EXPORT_H_
#define DISPATCH_KERNELS_EXPORT_H_

#include <stddef.h>

#include "dispatch/cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"
#include "dispatch/dtype.h"
#include "dispatch/loops.h"
#include "dispatch/reduce_kernel_table.h"

/* The kernels with signatures of their own, by the name kernels.h's
 * functions find them under (the float16 scalar loops in order mul, div,
 * rdiv: dispatch_kernels_half_scalar_loop's `which`). Reductions are not
 * here: they are REDUCE entries of the engine's table. */
#define DISPATCH_KERNELS_FORALL_NAMED(X)                                                   \
    X(TRIAD_F64) X(HALF_MUL_F32SCALAR) X(HALF_DIV_F32SCALAR) X(HALF_RDIV_F32SCALAR)        \
    X(CAST_F16_F32) X(CAST_F32_F16)

enum dispatch_kernels_named {
#define DISPATCH_KERNELS_NAMED_ENUM_(N) DISPATCH_KNAMED_##N,
    DISPATCH_KERNELS_FORALL_NAMED(DISPATCH_KERNELS_NAMED_ENUM_)
#undef DISPATCH_KERNELS_NAMED_ENUM_
    DISPATCH_KERNELS_NUM_NAMED
};

/* Any kernel, stored as this type and cast back to its own before a call. */
typedef void (*dispatch_kernel_any_fn)(void);

typedef struct dispatch_kernel_export {
    int loop;    /* DISPATCH_LOOP_*, or -1 for a named kernel, -2 for a reduction's, -3 a cast's */
    int dtype;   /* DISPATCH_* of the loop or reduction (a cast's source), -1 for a named kernel */
    int named;   /* DISPATCH_KNAMED_*, DISPATCH_RK_* for a reduction, a cast's target, or -1 */
    int trace;   /* 1: recorded in the dispatch trace under `name` */
    const char *name; /* the function's name, without the target suffix */
    dispatch_kernel_any_fn fn; /* NULL ends a table */
    dispatch_kernel_any_fn fn2d; /* a LOOP's 2-D loop (Note [2-D loops]), or NULL */
} dispatch_kernel_export;

#define DISPATCH_KERNELS_LOOP(LOOP, DTYPE, FN)                                             \
    {DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE, -1, 1, #FN,                                   \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN), NULL},
/* The same, not recorded in the dispatch trace: for the generated sources'
 * hundreds of entries, which trace one name per source (loop_paths.h). */
#define DISPATCH_KERNELS_LOOP_UNTRACED(LOOP, DTYPE, FN)                                    \
    {DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE, -1, 0, #FN,                                   \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN), NULL},
/* A LOOP entry with its 2-D loop FN##_2d (DISPATCH_KERNELS_LOOP2D below). */
#define DISPATCH_KERNELS_LOOP_WITH_2D(LOOP, DTYPE, FN, TRACE)                              \
    {DISPATCH_LOOP_##LOOP, DISPATCH_##DTYPE, -1, TRACE, #FN,                               \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN),                              \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN##_2d)},
/* FN##_2d, the 2-D loop of the loop FN of NOPS operands (Note [2-D loops]
 * in loops.h), stepping the pointers itself instead of the walk: per row,
 * ROW(data, s, n, ctx), an inlined path that runs the row where it can
 * (nonzero) and leaves it to one direct call of FN where not (0). Write it
 * after FN's definition, in the same source, and declare FN with
 * DISPATCH_KERNELS_NOINLINE where it has layouts ROW does not take:
 * inlined here, every layout's loop of FN was compiled twice (the generated
 * sources' build time doubled), for a call per row saved.
 * DISPATCH_KERNELS_LOOP2D is the one with no inlined path. */
#if defined(__GNUC__) || defined(__clang__)
#define DISPATCH_KERNELS_NOINLINE __attribute__((noinline))
#else
#define DISPATCH_KERNELS_NOINLINE
#endif
#define DISPATCH_KERNELS_LOOP2D_WITH(FN, NOPS, ROW) \
    DISPATCH_KERNELS_LOOP2D_ELSE_(FN, NOPS, ROW, DISPATCH_CPU_DISPATCH_CURFX(FN))
/* FN##_2d, where a row ROW does not take is a call of ELSE */
#define DISPATCH_KERNELS_LOOP2D_ELSE_(FN, NOPS, ROW, ELSE)                                 \
    void DISPATCH_CPU_DISPATCH_CURFX(FN##_2d)(char **data, const intptr_t *s,              \
                                              const intptr_t *outer, intptr_t n,           \
                                              intptr_t rows, void *ctx);                   \
    void DISPATCH_CPU_DISPATCH_CURFX(FN##_2d)(char **data, const intptr_t *s,              \
                                              const intptr_t *outer, intptr_t n,           \
                                              intptr_t rows, void *ctx)                    \
    {                                                                                      \
        char *d_[NOPS];                                                                    \
        for (int k_ = 0; k_ < (NOPS); k_++) d_[k_] = data[k_];                             \
        for (intptr_t r_ = 0; r_ < rows; r_++) {                                           \
            if (!ROW(d_, s, n, ctx)) ELSE(d_, s, n, ctx);                                  \
            for (int k_ = 0; k_ < (NOPS); k_++) d_[k_] += outer[k_];                       \
        }                                                                                  \
    }
#define DISPATCH_KERNELS_NO_ROW(data, s, n, ctx) 0
/* FN##_2d as above, where a row ROW does not take is a call of REST (a
 * static noinline function of FN's arguments), and FN that 2-D loop of one
 * row: ROW's paths are compiled once, not in FN and again in FN##_2d
 * (Note [Unit paths compiled once] in loop_paths.h). NO_REST is the REST
 * of a ROW that takes every layout. */
#define DISPATCH_KERNELS_NO_REST(data, s, n, ctx) ((void)0)
#define DISPATCH_KERNELS_LOOP2D_ROWS(FN, NOPS, ROW, REST)                                  \
    DISPATCH_KERNELS_NOINLINE /* FN calls it */                                            \
    DISPATCH_KERNELS_LOOP2D_ELSE_(FN, NOPS, ROW, REST)                                     \
    void DISPATCH_CPU_DISPATCH_CURFX(FN)(char **data, const intptr_t *s, intptr_t n,       \
                                         void *ctx);                                       \
    void DISPATCH_CPU_DISPATCH_CURFX(FN)(char **data, const intptr_t *s, intptr_t n,       \
                                         void *ctx)                                        \
    {                                                                                      \
        static const intptr_t none_[NOPS];                                                 \
        DISPATCH_CPU_DISPATCH_CURFX(FN##_2d)(data, s, none_, n, 1, ctx);                   \
    }
#define DISPATCH_KERNELS_LOOP2D(FN, NOPS)                                                  \
    DISPATCH_KERNELS_LOOP2D_WITH(FN, NOPS, DISPATCH_KERNELS_NO_ROW)
#define DISPATCH_KERNELS_NAMED(NAMED, FN, TRACE)                                           \
    {-1, -1, DISPATCH_KNAMED_##NAMED, TRACE, #FN,                                          \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN), NULL},

#define DISPATCH_KERNELS_REDUCE_ENTRY (-2)
#define DISPATCH_KERNELS_REDUCE(KIND, DTYPE, FN, TRACE)                                    \
    {DISPATCH_KERNELS_REDUCE_ENTRY, DISPATCH_##DTYPE, DISPATCH_RK_##KIND, TRACE, #FN,      \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN), NULL},

#define DISPATCH_KERNELS_CAST_ENTRY (-3)
#define DISPATCH_KERNELS_CAST(FROM, TO, FN, TRACE)                                         \
    {DISPATCH_KERNELS_CAST_ENTRY, DISPATCH_##FROM, DISPATCH_##TO, TRACE, #FN,              \
     (dispatch_kernel_any_fn)DISPATCH_CPU_DISPATCH_CURFX(FN), NULL},

/* Every compiled target's table of one source that this CPU runs (highest
 * first, the baseline last), for the tests that compare each target with the
 * reference loops (test_loops_targets.c), not only the chosen one. */
typedef struct dispatch_kernel_tables {
    int count;
    const char *target[16];
    const dispatch_kernel_export *table[16];
} dispatch_kernel_tables;

/* The table of SOURCE for the target being compiled, and the function that
 * appends it to a dispatch_kernel_tables. */
#define DISPATCH_KERNELS_EXPORT(SOURCE, ...)                                               \
    const dispatch_kernel_export *DISPATCH_CPU_DISPATCH_CURFX(                             \
        dispatch_kernels_export_##SOURCE)(void);                                           \
    const dispatch_kernel_export *DISPATCH_CPU_DISPATCH_CURFX(                             \
        dispatch_kernels_export_##SOURCE)(void)                                            \
    {                                                                                      \
        static const dispatch_kernel_export table[] = {                                    \
            __VA_ARGS__ {-1, -1, -1, 0, NULL, NULL, NULL}};                                      \
        return table;                                                                      \
    }                                                                                      \
    void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernels_collect_##SOURCE)(                   \
        dispatch_kernel_tables *all);                                                      \
    void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernels_collect_##SOURCE)(                   \
        dispatch_kernel_tables *all)                                                       \
    {                                                                                      \
        if (all->count >= 16) return;                                                      \
        all->target[all->count] = DISPATCH_CPU_DISPATCH_CURRENT_NAME;                      \
        all->table[all->count++] = DISPATCH_CPU_DISPATCH_CURFX(                            \
            dispatch_kernels_export_##SOURCE)();                                           \
    }

/* The chooser of SOURCE: the table of the highest target the CPU runs (in
 * *table), each traced entry recorded; returns the target's name. Expand it
 * in the baseline compile, right after including SOURCE's X.dispatch.h. */
typedef const char *(*dispatch_kernels_chooser)(const dispatch_kernel_export **table);
typedef void (*dispatch_kernels_collector)(dispatch_kernel_tables *all);
#define DISPATCH_KERNELS_CHOOSER(SOURCE)                                                   \
    DISPATCH_CPU_DISPATCH_DECLARE(const dispatch_kernel_export *dispatch_kernels_export_##SOURCE, \
                                  (void))                                                  \
    DISPATCH_CPU_DISPATCH_DECLARE(void dispatch_kernels_collect_##SOURCE,                  \
                                  (dispatch_kernel_tables *all))                           \
    void dispatch_kernels_all_##SOURCE(dispatch_kernel_tables *all);                       \
    void dispatch_kernels_all_##SOURCE(dispatch_kernel_tables *all)                        \
    {                                                                                      \
        all->count = 0;                                                                    \
        DISPATCH_CPU_DISPATCH_CALL_ALL(dispatch_kernels_collect_##SOURCE, (all));          \
    }                                                                                      \
    const char *dispatch_kernels_choose_##SOURCE(const dispatch_kernel_export **table);    \
    const char *dispatch_kernels_choose_##SOURCE(const dispatch_kernel_export **table)     \
    {                                                                                      \
        const dispatch_kernel_export *t =                                                  \
            DISPATCH_CPU_DISPATCH_CALL(dispatch_kernels_export_##SOURCE, ());              \
        for (const dispatch_kernel_export *e = t; e->fn != NULL; e++)                      \
            if (e->trace) DISPATCH_CPU_DISPATCH_TRACE(e->name);                            \
        *table = t;                                                                        \
        return DISPATCH_CPU_DISPATCH_INFO();                                               \
    }

/* Every table of source i (kernels_sources.h's order) that this CPU runs,
 * into *all; returns their count, or -1 past the last source (kernels_chooser.c). */
int dispatch_kernels_target_tables(int i, dispatch_kernel_tables *all);

#endif /* DISPATCH_KERNELS_EXPORT_H_ */
