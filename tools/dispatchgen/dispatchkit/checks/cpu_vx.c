/* Does the compiler build VX code? One intrinsic, compiled to an object. */
#include <vecintrin.h>

int dispatch_check_vx(const void *mem);

int dispatch_check_vx(const void *mem)
{
    const float *p = (const float *)mem;
    __vector double a = vec_xl(0, (const double *)p);
    return (int)vec_extract(a + a, 0);
}
