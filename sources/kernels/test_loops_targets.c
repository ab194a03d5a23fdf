/*
 * Every compiled target of every loop kernel source, against the reference
 * loops and casts: each (loop, dtype) entry and each cast of each target
 * table this CPU runs (not only the chosen one: dispatch_kernels_target_tables),
 * on contiguous, broadcast-operand, strided (compare's layouts) and in-place layouts, lengths
 * around every vector width and chunk, random bits and special values.
 * Results must be the reference's bits; a float result may be any NaN where
 * the reference's is a NaN (a signalling NaN's quiet bit, or which NaN
 * operand's payload wins, is not part of the contract); the exp family
 * (exp, log, expm1, log1p, tanh) of a narrow float within 1 ulp of its
 * format (the float32 kernel's documented bound, rounded once more). The
 * exp family of float32 and float64 itself is test_kernels.c's, with its
 * bounds against the C library.
 *
 * The reduction kernels with an order of their own are checked the same way:
 * the column product (FOLD_COLS_PROD and FOLD_COLS_EVEN_PROD, Note [Product columns] in
 * prod.dispatch.c) and the row product (FOLD_PROD) against Note [Product
 * order] written out here, dot (DOT, Note [Dot order] in dot.dispatch.c)
 * against the reference's products summed by the float64 sum kernel, or
 * for integers against the wrapping int64 sum of the reference's products,
 * the one-pass first extremes (ARG, Note [One-pass first extremes] in
 * argext.dispatch.c) against the first index element by element, and the
 * float column sums, maxima and minima (COLS, in both their forms: Note
 * [Column streams] in sum.dispatch.c) against their tree and rule.
 *
 * An entry is checked with its kin in the source's other target tables
 * (entry_group): one set of inputs and one reference result per case, every
 * target's kernel run on them. Made per target, the inputs and the
 * reference were most of the time (15-27 s natively on a 2-vCPU Xeon, 91 s
 * under qemu's s390x; 6-7 and 53 s so); each target is held to the same bits.
 *
 * It runs natively (every x86 target this CPU has) and, cross-compiled,
 * under qemu for aarch64, ppc64le, s390x and riscv64 (tests/test_cross_matrix.py
 * runs every meson test of the C runtime there).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/kernels.h"
#include "dispatch/loops.h"
#include "dispatch/narrow_float.h"
#include "kernels_export.h"

/* past three 512-element chunks, not a multiple of any vector; and, for
 * outputs of 1-byte elements only, past the 4096 from which their loops run
 * a line's head first (Note [A head pays on long runs] in line_head.h) */
#define WIDE_MAXN 1537
#define MAXN 4099
static const int lengths[] = {0,  1,  2,   3,   7,   8,   15,  16,   17,        31,
                              33, 63, 65, 255, 511, 512, 513, 1029, WIDE_MAXN, MAXN};
enum { NLENGTHS = sizeof lengths / sizeof lengths[0] };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static long failures, compared;

/* Values as doubles, cast to each dtype by the reference: the edges of every
 * format and of Note [Float to integer casts]. */
static const double specials[] = {
    /* first, as vector blocks of 4 (fill puts the list at the start of each
     * buffer): the edges of int64's exact range through a double's mantissa
     * (Note [int64 to float below AVX512DQ] in cast_loops.dispatch.c), a
     * block just outside it and one on its last values inside */
    -0x1p51 - 1, 0x1p51 + 1, 0x1p51, 1.0, 0x1p51 - 1, -0x1p51,
    0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, 127.0, 128.0, -129.0, 255.5, 256.0, 300.7,
    32767.0, 32768.0, -32769.0, 65504.0, 65519.99, 65520.0, 65536.0, 2147483647.0,
    2147483648.0, -2147483648.0, -2147483649.0, 0x1p63, -0x1p63, 0x1p64, 1e10, -1e19,
    0x1p-14, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-126, 0x1p-149, 1e-310, 3.4028235677973366e38,
    3.4028235677973366e38 * 1.0000001, 1e300, INFINITY, -INFINITY, NAN, -NAN,
    /* just above a bfloat16 / float16 tie by less than float keeps: rounded
     * through float to nearest first, they would land on the tie and round
     * to even (down); once correctly, they round up */
    16842753.0, -16842753.0, 0x1.01000004p+0, 0x1.00200004p+0,
    /* just below one, where float's nearest is the tie itself and even is
     * up (an int32 rounded to odd steps back down first) */
    16973823.0, -16973823.0, 16842751.0, 0x1.02fffffcp+0, 0x1.005ffffcp+0,
    /* the same in float's denormal range, where a conversion to float keeps
     * fewer bits: 2^-134 is a bfloat16 tie, a quarter of float's ulp above it */
    0x1.00008p-134, -0x1.00008p-134,
};
enum { NSPECIALS = sizeof specials / sizeof specials[0] };

/* One element of isz bytes, by a copy of a constant size (a load and a
 * store, where memcpy of a variable size is a call, and a byte-at-a-time
 * helper under qemu's s390x). */
static void copy_item(char *dst, const char *src, size_t isz) {
    switch (isz) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

/* n values of dtype at p: the specials in order, then specials, random bits,
 * copies of `other` (equal operands for the comparisons) and ordinary
 * numbers. */
static void fill(int dtype, char *p, int n, const char *other) {
    size_t isz = dispatch_dtype_itemsize(dtype);
    dispatch_loop_fn from_f64 = dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype);
    for (int i = 0; i < n; i++) {
        char *dst = p + (size_t)i * isz;
        uint64_t r = next();
        double x;
        /* first the specials in order, so that neighbours share a vector
         * block (random picks rarely put four edge values in one) */
        switch (i < NSPECIALS ? 0 : r % 5) {
        case 0: x = specials[i < NSPECIALS ? (uint64_t)i : (r >> 8) % NSPECIALS]; break;
        case 1: x = (double)((int64_t)(r >> 20) % 1000) * 0.25; break;
        case 2:
            if (other) { copy_item(dst, other + (size_t)i * isz, isz); continue; }
            /* fall through */
        default:
            r = next();
            copy_item(dst, (const char *)&r, isz); /* any bits */
            if (dtype == DISPATCH_BOOL) *dst &= 1;
            continue;
        }
        char *d[2] = {dst, (char *)&x};
        intptr_t st[2] = {0, 0};
        from_f64(d, st, 1, NULL);
    }
}

static int is_float(int dtype) { return dispatch_dtype_category_of(dtype) == DISPATCH_CAT_FLOAT; }

static uint64_t bits_at(const char *p, size_t isz) {
    uint8_t b8; uint16_t b16; uint32_t b32; uint64_t b64;
    switch (isz) {
    case 1: memcpy(&b8, p, 1); return b8;
    case 2: memcpy(&b16, p, 2); return b16;
    case 4: memcpy(&b32, p, 4); return b32;
    default: memcpy(&b64, p, 8); return b64;
    }
}

static double value_at(int dtype, const char *p) {
    size_t isz = dispatch_dtype_itemsize(dtype);
    if (dtype == DISPATCH_FLOAT32) { float f; memcpy(&f, p, 4); return f; }
    if (dtype == DISPATCH_FLOAT64) { double f; memcpy(&f, p, 8); return f; }
    return dispatch_narrow_bits_to_double(dtype, (uint32_t)bits_at(p, isz));
}

/* Whether got agrees with want (Note at the top); ulps > 0 for a narrow
 * float's exp family. */
static int agree(int dtype, const char *got, const char *want, int ulps) {
    size_t isz = dispatch_dtype_itemsize(dtype);
    if (bits_at(got, isz) == bits_at(want, isz)) return 1;
    if (!is_float(dtype)) return 0;
    double g = value_at(dtype, got), w = value_at(dtype, want);
    if (isnan(g) && isnan(w)) return 1;
    if (!ulps || isnan(g) || isnan(w) || signbit(g) != signbit(w)) return 0;
    uint64_t mag = ~(uint64_t)0 >> (65 - 8 * isz); /* all bits but the sign */
    int64_t a = (int64_t)(bits_at(got, isz) & mag), b = (int64_t)(bits_at(want, isz) & mag);
    return llabs(a - b) <= ulps;
}

static int exp_family(int loop) {
    return loop == DISPATCH_LOOP_EXP || loop == DISPATCH_LOOP_LOG || loop == DISPATCH_LOOP_EXPM1 ||
           loop == DISPATCH_LOOP_LOG1P || loop == DISPATCH_LOOP_TANH;
}

/* The entries of one (loop, dtype), cast or reduction in the target tables
 * of one source: the inputs and the reference's results are made once and
 * every target's kernel is run on them (the harness, not the kernels, was
 * most of this test's time, under qemu most of all). */
enum { MAXTARGETS = 16 };
typedef struct {
    int n;
    const dispatch_kernel_export *e[MAXTARGETS];
    char where[MAXTARGETS][96]; /* "source [target]" */
} entry_group;

/* Runs ref and each of the nfn kernels fn[j] on the same operands, laid out
 * as `layout` says, for every length; out_dt and in_dt[k] are the
 * operands' dtypes, what[j] names fn[j] in a failure. The strided layouts
 * are those of loop_paths.h's Note [Strided paths]: every operand by 2, the
 * inputs by 2 into a contiguous output (x[:, ::2] + y[:, ::2]), in place on
 * a view by 2 with the other input contiguous (x[:, ::2] += y), by 3 with
 * input 2 broadcast, every operand by 3 (a stride no path names: the element
 * loops with runtime strides, x[:, ::3].fill_(v) and copies), and byte strides
 * of no whole element (the reference's); in place, also by a number
 * (x.add_(3): clang's builds have paths of their own for both, Note [In
 * place under clang]). */
enum { CONTIG, BROADCAST1, BROADCAST2, BROADCAST3, BROADCAST23, STRIDED, STRIDED_INPUTS,
       STRIDED_IN_PLACE, STRIDE3_BROADCAST2, STRIDED3, ODD_BYTES, IN_PLACE,
       IN_PLACE_BROADCAST2, NLAYOUTS };
static const char *layout_names[] = {"contiguous", "input 1 broadcast", "input 2 broadcast",
                                     "input 3 broadcast", "inputs 2 and 3 broadcast",
                                     "strided by 2", "inputs strided by 2",
                                     "in place strided by 2", "strided by 3, input 2 broadcast",
                                     "every operand strided by 3", "inputs by itemsize + 1 bytes",
                                     "in place", "in place, input 2 broadcast"};
enum { MAXSTEP = 3 }; /* the longest input stride, in elements */

/* The stride in bytes of input k (0-based) of itemsize isz in `layout`. */
static intptr_t input_stride(int layout, int k, size_t isz) {
    const intptr_t z = (intptr_t)isz;
    switch (layout) {
    case BROADCAST1: case BROADCAST2: case BROADCAST3: return layout - BROADCAST1 == k ? 0 : z;
    case BROADCAST23: return k >= 1 ? 0 : z;
    case STRIDED: case STRIDED_INPUTS: return 2 * z;
    case STRIDED_IN_PLACE: return k == 0 ? 2 * z : z;
    case STRIDE3_BROADCAST2: return k == 1 ? 0 : 3 * z;
    case IN_PLACE_BROADCAST2: return k == 1 ? 0 : z; /* x.add_(3) */
    case STRIDED3: return 3 * z;
    case ODD_BYTES: return z + 1;
    default: return z;
    }
}

/* The fill byte of an output buffer before a run. */
enum { UNWRITTEN = 0xA5 };

/* Whether the n bytes at p are all UNWRITTEN, eight at a time: a byte loop
 * over the rest of every output buffer was a third of this test's time, and
 * memcmp is a byte-at-a-time helper under qemu's s390x. */
static int all_unwritten(const char *p, size_t n) {
    uint64_t diff = 0, word;
    while (n > 0 && ((uintptr_t)p & 7) != 0) diff |= (unsigned char)*p++ ^ UNWRITTEN, n--;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&word, p, 8);
        diff |= word ^ 0xA5A5A5A5A5A5A5A5ull;
    }
    while (n > 0) diff |= (unsigned char)*p++ ^ UNWRITTEN, n--;
    return diff == 0;
}

static void compare(char (*what)[200], const dispatch_loop_fn *fn, int nfn, dispatch_loop_fn ref,
                    int nin, int out_dt, const int *in_dt, void *ctx, int ulps) {
    size_t osz = dispatch_dtype_itemsize(out_dt);
    const size_t span = MAXSTEP * MAXN * osz;
    /* an output of MAXN elements at the longest step, and its fill after it */
    char *in[3], *got = malloc(MAXSTEP * MAXN * 8), *want = malloc(MAXSTEP * MAXN * 8);
    /* both outputs all fill bytes between runs: a run's written prefix is
     * put back after it, the whole buffer where bytes past it changed */
    memset(got, UNWRITTEN, span), memset(want, UNWRITTEN, span);
    char *inplace_got = malloc(2 * MAXN * 8), *inplace_want = malloc(2 * MAXN * 8);
    for (int k = 0; k < nin; k++) {
        in[k] = malloc(MAXSTEP * MAXN * 8);
        /* input 2 shares values with input 1 where they have one dtype */
        fill(in_dt[k], in[k], MAXSTEP * MAXN, k == 1 && in_dt[1] == in_dt[0] ? in[0] : NULL);
    }
    for (int layout = 0; layout < NLAYOUTS; layout++) {
        if (layout >= BROADCAST1 && layout <= BROADCAST3 && layout - BROADCAST1 >= nin) continue;
        if (layout == BROADCAST23 && nin < 3) continue;
        if (layout == IN_PLACE_BROADCAST2 && nin < 2) continue;
        const int in_place =
            layout == IN_PLACE || layout == STRIDED_IN_PLACE || layout == IN_PLACE_BROADCAST2;
        if (in_place && (nin == 0 || in_dt[0] != out_dt)) continue;
        for (int li = 0; li < NLENGTHS; li++) {
            int n = lengths[li];
            if (n > WIDE_MAXN && osz != 1) continue;
            int step = layout == STRIDED3                                 ? 3 /* the output's */
                       : layout == STRIDED || layout == STRIDED_IN_PLACE ? 2
                                                                         : 1;
            const size_t written = (size_t)n * step * osz;
            intptr_t st[4] = {(intptr_t)(osz * step)};
            char *dw[4] = {want};
            for (int k = 0; k < nin; k++) {
                st[1 + k] = input_stride(layout, k, dispatch_dtype_itemsize(in_dt[k]));
                dw[1 + k] = in[k];
            }
            if (in_place) {
                memcpy(inplace_want, in[0], written);
                dw[0] = dw[1] = inplace_want;
            }
            ref(dw, st, n, ctx);
            for (int j = 0; j < nfn; j++) {
                char *dg[4] = {got};
                for (int k = 0; k < nin; k++) dg[1 + k] = in[k];
                if (in_place) {
                    memcpy(inplace_got, in[0], written);
                    dg[0] = dg[1] = inplace_got;
                }
                fn[j](dg, st, n, ctx);
                compared++;
                for (int i = 0; i < n * step; i++) {
                    const char *g = dg[0] + (size_t)i * osz, *w = dw[0] + (size_t)i * osz;
                    if (agree(out_dt, g, w, i % step ? 0 : ulps)) continue;
                    if (failures++ < 40)
                        fprintf(stderr, "FAIL %s, %s, n=%d, element %d: got 0x%llx, reference "
                                "0x%llx\n", what[j], layout_names[layout], n, i,
                                (unsigned long long)bits_at(g, osz),
                                (unsigned long long)bits_at(w, osz));
                    break;
                }
                if (in_place) continue;
                /* nothing written past the last element (a vector path's tail
                 * store ends on it): the bytes after it keep their fill */
                if (!all_unwritten(got + written, span - written)) {
                    size_t b = written;
                    while ((unsigned char)got[b] == UNWRITTEN) b++;
                    if (failures++ < 40)
                        fprintf(stderr, "FAIL %s, %s, n=%d: byte %zu past the output written\n",
                                what[j], layout_names[layout], n, b - written);
                    memset(got, UNWRITTEN, span);
                } else {
                    memset(got, UNWRITTEN, written);
                }
            }
            if (!in_place) memset(want, UNWRITTEN, written);
        }
    }
    for (int k = 0; k < nin; k++) free(in[k]);
    free(got), free(want), free(inplace_got), free(inplace_want);
}

/* A loop's 2-D loop (Note [2-D loops] in loops.h) against the
 * reference run row by row: ROWS rows of n, each output row followed by a
 * gap of 3 elements that must stay untouched; the last input laid out as
 * its own rows, as one row broadcast to every row (x + row), or as a
 * broadcast column (x + col: inner stride 0, outer one element); the first
 * also in place. The nfn 2-D loops fn2d[j] on the same operands. */
enum { ROWS = 5, ROW_GAP = 3 };
enum { ROWS_CONTIG, ROWS_BCAST_ROW, ROWS_BCAST_COL, ROWS_IN_PLACE, NROW_LAYOUTS };
static const char *row_layout_names[] = {"rows", "a broadcast row", "a broadcast column",
                                         "rows in place"};
static const int row_lengths[] = {1, 2, 7, 16, 33, 64, 65, 256, 300};

static void compare_2d(char (*what)[200], const dispatch_loop2d_fn *fn2d, int nfn,
                       dispatch_loop_fn ref, int nin, int out_dt, const int *in_dt, void *ctx,
                       int ulps) {
    size_t osz = dispatch_dtype_itemsize(out_dt);
    const size_t span = (size_t)ROWS * (300 + ROW_GAP) * 8;
    char *in[3], *got = malloc(span), *want = malloc(span);
    for (int k = 0; k < nin; k++) {
        in[k] = malloc(span);
        fill(in_dt[k], in[k], ROWS * (300 + ROW_GAP), k == 1 && in_dt[1] == in_dt[0] ? in[0] : NULL);
    }
    for (int layout = 0; layout < NROW_LAYOUTS; layout++) {
        const int in_place = layout == ROWS_IN_PLACE;
        if (nin == 0 && layout != ROWS_CONTIG) continue;
        if (in_place && in_dt[0] != out_dt) continue;
        for (size_t li = 0; li < sizeof row_lengths / sizeof row_lengths[0]; li++) {
            const intptr_t n = row_lengths[li], orow = (n + ROW_GAP) * (intptr_t)osz;
            intptr_t st[4] = {(intptr_t)osz}, outer[4] = {orow};
            char *dw[4] = {want};
            for (int k = 0; k < nin; k++) {
                const intptr_t z = (intptr_t)dispatch_dtype_itemsize(in_dt[k]);
                const int last = k == nin - 1 && nin > 1;
                st[1 + k] = z, outer[1 + k] = n * z;
                if (last && layout == ROWS_BCAST_ROW) outer[1 + k] = 0;
                if (last && layout == ROWS_BCAST_COL) st[1 + k] = 0, outer[1 + k] = z;
                dw[1 + k] = in[k];
            }
            if (in_place) {
                memcpy(want, in[0], span);
                dw[1] = want, outer[1] = orow;
            } else {
                memset(want, UNWRITTEN, span);
            }
            for (int r = 0; r < ROWS; r++) {
                char *row[4];
                for (int k = 0; k <= nin; k++) row[k] = dw[k] + r * outer[k];
                ref(row, st, n, ctx);
            }
            for (int j = 0; j < nfn; j++) {
                char *dg[4] = {got};
                for (int k = 0; k < nin; k++) dg[1 + k] = in[k];
                if (in_place) {
                    memcpy(got, in[0], span);
                    dg[1] = got;
                } else {
                    memset(got, UNWRITTEN, span);
                }
                fn2d[j](dg, st, outer, n, ROWS, ctx);
                compared++;
                for (intptr_t i = 0; i < ROWS * (n + ROW_GAP); i++) {
                    const char *g = got + (size_t)i * osz, *w = want + (size_t)i * osz;
                    if (agree(out_dt, g, w, ulps)) continue;
                    if (failures++ < 40)
                        fprintf(stderr, "FAIL %s, 2-D loop, %s, n=%d, element %d: got 0x%llx, "
                                "reference 0x%llx\n", what[j], row_layout_names[layout], (int)n,
                                (int)i, (unsigned long long)bits_at(g, osz),
                                (unsigned long long)bits_at(w, osz));
                    break;
                }
            }
        }
    }
    for (int k = 0; k < nin; k++) free(in[k]);
    free(got), free(want);
}

/* what[j]: "<where of entry j>: <label>" */
static void name_group(const entry_group *g, const char *label, char (*what)[200]) {
    for (int j = 0; j < g->n; j++) snprintf(what[j], sizeof what[j], "%s: %s", g->where[j], label);
}

static long entries_2d;

static void check_loop(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int loop = e->loop, dtype = e->dtype, nin = dispatch_loop_nin(loop);
    if (exp_family(loop) && !dispatch_dtype_is_narrow_float(dtype)) return; /* test_kernels.c */
    int in_dt[3];
    for (int k = 0; k < nin; k++) in_dt[k] = dispatch_loop_operand_dtype(loop, 1 + k, dtype);
    int out_dt = dispatch_loop_operand_dtype(loop, 0, dtype);
    dispatch_loop_fn ref = dispatch_loop_reference(loop, dtype);
    if (ref == NULL) return; /* the chooser leaves such a pair empty */
    int ulps = exp_family(loop) ? 1 : 0;
    char what[MAXTARGETS][200], what2d[MAXTARGETS][200], ctxbuf[3][8];
    dispatch_loop_fn fn[MAXTARGETS];
    dispatch_loop2d_fn fn2d[MAXTARGETS];
    /* ctx: none and a scale of 1 where optional; two other values */
    int kind = dispatch_loop_ctx_kind(loop);
    for (int c = 0; c < 3; c++) fill(dtype, ctxbuf[c], 1, NULL);
    double one = 1.0, three = 3.0;
    char *d[2] = {ctxbuf[0], (char *)&one};
    intptr_t st[2] = {0, 0};
    dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype)(d, st, 1, NULL);
    d[0] = ctxbuf[1], d[1] = (char *)&three;
    dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype)(d, st, 1, NULL);
    int n2d = 0;
    for (int c = -1; c < 3; c++) {
        if (c == -1 && kind == DISPATCH_LOOP_CTX_REQUIRED) continue;
        if (c >= 0 && kind == DISPATCH_LOOP_CTX_NONE) break;
        char label[80];
        snprintf(label, sizeof label, "%s %s (ctx %d)", dispatch_loop_name(loop),
                 dispatch_dtype_name(dtype), c);
        name_group(g, label, what);
        n2d = 0;
        for (int j = 0; j < g->n; j++) {
            fn[j] = (dispatch_loop_fn)g->e[j]->fn;
            if (g->e[j]->fn2d) {
                memcpy(what2d[n2d], what[j], sizeof what[j]);
                fn2d[n2d++] = (dispatch_loop2d_fn)g->e[j]->fn2d;
            }
        }
        compare(what, fn, g->n, ref, nin, out_dt, in_dt, c < 0 ? NULL : ctxbuf[c], ulps);
        if (n2d)
            compare_2d(what2d, fn2d, n2d, ref, nin, out_dt, in_dt, c < 0 ? NULL : ctxbuf[c],
                       ulps);
    }
    entries_2d += n2d;
}

static void check_cast(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    char label[80], what[MAXTARGETS][200];
    dispatch_loop_fn fn[MAXTARGETS];
    snprintf(label, sizeof label, "cast %s -> %s", dispatch_dtype_name(e->dtype),
             dispatch_dtype_name(e->named));
    name_group(g, label, what);
    for (int j = 0; j < g->n; j++) fn[j] = (dispatch_loop_fn)g->e[j]->fn;
    int in_dt[1] = {e->dtype};
    compare(what, fn, g->n, dispatch_cast_loop_reference(e->dtype, e->named), 1, e->named, in_dt,
            NULL, 0);
}

/* float16 by a float32 number (half_arith's HALF_*_F32SCALAR kernels): x
 * widened exactly, the float result rounded once to float16. */
#define HALF_SCALAR_REF_(NAME, EXPR)                                                     \
    static void NAME(char **data, const intptr_t *st, intptr_t n, void *ctx) {           \
        float s;                                                                         \
        memcpy(&s, ctx, sizeof s);                                                       \
        for (intptr_t i = 0; i < n; i++) {                                               \
            uint16_t h;                                                                  \
            memcpy(&h, data[1] + i * st[1], 2);                                          \
            const float x = dispatch_half_to_float_inline(h), r = (EXPR);                \
            h = dispatch_half_from_double_inline((double)r);                             \
            memcpy(data[0] + i * st[0], &h, 2);                                          \
        }                                                                                \
    }
HALF_SCALAR_REF_(half_mul_scalar_ref, x * s)
HALF_SCALAR_REF_(half_div_scalar_ref, x / s)
HALF_SCALAR_REF_(half_rdiv_scalar_ref, s / x)

static int is_half_scalar(const dispatch_kernel_export *e) {
    return e->named == DISPATCH_KNAMED_HALF_MUL_F32SCALAR ||
           e->named == DISPATCH_KNAMED_HALF_DIV_F32SCALAR ||
           e->named == DISPATCH_KNAMED_HALF_RDIV_F32SCALAR;
}

static void check_half_scalar(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    static const float numbers[] = {2.5f, 0.1f, -3e-5f, 70000.0f, 0.0f};
    const dispatch_loop_fn ref = e->named == DISPATCH_KNAMED_HALF_MUL_F32SCALAR ? half_mul_scalar_ref
                                 : e->named == DISPATCH_KNAMED_HALF_DIV_F32SCALAR
                                     ? half_div_scalar_ref
                                     : half_rdiv_scalar_ref;
    const int in_dt[1] = {DISPATCH_FLOAT16};
    char what[MAXTARGETS][200];
    dispatch_loop_fn fn[MAXTARGETS];
    for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
        float number = numbers[k];
        char label[80];
        snprintf(label, sizeof label, "%s by %g", e->name, (double)number);
        name_group(g, label, what);
        for (int j = 0; j < g->n; j++) fn[j] = (dispatch_loop_fn)g->e[j]->fn;
        compare(what, fn, g->n, ref, 1, DISPATCH_FLOAT16, in_dt, &number, 0);
    }
}

/* Note [Product order] written out: a block, element i into running
 * product i % 32 (from 1), then pairwise (p0 p1)(p2 p3)... until one is
 * left; more than a block split at the first half of its blocks, rounded
 * up, the halves multiplied. */
static double prod_reference(int dtype, const char *p, intptr_t stride, intptr_t n) {
    if (n > 4096) {
        intptr_t h = ((n / 4096 + 1) / 2) * 4096;
        return prod_reference(dtype, p, stride, h) *
               prod_reference(dtype, p + h * stride, stride, n - h);
    }
    double acc[32];
    for (int k = 0; k < 32; k++) acc[k] = 1;
    for (intptr_t i = 0; i < n; i++) acc[i % 32] *= value_at(dtype, p + i * stride);
    for (int w = 16; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) acc[k] = acc[2 * k] * acc[2 * k + 1];
    return acc[0];
}

/* One value of a double in dtype, as the engine stores a fold (a narrow
 * float's by the reference cast). */
static void store_as(int dtype, char *p, double v) {
    if (dtype == DISPATCH_FLOAT32) { float f = (float)v; memcpy(p, &f, 4); }
    else if (dtype == DISPATCH_FLOAT64) memcpy(p, &v, 8);
    else {
        char *d[2] = {p, (char *)&v};
        intptr_t st[2] = {0, 0};
        dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype)(d, st, 1, NULL);
    }
}

static long reduce_entries;


static void report(const char *what, int n, int m, const char *got, const char *want,
                   size_t isz) {
    if (failures++ < 40)
        fprintf(stderr, "FAIL %s, n=%d, m=%d: got 0x%llx, reference 0x%llx\n", what, n, m,
                (unsigned long long)bits_at(got, isz), (unsigned long long)bits_at(want, isz));
}

/* FOLD_PROD over strided runs and FOLD_COLS_PROD over (rows, cols) shapes
 * with a row stride wider than the columns: the order's bits per column;
 * FOLD_COLS_EVEN_PROD the same of columns two elements apart (the odd
 * elements between them hold other values: a kernel that reads one fails). */
static void check_prod(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype;
    size_t isz = dispatch_dtype_itemsize(dtype);
    const int cols_kernel = e->named != DISPATCH_RK_FOLD_PROD;
    const int cstep = e->named == DISPATCH_RK_FOLD_COLS_EVEN_PROD ? 2 : 1; /* elements */
    /* a narrow float's columns: the float32 product of its values, as float32;
     * float32's column kernel writes its float64 product, not rounded */
    int odt = dtype == DISPATCH_FLOAT64 ||
                      (dtype == DISPATCH_FLOAT32 && cols_kernel)
                  ? DISPATCH_FLOAT64
                  : DISPATCH_FLOAT32;
    size_t osz = dispatch_dtype_itemsize(odt);
    /* a group of 128 rows and 72 more (Note [Product rows four at a time]),
     * and past a block (4096), 2, 3 and 4 blocks (Note [Fold blocks]) */
    static const int rows[] = {1, 2, 3, 31, 32, 33, 65, 100, 200, 4096, 4097, 8192, 12289, 13000};
    enum { NROWS = sizeof rows / sizeof rows[0] };
    /* past DISPATCH_FOLD_COLS_NARROW: whole rows (Note [Product columns from whole
     * rows]), 600 past its 512 columns a pass */
    static const int cols[] = {1, 2, 7, 63, 64, 65, 130, 600};
    enum { NCOLS = sizeof cols / sizeof cols[0] };
    char *in = malloc(13001 * (130 * 2 + 3) * 8 > 4098 * (600 * 2 + 3) * 8
                          ? 13001 * (130 * 2 + 3) * 8
                          : 4098 * (600 * 2 + 3) * 8);
    char *got = malloc(600 * 8), *want = malloc(600 * 8);
    char label[80], what[MAXTARGETS][200];
    snprintf(label, sizeof label, "%s %s",
             !cols_kernel ? "prod" : cstep == 2 ? "prod every other column" : "prod columns",
             dispatch_dtype_name(dtype));
    name_group(g, label, what);
    /* the values near 1, +x and -x of x = 1 + (k - 1000) 2^-12, in dtype:
     * converted once here, not once an element (runs of 13,000 x 133) */
    char *near_one = malloc(2 * 2001 * isz);
    for (int k = 0; k < 2001; k++) {
        const double x = 1.0 + (double)(k - 1000) * 0x1p-12;
        store_as(dtype, near_one + (2 * k) * isz, x);
        store_as(dtype, near_one + (2 * k + 1) * isz, -x);
    }
    for (int ri = 0; ri < NROWS; ri++) {
        for (int ci = 0; ci < NCOLS; ci++) {
            int n = rows[ri], m = cols[ci];
            if (n > 100 && m != 2 && m != 64 && m != 130 && !(m == 600 && n <= 4097))
                continue; /* long runs: 2, 64 and 130 columns; 600 up to 4097 rows */
            const int span = cstep * m + 3; /* elements a row: rows with a gap */
            intptr_t rstride = (intptr_t)(span * isz);
            /* a long run's values are all near 1 (no NaN to hide in), a
             * short one's a quarter from fill */
            if (n <= 100) fill(dtype, in, n * span, NULL);
            for (int t = 0; t < n * span; t++) { /* mostly near 1: products stay finite */
                if (n <= 100 && next() % 4 == 0) continue;
                const uint64_t r = next();
                const int k = (int)(r % 2001), negative = (r >> 32) % 7 == 0;
                copy_item(in + t * isz, near_one + (2 * k + negative) * isz, isz);
            }
            for (int c = 0; c < m; c++)
                store_as(odt, want + c * osz,
                         prod_reference(dtype, in + c * cstep * isz, rstride, n));
            for (int j = 0; j < g->n; j++) {
                if (e->named == DISPATCH_RK_FOLD_PROD) {
                    for (int c = 0; c < m; c++)
                        store_as(odt, got + c * osz,
                                 ((dispatch_rk_fold_fn)g->e[j]->fn)(in + c * isz, rstride, n));
                } else {
                    memset(got, 0xA5, 600 * 8);
                    ((dispatch_rk_fold_cols_fn)g->e[j]->fn)(in, rstride, n, m, got);
                }
                compared++;
                for (int c = 0; c < m; c++) {
                    if (agree(odt, got + c * osz, want + c * osz, 0)) continue;
                    report(what[j], n, c, got + c * osz, want + c * osz, osz);
                    break;
                }
            }
        }
    }
    free(in), free(got), free(want), free(near_one);
}

/* DOT over contiguous and strided operands of every length class. */
static void check_dot(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype, fl = is_float(dtype);
    size_t isz = dispatch_dtype_itemsize(dtype);
    /* SPAN elements cover DMAX read at the largest step (3) from the largest
     * offset; a and b start on a cache line, so that the offsets put each
     * operand's first element at any place in its line (Note [Dot's loads
     * on whole lines] in dot.dispatch.c) */
    enum { DMAX = 5000, STEP_MAX = 3, OFF_MAX = 7, SPAN = STEP_MAX * DMAX + OFF_MAX + 1 };
    static const int offsets[][2] = {{0, 0}, {2, 2}, {1, 6}, {7, 0}, {0, 3}};
    char *ma = malloc(SPAN * 8 + 64), *mb = malloc(SPAN * 8 + 64), *pa = malloc(DMAX * 8),
         *pb = malloc(DMAX * 8), *prod = malloc(DMAX * 8);
    char *a = ma + (64 - (uintptr_t)ma % 64) % 64, *b = mb + (64 - (uintptr_t)mb % 64) % 64;
    static const int dlens[] = {0, 1, 2, 3, 31, 32, 33, 511, 512, 513, 1029, 1537, 4097, DMAX};
    char label[80], what[MAXTARGETS][200];
    snprintf(label, sizeof label, "dot %s", dispatch_dtype_name(dtype));
    name_group(g, label, what);
    int compute = fl ? DISPATCH_FLOAT64 : DISPATCH_INT64;
    dispatch_loop_fn to = dispatch_cast_loop_reference(dtype, compute);
    dispatch_loop_fn mul = dispatch_loop_reference(DISPATCH_LOOP_MUL, compute);
    dispatch_loop_fn from_f64 = dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype);
    /* values: random bits and specials (a float sum is then mostly NaN or
     * inf), and for floats ordinary values of many magnitudes (rounded sums)
     * and products that are all -0.0 */
    for (int run = 0; run < (fl ? 9 : 3); run++) {
        int step = 1 + run % STEP_MAX; /* contiguous, every other (its own rows), by 3 */
        fill(dtype, a, SPAN, NULL);
        fill(dtype, b, SPAN, NULL);
        for (int i = 0; run / STEP_MAX == 1 && i < SPAN; i++) {
            double x[2];
            for (int k = 0; k < 2; k++)
                x[k] = ldexp((double)(next() >> 11) * 0x1p-53 - 0.5, (int)(next() % 21) - 10);
            char *d[2] = {a + i * isz, (char *)&x[0]};
            intptr_t zs[2] = {0, 0};
            from_f64(d, zs, 1, NULL);
            d[0] = b + i * isz, d[1] = (char *)&x[1];
            from_f64(d, zs, 1, NULL);
        }
        /* every product -0.0: the sum's lanes start from -0.0, so the dot is
         * -0.0 (a lane started from +0.0 would make it +0.0) */
        for (int i = 0; run / STEP_MAX == 2 && i < SPAN; i++) {
            const double x[2] = {-0.0, 1.0};
            intptr_t zs[2] = {0, 0};
            char *d[2] = {a + i * isz, (char *)&x[0]};
            from_f64(d, zs, 1, NULL);
            d[0] = b + i * isz, d[1] = (char *)&x[1];
            from_f64(d, zs, 1, NULL);
        }
        for (int li = 0; li < 14 * 5; li++) {
            int n = dlens[li % 14];
            const char *oa = a + offsets[li / 14][0] * isz, *ob = b + offsets[li / 14][1] * isz;
            intptr_t st[3] = {8, (intptr_t)(isz * step), (intptr_t)(isz * step)};
            char *d[3] = {pa, (char *)oa};
            to(d, st, n, NULL);
            d[0] = pb, d[1] = (char *)ob;
            to(d, st, n, NULL);
            char *m[3] = {prod, pa, pb};
            intptr_t ms[3] = {8, 8, 8};
            mul(m, ms, n, NULL);
            char want[8], got[8];
            if (fl) {
                double v = dispatch_kernels_sum_f64(prod, 8, n);
                memcpy(want, &v, 8);
            } else {
                uint64_t acc = 0;
                for (int i = 0; i < n; i++) {
                    int64_t x;
                    memcpy(&x, prod + i * 8, 8);
                    acc += (uint64_t)x;
                }
                int64_t v = (int64_t)acc;
                memcpy(want, &v, 8);
            }
            /* integers: equal in the dtype's width (the result is rounded to it) */
            char wt[8] = {0};
            char *cw[2] = {wt, want};
            intptr_t zs[2] = {0, 0};
            dispatch_loop_fn back = dispatch_cast_loop_reference(compute, fl ? compute : dtype);
            back(cw, zs, 1, NULL);
            for (int j = 0; j < g->n; j++) {
                ((dispatch_rk_dot_fn)g->e[j]->fn)(oa, (intptr_t)(isz * step), ob,
                                                   (intptr_t)(isz * step), n, got);
                char gt[8] = {0};
                char *cg[2] = {gt, got};
                back(cg, zs, 1, NULL);
                compared++;
                if (!agree(fl ? compute : dtype, gt, wt, 0)) {
                    if (failures < 40)
                        fprintf(stderr, "  (the operands %d and %d elements past a line)\n",
                                offsets[li / 14][0], offsets[li / 14][1]);
                    report(what[j], n, step, gt, wt, fl ? 8 : isz);
                }
            }
        }
    }
    free(ma), free(mb), free(pa), free(pb), free(prod);
}

/* The first index of the extreme, element by element: a NaN's first index
 * where there is one, else the first element no earlier one is beaten by. */
#define ARG_SCAN_(NAME, T)                                                                \
    case DISPATCH_##NAME: {                                                               \
        T b, x;                                                                           \
        memcpy(&b, p, sizeof b);                                                          \
        if (b != b) return 0;                                                             \
        for (intptr_t i = 1; i < n; i++) {                                                \
            memcpy(&x, p + i * (intptr_t)sizeof x, sizeof x);                             \
            if (x != x) return i;                                                         \
            if (is_min ? x < b : x > b) b = x, best = i;                                  \
        }                                                                                 \
        return best;                                                                      \
    }
#define ARG_REFERENCE_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) ARG_REF_##CAT(NAME, T)
#define ARG_REF_INT(NAME, T) ARG_SCAN_(NAME, T)
#define ARG_REF_BOOL(NAME, T)
#define ARG_REF_FLOAT(NAME, T)
static intptr_t arg_reference(int dtype, int is_min, const char *p, intptr_t n) {
    intptr_t best = 0;
    switch (dtype) {
    ARG_SCAN_(FLOAT32, float)
    ARG_SCAN_(FLOAT64, double)
    DISPATCH_FORALL_DTYPES(ARG_REFERENCE_)
    }
    if (dispatch_dtype_is_narrow_float(dtype)) { /* by value, as a double */
        const intptr_t isz = (intptr_t)dispatch_dtype_itemsize(dtype);
        double b = value_at(dtype, p);
        if (b != b) return 0;
        for (intptr_t i = 1; i < n; i++) {
            const double x = value_at(dtype, p + i * isz);
            if (x != x) return i;
            if (is_min ? x < b : x > b) b = x, best = i;
        }
        return best;
    }
    return -1;
}
#undef ARG_REFERENCE_

/* ARG: index and value bits against the reference, on runs around every
 * block (8 KB) and row of lanes: any bits and specials (NaNs among them),
 * few distinct values (ties across blocks), the extreme (or a NaN)
 * planted at a block's edge, and infinities and zeros of both signs, tied
 * (-0.0 == 0.0: the first of them). */
static void check_arg(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype;
    size_t isz = dispatch_dtype_itemsize(dtype);
    enum { AMAX = 3 * 8192 + 77 };
    static const int alens[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                                511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 4097,
                                8191, 8192, 8193, 16447, AMAX};
    enum { NALENS = sizeof alens / sizeof alens[0] };
    char *a = malloc(AMAX * 8), got[8], label[80], what[MAXTARGETS][200];
    snprintf(label, sizeof label, "argmax/argmin %s", dispatch_dtype_name(dtype));
    name_group(g, label, what);
    for (int run = 0; run < 5; run++) {
        for (int li = 0; li < NALENS; li++) {
            const intptr_t n = alens[li];
            fill(dtype, a, (int)n, NULL);
            if (run >= 1) /* few values: ties; run 1 has no NaN, run 3 one planted */
                for (intptr_t i = 0; i < n; i++) store_as(dtype, a + i * isz, (double)(next() % 5));
            if (run == 2) /* the extreme at a block's edge */
                store_as(dtype, a + ((n - 1) & ~(intptr_t)(8192 / isz - 1)) * isz,
                         next() % 2 ? 100.0 : -100.0);
            if (run == 3 && is_float(dtype))
                store_as(dtype, a + (intptr_t)(next() % (uint64_t)n) * isz, NAN);
            if (run == 4) { /* no NaN: infinities and zeros of both signs, tied */
                static const double zi[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY};
                for (intptr_t i = 0; i < n; i++)
                    store_as(dtype, a + i * isz, zi[next() % (is_float(dtype) ? 6 : 4)]);
            }
            for (int is_min = 0; is_min < 2; is_min++) {
                const intptr_t want = arg_reference(dtype, is_min, a, n);
                for (int j = 0; j < g->n; j++) {
                    memset(got, 0xA5, sizeof got);
                    const int64_t i = ((dispatch_rk_arg_fn)g->e[j]->fn)(is_min, a, n, got);
                    compared++;
                    if (i != want) {
                        if (failures++ < 40)
                            fprintf(stderr, "FAIL %s (%s), n=%d, run %d: index %lld, reference "
                                    "%lld\n", what[j], is_min ? "min" : "max", (int)n, run,
                                    (long long)i, (long long)want);
                    } else if (memcmp(got, a + want * isz, isz) != 0) {
                        report(what[j], (int)n, run, got, a + want * isz, isz);
                    }
                }
            }
        }
    }
    free(a);
}

/* ARG_COLS: each column's row and value against ARG's reference on the
 * column gathered, for shapes around the kernel's block of columns, with
 * any bits, few values (ties down a column) and planted NaNs. */
static void check_arg_cols(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype;
    size_t isz = dispatch_dtype_itemsize(dtype);
    static const int rowsv[] = {1, 2, 3, 8, 17, 64};
    static const int colsv[] = {1, 7, 64, 511, 512, 513, 1100};
    enum { MAXR = 64, MAXC = 1100, PAD = 3 };
    char *a = malloc((size_t)MAXR * (MAXC + PAD) * 8), *col = malloc(MAXR * 8);
    char *vals = malloc(MAXC * 8), label[80], what[MAXTARGETS][200];
    int64_t *rows = malloc(MAXC * sizeof(int64_t));
    intptr_t *want = malloc(MAXC * sizeof(intptr_t)); /* each column's row */
    snprintf(label, sizeof label, "argmax/argmin(dim=0) %s", dispatch_dtype_name(dtype));
    name_group(g, label, what);
    for (int run = 0; run < 3; run++)
        for (size_t ri = 0; ri < sizeof rowsv / sizeof rowsv[0]; ri++)
            for (size_t ci = 0; ci < sizeof colsv / sizeof colsv[0]; ci++) {
                const intptr_t nr = rowsv[ri], nc = colsv[ci], ld = nc + PAD; /* a row's stride */
                fill(dtype, a, (int)(nr * ld), NULL);
                if (run >= 1)
                    for (intptr_t i = 0; i < nr * ld; i++)
                        store_as(dtype, a + i * (intptr_t)isz, (double)(next() % 3));
                if (run == 2 && is_float(dtype))
                    for (int k = 0; k < 8; k++)
                        store_as(dtype, a + (intptr_t)(next() % (uint64_t)(nr * ld)) * (intptr_t)isz,
                                 NAN);
                for (int is_min = 0; is_min < 2; is_min++) {
                    for (intptr_t c = 0; c < nc; c++) {
                        for (intptr_t r = 0; r < nr; r++)
                            memcpy(col + r * (intptr_t)isz, a + (r * ld + c) * (intptr_t)isz, isz);
                        want[c] = arg_reference(dtype, is_min, col, nr);
                    }
                    for (int j = 0; j < g->n; j++) {
                        ((dispatch_rk_arg_cols_fn)g->e[j]->fn)(is_min, a, ld * (intptr_t)isz, nr,
                                                               nc, 3, vals, rows);
                        for (intptr_t c = 0; c < nc; c++) {
                            const char *at = a + (want[c] * ld + c) * (intptr_t)isz;
                            compared++;
                            if (rows[c] != 3 * want[c]) {
                                if (failures++ < 40)
                                    fprintf(stderr, "FAIL %s (%s), %dx%d, run %d, column %d: row "
                                            "%lld, reference %lld\n", what[j],
                                            is_min ? "min" : "max", (int)nr, (int)nc, run, (int)c,
                                            (long long)rows[c] / 3, (long long)want[c]);
                            } else if (memcmp(vals + c * (intptr_t)isz, at, isz) != 0) {
                                report(what[j], (int)nr, (int)c, vals + c * (intptr_t)isz, at, isz);
                            }
                        }
                    }
                }
            }
    free(a), free(col), free(vals), free(rows), free(want);
}

/* COLS (Note [Column reductions] in sum.dispatch.c): each column's sum as
 * the documented tree of leaves of 16 rows from -0.0, its max/min as the
 * first NaN, else the extreme, and of zeros the first one (Note [Which
 * zero, which NaN]); in T, float for the narrow floats and float32. */
#define COLS_REFERENCE(T)                                                                    \
    static T cols_sum_##T(int dtype, const char *p, intptr_t rs, intptr_t n) {               \
        if (n <= 16) {                                                                       \
            T a = (T)-0.0;                                                                   \
            for (intptr_t r = 0; r < n; r++) a = a + (T)value_at(dtype, p + r * rs);         \
            return a;                                                                        \
        }                                                                                    \
        intptr_t h = ((n / 16 + 1) / 2) * 16;                                                \
        T lo = cols_sum_##T(dtype, p, rs, h);                                                \
        return lo + cols_sum_##T(dtype, p + h * rs, rs, n - h);                              \
    }                                                                                        \
    static T cols_ext_##T(int dtype, int is_min, const char *p, intptr_t rs, intptr_t n) {   \
        T m = (T)value_at(dtype, p);                                                         \
        for (intptr_t r = 0; r < n; r++) {                                                   \
            T x = (T)value_at(dtype, p + r * rs);                                            \
            if (x != x) return x;                                                            \
            if (is_min ? x < m : x > m) m = x;                                               \
        }                                                                                    \
        for (intptr_t r = 0; m == 0 && r < n; r++) {                                         \
            T x = (T)value_at(dtype, p + r * rs);                                            \
            if (x == 0) return x;                                                            \
        }                                                                                    \
        return m;                                                                            \
    }
COLS_REFERENCE(float)
COLS_REFERENCE(double)

/* COLS of every op, in the register form and with DISPATCH_COLS_STREAMS
 * (Note [Column streams]): the bits of the reference above, for row counts
 * across the tree's leaves and column counts across the vector blocks. */
static void check_cols(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype, f64 = dtype == DISPATCH_FLOAT64, odt = f64 ? dtype : DISPATCH_FLOAT32;
    size_t isz = dispatch_dtype_itemsize(dtype), osz = f64 ? 8 : 4;
    /* COLS_EVEN: column c at element 2c (Note [Columns of every other element]) */
    const intptr_t cs = e->named == DISPATCH_RK_COLS_EVEN ? 2 : 1;
    static const int rowsv[] = {1, 2, 3, 16, 17, 31, 33, 48, 100, 257, 1000};
    static const int colsv[] = {1, 7, 64, 65, 130, 513};
    enum { MAXR = 1000, MAXC = 513, PAD = 3 };
    char *a = malloc((size_t)MAXR * (2 * MAXC + PAD) * 8), *got = malloc(MAXC * 8),
         *want = malloc(MAXC * 8);
    char *scratch = malloc((size_t)dispatch_reduce_cols_scratch(MAXR) * MAXC * 8);
    double *values = malloc((size_t)MAXR * (2 * MAXC + PAD) * sizeof(double));
    static const char *const ops[] = {"sum", "max", "min"};
    char label[80], what[200];
    double pow2[21]; /* 2^-10 .. 2^10: x * pow2[k] is ldexp(x, k - 10), exactly, here */
    for (int k = 0; k < 21; k++) pow2[k] = ldexp(1.0, k - 10);
    const dispatch_loop_fn to_dtype = dispatch_cast_loop_reference(DISPATCH_FLOAT64, dtype);
    for (int run = 0; run < 3; run++)
        for (size_t ri = 0; ri < sizeof rowsv / sizeof rowsv[0]; ri++)
            for (size_t ci = 0; ci < sizeof colsv / sizeof colsv[0]; ci++) {
                const intptr_t nr = rowsv[ri], nc = colsv[ci], rw = cs * nc + PAD,
                               rs = rw * (intptr_t)isz;
                if (run == 0) { /* specials and random bits: NaN, infinities, zeros */
                    fill(dtype, a, (int)(nr * rw), NULL);
                } else { /* as doubles, then one reference cast of them all */
                    for (intptr_t i = 0; i < nr * rw; i++) {
                        double x = run == 1 ? (double)((int)(next() % 3) - 1) * (next() % 2 ? 1 : 0)
                                            : ((double)(next() >> 11) * 0x1p-53 - 0.5) *
                                                  pow2[next() % 21];
                        values[i] = run == 1 && x == 0 && next() % 2 ? -0.0 : x;
                    }
                    char *d[2] = {a, (char *)values};
                    const intptr_t st[2] = {(intptr_t)isz, sizeof(double)};
                    to_dtype(d, st, nr * rw, NULL);
                }
                for (int op = 0; op < 3; op++) {
                    for (intptr_t c = 0; c < nc; c++) {
                        const char *col = a + c * cs * (intptr_t)isz;
                        if (f64) {
                            double v = op == 0 ? cols_sum_double(dtype, col, rs, nr)
                                               : cols_ext_double(dtype, op == 2, col, rs, nr);
                            memcpy(want + c * 8, &v, 8);
                        } else {
                            float v = op == 0 ? cols_sum_float(dtype, col, rs, nr)
                                              : cols_ext_float(dtype, op == 2, col, rs, nr);
                            memcpy(want + c * 4, &v, 4);
                        }
                    }
                    for (int j = 0; j < g->n * 2; j++) {
                        const int streams = j % 2, kop = op | (streams ? DISPATCH_COLS_STREAMS : 0);
                        const dispatch_kernel_any_fn fn = g->e[j / 2]->fn;
                        memset(got, 0xA5, MAXC * 8);
                        if (f64)
                            ((dispatch_rk_cols_f64_fn)fn)(kop, a, rs, nr, nc, (double *)(void *)got,
                                                          scratch);
                        else
                            ((dispatch_rk_cols_f32_fn)fn)(kop, a, rs, nr, nc, (float *)(void *)got,
                                                          scratch);
                        compared++;
                        for (intptr_t c = 0; c < nc; c++) {
                            if (agree(odt, got + c * osz, want + c * osz, 0)) continue;
                            snprintf(label, sizeof label, "%s(dim=0) %s%s%s, run %d", ops[op],
                                     dispatch_dtype_name(dtype),
                                     cs == 2 ? " of every other column" : "",
                                     streams ? ", two streams" : "", run);
                            snprintf(what, sizeof what, "%s: %s", g->where[j / 2], label);
                            report(what, (int)nr, (int)c, got + c * osz, want + c * osz, osz);
                            break;
                        }
                    }
                }
            }
    free(a), free(got), free(want), free(scratch), free(values);
}

/* EXT_ROWS: each row's max and min against ARG's reference on the row
 * gathered (its value: the first NaN, else the first of equal extremes),
 * rows of elements one, two (Note [Extremes of every other element] in
 * sum.dispatch.c) and three apart, one to five rows, lengths around every
 * pass's vectors; any bits and specials, few values (ties), a planted NaN,
 * infinities and zeros of both signs. Each case's memory ends at its last
 * row's last element (an address checker sees a read past the view). */
static void check_ext_rows(const entry_group *g) {
    const int dtype = g->e[0]->dtype;
    const intptr_t isz = (intptr_t)dispatch_dtype_itemsize(dtype);
    static const int elens[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128,
                                129, 255, 256, 257, 511, 513, 1025, 2049, 4099};
    enum { NE = sizeof elens / sizeof elens[0], ROWS = 5, MAXE = 4099 };
    char row[MAXE * 8], got[ROWS * 8], label[80], what[MAXTARGETS][200];
    snprintf(label, sizeof label, "max/min of rows %s", dispatch_dtype_name(dtype));
    name_group(g, label, what);
    for (int run = 0; run < 4; run++)
        for (int step = 1; step <= 3; step++)
            for (int li = 0; li < NE; li++)
                for (int nrows = 1; nrows <= ROWS; nrows += 2) {
                    const intptr_t n = elens[li], st = step * isz, rs = (n - 1) * st + isz;
                    char *a = malloc((size_t)(nrows * rs)); /* ends at the last row's end */
                    fill(dtype, a, (int)(nrows * rs / isz), NULL);
                    for (intptr_t i = 0; run >= 1 && i < nrows * rs / isz; i++) {
                        static const double zi[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY};
                        store_as(dtype, a + i * isz,
                                 run == 3 ? zi[next() % 6] : (double)(next() % 5));
                    }
                    if (run == 2) /* one NaN a row */
                        for (int r = 0; r < nrows; r++)
                            store_as(dtype, a + r * rs + (intptr_t)(next() % (uint64_t)n) * st,
                                     NAN);
                    for (int is_min = 0; is_min < 2; is_min++)
                        for (int j = 0; j < g->n; j++) {
                            memset(got, 0xA5, sizeof got);
                            ((dispatch_rk_ext_rows_fn)g->e[j]->fn)(is_min, a, rs, st, n, nrows, got,
                                                                  isz);
                            compared++;
                            for (int r = 0; r < nrows; r++) {
                                for (intptr_t i = 0; i < n; i++)
                                    memcpy(row + i * isz, a + r * rs + i * st, (size_t)isz);
                                const char *want = row + arg_reference(dtype, is_min, row, n) * isz;
                                if (agree(dtype, got + r * isz, want, 0)) continue;
                                char w[300];
                                snprintf(w, sizeof w, "%.200s (%s, %d apart, %d rows, row %d)",
                                         what[j], is_min ? "min" : "max", step, nrows, r);
                                report(w, (int)n, run, got + r * isz, want, (size_t)isz);
                                break;
                            }
                        }
                    free(a);
                }
}

/* The value of a bool or integer element, by the reference cast. */
static int64_t int_at(int dtype, const char *p) {
    int64_t v;
    char *d[2] = {(char *)&v, (char *)p};
    intptr_t st[2] = {0, 0};
    dispatch_cast_loop_reference(dtype, DISPATCH_INT64)(d, st, 1, NULL);
    return v;
}

/* INT's column max/min (acc_step one accumulator per column, the rows a
 * matrix), in the register form and with DISPATCH_COLS_STREAMS (Note
 * [Integer column streams]): each column's max/min element by element. */
static void check_int_cols(const entry_group *g) {
    const dispatch_kernel_export *e = g->e[0];
    int dtype = e->dtype;
    size_t isz = dispatch_dtype_itemsize(dtype);
    static const int rowsv[] = {1, 2, 3, 31, 32, 33, 100, 301};
    static const int colsv[] = {1, 7, 31, 64, 65, 130, 513, 2100};
    enum { MAXR = 301, MAXC = 2100, PAD = 5 };
    char *a = malloc((size_t)MAXR * (MAXC + PAD) * isz), *acc = malloc(MAXC * isz),
         *want = malloc(MAXC * isz), what[200];
    for (size_t ri = 0; ri < sizeof rowsv / sizeof rowsv[0]; ri++)
        for (size_t ci = 0; ci < sizeof colsv / sizeof colsv[0]; ci++) {
            const intptr_t nr = rowsv[ri], nc = colsv[ci], rs = (nc + PAD) * (intptr_t)isz;
            fill(dtype, a, (int)(nr * (nc + PAD)), NULL);
            for (int op = 1; op <= 2; op++) {
                for (intptr_t c = 0; c < nc; c++) { /* the identity: the first row */
                    memcpy(want + c * (intptr_t)isz, a + c * (intptr_t)isz, isz);
                    for (intptr_t r = 1; r < nr; r++) {
                        const char *x = a + r * rs + c * (intptr_t)isz;
                        int64_t xv = int_at(dtype, x), wv = int_at(dtype, want + c * (intptr_t)isz);
                        if (op == 1 ? xv > wv : xv < wv) memcpy(want + c * (intptr_t)isz, x, isz);
                    }
                }
                for (int j = 0; j < g->n * 2; j++) {
                    const int streams = j % 2;
                    memcpy(acc, a, (size_t)nc * isz);
                    const int kop = op | (streams ? DISPATCH_COLS_STREAMS : 0);
                    ((dispatch_rk_int_fn)g->e[j / 2]->fn)(kop, dtype, a + rs, (intptr_t)isz, nc,
                                                          acc, (intptr_t)isz, nr - 1, rs, 0);
                    compared++;
                    for (intptr_t c = 0; c < nc; c++) {
                        if (memcmp(acc + c * (intptr_t)isz, want + c * (intptr_t)isz, isz) == 0) continue;
                        snprintf(what, sizeof what, "%s: %s(dim=0) %s%s", g->where[j / 2],
                                 op == 1 ? "max" : "min", dispatch_dtype_name(dtype),
                                 streams ? ", two streams" : "");
                        report(what, (int)nr, (int)c, acc + c * (intptr_t)isz, want + c * (intptr_t)isz, isz);
                        break;
                    }
                }
            }
        }
    free(a), free(acc), free(want);
}

static void check_reduce(const entry_group *g) {
    const int named = g->e[0]->named;
    if (named == DISPATCH_RK_FOLD_PROD || named == DISPATCH_RK_FOLD_COLS_PROD ||
        named == DISPATCH_RK_FOLD_COLS_EVEN_PROD)
        check_prod(g);
    else if (named == DISPATCH_RK_DOT) check_dot(g);
    else if (named == DISPATCH_RK_ARG) check_arg(g);
    else if (named == DISPATCH_RK_ARG_COLS) check_arg_cols(g);
    else if (named == DISPATCH_RK_COLS || named == DISPATCH_RK_COLS_EVEN) check_cols(g);
    else if (named == DISPATCH_RK_EXT_ROWS) check_ext_rows(g);
    else if (named == DISPATCH_RK_INT) check_int_cols(g);
    else return;
    reduce_entries += g->n;
}

/* Entry e of table t and its kin in the other tables of a source: the same
 * (loop, dtype, named) the same number of times before it in its table. */
static int same_kind(const dispatch_kernel_export *a, const dispatch_kernel_export *b) {
    return a->loop == b->loop && a->dtype == b->dtype && a->named == b->named;
}
static int rank_in(const dispatch_kernel_export *table, const dispatch_kernel_export *e) {
    int r = 0;
    for (const dispatch_kernel_export *x = table; x != e; x++) r += same_kind(x, e);
    return r;
}
static const dispatch_kernel_export *find_in(const dispatch_kernel_export *table,
                                             const dispatch_kernel_export *e, int rank) {
    for (const dispatch_kernel_export *x = table; x->fn != NULL; x++)
        if (same_kind(x, e) && rank-- == 0) return x;
    return NULL;
}

int main(void) {
    long loops = 0, casts = 0, tables = 0;
    if (dispatch_kernels_simd_init() != 0) { /* the sum kernel, dot's reference */
        fprintf(stderr, "the kernels did not initialise\n");
        return 1;
    }
    dispatch_kernel_tables all;
    static entry_group g;
    for (int s = 0; dispatch_kernels_target_tables(s, &all) >= 0; s++) {
        for (int t = 0; t < all.count; t++, tables++) {
            for (const dispatch_kernel_export *e = all.table[t]; e->fn != NULL; e++) {
                /* each entry once, with its kin of the tables after this one
                 * (those of an earlier table have run it) */
                const int rank = rank_in(all.table[t], e);
                int seen = 0;
                for (int u = 0; u < t && !seen; u++) seen = find_in(all.table[u], e, rank) != NULL;
                if (seen) continue;
                g.n = 0;
                for (int u = t; u < all.count; u++) {
                    const dispatch_kernel_export *x = find_in(all.table[u], e, rank);
                    if (x == NULL) continue;
                    g.e[g.n] = x;
                    snprintf(g.where[g.n++], sizeof g.where[0], "%s [%s]",
                             dispatch_kernels_source_name(s), all.target[u]);
                }
                if (e->loop >= 0) check_loop(&g), loops += g.n;
                else if (e->loop == DISPATCH_KERNELS_CAST_ENTRY) check_cast(&g), casts += g.n;
                else if (e->loop == DISPATCH_KERNELS_REDUCE_ENTRY) check_reduce(&g);
                else if (is_half_scalar(e)) check_half_scalar(&g);
            }
        }
    }
    printf("test_loops_targets: %ld target tables, %ld loop (%ld with a 2-D loop), %ld cast and "
           "%ld reduction entries, %ld runs compared, %ld failures\n", tables, loops, entries_2d,
           casts, reduce_entries, compared, failures);
    if (tables == 0 || casts == 0 || reduce_entries == 0 || entries_2d == 0) {
        fprintf(stderr, "no target table, cast or product/dot kernel was found: nothing was tested\n");
        return 1;
    }
    return failures != 0;
}
