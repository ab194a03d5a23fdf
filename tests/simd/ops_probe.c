/*
 * Every operation of sources/kernels/simd.h on a fixed set of values,
 * printed as bits, one line per (operation, lane type, lane).
 * tests/test_simd_split.py builds it once per instruction-set file (scalar,
 * SSE2, SSE4.1, AVX2, AVX2+FMA, AVX-512, ASIMD) and expects the same lines
 * from each: the per-ISA files implement one vocabulary.
 */
#include <stdio.h>
#include "simd.h"

#define N 16 /* values per lane type; a multiple of every DV_LANES */

static const float F[N] = {
    1.0f, -2.5f, 0.0f, -0.0f, 3.0f, 0.75f, 1e-40f /* subnormal */, 1e30f,
    -1e30f, 0.5f, 7.0f, -7.0f, 2.0f, 0.3f, 100.0f, -0.25f};
static const double D[N] = {
    1.0, -2.5, 0.0, -0.0, 3.0, 0.75, 1e-310 /* subnormal */, 1e300,
    -1e300, 0.5, 7.0, -7.0, 2.0, 0.3, 100.0, -0.25};

/* NaN bits from arithmetic differ between architectures (x86's default NaN
 * is negative, AArch64's positive) and with the operand order a compiler
 * picks, so those print as "nan"; the operations that choose a NaN operand
 * (max, min, clamp, select) print every bit. */
static int exact_bits(const char *op)
{
    static const char *const ops[] = {"max", "min", "smax", "smin", "clamp", "clamp_hi",
                                      "orsign", "compare", "bits", "split", "pow2"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(op, ops[k])) return 1;
    return 0;
}
static void put_f32(const char *op, const float *r, int n)
{
    const int exact = exact_bits(op);
    for (int i = 0; i < n; i++) {
        uint32_t b; memcpy(&b, &r[i], 4);
        if (r[i] != r[i] && !exact) printf("%s f32 %d nan\n", op, i);
        else printf("%s f32 %d %08x\n", op, i, (unsigned)b);
    }
}
static void put_f64(const char *op, const double *r, int n)
{
    const int exact = exact_bits(op);
    for (int i = 0; i < n; i++) {
        uint64_t b; memcpy(&b, &r[i], 8);
        if (r[i] != r[i] && !exact) printf("%s f64 %d nan\n", op, i);
        else printf("%s f64 %d %016llx\n", op, i, (unsigned long long)b);
    }
}

/* One lane type: S the suffix, T the element, V the values, NAN_ a NaN. */
#define PROBE(S, T, V, NAN_, BIG)                                                         \
    static void probe_##S(void)                                                           \
    {                                                                                     \
        enum { L = DV_LANES_##S };                                                    \
        T a[N], b[N], r[N], k[N];                                                         \
        for (int i = 0; i < N; i++) { a[i] = V[i]; b[i] = V[(i + 5) % N]; }              \
        a[13] = NAN_(1); b[2] = NAN_(2); /* NaNs told apart by their payload */           \
        for (int i = 0; i < N; i += L) {                                                  \
            dv_##S x = dv_load_##S(a + i), y = dv_load_##S(b + i);                        \
            dv_store_##S(r + i, dv_add_##S(x, y));                                        \
        }                                                                                 \
        put_##S("add", r, N);                                                             \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_sub_##S(dv_load_##S(a + i), dv_load_##S(b + i)));      \
        put_##S("sub", r, N);                                                             \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_mul_##S(dv_load_##S(a + i), dv_load_##S(b + i)));      \
        put_##S("mul", r, N);                                                             \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_div_##S(dv_load_##S(a + i), dv_load_##S(b + i)));      \
        put_##S("div", r, N);                                                             \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_sqrt_##S(dv_load_##S(a + i)));                         \
        put_##S("sqrt", r, N);                                                            \
        {   /* a's values at the even places of a row twice as long, b's between */         \
            T ab[2 * N];                                                                  \
            for (int i = 0; i < N; i++) { ab[2 * i] = a[i]; ab[2 * i + 1] = b[i]; }       \
            for (int i = 0; i < N; i += L)                                                \
                dv_store_##S(r + i, dv_load_even_##S(ab + 2 * i));                        \
        }                                                                                 \
        put_##S("load_even", r, N);                                                       \
        /* exact products: fused or not, the same bits */                                 \
        for (int i = 0; i < N; i++) k[i] = (T)i;                                          \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_muladd_##S(dv_set1_##S((T)3), dv_load_##S(k + i),      \
                                              dv_load_##S(b + i)));                       \
        put_##S("muladd", r, N);                                                          \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_max_##S(dv_load_##S(a + i), dv_load_##S(b + i)));      \
        put_##S("max", r, N);                                                             \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_min_##S(dv_load_##S(a + i), dv_load_##S(b + i)));      \
        put_##S("min", r, N);                                                             \
        for (int i = 0; i < N; i++) r[i] = dv_smax_##S(a[i], b[i]);                       \
        put_##S("smax", r, N);                                                            \
        for (int i = 0; i < N; i++) r[i] = dv_smin_##S(a[i], b[i]);                       \
        put_##S("smin", r, N);                                                            \
        for (int i = 0; i < N; i += L) {                                                  \
            dv_##S x = dv_load_##S(a + i), y = dv_load_##S(b + i);                        \
            dv_store_##S(r + i, dv_select_##S(dv_eq_##S(x, y), x,                         \
                             dv_select_##S(dv_isnan_##S(x), y,                            \
                             dv_select_##S(dv_lt_##S(x, y), dv_set1_##S((T)1),            \
                                           dv_set1_##S((T)2)))));                         \
        }                                                                                 \
        put_##S("compare", r, N);                                                         \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_clamp_##S(dv_load_##S(a + i), (T)-3, (T)50));          \
        put_##S("clamp", r, N);                                                           \
        for (int i = 0; i < N; i += L)                                                    \
            dv_store_##S(r + i, dv_clamp_hi_##S(dv_load_##S(a + i), (T)50));              \
        put_##S("clamp_hi", r, N);                                                        \
        for (int i = 0; i < N; i += L) { /* |a| (its sign bit cleared) with b's sign */   \
            const BITS_##S abs_ = (BITS_##S)((1ull << (8 * sizeof(T) - 1)) - 1);          \
            dv_##S m = dv_andbits_##S(dv_load_##S(a + i), abs_);                          \
            dv_store_##S(r + i, dv_orsign_##S(m, dv_load_##S(b + i)));                    \
        }                                                                                 \
        put_##S("orsign", r, N);                                                          \
        for (int i = 0; i < N; i++) { /* a[i] in lane 0, the other lanes above c */        \
            T one[N];                                                                     \
            for (int j = 0; j < N; j++) one[j] = (T)5;                                    \
            one[0] = a[i];                                                                \
            r[i] = (T)dv_any_lt_##S(dv_load_##S(one), (T)-1);                             \
        }                                                                                 \
        put_##S("any_lt", r, N);                                                          \
        for (int i = 0; i < N; i += L) { /* a < b lane by lane, read back from the bits */ \
            const unsigned m = dv_mask_bits_##S(dv_lt_##S(dv_load_##S(a + i), dv_load_##S(b + i))); \
            for (int j = 0; j < L; j++) r[i + j] = (T)((m >> j) & 1u);                    \
        }                                                                                 \
        put_##S("mask_bits", r, N);                                                       \
        for (int i = 0; i < N; i++) { /* a[i] in lane i % L, the others inside [0.5, 7] */ \
            T one[N];                                                                     \
            for (int j = 0; j < N; j++) one[j] = (T)5;                                    \
            one[i % L] = a[i];                                                            \
            r[i] = (T)dv_all_within_##S(dv_load_##S(one), (T)0.5, (T)7);                  \
        }                                                                                 \
        put_##S("all_within", r, N);                                                      \
        /* 2^n for n in [-20, 20), n + 1.5*2^MANT the way exp builds it */                \
        for (int i = 0; i < N; i += L) {                                                  \
            T n_[N];                                                                      \
            for (int j = 0; j < N; j++) n_[j] = (T)(3 * j - 20) + (T)1.5 * BIG;           \
            dv_store_##S(r + i, dv_pow2_##S(dv_load_##S(n_ + i)));                        \
        }                                                                                 \
        put_##S("pow2", r, N);                                                            \
        for (int i = 0; i < N; i += L) {                                                  \
            T n_[N];                                                                      \
            for (int j = 0; j < N; j++) n_[j] = (T)(j * 13 % 40 - 20);                    \
            T p_[N]; /* normal p, as the kernels call it */                               \
            for (int j = 0; j < N; j++) p_[j] = (T)(j - 7) * (T)0.37;                     \
            dv_store_##S(r + i, dv_ldexp_##S(dv_load_##S(p_ + i), dv_load_##S(n_ + i)));  \
        }                                                                                 \
        put_##S("ldexp", r, N);                                                           \
        for (int i = 0; i < N; i += L) {                                                  \
            T p_[N], n_[N];                                                               \
            for (int j = 0; j < N; j++) {                                                 \
                p_[j] = (T)0.5 + (T)j / (T)(N + 1);                                       \
                n_[j] = (T)(sizeof(T) == 4 ? -151 + 3 * j : -1076 + 3 * j);               \
            }                                                                             \
            dv_store_##S(r + i, dv_ldexp_gradual_##S(dv_load_##S(p_ + i),                 \
                                                     dv_load_##S(n_ + i)));               \
        }                                                                                 \
        put_##S("ldexp_gradual", r, N);                                                   \
        for (int i = 0; i < N; i += L) {                                                  \
            T x_[N];                                                                      \
            for (int j = 0; j < N; j++) x_[j] = (T)(j + 1) * (T)0.37;                     \
            dv_##S kk;                                                                    \
            dv_store_##S(r + i, dv_split_##S(dv_load_##S(x_ + i), &kk));                  \
            dv_store_##S(k + i, kk);                                                      \
        }                                                                                 \
        put_##S("split", r, N);                                                           \
        put_##S("split_k", k, N);                                                         \
        for (int i = 0; i < N; i += L) {                                                  \
            dv_##S x = dv_load_##S(a + i);                                                \
            x = dv_orbits_##S(dv_andbits_##S(x, (BITS_##S)0x7f), (BITS_##S)0x100);       \
            dv_store_##S(r + i, dv_addbits_##S(x, (BITS_##S)-3));                         \
        }                                                                                 \
        put_##S("bits", r, N);                                                            \
        int ok = 1;                                                                       \
        for (intptr_t n = 0; n < L; n++) {                                                \
            T out[N], lanes[N];                                                           \
            for (int j = 0; j < N; j++) out[j] = (T)-9;                                   \
            dv_store_partial_##S(out, n, dv_add_##S(dv_load_partial_##S(a, n, (T)4),      \
                                                    dv_set1_##S((T)1)));                  \
            dv_store_##S(lanes, dv_load_partial_##S(a, n, (T)4));                         \
            /* lanes past n hold the fill; out past n is untouched */                     \
            for (int j = 0; j < L; j++)                                                   \
                ok &= j < n ? out[j] == a[j] + (T)1 || a[j] != a[j] : out[j] == (T)-9;      \
            for (int j = (int)n; j < L; j++) ok &= lanes[j] == (T)4;                      \
        }                                                                                 \
        printf("partial " #S " %d\n", ok);                                                \
    }

static float nan_f32(uint32_t payload)
{ uint32_t b = 0x7fc00000u | payload; float x; memcpy(&x, &b, 4); return x; }
static double nan_f64(uint64_t payload)
{ uint64_t b = 0x7ff8000000000000ull | payload; double x; memcpy(&x, &b, 8); return x; }
typedef int32_t BITS_f32;
typedef int64_t BITS_f64;
#define DV_LANES_f32 DV_LANES_F32
#define DV_LANES_f64 DV_LANES_F64
PROBE(f32, float, F, nan_f32, 8388608.0f)
PROBE(f64, double, D, nan_f64, 4503599627370496.0)

int main(void)
{
    unsigned mode = dv_fpmode_enter();
    dv_fpmode_leave(mode);
    probe_f32();
    probe_f64();
    fprintf(stderr, "%s\n", DV_NAME);
    return 0;
}
