/* Strided elements packed into a chunk and back, by their bits. Included
 * by *.dispatch.c sources, so its loops vectorize under each target. */
#ifndef DISPATCH_KERNELS_GATHER_BITS_H_
#define DISPATCH_KERNELS_GATHER_BITS_H_

#include <stdint.h>
#include <string.h>

/*
 * m elements of z bytes at byte stride s packed into dst (dk_gather_bits),
 * and back (dk_scatter_bits): the chunks the narrow floats, the casts and
 * float16's arithmetic run their contiguous paths on. Elements of 1, 2, 4 or 8 bytes at whole-
 * element strides move as unsigned integers of their size at element
 * strides (every other one a constant), which the compiler vectorizes; a
 * loop of one-element memcpys ran at 0.6 ns an element and, its stores
 * beside strided loads, at twice that in some builds (the cast in
 * `x[:, ::2] / x[:, ::2]` of int64: 117 or 187 us from one build to the next).
 */
#define DK_GATHER_(U)                                                                     \
    do {                                                                                  \
        U *o_ = dst;                                                                      \
        const U *p_ = (const U *)(const void *)src;                                       \
        if (e == 2) for (intptr_t j = 0; j < m; j++) o_[j] = p_[2 * j];                   \
        else for (intptr_t j = 0; j < m; j++) o_[j] = p_[j * e];                          \
    } while (0)
#define DK_SCATTER_(U)                                                                    \
    do {                                                                                  \
        U *o_ = (U *)(void *)dst;                                                         \
        const U *p_ = src;                                                                \
        if (e == 2) for (intptr_t j = 0; j < m; j++) o_[2 * j] = p_[j];                   \
        else for (intptr_t j = 0; j < m; j++) o_[j * e] = p_[j];                          \
    } while (0)
static inline void dk_gather_bits(void *dst, const char *src, intptr_t s, intptr_t z, intptr_t m)
{
    const intptr_t e = s / z;
    if (s % z == 0 && (uintptr_t)src % (uintptr_t)z == 0) {
        switch (z) {
        case 1: DK_GATHER_(uint8_t); return;
        case 2: DK_GATHER_(uint16_t); return;
        case 4: DK_GATHER_(uint32_t); return;
        case 8: DK_GATHER_(uint64_t); return;
        default: break;
        }
    }
    for (intptr_t j = 0; j < m; j++) memcpy((char *)dst + j * z, src + j * s, (size_t)z);
}
static inline void dk_scatter_bits(char *dst, intptr_t s, const void *src, intptr_t z, intptr_t m)
{
    const intptr_t e = s / z;
    if (s % z == 0 && (uintptr_t)dst % (uintptr_t)z == 0) {
        switch (z) {
        case 1: DK_SCATTER_(uint8_t); return;
        case 2: DK_SCATTER_(uint16_t); return;
        case 4: DK_SCATTER_(uint32_t); return;
        case 8: DK_SCATTER_(uint64_t); return;
        default: break;
        }
    }
    for (intptr_t j = 0; j < m; j++) memcpy(dst + j * s, (const char *)src + j * z, (size_t)z);
}

#endif /* DISPATCH_KERNELS_GATHER_BITS_H_ */
