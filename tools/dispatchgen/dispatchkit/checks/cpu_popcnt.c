/* Does the compiler build POPCNT code? One intrinsic, compiled to an object. */
#include <popcntintrin.h>

int dispatch_check_popcnt(const void *mem);

int dispatch_check_popcnt(const void *mem)
{
    const float *p = (const float *)mem;
    unsigned int v;
    __builtin_memcpy(&v, p, sizeof(v));
    return _mm_popcnt_u32(v);
}
