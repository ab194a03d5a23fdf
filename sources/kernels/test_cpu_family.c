/*
 * The choices by CPU family (cpu_family.h): the family decoded from CPUID
 * signatures of real CPUs, which of them ask for their reads ahead (Note
 * [Reads asked for ahead, by CPU family], read_ahead.h) and from what size
 * their stores stream (Note [Stores past the caches], line_head.h); then
 * this CPU's choices, printed (neither changes a value, so they show in
 * time only: tools/bench/bench_matrix.py).
 */
#include <stdio.h>

#include "line_head.h"
#include "read_ahead.h"

static int failures;

static void expect(const char *what, unsigned got, unsigned want)
{
    if (got != want) {
        printf("FAIL: %s: %#x, want %#x\n", what, got, want);
        failures++;
    }
}

/* CPUID leaf 0's ebx, edx, ecx of a vendor's 12-byte name: 4 bytes each,
 * the first in the low bits (the registers' order, whatever the byte order
 * of the machine running this test: it runs under qemu-s390x too) */
static void vendor(const char *name, uint32_t r[3])
{
    for (int k = 0; k < 3; k++) {
        r[k] = 0;
        for (int j = 3; j >= 0; j--) r[k] = (r[k] << 8) | (uint8_t)name[4 * k + j];
    }
}

int main(void)
{
    static const struct {
        const char *cpu, *vendor;
        uint32_t eax;
        unsigned family;
        int asks;
        unsigned fill_stream_mib; /* a copy streams from 16 MiB on every CPU */
    } cpus[] = {
        {"AMD EPYC 9004 (Zen 4)", "AuthenticAMD", 0x00A10F11u, 0x19, 0, 64},
        {"AMD Ryzen 7000 (Zen 4)", "AuthenticAMD", 0x00A60F12u, 0x19, 0, 64},
        {"AMD EPYC 7003 (Zen 3)", "AuthenticAMD", 0x00A00F11u, 0x19, 0, 64},
        {"AMD EPYC 9005 (Zen 5)", "AuthenticAMD", 0x00B00F21u, 0x1A, 1, 16},
        {"AMD EPYC 7002 (Zen 2)", "AuthenticAMD", 0x00830F10u, 0x17, 1, 16},
        {"Intel Xeon (Sapphire Rapids)", "GenuineIntel", 0x000806F8u, 0x6, 1, 16},
        {"Intel Xeon (Skylake-SP)", "GenuineIntel", 0x00050654u, 0x6, 1, 16},
        {"Hygon Dhyana", "HygonGenuine", 0x00900F01u, 0x18, 1, 16},
        /* Zen 4's family under another vendor's name: the rules are AMD's */
        {"a family-0x19 signature, not AMD", "GenuineIntel", 0x00A10F11u, 0x19, 1, 16},
    };
    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
        uint32_t r[3];
        vendor(cpus[i].vendor, r);
        char what[96];
        snprintf(what, sizeof what, "%s: family", cpus[i].cpu);
        expect(what, dk_x86_family(cpus[i].eax), cpus[i].family);
        snprintf(what, sizeof what, "%s: asks ahead", cpus[i].cpu);
        expect(what, (unsigned)dk_family_reads_ahead(r[0], r[1], r[2], cpus[i].eax),
               (unsigned)cpus[i].asks);
        const unsigned amd = dk_amd_family(r[0], r[1], r[2], cpus[i].eax);
        snprintf(what, sizeof what, "%s: a fill streams from (MiB)", cpus[i].cpu);
        expect(what, (unsigned)(dk_stream_min(amd, 0) >> 20), cpus[i].fill_stream_mib);
        snprintf(what, sizeof what, "%s: a copy streams from (MiB)", cpus[i].cpu);
        expect(what, (unsigned)(dk_stream_min(amd, 1) >> 20), 16);
    }
    const int here = dk_reads_ahead();
    expect("this CPU's choice, asked twice", (unsigned)dk_reads_ahead(), (unsigned)here);
    expect("this CPU's family, asked twice", dk_this_amd_family(), dk_this_amd_family());
    printf("this CPU %s its reads ahead; its fills stream from %zu MiB written in a call, "
           "its copies from %zu\n", here ? "asks for" : "does not ask for",
           dk_stream_min(dk_this_amd_family(), 0) >> 20, dk_stream_min(dk_this_amd_family(), 1) >> 20);
    if (failures) return 1;
    printf("%zu CPU signatures checked\n", sizeof cpus / sizeof cpus[0]);
    return 0;
}
