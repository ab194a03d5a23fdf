/*
 * Private to sources/cpu/: the pieces the table code, the detection code and
 * the C test share. Not installed, not part of any API.
 */
#ifndef DISPATCH_CPU_INTERNAL_H_
#define DISPATCH_CPU_INTERNAL_H_

#include "dispatch/cpu_runtime.h"

/* Most names a row's `implies` may list (the C test checks every row). */
#define DISPATCH__CPU_MAX_IMPLIES 32

/* Raw detection of the running CPU: raw[id] = 1 for each feature whose own
 * bits (CPUID, hwcaps) and OS register state are present, implications not
 * yet applied; groups are left 0 (they are computed from their members).
 * One function per architecture in cpu_detect.c; this picks the right one. */
void dispatch__cpu_detect(unsigned char raw[DISPATCH_CPU_FEATURE_MAX]);

/* The hardware's features now, implications applied, groups derived: what
 * dispatch_cpu_have_detected reads, with nothing stored and no env read.
 * For the program guard, which runs before libc has its environment (Note
 * [Program guard]): dispatch_cpu_init there would cache a result made
 * without the program's DISABLE/ENABLE variables. */
void dispatch__cpu_detect_hardware(unsigned char raw[DISPATCH_CPU_FEATURE_MAX]);

/* Detect again under the init lock, re-reading the env variables; the
 * engine of dispatch_cpu_redetect_for_tests(). Returns like dispatch_cpu_init. */
int dispatch__cpu_redetect(void);

/* Linux helpers for the hwcaps paths, compiled on every Linux so the x86
 * build tests them too (tools/dispatchgen/tests/test_cpu_runtime.c, run by
 * tests/test_cpu_runtime_c.py).
 *
 * dispatch__cpu_auxv_read: the value of auxv entry `type` from an auxv file
 *   (normally /proc/self/auxv); 0 and *value set, or -1 when absent/unreadable.
 * dispatch__cpu_cpuinfo_has: 1 when the first line of `path` whose key is
 *   `key` ("Features" on ARM, "flags" on x86) lists the word `flag`, 0 when it
 *   does not, -1 when the file or the key is missing. */
int dispatch__cpu_auxv_read(const char *path, unsigned long type, unsigned long *value);
int dispatch__cpu_cpuinfo_has(const char *path, const char *key, const char *flag);

/* Note [Recorded detection]
 * What the hardware answers (CPUID registers, sysctl values) is read in one
 * place and mapped to features in another: the mapping functions below are
 * pure, compiled on every platform, so the C test feeds them recorded
 * answers of CPUs and Macs that CI does not have
 * (tools/dispatchgen/tests/test_cpu_recorded.c). */

/* The CPUID answers the x86 mapping reads, each as {eax, ebx, ecx, edx}:
 * leaf 0, 1, 7 subleaf 0, 7 subleaf 1, 0x80000000, 0x80000001; and XCR0
 * (XGETBV 0), meaningful only when leaf 1 sets OSXSAVE. */
typedef struct {
    unsigned int leaf0[4], leaf1[4], leaf7[4], leaf7_1[4], ext0[4], ext1[4];
    unsigned long long xcr0;
} dispatch__cpu_x86_regs;

/* A sysctlbyname-like reader: 0 and *value when `name` exists, -1 when the
 * kernel does not know it. */
typedef int (*dispatch__cpu_sysctl_fn)(void *ctx, const char *name, long long *value);

/* x86: raw features from recorded CPUID answers. `sysctl` is NULL except on
 * macOS, whose kernel gives a thread AVX-512 state on its first AVX-512
 * instruction, so XCR0 lacks the opmask/ZMM bits until then
 * (Note [OS register state]); there hw.optional.avx512f says whether the
 * kernel supports that state. */
void dispatch__cpu_x86_from_regs(const dispatch__cpu_x86_regs *regs, dispatch__cpu_sysctl_fn sysctl,
                                 void *ctx, unsigned char raw[DISPATCH_CPU_FEATURE_MAX]);

/* Apple arm64: raw features from the hw.optional.arm.FEAT_* answers (macOS
 * 12 and later) or the older hw.optional.* names (macOS 11). */
void dispatch__cpu_apple_arm64_from_sysctl(dispatch__cpu_sysctl_fn sysctl, void *ctx,
                                           unsigned char raw[DISPATCH_CPU_FEATURE_MAX]);

/* Test hook: while `detect` is not NULL, dispatch__cpu_detect calls it
 * instead of reading the hardware (then dispatch_cpu_redetect_for_tests()
 * runs groups and env variables on a recorded CPU). Never set in a build. */
void dispatch__cpu_set_detect_for_tests(void (*detect)(unsigned char raw[DISPATCH_CPU_FEATURE_MAX]));

#endif /* DISPATCH_CPU_INTERNAL_H_ */
