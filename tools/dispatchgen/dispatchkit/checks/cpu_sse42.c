/* Does the compiler build SSE42 code? One intrinsic, compiled to an object. */
#include <nmmintrin.h>

int dispatch_check_sse42(const void *mem);

int dispatch_check_sse42(const void *mem)
{
    const float *p = (const float *)mem;
    unsigned int v;
    __builtin_memcpy(&v, p, sizeof(v));
    return (int)_mm_crc32_u32(v, v);
}
