/* Does the compiler build VSX3 code? One intrinsic, compiled to an object. */
#include <altivec.h>

int dispatch_check_vsx3(const void *mem);

int dispatch_check_vsx3(const void *mem)
{
    const float *p = (const float *)mem;
    __vector unsigned int a = vec_xl(0, (const unsigned int *)p);
    return (int)vec_extract(vec_absd(a, a), 0);
}
