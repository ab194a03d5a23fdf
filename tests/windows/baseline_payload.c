/*
 * Code built with the baseline flags for tests/test_windows_guard.py: a loop
 * the compiler vectorises with the baseline's widest registers and, when the
 * baseline has AVX512FP16, a half-precision multiply (vmulsh), so a CPU that
 * lacks the baseline dies here if the guard has not stopped the program first.
 */
double baseline_payload(void);

double baseline_payload(void)
{
    static volatile int n = 1024;
    double a[1024], s = 0;
    for (int i = 0; i < n; i++)
        a[i] = 0.5 * i;
    for (int i = 0; i < n; i++)
        s += a[i] * 2.0;
#if defined(__AVX512FP16__)
    static volatile _Float16 half = 2.0f16;
    s += (double)(half * half) - 4.0;
#endif
    return s; /* sum of 0 .. 1023: 523776.0 */
}
