/* Private to sources/iterator: what the reduction engine (reduce_*.c) shares
 * with the elementwise engine (iterator.c). */
#ifndef DISPATCH_ITERATOR_INTERNAL_H_
#define DISPATCH_ITERATOR_INTERNAL_H_

#include <stdint.h>

#include "dispatch/iterator.h"

/* Copy operand `src` (in the broadcast shape) into a new contiguous buffer,
 * row-major, through the engine with the copy loop; bs_out (may be NULL)
 * gets the copy's strides in that shape. NULL when it cannot be allocated. */
char *dispatch_iter_copy_contiguous(const dispatch_iter_operand *src, int nd,
                                    const int64_t *shape, int64_t numel, intptr_t *bs_out);

#endif
