/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx */
/*
 * The smallest dispatchable source: each variant reports the target it was
 * built for and proves it can run that target's instructions. Used by the
 * tests to check which variant the running CPU gets.
 */
#include "dispatch/cpu_dispatch.h"

const char *DISPATCH_CPU_DISPATCH_CURFX(probe_whoami)(void);
const char *DISPATCH_CPU_DISPATCH_CURFX(probe_whoami)(void)
{
    return DISPATCH_CPU_DISPATCH_CURRENT_NAME;
}

/* Sum of 16 floats with the widest vectors this target has: executing it on
 * a CPU without those instructions would fault, so a correct result proves
 * the variant really ran here. */
float DISPATCH_CPU_DISPATCH_CURFX(probe_sum16)(const float *x);
float DISPATCH_CPU_DISPATCH_CURFX(probe_sum16)(const float *x)
{
#if defined(DISPATCH_HAVE_AVX512F)
    return _mm512_reduce_add_ps(_mm512_loadu_ps(x));
#elif defined(DISPATCH_HAVE_AVX)
    __m256 v = _mm256_add_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_hadd_ps(h, h);
    return _mm_cvtss_f32(_mm_hadd_ps(h, h));
#else
    float s = 0.0f;
    for (int i = 0; i < 16; i++) {
        s += x[i];
    }
    return s;
#endif
}
