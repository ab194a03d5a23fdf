/* Does the compiler build VSX2 code? One intrinsic, compiled to an object. */
#include <altivec.h>

int dispatch_check_vsx2(const void *mem);

int dispatch_check_vsx2(const void *mem)
{
    const float *p = (const float *)mem;
    __vector unsigned long long a = vec_xl(0, (const unsigned long long *)p);
    return (int)vec_extract(vec_add(a, a), 0);
}
