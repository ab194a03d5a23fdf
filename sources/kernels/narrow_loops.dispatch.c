/*@targets baseline sse42 (avx2 fma3) avx512_skx asimdhp vsx3 vxe rvv */
/*
 * Every loop of every narrow float (float16 and DISPATCH_FORALL_BITS_FLOATS'
 * rows) for every layout, compiled per target (Note [Generic dispatched
 * loops] in loop_paths.h). Computing loops go via float, as the reference's
 * do (Note [Narrow floats] in dtype.h): a chunk of each input widened by
 * vector (Note [Narrow floats by vector] in narrow_vector.h), the float32
 * loop registered for this CPU run on the chunk (a broadcast input stays a
 * scalar operand there), and the results narrowed by vector, once each; a
 * comparison writes its bool bytes directly. where, fill and copy move bits;
 * neg and abs flip or clear the sign bit (below).
 * half_arith.dispatch.c's float16 kernels, and its bfloat16 ones on x86 from
 * AVX2 (Note [bfloat16 beside float16]), registered after these, keep their
 * pairs.
 *
 * The float32 loop is the one the table holds at the call: the SIMD kernel
 * of arith, exp_log, addcmul or float_loops, which give the reference's bits
 * (exp, log, expm1, log1p and tanh their documented bounds, then one
 * rounding to the narrow format).
 */
#include "loop_paths.h"
#include "narrow_vector.h"
#include "simd.h"

#define CHUNK 512 /* elements per chunk: 4 float buffers of 2 KiB on the stack */

typedef void (*to_f32_fn)(float *dst, const void *src, intptr_t n);
typedef void (*from_f32_fn)(void *dst, const float *src, intptr_t n);

/* The loop `loop` of a narrow float of `isz` bytes, through float32. */
static void via_f32(int loop, int dtype, size_t isz, to_f32_fn to, from_f32_fn from,
                    char **data, const intptr_t *s, intptr_t n, void *ctx)
{
    float buf[4][CHUNK], value;
    uint64_t packed[CHUNK * 2 / sizeof(uint64_t)]; /* a strided chunk, packed: 2 bytes or less */
    void *fctx = NULL;
    if (ctx) {
        to(&value, ctx, 1);
        fctx = &value;
    }
    const int nin = dispatch_loop_nin(loop);
    /* A loop that moves bits (copy; where, whose condition is bool; fill,
     * with no input) is the reference's: the bit moves of this source
     * replace where's and fill's, and copy's reference is memmove. */
    int moves = loop == DISPATCH_LOOP_COPY || nin == 0;
    for (int k = 1; k <= nin; k++)
        moves |= dispatch_loop_operand_dtype(loop, k, dtype) == DISPATCH_BOOL;
    if (moves) {
        dispatch_loop_reference(loop, dtype)(data, s, n, ctx);
        return;
    }
    const int bool_out = dispatch_loop_operand_dtype(loop, 0, dtype) == DISPATCH_BOOL;
    const dispatch_loop_fn f32 = dispatch_loop_get(loop, DISPATCH_FLOAT32);
    const intptr_t z = (intptr_t)isz;
    char *d[4];
    intptr_t st[4];
    for (int k = 1; k <= nin; k++) {
        if (s[k] == 0) to(buf[k], data[k], 1); /* a broadcast input: once */
        d[k] = (char *)buf[k];
        st[k] = s[k] == 0 ? 0 : (intptr_t)sizeof(float);
    }
    for (intptr_t i = 0; i < n; i += CHUNK) {
        const intptr_t m = n - i < CHUNK ? n - i : CHUNK;
        for (int k = 1; k <= nin; k++) {
            const char *p = data[k] + i * s[k];
            if (s[k] == 0) continue;
            if (s[k] != z) {
                dk_gather_bits(packed, p, s[k], z, m);
                p = (const char *)packed;
            }
            to(buf[k], p, m);
        }
        d[0] = bool_out ? data[0] + i * s[0] : (char *)buf[0];
        st[0] = bool_out ? s[0] : (intptr_t)sizeof(float);
        f32(d, st, m, fctx);
        if (bool_out) continue;
        char *o = data[0] + i * s[0];
        if (s[0] == z) {
            from(o, buf[0], m);
        } else {
            from(packed, buf[0], m);
            dk_scatter_bits(o, s[0], packed, z, m);
        }
    }
}

/* float16's runs, by the signature via_f32 takes. */
static void f16_to_f32(float *dst, const void *src, intptr_t n) { dk_f16_to_f32_n(dst, src, n); }
static void f32_to_f16(void *dst, const float *src, intptr_t n) { dk_f32_to_f16_n(dst, src, n); }
#define BITS_RUNS_(NAME, sfx, T, E, M, NANS)                                              \
    static void sfx##_to_f32(float *dst, const void *src, intptr_t n) {                   \
        dk_##sfx##_to_f32_n(dst, (const T *)src, n);                                      \
    }                                                                                     \
    static void f32_to_##sfx(void *dst, const float *src, intptr_t n) {                   \
        dk_f32_to_##sfx##_n((T *)dst, src, n);                                            \
    }
DISPATCH_FORALL_BITS_FLOATS(BITS_RUNS_)

/* The storage size of a bits-list row, by its storage type. */
#define BITS_SIZE_(T) BITS_SIZE_##T
#define BITS_SIZE_uint8_t 1
#define BITS_SIZE_uint16_t 2
#define BITS_SIZE_dispatch_bfloat16 2

/* neg and abs by the sign bit, in every layout DK_UNARY takes: the bits
 * -x and fabs(x) give in float, rounded back exactly; a NaN stays a NaN of
 * the same payload (the reference's round trip may quiet it). Every format
 * of the bits list has a sign bit of its own (IEEE or FN: a NaN of either
 * sign), so one form serves them all. */
#define SIGN_LOOPS_(NAME, sfx, size, SIGN)                                                \
    DK_UNARY(dk_negbits_##sfx, NEG, NAME, DK_U(size), DK_U(size), a ^ (SIGN))             \
    DK_UNARY(dk_absbits_##sfx, ABS, NAME, DK_U(size), DK_U(size), a & (DK_U(size))~(SIGN))
SIGN_LOOPS_(FLOAT16, f16, 2, 0x8000u)
#define SIGN_BITS_(NAME, sfx, T, E, M, NANS)                                              \
    SIGN_LOOPS_(NAME, sfx, BITS_SIZE_(T), DISPATCH_NARROW_SIGN_(E, M))
DISPATCH_FORALL_BITS_FLOATS(SIGN_BITS_)

/*
 * Fused arithmetic of a bits-list format (sqrt: Note [Fused sqrt] below):
 * add, sub, mul and div widen each element, compute one float result
 * (a + (alpha * b) rounded as the float32 loop rounds it, each step cast to
 * float: Note [Excess precision] in cpu_loops_reference.c) and round it
 * back, in one pass, in every layout of whole-element strides, where via_f32
 * makes three passes over chunk buffers. The bits are via_f32's: the same
 * float operations, one rounding to the format. float16's are
 * half_arith.dispatch.c's kernels, and bfloat16's on x86 from AVX2.
 */
/*
 * Note [Fused sqrt]
 * ~~~~~~~~~~~~~~~~~
 * sqrt of a contiguous run of a bits-list format: 64 elements at a time
 * widened into one buffer, their float sqrt by this target's vectors, and
 * rounded back, with no call through the loop table between. via_f32's
 * three passes over 512-element chunks, the sqrt an indirect call to the
 * float32 loop (arith's, which stops at AVX2), took 73 us for 256K
 * bfloat16 where torch took 51; this 51. A float sqrt is correctly
 * rounded everywhere, so the bits are via_f32's. (64 elements, not 512:
 * 1024 measured 72 us, 256 60; the other loops' via_f32 chunks measured
 * slower at 64.)
 */
enum { FUSED_ADD, FUSED_ADD_K, FUSED_SUB, FUSED_SUB_K, FUSED_MUL, FUSED_DIV };
#define FUSED_BITS_(NAME, sfx, T, E, M, NANS)                                             \
    DK_INLINE void fused_run_##sfx(int op, T *o, const T *pa, const T *pb, intptr_t so,   \
                                   intptr_t sa, intptr_t sb, intptr_t n, const float k)   \
    {                                                                                     \
        for (intptr_t i = 0; i < n; i++) {                                                \
            const float a = dk_##sfx##_to_f32(pa[i * sa]), b = dk_##sfx##_to_f32(pb[i * sb]); \
            const float r = op == FUSED_ADD     ? a + b                                   \
                            : op == FUSED_ADD_K ? a + (float)(k * b)                      \
                            : op == FUSED_SUB   ? a - b                                   \
                            : op == FUSED_SUB_K ? a - (float)(k * b)                      \
                            : op == FUSED_MUL   ? a * b                                   \
                                                : a / b;                                  \
            o[i * so] = dk_f32_to_##sfx((float)r);                                        \
        }                                                                                 \
    }                                                                                     \
    DK_INLINE void fused_op_##sfx(int op, T *o, const T *pa, const T *pb, intptr_t so,    \
                                  intptr_t sa, intptr_t sb, intptr_t n, const float k)    \
    {                                                                                     \
        if (so == 1 && sa == 1 && sb == 1) fused_run_##sfx(op, o, pa, pb, 1, 1, 1, n, k); \
        else if (so == 1 && sa == 0 && sb == 1) fused_run_##sfx(op, o, pa, pb, 1, 0, 1, n, k); \
        else if (so == 1 && sa == 1 && sb == 0) fused_run_##sfx(op, o, pa, pb, 1, 1, 0, n, k); \
        else if (so == 1 && sa == 2 && sb == 2) fused_run_##sfx(op, o, pa, pb, 1, 2, 2, n, k); \
        /* one operand every other element: x[:, ::2] + y took 2.2 ns an     \
         * element in the loop of any strides, 0.47 here (SSE4.2) */        \
        else if (so == 1 && sa == 2 && sb == 1) fused_run_##sfx(op, o, pa, pb, 1, 2, 1, n, k); \
        else if (so == 1 && sa == 1 && sb == 2) fused_run_##sfx(op, o, pa, pb, 1, 1, 2, n, k); \
        else if (so == 2 && sa == 2 && sb == 1) fused_run_##sfx(op, o, pa, pb, 2, 2, 1, n, k); \
        else fused_run_##sfx(op, o, pa, pb, so, sa, sb, n, k);                            \
    }                                                                                     \
    /* sqrt of a contiguous run (Note [Fused sqrt]) */                               \
    DK_INLINE void fused_sqrt_##sfx(T *o, const T *a, intptr_t n)                         \
    {                                                                                     \
        enum { W = 64 };                                                                 \
        float w[W];                                                                       \
        for (intptr_t i = 0; i < n; i += W) {                                             \
            const intptr_t m = n - i < W ? n - i : W;                                     \
            dk_##sfx##_to_f32_n(w, a + i, m);                                             \
            intptr_t j = 0;                                                               \
            for (; j + DV_LANES_F32 <= m; j += DV_LANES_F32)                              \
                dv_store_f32(w + j, dv_sqrt_f32(dv_load_f32(w + j)));                     \
            for (; j < m; j++) w[j] = __builtin_sqrtf(w[j]);                              \
            dk_f32_to_##sfx##_n(o + i, w, m);                                             \
        }                                                                                 \
    }                                                                                     \
    /* 1 when loop is one of the four and the strides are whole elements, or   \
     * sqrt on contiguous operands. */                                                   \
    DK_INLINE int fused_##sfx(int loop, char **data, const intptr_t *s, intptr_t n, void *ctx) \
    {                                                                                     \
        const intptr_t z = (intptr_t)sizeof(T);                                           \
        if (loop == DISPATCH_LOOP_SQRT && s[0] == z && s[1] == z) {                       \
            fused_sqrt_##sfx((T *)data[0], (const T *)data[1], n);                        \
            return 1;                                                                     \
        }                                                                                 \
        if ((loop != DISPATCH_LOOP_ADD && loop != DISPATCH_LOOP_SUB &&                    \
             loop != DISPATCH_LOOP_MUL && loop != DISPATCH_LOOP_DIV) ||                   \
            !DK_ELEMS(s[0], z) || !DK_ELEMS(s[1], z) || !DK_ELEMS(s[2], z))               \
            return 0;                                                                     \
        T kb;                                                                             \
        float k = 1.0f;                                                                   \
        if (ctx) memcpy(&kb, ctx, sizeof kb), k = dk_##sfx##_to_f32(kb);                  \
        T *o = (T *)data[0];                                                              \
        const T *pa = (const T *)data[1], *pb = (const T *)data[2];                       \
        const intptr_t so = s[0] / z, sa = s[1] / z, sb = s[2] / z;                       \
        if (loop == DISPATCH_LOOP_MUL) fused_op_##sfx(FUSED_MUL, o, pa, pb, so, sa, sb, n, k); \
        else if (loop == DISPATCH_LOOP_DIV)                                               \
            fused_op_##sfx(FUSED_DIV, o, pa, pb, so, sa, sb, n, k);                       \
        else if (loop == DISPATCH_LOOP_ADD)                                               \
            fused_op_##sfx(k == 1.0f ? FUSED_ADD : FUSED_ADD_K, o, pa, pb, so, sa, sb, n, k); \
        else fused_op_##sfx(k == 1.0f ? FUSED_SUB : FUSED_SUB_K, o, pa, pb, so, sa, sb, n, k); \
        return 1;                                                                         \
    }
DISPATCH_FORALL_BITS_FLOATS(FUSED_BITS_)
/* float16 has none here: half_arith's kernels where F16C, AVX512FP16 or
 * ASIMDHP give it vectors, via_f32's chunks elsewhere. */
DK_INLINE int fused_f16(int loop, char **data, const intptr_t *s, intptr_t n, void *ctx)
{
    (void)loop, (void)data, (void)s, (void)n, (void)ctx;
    return 0;
}

/* The via-float loop of every loop of the table (operators.toml's [[loop]]s,
 * so a new operator's narrow floats get one with no edit here), for float16
 * and each row of the bits list; where, fill and copy move bits (below). */
#define VIA_(NAME, sfx, size, LOOP)                                                       \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                                 \
    void DISPATCH_CPU_DISPATCH_CURFX(dk_##LOOP##_##sfx)(char **data, const intptr_t *s,   \
                                                        intptr_t n, void *ctx);           \
    void DISPATCH_CPU_DISPATCH_CURFX(dk_##LOOP##_##sfx)(char **data, const intptr_t *s,   \
                                                        intptr_t n, void *ctx)            \
    {                                                                                     \
        if (DISPATCH_LOOP_##LOOP == DISPATCH_LOOP_NEG)                                    \
            DISPATCH_CPU_DISPATCH_CURFX(dk_negbits_##sfx)(data, s, n, ctx);               \
        else if (DISPATCH_LOOP_##LOOP == DISPATCH_LOOP_ABS)                               \
            DISPATCH_CPU_DISPATCH_CURFX(dk_absbits_##sfx)(data, s, n, ctx);               \
        else if (!fused_##sfx(DISPATCH_LOOP_##LOOP, data, s, n, ctx))                     \
            via_f32(DISPATCH_LOOP_##LOOP, DISPATCH_##NAME, size, sfx##_to_f32,            \
                    f32_to_##sfx, data, s, n, ctx);                                       \
    }                                                                                     \
    DISPATCH_KERNELS_LOOP2D(dk_##LOOP##_##sfx, DK_NOPS_##LOOP)

#define VIA_BITS_(LOOP, NAME, sfx, T, E, M, NANS) VIA_(NAME, sfx, BITS_SIZE_(T), LOOP)
#define VIA_LOOP_(LOOP, name, nin, ctx, bools)                                            \
    VIA_(FLOAT16, f16, 2, LOOP) DISPATCH_FORALL_BITS_FLOATS_WITH(VIA_BITS_, LOOP)
DISPATCH_FORALL_LOOPS(VIA_LOOP_)

#define MOVES_(NAME, sfx, size)                                                           \
    DK_WHERE(dk_where_##sfx, NAME, DK_U(size))                                            \
    DK_FILL(dk_fill_##sfx, NAME, DK_U(size))                                              \
    DK_COPY(dk_copy_##sfx, NAME, DK_U(size))
MOVES_(FLOAT16, f16, 2)
#define MOVES_BITS_(NAME, sfx, T, E, M, NANS) MOVES_(NAME, sfx, BITS_SIZE_(T))
DISPATCH_FORALL_BITS_FLOATS(MOVES_BITS_)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h):
 * the via-float loops, then the bit moves, which replace where's, fill's and copy's. */
#include "kernels_export.h"
#define ENTRY_BITS_(LOOP, NAME, sfx, T, E, M, NANS) DK_ENTRY(LOOP, NAME, dk_##LOOP##_##sfx)
#define ENTRY_LOOP_(LOOP, name, nin, ctx, bools)                                          \
    DK_ENTRY(LOOP, FLOAT16, dk_##LOOP##_f16) DISPATCH_FORALL_BITS_FLOATS_WITH(ENTRY_BITS_, LOOP)
#define MOVE_ENTRIES_(NAME, sfx, T, E, M, NANS)                                           \
    DK_ENTRY(WHERE, NAME, dk_where_##sfx) DK_ENTRY(FILL, NAME, dk_fill_##sfx)             \
    DK_ENTRY(COPY, NAME, dk_copy_##sfx)
DISPATCH_KERNELS_EXPORT(narrow_loops,
    DISPATCH_KERNELS_LOOP_WITH_2D(EXP, FLOAT16, dk_EXP_f16, 1) /* the one traced entry of this source */
    DISPATCH_FORALL_LOOPS(ENTRY_LOOP_)
    MOVE_ENTRIES_(FLOAT16, f16, dispatch_half, 5, 10, IEEE)
    DISPATCH_FORALL_BITS_FLOATS(MOVE_ENTRIES_)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "narrow_loops.dispatch.h"
DISPATCH_KERNELS_CHOOSER(narrow_loops)
#endif
