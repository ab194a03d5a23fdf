/* Does the compiler build VSX code? One intrinsic, compiled to an object. */
#include <altivec.h>

int dispatch_check_vsx(const void *mem);

int dispatch_check_vsx(const void *mem)
{
    const float *p = (const float *)mem;
    __vector double a = vec_xl(0, (const double *)p);
    return (int)vec_extract(vec_add(a, a), 0);
}
