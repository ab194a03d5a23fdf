/* mylib's public entry points: each chosen once, at mylib_init(), from the
 * variants this build compiled (mylib_dispatch.h, generated from
 * mylib.variants.ini). */
#include "mylib.h"
#include "mylib_dispatch.h"

static uint32_t (*sum_fn)(const uint32_t *, size_t);
static void (*xor_fn)(uint8_t *, const uint8_t *, const uint8_t *, size_t);
static const char *sum_target = "none", *xor_target = "none";

int mylib_init(void)
{
    if (dispatch_cpu_init() != 0) return -1;
    sum_fn = MYLIB_DISPATCH(sum);
    sum_target = MYLIB_DISPATCH_INFO(sum);
    xor_fn = MYLIB_DISPATCH(xor);
    xor_target = MYLIB_DISPATCH_INFO(xor);
    return 0;
}

uint32_t mylib_sum(const uint32_t *x, size_t n) { return sum_fn(x, n); }
void mylib_xor(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n) { xor_fn(dst, a, b, n); }
const char *mylib_sum_target(void) { return sum_target; }
const char *mylib_xor_target(void) { return xor_target; }
