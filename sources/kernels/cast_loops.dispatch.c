/*@targets baseline sse42 (avx2 fma3) avx512_skx asimdhp vsx3 vxe rvv */
/*
 * Every cast between two dtypes of the list, contiguous, compiled per target
 * (Note [Generic dispatched loops] in loop_paths.h): integers wrap to the
 * target's width, floats convert to integers by Note [Float to integer
 * casts] (cpu_loops_reference.c) in a branch-free form the compiler
 * vectorizes, narrow floats are widened and narrowed by vector (Note [Narrow
 * floats by vector] in narrow_vector.h). A broadcast source is cast once and
 * written n times; a strided operand is packed into chunks for the
 * contiguous path. Which of the paths below a pair takes is decided by constants of its
 * two rows (category and size), so each pair compiles to one loop.
 */
#include "loop_paths.h"
#include "narrow_vector.h"
#if defined(__SSE4_1__)
#include <smmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK 512

/* Note [Float to integer casts], branch-free: out of range (and NaN) gives
 * INT32_MIN / INT64_MIN, as x86's cvtt* do; the bound tests are exact (a
 * float32 above -2^31 - 1 is at least -2^31). An out-of-range x is masked
 * to +0.0 by its bits before the conversion: a select of x would let the
 * compiler convert x first (out of range is undefined in C), and under
 * qemu-ppc64le a NaN lane of POWER9's vector conversion then spoiled the
 * other lanes of its vector. */
static inline float keep_f32_(float x, int fits) {
    return dk_bits_f32(dk_f32_bits(x) & (0u - (uint32_t)fits));
}
static inline double keep_f64_(double x, int fits) {
    union { uint64_t u; double f; } v = {.u = dk_f64_bits(x) & (0u - (uint64_t)fits)};
    return v.f;
}
static inline int32_t f32_to_i32(float x) {
    const int fits = (x >= -0x1p31f) & (x < 0x1p31f);
    const int32_t v = (int32_t)keep_f32_(x, fits);
    return fits ? v : INT32_MIN;
}
static inline int32_t f64_to_i32(double x) {
    const int fits = (x > -2147483649.0) & (x < 2147483648.0);
    const int32_t v = (int32_t)keep_f64_(x, fits);
    return fits ? v : INT32_MIN;
}
#if defined(__x86_64__) && !defined(__AVX512DQ__)
/* Below AVX512DQ x86 has no vector float -> int64 conversion, and gcc 12
 * built the masked form below from vector halves, element by element (3.8
 * ns an element with AVX2); cvttss2si / cvttsd2si into 64 bits are the
 * rule itself (INT64_MIN out of range and for NaN), one instruction. */
static inline int64_t f32_to_i64(float x) { return _mm_cvttss_si64(_mm_set_ss(x)); }
static inline int64_t f64_to_i64(double x) { return _mm_cvttsd_si64(_mm_set_sd(x)); }
#else
static inline int64_t f32_to_i64(float x) {
    const int fits = (x >= -0x1p63f) & (x < 0x1p63f);
    const int64_t v = (int64_t)keep_f32_(x, fits);
    return fits ? v : INT64_MIN;
}
static inline int64_t f64_to_i64(double x) {
    const int fits = (x >= -0x1p63) & (x < 0x1p63);
    const int64_t v = (int64_t)keep_f64_(x, fits);
    return fits ? v : INT64_MIN;
}
#endif

/* A float (ssize 4 or 8 bytes, or 2: bfloat16, the high half of its
 * float32, widened in the lanes) to an integer of dsize bytes that takes the
 * int32 rule (TO_INT_ below) over a leading run of n: with AVX512F 16 lanes
 * (AVX2: 8) by vcvttps2dq / vcvttpd2dq, whose out-of-range and NaN result is INT32_MIN
 * as f32_to_i32 / f64_to_i32 give, then truncated to dsize bytes (vpmovdb,
 * vpmovdw; AVX2 and SSE2 masks or shifts and packs), as the wrap of
 * TO_INT_; SSE2 4 lanes a vector. Returns how many it wrote (0 off x86);
 * the caller's loop does the rest. */
static inline intptr_t float_to_i32_rule_run(void *dst, const void *src, intptr_t n,
                                             intptr_t ssize, intptr_t dsize)
{
    intptr_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) {
        __m512i v;
        if (ssize == 4) {
            v = _mm512_cvttps_epi32(_mm512_loadu_ps((const float *)src + i));
        } else if (ssize == 2) {
            v = _mm512_cvttps_epi32(dk_bf16_widen_16((const uint16_t *)src + i));
        } else {
            const __m256i lo = _mm512_cvttpd_epi32(_mm512_loadu_pd((const double *)src + i));
            const __m256i hi = _mm512_cvttpd_epi32(_mm512_loadu_pd((const double *)src + i + 8));
            v = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        }
        if (dsize == 1)
            _mm_storeu_si128((__m128i *)(void *)((char *)dst + i), _mm512_cvtepi32_epi8(v));
        else if (dsize == 2)
            _mm256_storeu_si256((__m256i *)(void *)((char *)dst + 2 * i), _mm512_cvtepi32_epi16(v));
        else
            _mm512_storeu_si512((char *)dst + 4 * i, v);
    }
#elif defined(__AVX2__)
    /* 32 at a time: vcvttps2dq / vcvttpd2dq give INT32_MIN as the rule does;
     * a narrower target keeps each lane's low bits (masked, so the packs'
     * unsigned saturation never saturates), and one permutation undoes the
     * packs' interleaving of 128-bit halves. */
    const __m256i order8 = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (; i + 32 <= n; i += 32) {
        __m256i v[4];
        for (int k = 0; k < 4; k++) {
            if (ssize == 4) {
                v[k] = _mm256_cvttps_epi32(_mm256_loadu_ps((const float *)src + i + 8 * k));
            } else if (ssize == 2) {
                v[k] = _mm256_cvttps_epi32(dk_bf16_widen_8((const uint16_t *)src + i + 8 * k));
            } else {
                const double *d = (const double *)src + i + 8 * k;
                v[k] = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_loadu_pd(d + 4)),
                                        _mm256_cvttpd_epi32(_mm256_loadu_pd(d)));
            }
        }
        char *o = (char *)dst + i * dsize;
        if (dsize == 4) {
            for (int k = 0; k < 4; k++) _mm256_storeu_si256((__m256i *)(void *)(o + 32 * k), v[k]);
        } else if (dsize == 2) {
            const __m256i m = _mm256_set1_epi32(0xffff);
            for (int k = 0; k < 4; k += 2)
                _mm256_storeu_si256((__m256i *)(void *)(o + 16 * k),
                                    _mm256_permute4x64_epi64(
                                        _mm256_packus_epi32(_mm256_and_si256(v[k], m),
                                                            _mm256_and_si256(v[k + 1], m)),
                                        0xd8));
        } else {
            const __m256i m = _mm256_set1_epi32(0xff);
            const __m256i a = _mm256_packus_epi32(_mm256_and_si256(v[0], m), _mm256_and_si256(v[1], m));
            const __m256i b = _mm256_packus_epi32(_mm256_and_si256(v[2], m), _mm256_and_si256(v[3], m));
            _mm256_storeu_si256((__m256i *)(void *)o,
                                _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), order8));
        }
    }
#elif defined(__SSE2__)
    /* 16 at a time, the AVX2 form in 128-bit lanes (x86-64's baseline and
     * SSE4.2): a 16-bit target's lanes masked for SSE4.1's unsigned pack,
     * or, with SSE2's signed pack only, sign-extended from their low half
     * (two shifts) so that it never saturates; a byte target's masked to
     * 0..255 for the two packs. The packs keep lane order here: no
     * permutation. */
    for (; i + 16 <= n; i += 16) {
        __m128i v[4];
        for (int k = 0; k < 4; k++) {
            if (ssize == 4) {
                v[k] = _mm_cvttps_epi32(_mm_loadu_ps((const float *)src + i + 4 * k));
            } else if (ssize == 2) {
                v[k] = _mm_cvttps_epi32(dk_bf16_widen_4((const uint16_t *)src + i + 4 * k));
            } else {
                const double *d = (const double *)src + i + 4 * k;
                v[k] = _mm_unpacklo_epi64(_mm_cvttpd_epi32(_mm_loadu_pd(d)),
                                          _mm_cvttpd_epi32(_mm_loadu_pd(d + 2)));
            }
        }
        char *o = (char *)dst + i * dsize;
        if (dsize == 4) {
            for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(void *)(o + 16 * k), v[k]);
        } else if (dsize == 2) {
#if defined(__SSE4_1__)
            const __m128i m = _mm_set1_epi32(0xffff);
            for (int k = 0; k < 4; k++) v[k] = _mm_and_si128(v[k], m);
#define DK_PACK16_ _mm_packus_epi32
#else
            for (int k = 0; k < 4; k++) v[k] = _mm_srai_epi32(_mm_slli_epi32(v[k], 16), 16);
#define DK_PACK16_ _mm_packs_epi32
#endif
            _mm_storeu_si128((__m128i *)(void *)o, DK_PACK16_(v[0], v[1]));
            _mm_storeu_si128((__m128i *)(void *)(o + 16), DK_PACK16_(v[2], v[3]));
#undef DK_PACK16_
        } else {
            const __m128i m = _mm_set1_epi32(0xff);
            const __m128i a = _mm_packs_epi32(_mm_and_si128(v[0], m), _mm_and_si128(v[1], m));
            const __m128i b = _mm_packs_epi32(_mm_and_si128(v[2], m), _mm_and_si128(v[3], m));
            _mm_storeu_si128((__m128i *)(void *)o, _mm_packus_epi16(a, b));
        }
    }
#else
    (void)dst, (void)src, (void)n, (void)ssize, (void)dsize;
#endif
    return i;
}

/* Each row read as float (runs), written from float (runs, narrow floats
 * only) and from double or int32 (runs, narrow floats only: rounded once), by its
 * category and size: a narrow float is a float of at most 2 bytes. */
#define RUNS_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) RUNS_##CAT##_##size(sfx, T)
#define RUNS_PLAIN_(sfx, T)                                                               \
    static inline void read_##sfx(float *d, const void *s, intptr_t n) {                  \
        for (intptr_t i = 0; i < n; i++) d[i] = (float)((const T *)s)[i];                 \
    }                                                                                     \
    static inline void write_##sfx(void *d, const float *s, intptr_t n) {                 \
        (void)d, (void)s, (void)n; /* no narrow float: never called */                    \
    }                                                                                     \
    static inline void write_f64_##sfx(void *d, const double *s, intptr_t n) {            \
        (void)d, (void)s, (void)n; /* no narrow float: never called */                    \
    }                                                                                     \
    static inline void write_i32_##sfx(void *d, const int32_t *s, intptr_t n) {           \
        (void)d, (void)s, (void)n; /* no narrow float: never called */                    \
    }
#define RUNS_BOOL_1 RUNS_PLAIN_
#define RUNS_INT_1 RUNS_PLAIN_
#define RUNS_INT_2 RUNS_PLAIN_
#define RUNS_INT_4 RUNS_PLAIN_
#define RUNS_INT_8 RUNS_PLAIN_
#define RUNS_FLOAT_4 RUNS_PLAIN_
#define RUNS_FLOAT_8 RUNS_PLAIN_
#define RUNS_NARROW_(sfx, T, size)                                                        \
    static inline void read_##sfx(float *d, const void *s, intptr_t n) {                  \
        dk_##sfx##_to_f32_n(d, s, n);                                                     \
    }                                                                                     \
    static inline void write_##sfx(void *d, const float *s, intptr_t n) {                 \
        dk_f32_to_##sfx##_n(d, s, n);                                                     \
    }                                                                                     \
    static inline void write_f64_##sfx(void *d, const double *s, intptr_t n) {            \
        dk_f64_to_##sfx##_n(d, s, n);                                                     \
    }                                                                                     \
    static inline void write_i32_##sfx(void *d, const int32_t *s, intptr_t n) {           \
        dk_i32_to_##sfx##_n(d, s, n);                                                     \
    }
#define RUNS_FLOAT_2(sfx, T) RUNS_NARROW_(sfx, T, 2)
#define RUNS_FLOAT_1(sfx, T) RUNS_NARROW_(sfx, T, 1)
DISPATCH_FORALL_DTYPES(RUNS_)

/* The rule of an integer target TT from an integer or float value. */
/* Whether an integer target DT takes the int32 rule (narrower, or int32) */
#define TAKES_I32_RULE_(DT) (sizeof(DT) < 4 || (sizeof(DT) == 4 && DISPATCH_INT_IS_SIGNED(DT)))
#define TO_INT_(DT, Dsize, a, FROM_FLOAT)                                                 \
    (TAKES_I32_RULE_(DT)                                                                  \
         ? (DT)(DK_U(Dsize))(uint32_t)(FROM_FLOAT##_i32)(a)                               \
         : (DT)(DK_U(Dsize))(uint64_t)(FROM_FLOAT##_i64)(a))
static inline int32_t int_to_i32(int64_t x) { return (int32_t)(uint32_t)(uint64_t)x; }
static inline int64_t int_to_i64(int64_t x) { return x; }

/* n copies of the osz bytes at v, `step` bytes apart: a fixed-size store each
 * (a memcpy of a variable size was a library call per element). */
#define FILL_AS_(U)                                                                       \
    do {                                                                                  \
        U x;                                                                              \
        memcpy(&x, v, sizeof x);                                                          \
        if (step == (intptr_t)sizeof x) {                                                 \
            U *o = (U *)(void *)dst;                                                      \
            for (intptr_t i = 0; i < n; i++) o[i] = x;                                    \
        } else {                                                                          \
            for (intptr_t i = 0; i < n; i++) memcpy(dst + i * step, &x, sizeof x);        \
        }                                                                                 \
    } while (0)
static void fill_bits(char *dst, intptr_t step, intptr_t n, const char *v, intptr_t osz)
{
    switch (osz) {
    case 1: FILL_AS_(uint8_t); break;
    case 2: FILL_AS_(uint16_t); break;
    case 4: FILL_AS_(uint32_t); break;
    default: FILL_AS_(uint64_t); break;
    }
}

/* A layout other than contiguous: a broadcast source is cast once (by the
 * reference) and its bits written n times; a strided operand goes through
 * packed chunks, cast by the contiguous path `self`. */
static void cast_other_layout(dispatch_loop_fn self, dispatch_loop_fn reference, intptr_t isz,
                              intptr_t osz, char **data, const intptr_t *s, intptr_t n)
{
    if (s[1] == 0) {
        char one[8];
        char *d[2] = {one, data[1]};
        const intptr_t st[2] = {osz, 0};
        reference(d, st, 1, NULL);
        fill_bits(data[0], s[0], n, one, osz);
        return;
    }
    dk_run_packed(self, isz, osz, data, s, n);
}

/*
 * Note [int64 to float below AVX512DQ]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * AVX2 has no int64 -> float conversion: gcc converted element by element
 * (cvtsi2ss, 0.26 ns an element; x[:, ::2] / y[:, ::2] of int64, whose
 * inputs become float32, 1.34x torch with AVX2). An int64 of magnitude
 * below 2^51 added to the bits of the double 1.5 * 2^52 is that double's
 * mantissa, so subtracting 1.5 * 2^52 gives the int64 as a double, exactly;
 * float64 is that, float32 its one rounding by vcvtpd2ps (as the scalar
 * conversion rounds once). A block of 4 with a larger value is converted
 * by the scalar instruction; SSE4.1 the same in 2-lane vectors. Returns
 * the elements done (0 elsewhere).
 */
static inline intptr_t i64_to_float_run(void *out, const int64_t *a, intptr_t n, int dsize)
{
    intptr_t i = 0;
#if defined(__AVX2__) && !defined(__AVX512DQ__)
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000LL);
    const __m256i bias = _mm256_set1_epi64x(1LL << 51);
    const __m256i high = _mm256_set1_epi64x((long long)(~0ULL << 52));
    const __m256d magicd = _mm256_set1_pd(0x1.8p52);
    for (; i + 4 <= n; i += 4) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
        /* x + 2^51 below 2^52 (unsigned): x in [-2^51, 2^51), the exact range */
        if (!_mm256_testz_si256(_mm256_add_epi64(x, bias), high)) {
            for (intptr_t j = i; j < i + 4; j++) {
                if (dsize == 4) ((float *)out)[j] = (float)a[j];
                else ((double *)out)[j] = (double)a[j];
            }
            continue;
        }
        const __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x, magic)), magicd);
        if (dsize == 4) _mm_storeu_ps((float *)out + i, _mm256_cvtpd_ps(d));
        else _mm256_storeu_pd((double *)out + i, d);
    }
#elif defined(__SSE4_1__) && !defined(__AVX2__) && defined(__x86_64__)
    /* the same in two 2-lane vectors, one range test for the four */
    const __m128i magic = _mm_set1_epi64x(0x4338000000000000LL);
    const __m128i bias = _mm_set1_epi64x(1LL << 51);
    const __m128i high = _mm_set1_epi64x((long long)(~0ULL << 52));
    const __m128d magicd = _mm_set1_pd(0x1.8p52);
    for (; i + 4 <= n; i += 4) {
        const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(a + i + 2));
        if (!_mm_testz_si128(_mm_or_si128(_mm_add_epi64(x0, bias), _mm_add_epi64(x1, bias)), high)) {
            for (intptr_t j = i; j < i + 4; j++) {
                if (dsize == 4) ((float *)out)[j] = (float)a[j];
                else ((double *)out)[j] = (double)a[j];
            }
            continue;
        }
        const __m128d d0 = _mm_sub_pd(_mm_castsi128_pd(_mm_add_epi64(x0, magic)), magicd);
        const __m128d d1 = _mm_sub_pd(_mm_castsi128_pd(_mm_add_epi64(x1, magic)), magicd);
        if (dsize == 4) {
            _mm_storeu_ps((float *)out + i, _mm_movelh_ps(_mm_cvtpd_ps(d0), _mm_cvtpd_ps(d1)));
        } else {
            _mm_storeu_pd((double *)out + i, d0);
            _mm_storeu_pd((double *)out + i + 2, d1);
        }
    }
#else
    (void)out, (void)a, (void)n, (void)dsize;
#endif
    return i;
}

/* An integer (or bool) of ssize bytes widened to dsize bytes, SSE4.1 without
 * AVX2: gcc 12 spread each source vector out by pmovzx/pmovsx of its
 * shifted halves (14 shuffles for 16 bytes to int64, where the stores need
 * 8 cycles of 16). One byte shuffle per output vector instead: the source's
 * bytes to their place, zeros above (unsigned, bool's 0 and 1), or to the
 * top of the lane then shifted down arithmetically (signed int8 -> int32;
 * a signed widening by 2 took longer so, 6.0 -> 8.0 us for (512, 512)
 * int8 -> int16, pmovsx doing half of it already; into 64 bits SSE has no
 * such shift). Those are left to the compiler. Returns the elements done
 * (0 elsewhere). */
static inline intptr_t int_widen_run(void *dst, const void *src, intptr_t n, int ssize, int dsize,
                                     int is_signed)
{
    intptr_t i = 0;
#if defined(__SSE4_1__) && !defined(__AVX2__)
    const int per = 16 / ssize, ratio = dsize / ssize;
    if (is_signed && (dsize == 8 || ratio == 2)) return 0;
    const int top = is_signed ? dsize - ssize : 0; /* where in its lane a value's bytes go */
    __m128i mask[8];
    for (int k = 0; k < ratio; k++) {
        uint8_t m[16];
        for (int b = 0; b < 16; b++) {
            const int e = k * (16 / dsize) + b / dsize, at = b % dsize - top;
            m[b] = (uint8_t)(at >= 0 && at < ssize ? e * ssize + at : 0x80);
        }
        memcpy(&mask[k], m, 16);
    }
    for (; i + per <= n; i += per) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)((const char *)src + i * ssize));
        char *o = (char *)dst + i * dsize;
        for (int k = 0; k < ratio; k++) {
            __m128i w = _mm_shuffle_epi8(v, mask[k]);
            if (top) w = _mm_srai_epi32(w, 8 * top); /* signed: into 32 bits only */
            _mm_storeu_si128((__m128i *)(void *)(o + 16 * k), w);
        }
    }
#else
    (void)dst, (void)src, (void)n, (void)ssize, (void)dsize, (void)is_signed;
#endif
    return i;
}

/* One cast: source row S, target row D (Note at the top). */
#define CAST_(SNAME, Ssfx, ST, Ssize, SCAT, DNAME, Dsfx, DT, Dsize, DCAT)                  \
    void DISPATCH_CPU_DISPATCH_CURFX(dk_cast_##Ssfx##_##Dsfx)(char **data, const intptr_t *s, \
                                                              intptr_t n, void *ctx);     \
    void DISPATCH_CPU_DISPATCH_CURFX(dk_cast_##Ssfx##_##Dsfx)(char **data, const intptr_t *s, \
                                                              intptr_t n, void *ctx)      \
    {                                                                                     \
        enum {                                                                            \
            S_FLOAT = DISPATCH_CAT_##SCAT == DISPATCH_CAT_FLOAT,                           \
            S_NARROW = S_FLOAT && Ssize <= 2,                                             \
            S_EXACT = S_NARROW || (S_FLOAT && Ssize == 4) || (!S_FLOAT && Ssize <= 2),    \
            D_FLOAT = DISPATCH_CAT_##DCAT == DISPATCH_CAT_FLOAT,                           \
            D_NARROW = D_FLOAT && Dsize <= 2,                                             \
            D_BOOL = DISPATCH_CAT_##DCAT == DISPATCH_CAT_BOOL,                             \
        };                                                                                \
        (void)ctx;                                                                        \
        if (s[0] != Dsize || s[1] != Ssize) {                                             \
            cast_other_layout(DISPATCH_CPU_DISPATCH_CURFX(dk_cast_##Ssfx##_##Dsfx),         \
                              dispatch_cast_loop_reference(DISPATCH_##SNAME, DISPATCH_##DNAME), \
                              Ssize, Dsize, data, s, n);                                  \
            return;                                                                       \
        }                                                                                 \
        float buf[CHUNK];                                                                 \
        if (D_NARROW && S_FLOAT && Ssize == 4) { /* float32: one rounding, no copy */      \
            write_##Dsfx(data[0], (const float *)(const void *)data[1], n);              \
        } else if (D_NARROW && S_EXACT) { /* by float runs: exact, then one rounding */   \
            for (intptr_t i = 0; i < n; i += CHUNK) {                                     \
                const intptr_t m = n - i < CHUNK ? n - i : CHUNK;                          \
                read_##Ssfx(buf, data[1] + i * Ssize, m);                                 \
                write_##Dsfx(data[0] + i * Dsize, buf, m);                                \
            }                                                                             \
        } else if (D_NARROW && !S_FLOAT && Ssize == 4 && DISPATCH_INT_IS_SIGNED(ST)) {    \
            /* int32: rounded once, as from its exact double, in int32 lanes */            \
            for (intptr_t i = 0; i < n; i += CHUNK) {                                     \
                const intptr_t m = n - i < CHUNK ? n - i : CHUNK;                          \
                write_i32_##Dsfx(data[0] + i * Dsize,                                     \
                                 (const int32_t *)(const void *)(data[1] + i * Ssize), m);    \
            }                                                                             \
        } else if (D_NARROW) { /* int64, float64: from double runs, rounded once */       \
            const ST *a = (const ST *)data[1];                                            \
            double dbuf[CHUNK];                                                           \
            for (intptr_t i = 0; i < n; i += CHUNK) {                                     \
                const intptr_t m = n - i < CHUNK ? n - i : CHUNK;                          \
                const double *d = (const double *)(const void *)(a + i);                  \
                if (!(S_FLOAT && Ssize == 8)) {                                           \
                    intptr_t j = i64_to_float_run(dbuf, (const int64_t *)(const void *)(a + i), \
                                                  m, 8);                                  \
                    for (; j < m; j++) dbuf[j] = (double)a[i + j];                        \
                    d = dbuf;                                                             \
                }                                                                         \
                write_f64_##Dsfx(data[0] + i * Dsize, d, m);                              \
            }                                                                             \
        } else if (S_NARROW && D_FLOAT && Dsize == 4) { /* widened in place */           \
            read_##Ssfx((float *)(void *)data[0], data[1], n);                           \
        } else if (S_NARROW) { /* widened by float runs, then as a float32 */             \
            DT *o = (DT *)data[0];                                                        \
            intptr_t i0 = 0;                                                              \
            if (DISPATCH_##SNAME == DISPATCH_BFLOAT16 && !D_FLOAT && !D_BOOL &&           \
                TAKES_I32_RULE_(DT)) /* widened in the lanes: one pass */                 \
                i0 = float_to_i32_rule_run(o, data[1], n, 2, Dsize);                      \
            for (intptr_t i = i0; i < n; i += CHUNK) {                                    \
                const intptr_t m = n - i < CHUNK ? n - i : CHUNK;                          \
                read_##Ssfx(buf, data[1] + i * Ssize, m);                                 \
                intptr_t j = 0;                                                           \
                if (!D_FLOAT && !D_BOOL && TAKES_I32_RULE_(DT))                           \
                    j = float_to_i32_rule_run(o + i, buf, m, 4, Dsize);                   \
                for (; j < m; j++)                                                        \
                    o[i + j] = D_BOOL ? (DT)(buf[j] != 0)                                 \
                               : D_FLOAT ? (DT)buf[j] : TO_INT_(DT, Dsize, buf[j], f32_to); \
            }                                                                             \
        } else {                                                                          \
            DT *o = (DT *)data[0];                                                        \
            const ST *a = (const ST *)data[1];                                            \
            intptr_t i = 0;                                                               \
            /* integers of one width (bool's 0 and 1 too): the same bits, copied, */     \
            /* streamed as the copy loop's (Note [Stores past the caches]) */             \
            if (!S_FLOAT && !D_FLOAT && !D_BOOL && Ssize == Dsize) {                      \
                const int stream = dk_streams((size_t)n * Ssize, 1);                      \
                if (dk_copy_on_lines((char *)o, (const char *)a, (size_t)n * Ssize, stream)) { \
                    if (stream) DK_STREAM_FENCE_();                                       \
                    return;                                                               \
                }                                                                         \
            }                                                                             \
            if (S_FLOAT && !D_FLOAT && !D_BOOL && TAKES_I32_RULE_(DT))                    \
                i = float_to_i32_rule_run(o, a, n, Ssize, Dsize);                         \
            if (!S_FLOAT && !D_BOOL && D_FLOAT && Ssize == 8) /* Note [int64 to float below AVX512DQ] */ \
                i = i64_to_float_run(o, (const int64_t *)(const void *)a, n, Dsize);      \
            if (!S_FLOAT && !D_FLOAT && !D_BOOL && Dsize > Ssize)                         \
                i = int_widen_run(o, a, n, Ssize, Dsize, DISPATCH_INT_IS_SIGNED(ST));    \
            for (; i < n; i++)                                                            \
                o[i] = D_BOOL ? (DT)(a[i] != 0)                                           \
                       : D_FLOAT ? (DT)a[i]                                               \
                       : !S_FLOAT ? TO_INT_(DT, Dsize, a[i], int_to)                      \
                       : Ssize == 4 ? TO_INT_(DT, Dsize, a[i], f32_to)                    \
                                    : TO_INT_(DT, Dsize, a[i], f64_to);                   \
        }                                                                                 \
    }

/* Every pair: the list expanded inside its own expansion, which a macro
 * cannot do directly; each row leaves CASTS_FROM_(...) unexpanded (DEFER_)
 * and EVAL_ scans the result once more, outside the list. */
#define EMPTY_()
#define DEFER_(m) m EMPTY_()
#define EVAL_(...) __VA_ARGS__
#define UNPACK_(...) __VA_ARGS__ /* not EVAL_: that one is being expanded */
#define CAST_TO_(S, NAME, name, sfx, T, size, CAT, kind, fmt, dl) CAST_TO2_(UNPACK_ S, NAME, sfx, T, size, CAT)
#define CAST_TO2_(...) CAST_TO3_(__VA_ARGS__)
#define CAST_TO3_(...) CAST_(__VA_ARGS__)
#define CASTS_FROM_(NAME, sfx, T, size, CAT)                                              \
    DISPATCH_FORALL_DTYPES_WITH(CAST_TO_, (NAME, sfx, T, size, CAT))
#define FROM_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl)                           \
    DEFER_(CASTS_FROM_)(NAME, sfx, T, size, CAT)
EVAL_(DISPATCH_FORALL_DTYPES(FROM_ROW_))

/* The kernels of this source (Note [Exported kernel tables] in kernels_export.h). */
#include "kernels_export.h"
#define ENTRY_TO_(S, NAME, name, sfx, T, size, CAT, kind, fmt, dl) ENTRY2_(UNPACK_ S, NAME, sfx)
#define ENTRY2_(...) ENTRY3_(__VA_ARGS__)
#define ENTRY3_(SNAME, Ssfx, DNAME, Dsfx) DISPATCH_KERNELS_CAST(SNAME, DNAME, dk_cast_##Ssfx##_##Dsfx, 0)
#define ENTRIES_FROM_(NAME, sfx) DISPATCH_FORALL_DTYPES_WITH(ENTRY_TO_, (NAME, sfx))
#define ENTRY_ROW_(NAME, name, sfx, T, size, CAT, kind, fmt, dl) DEFER_(ENTRIES_FROM_)(NAME, sfx)
DISPATCH_KERNELS_EXPORT(cast_loops,
    DISPATCH_KERNELS_CAST(FLOAT64, FLOAT16, dk_cast_f64_f16, 1) /* the one traced entry of this source */
    EVAL_(DISPATCH_FORALL_DTYPES(ENTRY_ROW_))
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "cast_loops.dispatch.h"
DISPATCH_KERNELS_CHOOSER(cast_loops)
#endif
