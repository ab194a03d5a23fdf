/* Does the compiler build VXE code? One intrinsic, compiled to an object. */
#include <vecintrin.h>

int dispatch_check_vxe(const void *mem);

int dispatch_check_vxe(const void *mem)
{
    const float *p = (const float *)mem;
    __vector float a = vec_xl(0, (const float *)p);
    return (int)vec_extract(a + a, 0);
}
