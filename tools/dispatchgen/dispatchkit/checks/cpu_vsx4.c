/* Does the compiler build VSX4 code? One intrinsic, compiled to an object. */
#include <altivec.h>

int dispatch_check_vsx4(const void *mem);

int dispatch_check_vsx4(const void *mem)
{
    const float *p = (const float *)mem;
    __vector unsigned int a = vec_xl(0, (const unsigned int *)p);
    return (int)vec_extract(vec_mod(a, a), 0);
}
