/* Does the compiler build VXE2 code? One intrinsic, compiled to an object. */
#include <vecintrin.h>

int dispatch_check_vxe2(const void *mem);

int dispatch_check_vxe2(const void *mem)
{
    const float *p = (const float *)mem;
    __vector int a = vec_xl(0, (const int *)p);
    __vector float f = vec_float(a);
    return (int)vec_extract(f, 0);
}
