/* See ../stdio.h: declarations for compile checks only. */
#pragma once
#include <stddef.h>
int sysctlbyname(const char *, void *, size_t *, void *, size_t);
