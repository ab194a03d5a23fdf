#include "varext.h"

void varext_xor_portable(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; ++i) dst[i] = (uint8_t)(a[i] ^ b[i]);
}

const char *varext_impl_portable(void) { return "portable"; }
