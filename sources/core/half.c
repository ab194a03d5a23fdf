/* The exported binary16 conversions of dtype.h; see dispatch/half.h. */
#include "dispatch/dtype.h"
#include "dispatch/half.h"

float dispatch_half_bits_to_float(uint16_t h) { return dispatch_half_to_float_inline(h); }

uint16_t dispatch_half_bits_from_double(double x) { return dispatch_half_from_double_inline(x); }
