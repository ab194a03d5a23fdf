/*@targets baseline sse42 (avx2 fma3) avx512_skx */
/*
 * STREAM's triad, a[i] = b[i] + s * c[i] (float64), the memory-bandwidth
 * yardstick of tools/bench/run.py: built by the same toolkit and the same
 * flags as the kernels it is compared with. Plain stores, like the kernels
 * (a store that misses in cache first reads the line: STREAM counts 24
 * bytes per element, the hardware moves 32).
 */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"

void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_triad_f64)(double *a, const double *b,
                                                           const double *c, double s,
                                                           intptr_t n);
void DISPATCH_CPU_DISPATCH_CURFX(dispatch_kernel_triad_f64)(double *a, const double *b,
                                                           const double *c, double s,
                                                           intptr_t n)
{
    const intptr_t L = DV_LANES_F64;
    const dv_f64 k = dv_set1_f64(s);
    intptr_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        dv_store_f64(a + i, dv_add_f64(dv_load_f64(b + i), dv_mul_f64(k, dv_load_f64(c + i))));
        dv_store_f64(a + i + L, dv_add_f64(dv_load_f64(b + i + L), dv_mul_f64(k, dv_load_f64(c + i + L))));
    }
    for (; i < n; i++) a[i] = b[i] + s * c[i];
}

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(triad,
    DISPATCH_KERNELS_NAMED(TRIAD_F64, dispatch_kernel_triad_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "triad.dispatch.h"
DISPATCH_KERNELS_CHOOSER(triad)
#endif
