/* Whether this CPU's loops ask for the lines they read ahead of them: a
 * choice by CPU family, made once a process. Included by *.dispatch.c
 * sources. */
#ifndef DISPATCH_KERNELS_READ_AHEAD_H_
#define DISPATCH_KERNELS_READ_AHEAD_H_

#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define DK_READ_AHEAD_X86_ 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

/*
 * Note [Reads asked for ahead, by CPU family]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * dot's float64 leaves on AVX-512 ask for both operands' lines 2 KiB ahead
 * (DK_ASK_AHEAD, gather_bits.h). On an AMD Zen 5 that took the contiguous
 * leaf from 1.10-1.20x torch's time to 0.94x at 256K, 1 thread, and the
 * every-other one from 1.19-1.45x to 0.85-0.90x (docs/performance.md,
 * Round 24). On a Zen 4 the same prefetches cost time at every size: a C
 * harness of the leaf (`-O3 -march=skylake-avx512 -ffp-contract=off`, best
 * of 15 x 200 calls, four alternating runs) took 46.1-47.1 us without them
 * and 55.7-65.8 with them for 256K contiguous float64 (torch 44.2), and
 * 89.9-91.8 against 113.8-144.3 for every other element; 1 KiB, 4 KiB,
 * 512 B, half the lines, and the prefetcht1/t2/nta hints were all slower
 * than none. The two run the same AVX512_SKX kernels, so the choice is by
 * CPU family: AMD's family 0x19 (Zen 3 and Zen 4; of them only Zen 4 runs
 * AVX-512 code) reads without asking, every other CPU asks as before
 * (Intel's were not measured either way). A prefetch changes no value: the
 * bits are the same both ways.
 */

/* The x86 family of CPUID leaf 1's eax: the base family, plus the extended
 * family where the base is 0xF (AMD's Zen 4: 0xA10F11 -> 0x19). */
static inline unsigned dk_x86_family(uint32_t eax)
{
    const unsigned base = (eax >> 8) & 0xF;
    return base == 0xF ? base + ((eax >> 20) & 0xFF) : base;
}

/* Whether a CPU of this vendor (CPUID leaf 0's ebx, edx, ecx: the 12 bytes
 * of its name) and leaf-1 eax asks for its reads ahead. */
static inline int dk_family_reads_ahead(uint32_t ebx, uint32_t edx, uint32_t ecx, uint32_t eax)
{
    /* "AuthenticAMD" in ebx, edx, ecx, 4 little-endian bytes each */
    const int amd = ebx == 0x68747541u && edx == 0x69746E65u && ecx == 0x444D4163u;
    return !(amd && dk_x86_family(eax) == 0x19);
}

/* This CPU's choice (Note [Reads asked for ahead, by CPU family]); CPUID is
 * asked once (in a VM each CPUID is a trap to the hypervisor). */
static inline int dk_reads_ahead(void)
{
#if defined(DK_READ_AHEAD_X86_)
    static atomic_int known; /* 0: not asked yet; 1: asks; 2: does not */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k == 0) {
        uint32_t r0[4] = {0, 0, 0, 0}, r1[4] = {0, 0, 0, 0}; /* eax, ebx, ecx, edx */
#if defined(_MSC_VER) && !defined(__clang__)
        int v[4];
        __cpuid(v, 0);
        for (int i = 0; i < 4; i++) r0[i] = (uint32_t)v[i];
        __cpuid(v, 1);
        for (int i = 0; i < 4; i++) r1[i] = (uint32_t)v[i];
#else
        __cpuid(0, r0[0], r0[1], r0[2], r0[3]);
        __cpuid(1, r1[0], r1[1], r1[2], r1[3]);
#endif
        k = dk_family_reads_ahead(r0[1], r0[3], r0[2], r1[0]) ? 1 : 2;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1;
#else
    return 1;
#endif
}

#endif /* DISPATCH_KERNELS_READ_AHEAD_H_ */
