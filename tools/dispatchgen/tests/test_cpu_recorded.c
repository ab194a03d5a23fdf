/*
 * The detection's mapping fed recorded answers (Note [Recorded detection] in
 * cpu_internal.h): CPUs and Macs that CI does not have, through the same
 * functions the real detection calls.
 *
 * x86: CPUID leaves 0, 1, 7.0, 7.1, 0x80000000, 0x80000001 and XCR0, passed
 * through the whole runtime (implications, groups, the ENABLE/DISABLE env
 * variables) with the test hook; checked on an x86-64 build only, whose
 * feature table it is. Apple arm64: the hw.optional.* answers to the raw
 * features (the aarch64 table is not this build's, so no groups there).
 * Run by tests/test_cpu_recorded.py.
 */
#ifndef _GNU_SOURCE
    #define _GNU_SOURCE /* setenv under -std=c11 */
#endif
#include "cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(COND, ...)                                                                \
    do {                                                                                \
        if (!(COND)) {                                                                  \
            ++failures;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #COND);   \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
        }                                                                               \
    } while (0)

/* ------------------------------------------------------------------------
 * Recorded sysctl answers: name/value pairs, a NULL name ends the list.
 * ------------------------------------------------------------------------ */
typedef struct {
    const char *name;
    long long value;
} sysctl_answer;

static int recorded_sysctl(void *ctx, const char *name, long long *value)
{
    for (const sysctl_answer *a = ctx; a->name; ++a) {
        if (strcmp(a->name, name) == 0) {
            *value = a->value;
            return 0;
        }
    }
    return -1; /* the kernel does not know the name: ENOENT */
}

/* ------------------------------------------------------------------------
 * Apple arm64. The FEAT_* values of M1/M2/M3 as `sysctl hw.optional` prints
 * them on macOS 14 (M2 added BF16 and I8MM over M1; M3 has M2's; SME came
 * with M4); macOS 11 had only the older names.
 * ------------------------------------------------------------------------ */
#define APPLE_OLD_NAMES                                                              \
    {"hw.optional.floatingpoint", 1}, {"hw.optional.neon", 1},                       \
    {"hw.optional.neon_hpfp", 1}, {"hw.optional.neon_fp16", 1},                      \
    {"hw.optional.armv8_1_atomics", 1}, {"hw.optional.armv8_2_fhm", 1},              \
    {"hw.optional.armv8_2_sha512", 1}, {"hw.optional.armv8_2_sha3", 1},              \
    {"hw.optional.armv8_3_compnum", 1}, {"hw.optional.armv8_crc32", 1}

static const sysctl_answer m1_macos11[] = {APPLE_OLD_NAMES, {NULL, 0}};

#define APPLE_FEAT(BF16, I8MM, SME)                                                  \
    {"hw.optional.arm.FEAT_FP16", 1}, {"hw.optional.arm.FEAT_FHM", 1},               \
    {"hw.optional.arm.FEAT_DotProd", 1}, {"hw.optional.arm.FEAT_RDM", 1},            \
    {"hw.optional.arm.FEAT_LSE", 1}, {"hw.optional.arm.FEAT_FCMA", 1},               \
    {"hw.optional.arm.FEAT_JSCVT", 1}, {"hw.optional.arm.FEAT_SHA3", 1},             \
    {"hw.optional.arm.FEAT_BF16", BF16}, {"hw.optional.arm.FEAT_I8MM", I8MM},        \
    {"hw.optional.arm.FEAT_SME", SME}, {"hw.optional.arm.FEAT_SME2", SME},           \
    {"hw.optional.arm.AdvSIMD", 1}, {"hw.optional.arm.AdvSIMD_HPFPCvt", 1}

static const sysctl_answer m1_macos14[] = {APPLE_FEAT(0, 0, 0), APPLE_OLD_NAMES, {NULL, 0}};
static const sysctl_answer m2_macos14[] = {APPLE_FEAT(1, 1, 0), APPLE_OLD_NAMES, {NULL, 0}};
static const sysctl_answer m3_macos14[] = {APPLE_FEAT(1, 1, 0), APPLE_OLD_NAMES, {NULL, 0}};
/* A FEAT_ answer of 0 wins over an older name's 1 (no such Mac: the order). */
static const sysctl_answer feat_says_no[] = {
    {"hw.optional.arm.FEAT_FP16", 0}, {"hw.optional.neon_fp16", 1}, {NULL, 0}};

typedef struct {
    const char *name;
    const sysctl_answer *answers;
    int hp, dp, fhm, i8mm, bf16;
} apple_arm64_case;

static void test_apple_arm64(void)
{
    static const apple_arm64_case cases[] = {
        {"M1, macOS 11", m1_macos11, 1, 0, 1, 0, 0},
        {"M1, macOS 14", m1_macos14, 1, 1, 1, 0, 0},
        {"M2, macOS 14", m2_macos14, 1, 1, 1, 1, 1},
        {"M3, macOS 14", m3_macos14, 1, 1, 1, 1, 1},
        {"FEAT_FP16=0 before neon_fp16=1", feat_says_no, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const apple_arm64_case *c = &cases[i];
        unsigned char raw[DISPATCH_CPU_FEATURE_MAX] = {0};
        dispatch__cpu_apple_arm64_from_sysctl(recorded_sysctl, (void *)c->answers, raw);
        CHECK(raw[DISPATCH_CPU_FEATURE_ASIMD] && raw[DISPATCH_CPU_FEATURE_NEON], "%s: ASIMD", c->name);
        CHECK(raw[DISPATCH_CPU_FEATURE_ASIMDHP] == c->hp, "%s: ASIMDHP", c->name);
        CHECK(raw[DISPATCH_CPU_FEATURE_ASIMDDP] == c->dp, "%s: ASIMDDP", c->name);
        CHECK(raw[DISPATCH_CPU_FEATURE_ASIMDFHM] == c->fhm, "%s: ASIMDFHM", c->name);
        CHECK(raw[DISPATCH_CPU_FEATURE_I8MM] == c->i8mm, "%s: I8MM", c->name);
        CHECK(raw[DISPATCH_CPU_FEATURE_BF16] == c->bf16, "%s: BF16", c->name);
        CHECK(!raw[DISPATCH_CPU_FEATURE_SVE] && !raw[DISPATCH_CPU_FEATURE_SVE2], "%s: SVE", c->name);
        CHECK(!raw[DISPATCH_CPU_FEATURE_AVX2], "%s: an x86 feature", c->name);
    }
}

#if defined(__aarch64__)
/* On an aarch64 build the whole runtime runs on the answers: implications
 * and the env variables over the aarch64 table. */
static const sysctl_answer *current_mac;

static void recorded_mac_detect(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    dispatch__cpu_apple_arm64_from_sysctl(recorded_sysctl, (void *)current_mac, raw);
}

static void expect_mac(const char *mac, const char *names, int on)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", names);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        CHECK(dispatch_cpu_have(dispatch_cpu_feature_id(tok)) == on, "%s: %s is %s", mac, tok,
              on ? "off" : "on");
    }
}

static void test_apple_arm64_runtime(void)
{
    dispatch__cpu_set_detect_for_tests(recorded_mac_detect);
    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    unsetenv("DISPATCH_ENABLE_CPU_FEATURES");
    current_mac = m1_macos11;
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
    expect_mac("M1, macOS 11", "ASIMD ASIMDHP ASIMDFHM", 1);
    expect_mac("M1, macOS 11", "ASIMDDP I8MM BF16 SVE", 0);
    current_mac = m2_macos14;
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
    expect_mac("M2", "ASIMD ASIMDHP ASIMDDP ASIMDFHM I8MM BF16", 1);
    expect_mac("M2", "SVE SVE2", 0);
    setenv("DISPATCH_DISABLE_CPU_FEATURES", "ASIMDDP", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
    expect_mac("M2, DISABLE=ASIMDDP", "ASIMDHP BF16", 1);
    expect_mac("M2, DISABLE=ASIMDDP", "ASIMDDP I8MM", 0); /* I8MM implies ASIMDDP */
    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    current_mac = m1_macos14;
    setenv("DISPATCH_ENABLE_CPU_FEATURES", "BF16", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == -1 && strstr(dispatch_cpu_error(), "cannot enable BF16"),
          "M1, ENABLE=BF16: %s", dispatch_cpu_error());
    unsetenv("DISPATCH_ENABLE_CPU_FEATURES");
    dispatch__cpu_set_detect_for_tests(NULL);
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "the hardware again: %s", dispatch_cpu_error());
}
#endif

#if defined(__x86_64__)
/* ------------------------------------------------------------------------
 * x86. Register values: the Zen 4 one verbatim from an AMD EPYC (family 25,
 * model 17) guest; the others assembled from each CPU's documented feature
 * bits (only bits the mapping reads, plus a few neighbours).
 * ------------------------------------------------------------------------ */
#define B(N) (1u << (N))
/* leaf 1 ECX / EDX */
#define C1_INTEL (B(0) /* SSE3 */ | B(1) /* PCLMULQDQ */ | B(9) /* SSSE3 */ | B(12) /* FMA */ | \
                  B(13) /* CX16 */ | B(19) /* SSE4.1 */ | B(20) /* SSE4.2 */ | B(22) /* MOVBE */ | \
                  B(23) /* POPCNT */ | B(25) /* AES */ | B(26) /* XSAVE */ | B(27) /* OSXSAVE */ | \
                  B(28) /* AVX */ | B(29) /* F16C */ | B(30) /* RDRAND */)
#define D1_INTEL 0xbfebfbffu /* SSE (25), SSE2 (26), ... */
/* leaf 0x80000001 ECX: LAHF (0), ABM/LZCNT (5), PREFETCHW (8) */
#define E1C_INTEL (B(0) | B(5) | B(8))
/* leaf 7.0 EBX */
#define B7_V3 (B(3) /* BMI1 */ | B(5) /* AVX2 */ | B(8) /* BMI2 */ | B(19) /* ADX */)
#define B7_SKX (B(16) /* AVX512F */ | B(17) /* DQ */ | B(28) /* CD */ | B(30) /* BW */ | B(31) /* VL */)
#define B7_IFMA B(21)
/* leaf 7.0 ECX */
#define C7_ICL (B(1) /* VBMI */ | B(6) /* VBMI2 */ | B(8) /* GFNI */ | B(9) /* VAES */ | \
                B(10) /* VPCLMULQDQ */ | B(11) /* VNNI */ | B(12) /* BITALG */ | B(14) /* VPOPCNTDQ */)
#define C7_VNNI B(11)
/* leaf 7.0 EDX: AVX512_FP16 (23), AMX-BF16 (22), AMX-TILE (24), AMX-INT8 (25) */
#define D7_SPR (B(22) | B(23) | B(24) | B(25))
/* leaf 7.1 EAX: AVX-VNNI (4), AVX512_BF16 (5) */
#define A71_SPR (B(4) | B(5))


typedef struct {
    const char *name;
    dispatch__cpu_x86_regs regs;
    const sysctl_answer *sysctl; /* macOS: its kernel's answers; NULL elsewhere */
} x86_record;

/* macOS on an Intel Mac: the hw.optional.avx512* names exist on every one,
 * 1 where the CPU has the extension. */
static const sysctl_answer mac_avx512_yes[] = {
    {"hw.optional.avx1_0", 1}, {"hw.optional.avx2_0", 1}, {"hw.optional.avx512f", 1},
    {"hw.optional.avx512cd", 1}, {"hw.optional.avx512dq", 1}, {"hw.optional.avx512bw", 1},
    {"hw.optional.avx512vl", 1}, {"hw.optional.avx512ifma", 0}, {"hw.optional.avx512vbmi", 0},
    {NULL, 0}};
static const sysctl_answer mac_avx512_no[] = {
    {"hw.optional.avx1_0", 1}, {"hw.optional.avx2_0", 1}, {"hw.optional.avx512f", 0},
    {"hw.optional.avx512cd", 0}, {"hw.optional.avx512dq", 0}, {"hw.optional.avx512bw", 0},
    {"hw.optional.avx512vl", 0}, {"hw.optional.avx512ifma", 0}, {"hw.optional.avx512vbmi", 0},
    {NULL, 0}};

/* Haswell (Core i7-4770), Linux: XCR0 = x87|SSE|AVX. */
static const x86_record haswell = {"Haswell", {
    .leaf0 = {0xd}, .leaf1 = {0x306c3, 0, C1_INTEL, D1_INTEL}, .leaf7 = {0, B(3) | B(5) | B(8)},
    .ext0 = {0x80000008u}, .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x7}, NULL};
/* Skylake-X (Core i9-7900X), Linux: XCR0 with opmask/ZMM (0xe0) and PKRU. */
static const x86_record skylake_x = {"Skylake-X", {
    .leaf0 = {0x16}, .leaf1 = {0x50654, 0, C1_INTEL, D1_INTEL}, .leaf7 = {0, B7_V3 | B7_SKX},
    .ext0 = {0x80000008u}, .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x2e7}, NULL};
/* Zen 4 (AMD EPYC 9004 guest), Linux: recorded on this project's build machine. */
static const x86_record zen4 = {"Zen 4", {
    .leaf0 = {0x0000001c, 0x68747541, 0x444d4163, 0x69746e65},
    .leaf1 = {0x00a10f11, 0x00020800, 0xfffa3203, 0x178bfbff},
    .leaf7 = {0x00000001, 0xf1bf07ab, 0x00405fc6, 0x00000010},
    .leaf7_1 = {0x00000020, 0, 0, 0},
    .ext0 = {0x80000021, 0x68747541, 0x444d4163, 0x69746e65},
    .ext1 = {0x00a10f11, 0x40000000, 0x004003f3, 0x2fd3fbff},
    .xcr0 = 0xe7}, NULL};
/* Sapphire Rapids (Xeon Platinum 8480+), Linux: XCR0 with AMX tile state. */
static const x86_record sapphire_rapids = {"Sapphire Rapids", {
    .leaf0 = {0x20}, .leaf1 = {0x806f8, 0, C1_INTEL, D1_INTEL},
    .leaf7 = {2, B7_V3 | B7_SKX | B7_IFMA, C7_ICL, D7_SPR}, .leaf7_1 = {A71_SPR},
    .ext0 = {0x80000008u}, .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x602e7}, NULL};
/* iMac Pro (Xeon W-2140B, Skylake-W), macOS: XCR0 without the AVX-512 bits
 * until the thread's first AVX-512 instruction. */
#define IMAC_PRO_REGS {                                                            \
    .leaf0 = {0x16}, .leaf1 = {0x50654, 0, C1_INTEL, D1_INTEL}, .leaf7 = {0, B7_V3 | B7_SKX}, \
    .ext0 = {0x80000008u}, .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x7}
static const x86_record imac_pro = {"iMac Pro (macOS)", IMAC_PRO_REGS, mac_avx512_yes};
/* The same answers read as Linux would (no sysctl): XCR0 alone says no. */
static const x86_record imac_pro_xcr0_only = {"iMac Pro, XCR0 only", IMAC_PRO_REGS, NULL};
/* Mac Pro 2019 (Xeon W-3245, Cascade Lake), macOS. */
static const x86_record mac_pro = {"Mac Pro 2019 (macOS)", {
    .leaf0 = {0x16}, .leaf1 = {0x50657, 0, C1_INTEL, D1_INTEL},
    .leaf7 = {0, B7_V3 | B7_SKX, C7_VNNI}, .ext0 = {0x80000008u},
    .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x7}, mac_avx512_yes};
/* MacBook Pro 2019 (Core i9-9880H, Coffee Lake), macOS: no AVX-512. */
static const x86_record macbook_pro = {"MacBook Pro 2019 (macOS)", {
    .leaf0 = {0x16}, .leaf1 = {0x906ed, 0, C1_INTEL, D1_INTEL}, .leaf7 = {0, B7_V3},
    .ext0 = {0x80000008u}, .ext1 = {0, 0, E1C_INTEL, 0x2c100800u}, .xcr0 = 0x1f}, mac_avx512_no};

static const x86_record *current;

static void recorded_detect(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    dispatch__cpu_x86_from_regs(&current->regs, current->sysctl ? recorded_sysctl : NULL,
                                (void *)current->sysctl, raw);
}

/* The features of `names` (space separated) that are on (1) or off (0). */
static void expect(const char *cpu, const char *setting, const char *names, int on)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", names);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        const int id = dispatch_cpu_feature_id(tok);
        CHECK(id != DISPATCH_CPU_FEATURE_NONE, "unknown %s", tok);
        CHECK(dispatch_cpu_have(id) == on, "%s, %s: %s is %s", cpu, setting, tok,
              on ? "off" : "on");
    }
}

#define ENABLE "DISPATCH_ENABLE_CPU_FEATURES"
#define DISABLE "DISPATCH_DISABLE_CPU_FEATURES"

/* Detect `rec` with at most one of the env variables set; returns like init. */
static int run(const x86_record *rec, const char *var, const char *value)
{
    current = rec;
    unsetenv(ENABLE);
    unsetenv(DISABLE);
    if (var) {
        setenv(var, value, 1);
    }
    return dispatch_cpu_redetect_for_tests();
}

static void test_x86_record(const x86_record *r, const char *on, const char *off, int v4)
{
    const char *n = r->name;
    CHECK(run(r, NULL, NULL) == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "detected", on, 1);
    expect(n, "detected", off, 0);
    expect(n, "detected", "X86_V2 X86_V3 AVX2 FMA3 BMI2", 1);
    expect(n, "detected", "X86_V4 AVX512F AVX512_SKX", v4);

    /* The group rule (docs/downstream.md): a group is on only when all its
     * members are. Naming one member keeps what it implies, not the group. */
    CHECK(run(r, ENABLE, "AVX2") == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "ENABLE=AVX2", "AVX2 F16C AVX SSE42", 1);
    expect(n, "ENABLE=AVX2", "X86_V3 X86_V4 BMI BMI2 FMA3 AVX512F", 0);
    /* Naming the group enables every member, and no more. */
    CHECK(run(r, ENABLE, "X86_V3") == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "ENABLE=X86_V3", "X86_V2 X86_V3 AVX2 BMI2 LZCNT MOVBE CX16 LAHF", 1);
    expect(n, "ENABLE=X86_V3", "X86_V4 AVX512F AVX512_SKX", 0);
    /* Disabling a member turns off every group that holds it, nothing else. */
    CHECK(run(r, DISABLE, "BMI2") == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "DISABLE=BMI2", "X86_V2 AVX2 FMA3", 1);
    expect(n, "DISABLE=BMI2", "X86_V3 X86_V4 BMI2", 0);
    expect(n, "DISABLE=BMI2", "AVX512_SKX", v4);
    /* A group off turns off the groups that hold all its members, not its
     * members: X86_V4 code is X86_V3 code too. */
    CHECK(run(r, DISABLE, "X86_V3") == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "DISABLE=X86_V3", "X86_V3 X86_V4", 0);
    expect(n, "DISABLE=X86_V3", "X86_V2 AVX2 BMI2", 1);
    expect(n, "DISABLE=X86_V3", "AVX512_SKX", v4);
    CHECK(run(r, DISABLE, "X86_V2") == 0, "%s: %s", n, dispatch_cpu_error());
    expect(n, "DISABLE=X86_V2", "X86_V2 X86_V3 X86_V4", 0);
    expect(n, "DISABLE=X86_V2", "SSE42 POPCNT AVX2", 1);

    if (v4) {
        CHECK(run(r, ENABLE, "AVX512_SKX") == 0, "%s: %s", n, dispatch_cpu_error());
        expect(n, "ENABLE=AVX512_SKX", "AVX512_SKX AVX512F AVX512CD AVX512BW AVX2", 1);
        expect(n, "ENABLE=AVX512_SKX", "X86_V4 X86_V3 BMI2 AVX512_CLX", 0);
        CHECK(run(r, ENABLE, "X86_V4") == 0, "%s: %s", n, dispatch_cpu_error());
        expect(n, "ENABLE=X86_V4", "X86_V4 X86_V3 X86_V2 AVX512_SKX BMI2 LZCNT", 1);
        expect(n, "ENABLE=X86_V4", "AVX512_CLX AVX512VNNI AVX512_ICL", 0);
        CHECK(run(r, DISABLE, "AVX512F") == 0, "%s: %s", n, dispatch_cpu_error());
        expect(n, "DISABLE=AVX512F", "X86_V3 AVX2", 1);
        expect(n, "DISABLE=AVX512F", "X86_V4 AVX512F AVX512_SKX AVX512_SPR AVX512CD", 0);
    } else {
        /* A request beyond the CPU is refused and changes nothing. */
        CHECK(run(r, ENABLE, "X86_V4") == -1 && dispatch_cpu_error_kind() == DISPATCH_CPU_ERROR_ENV &&
              strstr(dispatch_cpu_error(), "cannot enable X86_V4") != NULL,
              "%s: ENABLE=X86_V4: %s", n, dispatch_cpu_error());
        expect(n, "refused ENABLE=X86_V4", "X86_V3 AVX2", 1);
        CHECK(run(r, ENABLE, "AVX512_SKX") == -1 &&
              strstr(dispatch_cpu_error(), "AVX512F") != NULL,
              "%s: ENABLE=AVX512_SKX names what is missing: %s", n, dispatch_cpu_error());
    }
}

static void test_x86(void)
{
    dispatch__cpu_set_detect_for_tests(recorded_detect);
    test_x86_record(&haswell, "SSE42 LAHF", "AVX512CD AVX512_SKX", 0);
    test_x86_record(&skylake_x, "AVX512_SKX AVX512CD", "AVX512_CLX AVX512_CNL AVX512BF16", 1);
    test_x86_record(&zen4, "AVX512_ICL AVX512BF16 AVX512_CNL GFNI VAES",
                    "AVX512_SPR AVX512FP16 XOP FMA4 AVX512ER", 1);
    test_x86_record(&sapphire_rapids, "AVX512_SPR AVX512FP16 AVX512BF16 AVX512_ICL", "AVX512ER", 1);
    test_x86_record(&imac_pro, "AVX512_SKX", "AVX512_CLX", 1);
    test_x86_record(&imac_pro_xcr0_only, "AVX2", "AVX512F AVX512_SKX", 0);
    test_x86_record(&mac_pro, "AVX512_CLX AVX512VNNI", "AVX512_CNL AVX512_ICL", 1);
    test_x86_record(&macbook_pro, "AVX2 FMA3", "AVX512F", 0);
    dispatch__cpu_set_detect_for_tests(NULL);
    unsetenv(ENABLE);
    unsetenv(DISABLE);
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "the hardware again: %s", dispatch_cpu_error());
}
#endif /* __x86_64__ */

int main(void)
{
    test_apple_arm64();
#if defined(__aarch64__)
    test_apple_arm64_runtime();
#endif
#if defined(__x86_64__)
    test_x86();
#endif
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("ok");
    return 0;
}
