/* The element of two that the column kernels take for columns two elements
 * apart (x[:, ::2]): column c is the first of the pair at c. sum.dispatch.c's
 * COLS_EVEN (Note [Columns of every other element]) and prod.dispatch.c's
 * FOLD_COLS_EVEN_PROD (Note [Product columns of every other element]) are
 * their column kernels compiled with it. Included by *.dispatch.c sources. */
#ifndef DISPATCH_KERNELS_PAIR_ELEMENT_H_
#define DISPATCH_KERNELS_PAIR_ELEMENT_H_

typedef struct { float v[2]; } dispatch_pair_f32;
typedef struct { double v[2]; } dispatch_pair_f64;
/* A pair's value: its first element (the second is never read). */
#define DISPATCH_PAIR_FIRST(x) ((x).v[0])

#endif
