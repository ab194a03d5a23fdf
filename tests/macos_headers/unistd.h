/* See stdio.h: declarations for compile checks only. */
#pragma once
#include <stddef.h>
typedef long ssize_t;
ssize_t write(int, const void *, size_t);
void _exit(int) __attribute__((noreturn));
