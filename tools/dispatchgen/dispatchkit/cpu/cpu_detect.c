/*
 * Raw CPU feature detection, one function per architecture.
 *
 * Compiled without the baseline flags (Note [Baseline guard] in
 * cpu_baseline_guard.c): nothing here may assume more than the architecture
 * minimum. Implications and groups are applied generically in
 * cpu_features.c; these functions only report each feature's own bits.
 */
#ifndef _GNU_SOURCE
    #define _GNU_SOURCE /* setenv, mkstemp, getauxval under -std=c11 */
#endif
#include "cpu_internal.h"

#include <string.h>

#if defined(__linux__)
    #include <fcntl.h>
    #include <unistd.h>
#endif

#define FEATURE(NAME) DISPATCH_CPU_FEATURE_##NAME

/* ------------------------------------------------------------------------
 * Linux: /proc/self/auxv and /proc/cpuinfo readers, no allocation.
 * ------------------------------------------------------------------------ */
#if defined(__linux__)

int dispatch__cpu_auxv_read(const char *path, unsigned long type, unsigned long *value)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    unsigned long pair[2];
    int found = -1;
    for (;;) {
        ssize_t got = read(fd, pair, sizeof(pair));
        if (got != (ssize_t)sizeof(pair) || pair[0] == 0 /* AT_NULL */) {
            break;
        }
        if (pair[0] == type) {
            *value = pair[1];
            found = 0;
            break;
        }
    }
    close(fd);
    return found;
}

static int dispatch__cpu_is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* 1/0 when `line` is "key<spaces>: words" and lists / does not list `flag`,
 * -1 when the key differs. */
static int dispatch__cpu_line_has(const char *line, size_t len, const char *key, const char *flag)
{
    size_t klen = strlen(key), flen = strlen(flag);
    if (len < klen || memcmp(line, key, klen) != 0) {
        return -1;
    }
    size_t i = klen;
    while (i < len && dispatch__cpu_is_space(line[i])) {
        ++i;
    }
    if (i >= len || line[i] != ':') {
        return -1;
    }
    ++i;
    while (i < len) {
        while (i < len && dispatch__cpu_is_space(line[i])) {
            ++i;
        }
        size_t start = i;
        while (i < len && !dispatch__cpu_is_space(line[i])) {
            ++i;
        }
        if (i - start == flen && memcmp(line + start, flag, flen) == 0) {
            return 1;
        }
    }
    return 0;
}

int dispatch__cpu_cpuinfo_has(const char *path, const char *key, const char *flag)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    /* Lines longer than the buffer are cut; feature lines are far shorter. */
    char buf[8192];
    size_t used = 0;
    int result = -1, eof = 0;
    while (result < 0 && !(eof && used == 0)) {
        if (!eof && used < sizeof(buf)) {
            ssize_t got = read(fd, buf + used, sizeof(buf) - used);
            if (got <= 0) {
                eof = 1;
            } else {
                used += (size_t)got;
            }
        }
        char *nl = memchr(buf, '\n', used);
        size_t line_len = nl ? (size_t)(nl - buf) : used;
        if (!nl && !eof && used < sizeof(buf)) {
            continue; /* read the rest of the line */
        }
        result = dispatch__cpu_line_has(buf, line_len, key, flag);
        size_t consumed = nl ? line_len + 1 : used;
        memmove(buf, buf + consumed, used - consumed);
        used -= consumed;
    }
    close(fd);
    return result;
}

#endif /* __linux__ */

/* ------------------------------------------------------------------------
 * Hardware capability words (ARM, POWER, Z): getauxval, else
 * /proc/self/auxv. Only the architectures below use it.
 * ------------------------------------------------------------------------ */
#if defined(__linux__) && (defined(__aarch64__) || defined(__arm__) || \
                           defined(__powerpc64__) || defined(__s390x__) || \
                           (defined(__riscv) && defined(__LP64__)) || defined(__loongarch64))
    #define DISPATCH_CPU_USE_HWCAP 1
    #include <errno.h>
    #include <sys/auxv.h>
    #ifndef AT_HWCAP
        #define AT_HWCAP 16
    #endif
    #ifndef AT_HWCAP2
        #define AT_HWCAP2 26
    #endif

/* 0 and *value, or -1 when the kernel gave nothing we can read. */
static int dispatch__cpu_hwcap(unsigned long type, unsigned long *value)
{
    errno = 0;
    unsigned long v = getauxval(type);
    if (v != 0 || errno == 0) {
        /* getauxval returns 0 both for "absent" (errno ENOENT) and "no bits". */
        *value = v;
        return 0;
    }
    return dispatch__cpu_auxv_read("/proc/self/auxv", type, value);
}
#endif

/* ------------------------------------------------------------------------
 * sysctl answers (macOS): one reader, and the pure mappings below that take
 * it as a callback (Note [Recorded detection] in cpu_internal.h).
 * ------------------------------------------------------------------------ */

/* 1 when the first of `name`, `fallback` (may be NULL) that the kernel knows
 * answers non-zero; 0 when it answers 0 or neither is known. */
static int dispatch__cpu_sysctl_on(dispatch__cpu_sysctl_fn sysctl, void *ctx, const char *name,
                                   const char *fallback)
{
    long long value = 0;
    if (sysctl(ctx, name, &value) == 0) {
        return value != 0;
    }
    if (fallback && sysctl(ctx, fallback, &value) == 0) {
        return value != 0;
    }
    return 0;
}

#if defined(__APPLE__)
    #include <sys/sysctl.h>
/* The hw.optional.* values are 32-bit ints; 64-bit answers are taken too. */
static int dispatch__cpu_sysctlbyname(void *ctx, const char *name, long long *value)
{
    (void)ctx;
    union {
        int i32;
        long long i64;
    } v;
    v.i64 = 0;
    size_t len = sizeof(v);
    if (sysctlbyname(name, &v, &len, NULL, 0) != 0) {
        return -1;
    }
    if (len == sizeof(v.i32)) {
        *value = v.i32;
    } else if (len == sizeof(v.i64)) {
        *value = v.i64;
    } else {
        return -1;
    }
    return 0;
}
#endif

/* ------------------------------------------------------------------------
 * Apple arm64 (M1 and later): AdvSIMD is part of every Apple core; the
 * optional extensions are answered by hw.optional.arm.FEAT_* (macOS 12 and
 * later), some by older names on macOS 11. No Apple core has SVE outside
 * SME's streaming mode, and macOS has no FEAT_SVE name: SVE/SVE2 stay 0.
 * ------------------------------------------------------------------------ */
void dispatch__cpu_apple_arm64_from_sysctl(dispatch__cpu_sysctl_fn sysctl, void *ctx,
                                           unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    raw[FEATURE(NEON)] = raw[FEATURE(NEON_FP16)] = raw[FEATURE(NEON_VFPV4)] = 1;
    raw[FEATURE(ASIMD)] = 1;
    /* hw.optional.neon_fp16 is half-precision arithmetic (neon_hpfp is only
     * the conversions); macOS 11 has no name for DotProd, I8MM or BF16. */
    raw[FEATURE(ASIMDHP)] = (unsigned char)dispatch__cpu_sysctl_on(
        sysctl, ctx, "hw.optional.arm.FEAT_FP16", "hw.optional.neon_fp16");
    raw[FEATURE(ASIMDFHM)] = (unsigned char)dispatch__cpu_sysctl_on(
        sysctl, ctx, "hw.optional.arm.FEAT_FHM", "hw.optional.armv8_2_fhm");
    raw[FEATURE(ASIMDDP)] = (unsigned char)dispatch__cpu_sysctl_on(
        sysctl, ctx, "hw.optional.arm.FEAT_DotProd", NULL);
    raw[FEATURE(I8MM)] = (unsigned char)dispatch__cpu_sysctl_on(
        sysctl, ctx, "hw.optional.arm.FEAT_I8MM", NULL);
    raw[FEATURE(BF16)] = (unsigned char)dispatch__cpu_sysctl_on(
        sysctl, ctx, "hw.optional.arm.FEAT_BF16", NULL);
}

/* ------------------------------------------------------------------------
 * x86: CPUID leaves 1, 7.0, 7.1 and 0x80000001, plus XCR0. The mapping is
 * compiled everywhere; the reading only on x86.
 * ------------------------------------------------------------------------ */
#define BIT(REG, N) (((REG) >> (N)) & 1u)

void dispatch__cpu_x86_from_regs(const dispatch__cpu_x86_regs *regs, dispatch__cpu_sysctl_fn sysctl,
                                 void *ctx, unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    const unsigned int max_leaf = regs->leaf0[0];
    if (max_leaf < 1) {
        return;
    }
    const unsigned int ecx1 = regs->leaf1[2], edx1 = regs->leaf1[3];

    /* Note [OS register state]: CPUID says what the silicon can do, XCR0 what
     * the OS saves on a context switch. Without OSXSAVE there is no XCR0 and
     * no AVX at all; AVX needs XMM|YMM state (bits 1,2), AVX-512 additionally
     * opmask, ZMM_Hi256 and Hi16_ZMM (bits 5,6,7). macOS sets those three
     * bits for a thread only at its first AVX-512 instruction: there the
     * kernel's hw.optional.avx512f answers instead. */
    unsigned long long xcr0 = BIT(ecx1, 27) ? regs->xcr0 : 0;
    const int os_avx = (xcr0 & 0x06) == 0x06;
    int os_avx512 = (xcr0 & 0xe6) == 0xe6;
    if (!os_avx512 && os_avx && sysctl) {
        os_avx512 = dispatch__cpu_sysctl_on(sysctl, ctx, "hw.optional.avx512f", NULL);
    }

    raw[FEATURE(SSE)] = BIT(edx1, 25);
    raw[FEATURE(SSE2)] = BIT(edx1, 26);
    raw[FEATURE(SSE3)] = BIT(ecx1, 0);
    raw[FEATURE(SSSE3)] = BIT(ecx1, 9);
    raw[FEATURE(SSE41)] = BIT(ecx1, 19);
    raw[FEATURE(POPCNT)] = BIT(ecx1, 23);
    raw[FEATURE(SSE42)] = BIT(ecx1, 20);
    raw[FEATURE(AVX)] = BIT(ecx1, 28) && os_avx;
    raw[FEATURE(F16C)] = BIT(ecx1, 29) && os_avx;
    raw[FEATURE(FMA3)] = BIT(ecx1, 12) && os_avx;
    raw[FEATURE(MOVBE)] = BIT(ecx1, 22);
#if defined(__x86_64__) || defined(_M_X64) || !(defined(__i386__) || defined(_M_IX86))
    raw[FEATURE(CX16)] = BIT(ecx1, 13); /* cmpxchg16b: 64-bit mode only */
#endif

    if (regs->ext0[0] >= 0x80000001u) {
        const unsigned int ecx_e1 = regs->ext1[2];
        raw[FEATURE(LAHF)] = BIT(ecx_e1, 0);  /* LAHF/SAHF in 64-bit mode */
        raw[FEATURE(LZCNT)] = BIT(ecx_e1, 5); /* ABM */
        raw[FEATURE(XOP)] = BIT(ecx_e1, 11) && os_avx;
        raw[FEATURE(FMA4)] = BIT(ecx_e1, 16) && os_avx;
    }

    if (max_leaf < 7) {
        return;
    }
    const unsigned int max_sub7 = regs->leaf7[0], ebx7 = regs->leaf7[1];
    const unsigned int ecx7 = regs->leaf7[2], edx7 = regs->leaf7[3];
    raw[FEATURE(AVX2)] = BIT(ebx7, 5) && os_avx;
    raw[FEATURE(BMI)] = BIT(ebx7, 3);
    raw[FEATURE(BMI2)] = BIT(ebx7, 8);
    /* VEX-encoded 256-bit forms exist without AVX-512 (Zen 3); GFNI's SSE
     * form needs no AVX state at all. */
    raw[FEATURE(GFNI)] = BIT(ecx7, 8);
    raw[FEATURE(VAES)] = BIT(ecx7, 9) && os_avx;
    raw[FEATURE(VPCLMULQDQ)] = BIT(ecx7, 10) && os_avx;
    if (!os_avx512) {
        return; /* no AVX-512 feature at all, single or generation */
    }
    /* Leaf 7.1 (AVX512_BF16 in EAX bit 5) exists where leaf 7.0 says so. */
    const unsigned int eax71 = max_sub7 >= 1 ? regs->leaf7_1[0] : 0;

    /* One line per single extension; the NumPy generations (AVX512_SKX, ...)
     * have no bits of their own: they are present when all they imply is
     * (the closure in cpu_features.c). */
    raw[FEATURE(AVX512F)] = BIT(ebx7, 16);
    raw[FEATURE(AVX512DQ)] = BIT(ebx7, 17);
    raw[FEATURE(AVX512IFMA)] = BIT(ebx7, 21);
    raw[FEATURE(AVX512PF)] = BIT(ebx7, 26);
    raw[FEATURE(AVX512ER)] = BIT(ebx7, 27);
    raw[FEATURE(AVX512CD)] = BIT(ebx7, 28);
    raw[FEATURE(AVX512BW)] = BIT(ebx7, 30);
    raw[FEATURE(AVX512VL)] = BIT(ebx7, 31);
    raw[FEATURE(AVX512VBMI)] = BIT(ecx7, 1);
    raw[FEATURE(AVX512VBMI2)] = BIT(ecx7, 6);
    raw[FEATURE(AVX512VNNI)] = BIT(ecx7, 11);
    raw[FEATURE(AVX512BITALG)] = BIT(ecx7, 12);
    raw[FEATURE(AVX512VPOPCNTDQ)] = BIT(ecx7, 14);
    raw[FEATURE(AVX5124VNNIW)] = BIT(edx7, 2);
    raw[FEATURE(AVX5124FMAPS)] = BIT(edx7, 3);
    raw[FEATURE(AVX512FP16)] = BIT(edx7, 23);
    raw[FEATURE(AVX512BF16)] = BIT(eax71, 5);
    raw[FEATURE(AVX512_KNL)] = raw[FEATURE(AVX512_KNM)] = 1;
    raw[FEATURE(AVX512_SKX)] = raw[FEATURE(AVX512_CLX)] = raw[FEATURE(AVX512_CNL)] = 1;
    raw[FEATURE(AVX512_ICL)] = raw[FEATURE(AVX512_SPR)] = 1;
}

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)

    #if defined(_MSC_VER) && !defined(__clang__)
        #include <intrin.h>
static void dispatch__cpu_cpuid(unsigned int leaf, unsigned int sub, unsigned int r[4])
{
    int regs[4];
    __cpuidex(regs, (int)leaf, (int)sub);
    for (int i = 0; i < 4; ++i) {
        r[i] = (unsigned int)regs[i];
    }
}
static unsigned long long dispatch__cpu_xgetbv(void)
{
    return _xgetbv(0);
}
    #else
        #include <cpuid.h>
static void dispatch__cpu_cpuid(unsigned int leaf, unsigned int sub, unsigned int r[4])
{
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
/* The raw opcode: `xgetbv` needs -mxsave, which the plain minimum lacks. */
static unsigned long long dispatch__cpu_xgetbv(void)
{
    unsigned int eax, edx;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}
    #endif

/* The answers dispatch__cpu_x86_from_regs reads, each leaf only where the
 * CPU says it exists. */
static void dispatch__cpu_x86_read(dispatch__cpu_x86_regs *regs)
{
    memset(regs, 0, sizeof(*regs));
    dispatch__cpu_cpuid(0, 0, regs->leaf0);
    if (regs->leaf0[0] < 1) {
        return;
    }
    dispatch__cpu_cpuid(1, 0, regs->leaf1);
    if (BIT(regs->leaf1[2], 27)) {
        regs->xcr0 = dispatch__cpu_xgetbv();
    }
    dispatch__cpu_cpuid(0x80000000u, 0, regs->ext0);
    if (regs->ext0[0] >= 0x80000001u) {
        dispatch__cpu_cpuid(0x80000001u, 0, regs->ext1);
    }
    if (regs->leaf0[0] >= 7) {
        dispatch__cpu_cpuid(7, 0, regs->leaf7);
        if (regs->leaf7[0] >= 1) {
            dispatch__cpu_cpuid(7, 1, regs->leaf7_1);
        }
    }
}

static void dispatch__cpu_detect_x86(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    dispatch__cpu_x86_regs regs;
    dispatch__cpu_x86_read(&regs);
    #if defined(__APPLE__)
    dispatch__cpu_x86_from_regs(&regs, dispatch__cpu_sysctlbyname, NULL, raw);
    #else
    dispatch__cpu_x86_from_regs(&regs, NULL, NULL, raw);
    #endif
}
#endif /* x86 */

/* ------------------------------------------------------------------------
 * aarch64: ASIMD is part of the architecture; the rest from AT_HWCAP and
 * AT_HWCAP2.
 * ------------------------------------------------------------------------ */
#if defined(__aarch64__) && !defined(__APPLE__)
static void dispatch__cpu_detect_aarch64(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    raw[FEATURE(NEON)] = raw[FEATURE(NEON_FP16)] = raw[FEATURE(NEON_VFPV4)] = 1;
    raw[FEATURE(ASIMD)] = 1;
    unsigned long hwcap = 0, hwcap2 = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) == 0) {
        (void)dispatch__cpu_hwcap(AT_HWCAP2, &hwcap2);
        raw[FEATURE(ASIMDHP)] = (hwcap >> 10) & 1;  /* HWCAP_ASIMDHP */
        raw[FEATURE(ASIMDDP)] = (hwcap >> 20) & 1;  /* HWCAP_ASIMDDP */
        raw[FEATURE(SVE)] = (hwcap >> 22) & 1;      /* HWCAP_SVE */
        raw[FEATURE(ASIMDFHM)] = (hwcap >> 23) & 1; /* HWCAP_ASIMDFHM */
        raw[FEATURE(SVE2)] = (hwcap2 >> 1) & 1;     /* HWCAP2_SVE2 */
        raw[FEATURE(I8MM)] = (hwcap2 >> 13) & 1;    /* HWCAP2_I8MM */
        raw[FEATURE(BF16)] = (hwcap2 >> 14) & 1;    /* HWCAP2_BF16 */
        return;
    }
    const char *ci = "/proc/cpuinfo";
    raw[FEATURE(ASIMDHP)] = dispatch__cpu_cpuinfo_has(ci, "Features", "asimdhp") == 1;
    raw[FEATURE(ASIMDDP)] = dispatch__cpu_cpuinfo_has(ci, "Features", "asimddp") == 1;
    raw[FEATURE(SVE)] = dispatch__cpu_cpuinfo_has(ci, "Features", "sve") == 1;
    raw[FEATURE(ASIMDFHM)] = dispatch__cpu_cpuinfo_has(ci, "Features", "asimdfhm") == 1;
    raw[FEATURE(SVE2)] = dispatch__cpu_cpuinfo_has(ci, "Features", "sve2") == 1;
    raw[FEATURE(I8MM)] = dispatch__cpu_cpuinfo_has(ci, "Features", "i8mm") == 1;
    raw[FEATURE(BF16)] = dispatch__cpu_cpuinfo_has(ci, "Features", "bf16") == 1;
}
#endif

/* ------------------------------------------------------------------------
 * 32-bit ARM: NEON/half/VFPv4 from AT_HWCAP; an ARMv8 core running AArch32
 * shows its ASIMD through the v8 crypto/CRC bits of AT_HWCAP2.
 * ------------------------------------------------------------------------ */
#if defined(__arm__) && defined(__linux__)
static void dispatch__cpu_detect_arm(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    unsigned long hwcap = 0, hwcap2 = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) == 0) {
        (void)dispatch__cpu_hwcap(AT_HWCAP2, &hwcap2);
        raw[FEATURE(NEON)] = (hwcap >> 12) & 1;       /* HWCAP_NEON */
        raw[FEATURE(NEON_FP16)] = (hwcap >> 1) & 1;   /* HWCAP_HALF */
        raw[FEATURE(NEON_VFPV4)] = (hwcap >> 16) & 1; /* HWCAP_VFPv4 */
        raw[FEATURE(ASIMD)] = (hwcap2 & 0x1f) != 0;   /* AES PMULL SHA1 SHA2 CRC32 */
        return;
    }
    const char *ci = "/proc/cpuinfo";
    raw[FEATURE(NEON)] = dispatch__cpu_cpuinfo_has(ci, "Features", "neon") == 1;
    raw[FEATURE(NEON_FP16)] = dispatch__cpu_cpuinfo_has(ci, "Features", "half") == 1;
    raw[FEATURE(NEON_VFPV4)] = dispatch__cpu_cpuinfo_has(ci, "Features", "vfpv4") == 1;
    raw[FEATURE(ASIMD)] = dispatch__cpu_cpuinfo_has(ci, "Features", "crc32") == 1;
}
#endif

/* ------------------------------------------------------------------------
 * POWER, either byte order: VSX from AT_HWCAP, ISA levels 2.07 / 3.00 /
 * 3.1 from AT_HWCAP2.
 * ------------------------------------------------------------------------ */
#if defined(__powerpc64__) && defined(__linux__)
static void dispatch__cpu_detect_ppc64(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    unsigned long hwcap = 0, hwcap2 = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) != 0) {
        return;
    }
    (void)dispatch__cpu_hwcap(AT_HWCAP2, &hwcap2);
    raw[FEATURE(VSX)] = (hwcap & 0x00000080ul) != 0;    /* PPC_FEATURE_HAS_VSX */
    raw[FEATURE(VSX2)] = (hwcap2 & 0x80000000ul) != 0;  /* PPC_FEATURE2_ARCH_2_07 */
    raw[FEATURE(VSX3)] = (hwcap2 & 0x00800000ul) != 0;  /* PPC_FEATURE2_ARCH_3_00 */
    raw[FEATURE(VSX4)] = (hwcap2 & 0x00040000ul) != 0;  /* PPC_FEATURE2_ARCH_3_1 */
}
#endif

/* ------------------------------------------------------------------------
 * IBM Z: the vector facilities from AT_HWCAP.
 * ------------------------------------------------------------------------ */
#if defined(__s390x__) && defined(__linux__)
static void dispatch__cpu_detect_s390x(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    unsigned long hwcap = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) != 0) {
        return;
    }
    raw[FEATURE(VX)] = (hwcap & 2048ul) != 0;    /* HWCAP_S390_VXRS */
    raw[FEATURE(VXE)] = (hwcap & 8192ul) != 0;   /* HWCAP_S390_VXRS_EXT */
    raw[FEATURE(VXE2)] = (hwcap & 32768ul) != 0; /* HWCAP_S390_VXRS_EXT2 */
}
#endif

/* ------------------------------------------------------------------------
 * riscv64: AT_HWCAP holds one bit per single-letter extension ('A' is bit
 * 0), as Linux and qemu-user report the ISA; V is the vector extension.
 * ------------------------------------------------------------------------ */
#if defined(__riscv) && defined(__LP64__) && defined(__linux__)
static void dispatch__cpu_detect_riscv64(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    unsigned long hwcap = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) != 0) {
        return;
    }
    raw[FEATURE(RVV)] = (hwcap >> ('V' - 'A')) & 1; /* COMPAT_HWCAP_ISA_V */
}
#endif

/* ------------------------------------------------------------------------
 * loongarch64: LSX from AT_HWCAP (HWCAP_LOONGARCH_LSX, bit 4, in Linux's
 * uapi/asm/hwcap.h). Not run by any test here: Debian bookworm has no
 * loongarch64 C library to link it with (docs/cpu-features.md).
 * ------------------------------------------------------------------------ */
#if defined(__loongarch64) && defined(__linux__)
static void dispatch__cpu_detect_loongarch64(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    unsigned long hwcap = 0;
    if (dispatch__cpu_hwcap(AT_HWCAP, &hwcap) != 0) {
        return;
    }
    raw[FEATURE(LSX)] = (hwcap >> 4) & 1; /* HWCAP_LOONGARCH_LSX */
}
#endif

static void (*dispatch__cpu_detect_for_tests)(unsigned char raw[DISPATCH_CPU_FEATURE_MAX]);

void dispatch__cpu_set_detect_for_tests(void (*detect)(unsigned char raw[DISPATCH_CPU_FEATURE_MAX]))
{
    dispatch__cpu_detect_for_tests = detect;
}

void dispatch__cpu_detect(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    memset(raw, 0, DISPATCH_CPU_FEATURE_MAX);
    if (dispatch__cpu_detect_for_tests) {
        dispatch__cpu_detect_for_tests(raw);
        return;
    }
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
    dispatch__cpu_detect_x86(raw);
#elif defined(__aarch64__) && defined(__APPLE__)
    dispatch__cpu_apple_arm64_from_sysctl(dispatch__cpu_sysctlbyname, NULL, raw);
#elif defined(__aarch64__)
    dispatch__cpu_detect_aarch64(raw);
#elif defined(__arm__) && defined(__linux__)
    dispatch__cpu_detect_arm(raw);
#elif defined(__powerpc64__) && defined(__linux__)
    dispatch__cpu_detect_ppc64(raw);
#elif defined(__s390x__) && defined(__linux__)
    dispatch__cpu_detect_s390x(raw);
#elif defined(__riscv) && defined(__LP64__) && defined(__linux__)
    dispatch__cpu_detect_riscv64(raw);
#elif defined(__loongarch64) && defined(__linux__)
    dispatch__cpu_detect_loongarch64(raw);
#endif
}
