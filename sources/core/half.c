/* The exported binary16 and bfloat16 conversions of dtype.h; see dispatch/half.h. */
#include "dispatch/dtype.h"
#include "dispatch/half.h"

float dispatch_half_bits_to_float(uint16_t h) { return dispatch_half_to_float_inline(h); }

uint16_t dispatch_half_bits_from_double(double x) { return dispatch_half_from_double_inline(x); }

/* bfloat16 */
float dispatch_bfloat16_bits_to_float(uint16_t b) { return dispatch_bfloat16_to_float_inline(b); }

uint16_t dispatch_bfloat16_bits_from_float(float x) { return dispatch_bfloat16_from_float_inline(x); }

uint16_t dispatch_bfloat16_bits_from_double(double x) {
    return dispatch_bfloat16_from_double_inline(x);
}
