/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx */
/* pyext's C dispatchable source: the sum of a list of doubles, and the name
 * of the variant that ran. */
#include <stddef.h>

#include "dispatch/cpu_dispatch.h"

double DISPATCH_CPU_DISPATCH_CURFX(pyext_sum)(const double *x, size_t n);
const char *DISPATCH_CPU_DISPATCH_CURFX(pyext_sum_target)(void);

double DISPATCH_CPU_DISPATCH_CURFX(pyext_sum)(const double *x, size_t n)
{
    double acc = 0.0;
    for (size_t i = 0; i < n; ++i) {
        acc += x[i];
    }
    return acc;
}

const char *DISPATCH_CPU_DISPATCH_CURFX(pyext_sum_target)(void)
{
    return DISPATCH_CPU_DISPATCH_CURRENT_NAME;
}
