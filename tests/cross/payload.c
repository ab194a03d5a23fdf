/*
 * Code built with the baseline flags (tests/cross/cpu_report.c): a loop the
 * compiler vectorises with the baseline's instructions, so a CPU that lacks
 * them would die here if the check before it were missing.
 */
double cross_payload(void);

double cross_payload(void)
{
    static volatile int n = 1024;
    double a[1024], s = 0;
    for (int i = 0; i < n; i++)
        a[i] = 0.5 * i;
    for (int i = 0; i < n; i++)
        s += a[i] * 2.0;
    return s; /* sum of 0 .. 1023: 523776.0 */
}
