/* The x86 CPU family that loops' choices go by (Note [Reads asked for ahead,
 * by CPU family] in read_ahead.h, Note [Stores past the caches] in
 * line_head.h), CPUID asked once a process. Included by *.dispatch.c
 * sources. */
#ifndef DISPATCH_KERNELS_CPU_FAMILY_H_
#define DISPATCH_KERNELS_CPU_FAMILY_H_

#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define DK_CPU_FAMILY_X86_ 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

/* The x86 family of CPUID leaf 1's eax: the base family, plus the extended
 * family where the base is 0xF (AMD's Zen 4: 0xA10F11 -> 0x19). */
static inline unsigned dk_x86_family(uint32_t eax)
{
    const unsigned base = (eax >> 8) & 0xF;
    return base == 0xF ? base + ((eax >> 20) & 0xFF) : base;
}

/* The family of an AMD CPU from CPUID leaf 0's ebx, edx, ecx (the 12 bytes
 * of the vendor's name) and leaf 1's eax; 0 for any other vendor. */
static inline unsigned dk_amd_family(uint32_t ebx, uint32_t edx, uint32_t ecx, uint32_t eax)
{
    /* "AuthenticAMD" in ebx, edx, ecx, 4 little-endian bytes each */
    const int amd = ebx == 0x68747541u && edx == 0x69746E65u && ecx == 0x444D4163u;
    return amd ? dk_x86_family(eax) : 0;
}

/* This CPU's AMD family, 0 on any other CPU; CPUID is asked once (in a VM
 * each CPUID is a trap to the hypervisor). */
static inline unsigned dk_this_amd_family(void)
{
#if defined(DK_CPU_FAMILY_X86_)
    static atomic_uint known; /* 0: not asked yet; else the family + 1 */
    unsigned k = atomic_load_explicit(&known, memory_order_relaxed);
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
        k = dk_amd_family(r0[1], r0[3], r0[2], r1[0]) + 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k - 1;
#else
    return 0;
#endif
}

#endif /* DISPATCH_KERNELS_CPU_FAMILY_H_ */
