/* How many elements of a contiguous output come before its next line
 * boundary: Note [Stores on whole lines]. Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_LINE_HEAD_H_
#define DISPATCH_KERNELS_LINE_HEAD_H_

#include <stdint.h>

/*
 * Note [Stores on whole lines]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * NumPy's arrays start 16 bytes into a cache line (its allocator's
 * alignment), so every other 32-byte vector store of an output straddles
 * two lines, and then even the order of a loop's two stores matters: in
 * place on 256K float64 (2 MB, past L2), storing the upper vector of a pair
 * before the lower took 40.7 us and the other order 29 (a C loop on this
 * Zen 4), and gcc picks the order (sub_ got the slow one: 43 us beside
 * add_'s 31, torch 28-35). Stores on whole vectors of the output take 21 us
 * in either order. So the contiguous paths first run the few elements (in
 * their scalar form, the same bits) up to the output's boundary of `align`
 * bytes, for runs long enough to pay: x.add_(1) of 256K int64 on NumPy's
 * memory 32 -> 23 us, float64 sub_ 43 -> 25.
 */
static inline intptr_t dk_line_head(const void *o, intptr_t z, intptr_t align, intptr_t n)
{
    if (n < 8 * align / z || (uintptr_t)o % (uintptr_t)z) return 0;
    return (intptr_t)((0 - (uintptr_t)o) % (uintptr_t)align) / z;
}

/* for (i = 0; i < n; i++) STMT over an output `o` of contiguous elements, as
 * two loops: the elements before its first 64-byte boundary, then the rest
 * (the one the compiler vectorizes). STMT names the index `i`. */
#define DK_LINE_HEADED(o, n, STMT)                                                        \
    do {                                                                                  \
        const intptr_t h_ = dk_line_head((o), (intptr_t)sizeof *(o), 64, (n));             \
        intptr_t i = 0;                                                                   \
        for (; i < h_; i++) STMT;                                                         \
        for (; i < (n); i++) STMT;                                                        \
    } while (0)

#endif /* DISPATCH_KERNELS_LINE_HEAD_H_ */
