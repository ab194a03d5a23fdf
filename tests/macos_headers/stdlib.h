/* See stdio.h: declarations for compile checks only. */
#pragma once
#include <stddef.h>
char *getenv(const char *);
void abort(void) __attribute__((noreturn));
void exit(int) __attribute__((noreturn));
void _Exit(int) __attribute__((noreturn));
