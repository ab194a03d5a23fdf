/* Loop forms that clang vectorizes where it did not vectorize the plain
 * ones gcc does (the same values either way): Notes [In place under clang],
 * [Every other byte under clang] and [Constant operations under clang].
 * Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_CLANG_LOOPS_H_
#define DISPATCH_KERNELS_CLANG_LOOPS_H_

#include <stdint.h>
#include <string.h>

/*
 * Note [In place under clang]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x.add_(y) runs the binary loop with the output at the same address as a.
 * A compiler vectorizes o[i] = a[i] + b[i] behind a run-time test that the
 * arrays do not overlap badly: gcc's test lets the same address through (a
 * load and a store of the same element never conflict), clang's (14) asks
 * for no overlap at all, so in place it took the scalar loop: the clang
 * build's int8 add_ of (512, 512) 94 us against gcc's 6. Under clang the
 * unit paths ask DK_SAME_ADDRESS(o, a) themselves and then read a from o,
 * which the compiler sees is the output itself (its test is left for b);
 * under gcc it is a constant 0 and its code the same.
 */
#if defined(__clang__)
#define DK_SAME_ADDRESS(o, a) ((const void *)(o) == (const void *)(a))
#else
#define DK_SAME_ADDRESS(o, a) 0
#endif

/*
 * Note [Every other byte under clang]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * x[:, ::2] < y[:, ::2] of bytes: clang (14 and 19) under AVX-512 builds
 * the loop over pa[2 * i] from mask registers shifted and joined a lane at
 * a time (184 kshift/kor for one loop), 300 us for (512, 512) uint8 where
 * gcc's took 15. Read as 2-byte pairs, the even byte of each, the same
 * loop is a few vector shuffles. The last element is read alone: its pair's
 * second byte may lie past the view. DK_EVEN_BYTE is the pair's first byte
 * in memory.
 */
#if defined(__clang__) && defined(__AVX512BW__)
#define DK_EVEN_BYTES_BY_PAIRS 1
#else
#define DK_EVEN_BYTES_BY_PAIRS 0
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DK_EVEN_BYTE(pair) ((uint8_t)((pair) >> 8))
#else
#define DK_EVEN_BYTE(pair) ((uint8_t)(pair))
#endif
static inline uint8_t dk_even_byte(const void *p)
{
    uint16_t pair;
    memcpy(&pair, p, sizeof pair);
    return DK_EVEN_BYTE(pair);
}

/*
 * Note [Constant operations under clang]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A loop written once for several operations (op an argument, switched on
 * inside the loop) is one loop per operation after gcc -O3 unswitches it.
 * Clang (14) kept the switch in every iteration: float16 x * y of
 * (512, 512) 54 us against gcc's 19. Where DK_UNSWITCH_BY_HAND is 1 the
 * caller switches on op itself and inlines the loop with each op a
 * constant; gcc's build keeps the one call.
 */
#if defined(__clang__)
#define DK_UNSWITCH_BY_HAND 1
#else
#define DK_UNSWITCH_BY_HAND 0
#endif

#endif /* DISPATCH_KERNELS_CLANG_LOOPS_H_ */
