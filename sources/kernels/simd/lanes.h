/*
 * The parameters of simd.h's per-lane sections (Note [One template per lane
 * type] in ../simd.h): included with DV_LANE 32 or 64 it defines them for
 * float or double; included without DV_LANE it undefines them, so none
 * reaches a kernel. Part of simd.h; not a header of its own.
 */
#undef DV_S
#undef DV_T
#undef DV_IT
#undef DV_UT
#undef DV_V
#undef DV_M
#undef DV_LANES
#undef DV_MANT
#undef DV_BIAS
#undef DV_SQRT_HALF_BITS
#undef DV_

#if defined(DV_LANE)
    #if DV_LANE == 32
        #define DV_S f32          /* the name suffix */
        #define DV_T float        /* the element */
        #define DV_IT int32_t     /* an integer of the element's width */
        #define DV_UT uint32_t
        #define DV_LANES DV_LANES_F32
        #define DV_MANT 23        /* stored mantissa bits */
        #define DV_BIAS 127       /* exponent bias */
        #define DV_SQRT_HALF_BITS 0x3f3504f3          /* ~sqrt(1/2) (dv_split) */
    #elif DV_LANE == 64
        #define DV_S f64
        #define DV_T double
        #define DV_IT int64_t
        #define DV_UT uint64_t
        #define DV_LANES DV_LANES_F64
        #define DV_MANT 52
        #define DV_BIAS 1023
        #define DV_SQRT_HALF_BITS 0x3fe6a09e667f3bcdLL
    #else
        #error "DV_LANE is 32 or 64"
    #endif
    #define DV_V DV_CAT(dv_, DV_S)                    /* dv_f32: a vector */
    #define DV_M DV_CAT(dm_, DV_S)                    /* dm_f32: a lane mask */
    #define DV_(op) DV_CAT(dv_##op##_, DV_S)          /* DV_(add): dv_add_f32 */
#endif
