/* The float -> integer casts of the cast table (Note [Float to integer
 * casts] in cpu_loops_reference.c) on whatever architecture this runs on:
 * out-of-range values, NaN and infinities give INT32_MIN / INT64_MIN (int8,
 * uint8 and int16 wrap the int32 result) everywhere, not what the
 * hardware's own conversion gives (aarch64's saturates, for one). The rows
 * are NumPy's astype on x86-64, from float16, float32, float64 and bfloat16
 * bits; each cast runs contiguous and strided. The portable conversions of
 * float_to_int.h are checked on the same rows everywhere, x86-64 included
 * (where the table uses cvttsd2si instead). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/loops.h"
#include "float_to_int.h"

static int failures;

enum { NT = 6 };
static const int targets[NT] = {DISPATCH_INT8, DISPATCH_UINT8, DISPATCH_INT16, DISPATCH_INT32,
                                DISPATCH_INT64, DISPATCH_BOOL};

enum { F16 = DISPATCH_FLOAT16, F32 = DISPATCH_FLOAT32, F64 = DISPATCH_FLOAT64,
       BF16 = DISPATCH_BFLOAT16 };

/* source dtype, its bits, then int8 uint8 int16 int32 int64 and bool */
static const struct {
    int dtype;
    uint64_t bits;
    int64_t want[NT - 1];
    int want_bool;
} rows[] = {
    {F16, 0x0u, {0, 0, 0, 0, 0}, 0}, /* 0 */
    {F16, 0x8000u, {0, 0, 0, 0, 0}, 0}, /* -0 */
    {F16, 0x3800u, {0, 0, 0, 0, 0}, 1}, /* 0.5 */
    {F16, 0xb800u, {0, 0, 0, 0, 0}, 1}, /* -0.5 */
    {F16, 0x3bfeu, {0, 0, 0, 0, 0}, 1}, /* 0.9990234375 */
    {F16, 0xbe00u, {-1, 255, -1, -1, -1}, 1}, /* -1.5 */
    {F16, 0x4100u, {2, 2, 2, 2, 2}, 1}, /* 2.5 */
    {F16, 0x57feu, {127, 127, 127, 127, 127}, 1}, /* 127.875 */
    {F16, 0x5800u, {-128, 128, 128, 128, 128}, 1}, /* 128 */
    {F16, 0xd800u, {-128, 128, -128, -128, -128}, 1}, /* -128 */
    {F16, 0xd80cu, {127, 127, -129, -129, -129}, 1}, /* -129.5 */
    {F16, 0x5bffu, {-1, 255, 255, 255, 255}, 1}, /* 255.875 */
    {F16, 0x5c00u, {0, 0, 256, 256, 256}, 1}, /* 256 */
    {F16, 0x5cb3u, {44, 44, 300, 300, 300}, 1}, /* 300.75 */
    {F16, 0xdcb3u, {-44, 212, -300, -300, -300}, 1}, /* -300.75 */
    {F16, 0x7800u, {0, 0, -32768, 32768, 32768}, 1}, /* 32768 */
    {F16, 0xf800u, {0, 0, -32768, -32768, -32768}, 1}, /* -32768 */
    {F16, 0x7bffu, {-32, 224, -32, 65504, 65504}, 1}, /* 65504 */
    {F16, 0xfbffu, {32, 32, 32, -65504, -65504}, 1}, /* -65504 */
    {F16, 0x7c00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* inf */
    {F16, 0xfc00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -inf */
    {F16, 0x7e00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F16, 0xfe00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F32, 0x0u, {0, 0, 0, 0, 0}, 0}, /* 0 */
    {F32, 0x80000000u, {0, 0, 0, 0, 0}, 0}, /* -0 */
    {F32, 0x3f000000u, {0, 0, 0, 0, 0}, 1}, /* 0.5 */
    {F32, 0xbf000000u, {0, 0, 0, 0, 0}, 1}, /* -0.5 */
    {F32, 0x3f7fbe77u, {0, 0, 0, 0, 0}, 1}, /* 0.99900001287460327 */
    {F32, 0xbfc00000u, {-1, 255, -1, -1, -1}, 1}, /* -1.5 */
    {F32, 0x40200000u, {2, 2, 2, 2, 2}, 1}, /* 2.5 */
    {F32, 0x42ffcccdu, {127, 127, 127, 127, 127}, 1}, /* 127.90000152587891 */
    {F32, 0x43000000u, {-128, 128, 128, 128, 128}, 1}, /* 128 */
    {F32, 0xc3000000u, {-128, 128, -128, -128, -128}, 1}, /* -128 */
    {F32, 0xc3018000u, {127, 127, -129, -129, -129}, 1}, /* -129.5 */
    {F32, 0x437fe666u, {-1, 255, 255, 255, 255}, 1}, /* 255.89999389648438 */
    {F32, 0x43800000u, {0, 0, 256, 256, 256}, 1}, /* 256 */
    {F32, 0x4396599au, {44, 44, 300, 300, 300}, 1}, /* 300.70001220703125 */
    {F32, 0xc396599au, {-44, 212, -300, -300, -300}, 1}, /* -300.70001220703125 */
    {F32, 0x46ffffcdu, {-1, 255, 32767, 32767, 32767}, 1}, /* 32767.900390625 */
    {F32, 0x47000000u, {0, 0, -32768, 32768, 32768}, 1}, /* 32768 */
    {F32, 0xc70000e6u, {0, 0, -32768, -32768, -32768}, 1}, /* -32768.8984375 */
    {F32, 0xc7000100u, {-1, 255, 32767, -32769, -32769}, 1}, /* -32769 */
    {F32, 0x477fe000u, {-32, 224, -32, 65504, 65504}, 1}, /* 65504 */
    {F32, 0xc77fe000u, {32, 32, 32, -65504, -65504}, 1}, /* -65504 */
    {F32, 0x478000c0u, {1, 1, 1, 65537, 65537}, 1}, /* 65537.5 */
    {F32, 0x4f000000u, {0, 0, 0, INT32_MIN, 2147483648}, 1}, /* 2147483648 */
    {F32, 0xcf000000u, {0, 0, 0, INT32_MIN, -2147483648}, 1}, /* -2147483648 */
    {F32, 0x4f800000u, {0, 0, 0, INT32_MIN, 4294967296}, 1}, /* 4294967296 */
    {F32, 0x501502f9u, {0, 0, 0, INT32_MIN, 10000000000}, 1}, /* 10000000000 */
    {F32, 0xcf9502f9u, {0, 0, 0, INT32_MIN, -5000000000}, 1}, /* -5000000000 */
    {F32, 0x5a000000u, {0, 0, 0, INT32_MIN, 9007199254740992}, 1}, /* 9007199254740992 */
    {F32, 0x5f000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 9.2233720368547758e+18 */
    {F32, 0xdf000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.2233720368547758e+18 */
    {F32, 0x5f0ac723u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 9.9999999805064479e+18 */
    {F32, 0xf149f2cau, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -1.0000000150474662e+30 */
    {F32, 0x7f800000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* inf */
    {F32, 0x1u, {0, 0, 0, 0, 0}, 1}, /* 1.4012984643248171e-45 */
    {F32, 0xff800000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -inf */
    {F32, 0x7fc00000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F32, 0xffc00000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F32, 0x4effffffu, {-128, 128, -128, 2147483520, 2147483520}, 1}, /* 2147483520 */
    {F32, 0xcf000001u, {0, 0, 0, INT32_MIN, -2147483904}, 1}, /* -2147483904 */
    {F32, 0x5effffffu, {0, 0, 0, INT32_MIN, 9223371487098961920}, 1}, /* 9.2233714870989619e+18 */
    {F32, 0xdf000001u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.2233731363664036e+18 */
    {F64, 0x0u, {0, 0, 0, 0, 0}, 0}, /* 0 */
    {F64, 0x8000000000000000u, {0, 0, 0, 0, 0}, 0}, /* -0 */
    {F64, 0x3fe0000000000000u, {0, 0, 0, 0, 0}, 1}, /* 0.5 */
    {F64, 0xbfe0000000000000u, {0, 0, 0, 0, 0}, 1}, /* -0.5 */
    {F64, 0x3feff7ced916872bu, {0, 0, 0, 0, 0}, 1}, /* 0.999 */
    {F64, 0xbff8000000000000u, {-1, 255, -1, -1, -1}, 1}, /* -1.5 */
    {F64, 0x4004000000000000u, {2, 2, 2, 2, 2}, 1}, /* 2.5 */
    {F64, 0x405ff9999999999au, {127, 127, 127, 127, 127}, 1}, /* 127.90000000000001 */
    {F64, 0x4060000000000000u, {-128, 128, 128, 128, 128}, 1}, /* 128 */
    {F64, 0xc060000000000000u, {-128, 128, -128, -128, -128}, 1}, /* -128 */
    {F64, 0xc060300000000000u, {127, 127, -129, -129, -129}, 1}, /* -129.5 */
    {F64, 0x406ffccccccccccdu, {-1, 255, 255, 255, 255}, 1}, /* 255.90000000000001 */
    {F64, 0x4070000000000000u, {0, 0, 256, 256, 256}, 1}, /* 256 */
    {F64, 0x4072cb3333333333u, {44, 44, 300, 300, 300}, 1}, /* 300.69999999999999 */
    {F64, 0xc072cb3333333333u, {-44, 212, -300, -300, -300}, 1}, /* -300.69999999999999 */
    {F64, 0x40dffff99999999au, {-1, 255, 32767, 32767, 32767}, 1}, /* 32767.900000000001 */
    {F64, 0x40e0000000000000u, {0, 0, -32768, 32768, 32768}, 1}, /* 32768 */
    {F64, 0xc0e0001ccccccccdu, {0, 0, -32768, -32768, -32768}, 1}, /* -32768.900000000001 */
    {F64, 0xc0e0002000000000u, {-1, 255, 32767, -32769, -32769}, 1}, /* -32769 */
    {F64, 0x40effc0000000000u, {-32, 224, -32, 65504, 65504}, 1}, /* 65504 */
    {F64, 0xc0effc0000000000u, {32, 32, 32, -65504, -65504}, 1}, /* -65504 */
    {F64, 0x40f0001800000000u, {1, 1, 1, 65537, 65537}, 1}, /* 65537.5 */
    {F64, 0x41dfffffffc00000u, {-1, 255, -1, 2147483647, 2147483647}, 1}, /* 2147483647 */
    {F64, 0x41dffffffff9999au, {-1, 255, -1, 2147483647, 2147483647}, 1}, /* 2147483647.9000001 */
    {F64, 0x41e0000000000000u, {0, 0, 0, INT32_MIN, 2147483648}, 1}, /* 2147483648 */
    {F64, 0xc1e0000000000000u, {0, 0, 0, INT32_MIN, -2147483648}, 1}, /* -2147483648 */
    {F64, 0xc1e00000001ccccdu, {0, 0, 0, INT32_MIN, -2147483648}, 1}, /* -2147483648.9000001 */
    {F64, 0xc1e0000000200000u, {0, 0, 0, INT32_MIN, -2147483649}, 1}, /* -2147483649 */
    {F64, 0x41f0000000100000u, {0, 0, 0, INT32_MIN, 4294967297}, 1}, /* 4294967297 */
    {F64, 0x4202a05f20000000u, {0, 0, 0, INT32_MIN, 10000000000}, 1}, /* 10000000000 */
    {F64, 0xc1f2a05f20000000u, {0, 0, 0, INT32_MIN, -5000000000}, 1}, /* -5000000000 */
    {F64, 0x4340000000000001u, {0, 0, 0, INT32_MIN, 9007199254740994}, 1}, /* 9007199254740994 */
    {F64, 0x43dfffffffffffffu, {0, 0, 0, INT32_MIN, 9223372036854774784}, 1}, /* 2**63-1024 */
    {F64, 0x43e0000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 9.2233720368547758e+18 */
    {F64, 0xc3e0000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.2233720368547758e+18 */
    {F64, 0xc3e0000000000001u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.2233720368547779e+18 */
    {F64, 0x43e158e460913d00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 1e+19 */
    {F64, 0xc6293e5939a08ceau, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -1e+30 */
    {F64, 0x7e37e43c8800759cu, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 1.0000000000000001e+300 */
    {F64, 0x1u, {0, 0, 0, 0, 0}, 1}, /* 4.9406564584124654e-324 */
    {F64, 0x800012688b70e62bu, {0, 0, 0, 0, 0}, 1}, /* -9.9999999999999694e-311 */
    {F64, 0x3696d601ad376ab9u, {0, 0, 0, 0, 0}, 1}, /* 9.9999999999999998e-46 */
    {F64, 0x7ff0000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* inf */
    {F64, 0xfff0000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -inf */
    {F64, 0x7ff8000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F64, 0xfff8000000000000u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {F64, 0x41dfffffffffffffu, {-1, 255, -1, 2147483647, 2147483647}, 1}, /* 2147483647.9999998 */
    {F64, 0xc1e00000001fffffu, {0, 0, 0, INT32_MIN, -2147483648}, 1}, /* -2147483648.9999995 */
    {F64, 0xc3dfffffffffffffu, {0, 0, 0, INT32_MIN, -9223372036854774784}, 1}, /* -2**63+1024 */
    {F64, 0xc1e0000000200001u, {0, 0, 0, INT32_MIN, -2147483649}, 1}, /* -2147483649.0000005 */
    {BF16, 0x0u, {0, 0, 0, 0, 0}, 0}, /* 0 */
    {BF16, 0x3f00u, {0, 0, 0, 0, 0}, 1}, /* 0.5 */
    {BF16, 0x3f7fu, {0, 0, 0, 0, 0}, 1}, /* 0.99609375 */
    {BF16, 0x4020u, {2, 2, 2, 2, 2}, 1}, /* 2.5 */
    {BF16, 0x42ffu, {127, 127, 127, 127, 127}, 1}, /* 127.5 */
    {BF16, 0x4300u, {-128, 128, 128, 128, 128}, 1}, /* 128 */
    {BF16, 0x437fu, {-1, 255, 255, 255, 255}, 1}, /* 255 */
    {BF16, 0x4380u, {0, 0, 256, 256, 256}, 1}, /* 256 */
    {BF16, 0x4396u, {44, 44, 300, 300, 300}, 1}, /* 300 */
    {BF16, 0x46ffu, {-128, 128, 32640, 32640, 32640}, 1}, /* 32640 */
    {BF16, 0x4700u, {0, 0, -32768, 32768, 32768}, 1}, /* 32768 */
    {BF16, 0x477fu, {0, 0, -256, 65280, 65280}, 1}, /* 65280 */
    {BF16, 0x4780u, {0, 0, 0, 65536, 65536}, 1}, /* 65536 */
    {BF16, 0x4effu, {0, 0, 0, 2139095040, 2139095040}, 1}, /* 2139095040 */
    {BF16, 0x4f00u, {0, 0, 0, INT32_MIN, 2147483648}, 1}, /* 2147483648 */
    {BF16, 0x4f80u, {0, 0, 0, INT32_MIN, 4294967296}, 1}, /* 4294967296 */
    {BF16, 0x5015u, {0, 0, 0, INT32_MIN, 9999220736}, 1}, /* 9999220736 */
    {BF16, 0x5a00u, {0, 0, 0, INT32_MIN, 9007199254740992}, 1}, /* 9007199254740992 */
    {BF16, 0x5effu, {0, 0, 0, INT32_MIN, 9187343239835811840}, 1}, /* 9.1873432398358118e+18 */
    {BF16, 0x5f00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 9.2233720368547758e+18 */
    {BF16, 0x5f0au, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* 9.9439479772340552e+18 */
    {BF16, 0x7f80u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* inf */
    {BF16, 0x7fc0u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
    {BF16, 0x8000u, {0, 0, 0, 0, 0}, 0}, /* -0 */
    {BF16, 0xbf00u, {0, 0, 0, 0, 0}, 1}, /* -0.5 */
    {BF16, 0xbfc0u, {-1, 255, -1, -1, -1}, 1}, /* -1.5 */
    {BF16, 0xc300u, {-128, 128, -128, -128, -128}, 1}, /* -128 */
    {BF16, 0xc301u, {127, 127, -129, -129, -129}, 1}, /* -129 */
    {BF16, 0xc396u, {-44, 212, -300, -300, -300}, 1}, /* -300 */
    {BF16, 0xc700u, {0, 0, -32768, -32768, -32768}, 1}, /* -32768 */
    {BF16, 0xc77fu, {0, 0, 256, -65280, -65280}, 1}, /* -65280 */
    {BF16, 0xcf00u, {0, 0, 0, INT32_MIN, -2147483648}, 1}, /* -2147483648 */
    {BF16, 0xcf95u, {0, 0, 0, INT32_MIN, -4999610368}, 1}, /* -4999610368 */
    {BF16, 0xdf00u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.2233720368547758e+18 */
    {BF16, 0xf149u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -9.9530379158544574e+29 */
    {BF16, 0xff80u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* -inf */
    {BF16, 0xffc0u, {0, 0, 0, INT32_MIN, INT64_MIN}, 1}, /* nan */
};

static void put(char *p, int dtype, uint64_t bits) {
    size_t size = dispatch_dtype_itemsize(dtype);
    if (size == 2) {
        uint16_t b = (uint16_t)bits;
        memcpy(p, &b, 2);
    } else if (size == 4) {
        uint32_t b = (uint32_t)bits;
        memcpy(p, &b, 4);
    } else {
        memcpy(p, &bits, 8);
    }
}

static int64_t get(const char *p, int dtype) {
    switch (dtype) {
    case DISPATCH_INT8: { int8_t v; memcpy(&v, p, 1); return v; }
    case DISPATCH_UINT8: case DISPATCH_BOOL: { uint8_t v; memcpy(&v, p, 1); return v; }
    case DISPATCH_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case DISPATCH_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* The value of a row's bits as a double (every float dtype widens exactly). */
static double value_of(int dtype, uint64_t bits) {
    if (dtype == DISPATCH_FLOAT16) return dispatch_half_bits_to_float((uint16_t)bits);
    if (dtype == DISPATCH_BFLOAT16) return dispatch_bfloat16_bits_to_float((uint16_t)bits);
    if (dtype == DISPATCH_FLOAT32) {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static void check_portable(size_t r) {
    double x = value_of(rows[r].dtype, rows[r].bits);
    int32_t i32 = dispatch_float_to_i32_portable(x);
    int64_t got[NT - 1] = {(int8_t)(uint32_t)i32, (uint8_t)(uint32_t)i32,
                           (int16_t)(uint32_t)i32, i32, dispatch_float_to_i64_portable(x)};
    for (int k = 0; k < NT - 1; k++)
        if (got[k] != rows[r].want[k] && failures++ < 20)
            printf("FAIL row %zu (%a) -> %s, portable: got %lld, want %lld\n", r, x,
                   dispatch_dtype_name(targets[k]), (long long)got[k],
                   (long long)rows[r].want[k]);
}

int main(void) {
    size_t nrows = sizeof rows / sizeof rows[0];
    int checked = 0;
    for (size_t r = 0; r < nrows; r++) {
        check_portable(r);
        int from = rows[r].dtype;
        intptr_t isz = (intptr_t)dispatch_dtype_itemsize(from);
        for (int k = 0; k < NT; k++) {
            int to = targets[k];
            intptr_t osz = (intptr_t)dispatch_dtype_itemsize(to);
            int64_t want = k < NT - 1 ? rows[r].want[k] : rows[r].want_bool;
            dispatch_loop_fn fn = dispatch_cast_loop_get(from, to);
            /* 5 contiguous elements, then 3 with strides of 3 (in) and 2 (out) elements */
            _Alignas(16) char in[8 * 9], out[8 * 6];
            for (int i = 0; i < 9; i++) put(in + i * isz, from, rows[r].bits);
            for (int pass = 0; pass < 2; pass++) {
                memset(out, 0x5a, sizeof out);
                char *data[2] = {out, in};
                intptr_t steps[2] = {pass ? 2 * osz : osz, pass ? 3 * isz : isz};
                intptr_t n = pass ? 3 : 5;
                fn(data, steps, n, NULL);
                for (intptr_t i = 0; i < n; i++) {
                    int64_t got = get(out + i * steps[0], to);
                    if (got != want && failures++ < 20)
                        printf("FAIL row %zu (%s bits %llx) -> %s [%s %ld]: got %lld, want %lld\n",
                               r, dispatch_dtype_name(from), (unsigned long long)rows[r].bits,
                               dispatch_dtype_name(to), pass ? "strided" : "contiguous",
                               (long)i, (long long)got, (long long)want);
                }
                checked++;
            }
        }
    }
    printf("%d casts of %zu values checked\n", checked, nrows);
    printf(failures ? "%d failures\n" : "ok\n", failures);
    return failures != 0;
}
