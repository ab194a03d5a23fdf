/* varext's variants: one file per instruction set, as upstream libraries
 * (BLAKE3, zlib-ng) keep them; the AVX2 one in assembly or in C. */
#ifndef VAREXT_H_
#define VAREXT_H_
#include <stddef.h>
#include <stdint.h>

void varext_xor_portable(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void varext_xor_sse41(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void varext_xor_avx2(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void varext_xor_avx512(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
/* "portable", "sse41", "avx2-asm", "avx2-c", "avx512": which file was built */
const char *varext_impl_portable(void);
const char *varext_impl_sse41(void);
const char *varext_impl_avx2(void);
const char *varext_impl_avx512(void);
#endif
