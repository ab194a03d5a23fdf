/*@targets $maxopt baseline sse42 avx2 avx512_skx */
// pyext's C++ dispatchable source: scale a vector in place (std::transform).
#include <algorithm>
#include <cstddef>

#include "dispatch/cpu_dispatch.h"

extern "C" {
void DISPATCH_CPU_DISPATCH_CURFX(pyext_scale)(double *x, std::size_t n, double by);
const char *DISPATCH_CPU_DISPATCH_CURFX(pyext_scale_target)(void);
}

void DISPATCH_CPU_DISPATCH_CURFX(pyext_scale)(double *x, std::size_t n, double by)
{
    std::transform(x, x + n, x, [by](double v) { return v * by; });
}

const char *DISPATCH_CPU_DISPATCH_CURFX(pyext_scale_target)(void)
{
    return DISPATCH_CPU_DISPATCH_CURRENT_NAME;
}
