/* Does the compiler build LZCNT code? One intrinsic, compiled to an object. */
#include <immintrin.h>

int dispatch_check_lzcnt(const void *mem);

int dispatch_check_lzcnt(const void *mem)
{
    unsigned int v;
    __builtin_memcpy(&v, mem, sizeof(v));
    return (int)_lzcnt_u32(v);
}
