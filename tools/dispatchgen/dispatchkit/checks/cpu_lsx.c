/* Does the compiler build LSX code? One intrinsic, compiled to an object. */
#include <lsxintrin.h>

int dispatch_check_lsx(const void *mem);

int dispatch_check_lsx(const void *mem)
{
    __m128i a = __lsx_vld(mem, 0);
    a = __lsx_vadd_w(a, a);
    return __lsx_vpickve2gr_w(a, 0);
}
