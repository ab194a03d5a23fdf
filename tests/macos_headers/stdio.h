/* Compile checks without an SDK (tests/test_macos_objects.py): the C library
 * declarations the CPU runtime and the examples' variants use, with the prototypes macOS's SDK gives
 * them. Not a C library: nothing built with these is linked or run. */
#pragma once
#include <stdarg.h>
#include <stddef.h>
typedef struct __sFILE FILE;
extern FILE *__stderrp;
#define stderr __stderrp
int snprintf(char *restrict, size_t, const char *restrict, ...);
int vsnprintf(char *restrict, size_t, const char *restrict, va_list);
int printf(const char *restrict, ...);
int fprintf(FILE *restrict, const char *restrict, ...);
int fputs(const char *restrict, FILE *restrict);
