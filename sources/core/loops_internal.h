/* Private to sources/core: the reference loop tables (cpu_loops_reference.c). */
#ifndef DISPATCH_CORE_LOOPS_INTERNAL_H_
#define DISPATCH_CORE_LOOPS_INTERNAL_H_

#include "dispatch/dtype.h"
#include "dispatch/loops.h"

extern const dispatch_loop_fn dispatch_reference_loops[DISPATCH_NUM_DTYPES][DISPATCH_NUM_LOOPS];
/* [from][to]: one row per source dtype */
extern const dispatch_loop_fn *const dispatch_reference_casts[DISPATCH_NUM_DTYPES];

#endif
