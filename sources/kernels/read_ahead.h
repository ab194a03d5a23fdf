/* Whether this CPU's loops ask for the lines they read ahead of them: a
 * choice by CPU family, made once a process. Included by *.dispatch.c
 * sources. */
#ifndef DISPATCH_KERNELS_READ_AHEAD_H_
#define DISPATCH_KERNELS_READ_AHEAD_H_

#include <stdint.h>

#include "cpu_family.h"

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

/* Whether a CPU of this vendor (CPUID leaf 0's ebx, edx, ecx: the 12 bytes
 * of its name) and leaf-1 eax asks for its reads ahead. */
static inline int dk_family_reads_ahead(uint32_t ebx, uint32_t edx, uint32_t ecx, uint32_t eax)
{
    return dk_amd_family(ebx, edx, ecx, eax) != 0x19;
}

/* This CPU's choice (Note [Reads asked for ahead, by CPU family]). */
static inline int dk_reads_ahead(void)
{
    return dk_this_amd_family() != 0x19;
}

#endif /* DISPATCH_KERNELS_READ_AHEAD_H_ */
