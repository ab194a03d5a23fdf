/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * addcmul, float32/float64: out = self + value * t1 * t2, evaluated as
 * self + ((value * t1) * t2) with three roundings and no fused multiply-add,
 * like the reference loop, so every target gives the same bits.
 * data = {out, self, t1, t2}; ctx: const T *value (NULL: 1). Each input
 * contiguous or broadcast (stride 0) takes the vector path.
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"
#include "kernels_loops.h"

/* Element strides: the same three roundings (-ffp-contract=off: no fused
 * multiply-add; each product assigned to a T, so a target that evaluates
 * float in double, s390x's C11 mode, rounds it as the reference does),
 * typed, in one inlined loop (out stride so, inputs sa). */
#define ADDCMUL_STRIDED(T, S)                                                          \
    static inline __attribute__((always_inline)) void addcmul_strided_##S(            \
        T *o, const T *a, const T *b, const T *c, intptr_t so, intptr_t sa, intptr_t n, \
        T value)                                                                       \
    {                                                                                  \
        for (intptr_t i = 0; i < n; i++) {                                             \
            const T vb = value * b[i * sa], vbc = vb * c[i * sa];                      \
            o[i * so] = a[i * sa] + vbc;                                               \
        }                                                                              \
    }                                                                                  \
    static void addcmul_strided4_##S(T *o, const T *a, const T *b, const T *c,         \
                                     intptr_t so, intptr_t sa, intptr_t sb, intptr_t sc, \
                                     intptr_t n, T value)                              \
    {                                                                                  \
        for (intptr_t i = 0; i < n; i++) {                                             \
            const T vb = value * b[i * sb], vbc = vb * c[i * sc];                      \
            o[i * so] = a[i * sa] + vbc;                                               \
        }                                                                              \
    }
ADDCMUL_STRIDED(float, f32)
ADDCMUL_STRIDED(double, f64)

#define DISPATCH_KERNELS_ADDCMUL_LOOP(NAME, T, S)                                      \
    DISPATCH_KERNELS_NOINLINE /* its 2-D loop calls it */                              \
    void DISPATCH_CPU_DISPATCH_CURFX(NAME)(char **data, const intptr_t *steps,         \
                                           intptr_t n, void *ctx)                      \
    {                                                                                  \
        const intptr_t L = DISPATCH_KERNELS_LANES(S), sz = (intptr_t)sizeof(T);        \
        T value = (T)1;                                                                \
        if (ctx) memcpy(&value, ctx, sizeof(T));                                       \
        const dv_##S v = dv_set1_##S(value);                                           \
        intptr_t i = 0;                                                                \
        /* each input contiguous or a broadcast scalar (splat once) */                \
        const int ua = steps[1] == sz, ub = steps[2] == sz, uc = steps[3] == sz;       \
        if (steps[0] == sz && (ua || steps[1] == 0) && (ub || steps[2] == 0) &&         \
            (uc || steps[3] == 0)) {                                                   \
            T *o = (T *)data[0];                                                       \
            const T *a = (const T *)data[1], *b = (const T *)data[2];                  \
            const T *c = (const T *)data[3];                                           \
            const dv_##S sa = dv_set1_##S(*a), sb = dv_set1_##S(*b), sc = dv_set1_##S(*c); \
            for (; i + L <= n; i += L) {                                               \
                const dv_##S vb = ub ? dv_load_##S(b + i) : sb;                        \
                const dv_##S vc = uc ? dv_load_##S(c + i) : sc;                        \
                const dv_##S va = ua ? dv_load_##S(a + i) : sa;                        \
                dv_store_##S(o + i, dv_add_##S(va, dv_mul_##S(dv_mul_##S(v, vb), vc))); \
            }                                                                          \
        }                                                                              \
        else if (steps[0] == sz && steps[1] == 2 * sz && steps[2] == 2 * sz &&          \
                 steps[3] == 2 * sz) {                                                 \
            /* every other column (Note [Strided paths] in loop_paths.h): typed, with  \
             * constant strides, so the compiler vectorizes it */                      \
            addcmul_strided_##S((T *)data[0], (const T *)data[1], (const T *)data[2],   \
                                (const T *)data[3], 1, 2, n, value);                   \
            return;                                                                    \
        } else if (steps[0] % sz == 0 && steps[1] % sz == 0 && steps[2] % sz == 0 &&    \
                   steps[3] % sz == 0 && (steps[0] != 0 || n == 1)) {                  \
            addcmul_strided4_##S((T *)data[0], (const T *)data[1], (const T *)data[2],  \
                                 (const T *)data[3], steps[0] / sz, steps[1] / sz,     \
                                 steps[2] / sz, steps[3] / sz, n, value);              \
            return;                                                                    \
        }                                                                              \
        char *po = data[0] + i * steps[0];                                             \
        const char *pa = data[1] + i * steps[1], *pb = data[2] + i * steps[2];         \
        const char *pc = data[3] + i * steps[3];                                       \
        for (; i < n; i++) {                                                           \
            T a, b, c, r;                                                              \
            memcpy(&a, pa, sizeof(T));                                                 \
            memcpy(&b, pb, sizeof(T));                                                 \
            memcpy(&c, pc, sizeof(T));                                                 \
            T vb = value * b;                                                          \
            T vbc = vb * c;                                                            \
            r = a + vbc;                                                               \
            memcpy(po, &r, sizeof(T));                                                 \
            po += steps[0]; pa += steps[1]; pb += steps[2]; pc += steps[3];            \
        }                                                                              \
    }

DISPATCH_KERNELS_ADDCMUL_LOOP(dispatch_kernel_addcmul_f32, float, f32)
DISPATCH_KERNELS_ADDCMUL_LOOP(dispatch_kernel_addcmul_f64, double, f64)
DISPATCH_KERNELS_LOOP2D(dispatch_kernel_addcmul_f32, 4)
DISPATCH_KERNELS_LOOP2D(dispatch_kernel_addcmul_f64, 4)

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(addcmul,
    DISPATCH_KERNELS_LOOP_WITH_2D(ADDCMUL, FLOAT32, dispatch_kernel_addcmul_f32, 1)
    DISPATCH_KERNELS_LOOP_WITH_2D(ADDCMUL, FLOAT64, dispatch_kernel_addcmul_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "addcmul.dispatch.h"
DISPATCH_KERNELS_CHOOSER(addcmul)
#endif
