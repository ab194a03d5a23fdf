/* mylib: two entry points, one implementation per instruction set, as
 * upstream libraries (BLAKE3, zlib-ng) keep them. */
#ifndef MYLIB_H_
#define MYLIB_H_
#include <stddef.h>
#include <stdint.h>

/* The public API: dispatched once, at mylib_init(). */
int mylib_init(void);
uint32_t mylib_sum(const uint32_t *x, size_t n);
void mylib_xor(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
const char *mylib_sum_target(void);
const char *mylib_xor_target(void);

/* The variants, one file each. */
uint32_t mylib_sum_portable(const uint32_t *x, size_t n);
uint32_t mylib_sum_sse41(const uint32_t *x, size_t n);
uint32_t mylib_sum_avx2(const uint32_t *x, size_t n);
uint32_t mylib_sum_avx512(const uint32_t *x, size_t n);
void mylib_xor_portable(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void mylib_xor_sse41(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void mylib_xor_avx2(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n); /* .S */
void mylib_xor_avx512(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
#endif
