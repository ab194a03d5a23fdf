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

#endif /* DISPATCH_CPU_INTERNAL_H_ */
