/* The exported conversions of the narrow floats (dtype.h): binary16 and
 * bfloat16 by name, any row of DISPATCH_FORALL_NARROW_FLOATS by dtype (all
 * from dispatch/narrow_float.h). */
#include "dispatch/dtype.h"
#include "dispatch/narrow_float.h"

float dispatch_half_bits_to_float(uint16_t h) { return dispatch_half_to_float_inline(h); }

uint16_t dispatch_half_bits_from_double(double x) { return dispatch_half_from_double_inline(x); }

/* bfloat16 */
float dispatch_bfloat16_bits_to_float(uint16_t b) { return dispatch_bfloat16_to_float_inline(b); }

uint16_t dispatch_bfloat16_bits_from_float(float x) { return dispatch_bfloat16_from_float_inline(x); }

uint16_t dispatch_bfloat16_bits_from_double(double x) {
    return dispatch_bfloat16_from_double_inline(x);
}

/* Any narrow float by dtype, from its row of DISPATCH_FORALL_NARROW_FLOATS. */

double dispatch_narrow_bits_to_double(int dtype, uint32_t bits) {
    switch (dtype) {
#define NARROW_TO_(NAME, sfx, E, M, NANS) \
    case DISPATCH_##NAME: return (double)dispatch_narrow_to_float(bits, E, M, DISPATCH_NARROW_##NANS);
        DISPATCH_FORALL_NARROW_FLOATS(NARROW_TO_)
#undef NARROW_TO_
    default: return 0.0;
    }
}

uint32_t dispatch_narrow_bits_from_double(int dtype, double x) {
    switch (dtype) {
#define NARROW_FROM_(NAME, sfx, E, M, NANS) \
    case DISPATCH_##NAME: return dispatch_narrow_from_double(x, E, M, DISPATCH_NARROW_##NANS);
        DISPATCH_FORALL_NARROW_FLOATS(NARROW_FROM_)
#undef NARROW_FROM_
    default: return 0;
    }
}
