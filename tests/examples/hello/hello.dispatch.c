/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx asimdhp sve vsx3 vsx4 vx vxe rvv */
#include <stdio.h>

#include "dispatch/cpu_dispatch.h"

const char *DISPATCH_CPU_DISPATCH_CURFX(whoami)(void);
void DISPATCH_CPU_DISPATCH_CURFX(say_hello)(void);

const char *DISPATCH_CPU_DISPATCH_CURFX(whoami)(void)
{
    return DISPATCH_CPU_DISPATCH_CURRENT_NAME;
}

void DISPATCH_CPU_DISPATCH_CURFX(say_hello)(void)
{
    printf("hello from %s\n", DISPATCH_CPU_DISPATCH_CURRENT_NAME);
}
