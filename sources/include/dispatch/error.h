/*
 * Errors of the runtime: a kind plus a thread-local message.
 *
 * Every fallible runtime function reports failure through its return value
 * (a negative int or a NULL pointer) and records what happened with
 * dispatch_error_set(); the Python layer turns the kind into an exception
 * class (see dispatch/_tensor.py). Nothing in the runtime prints or aborts.
 */
#ifndef DISPATCH_ERROR_H_
#define DISPATCH_ERROR_H_

#include <stddef.h>
#include <stdint.h>

typedef enum dispatch_error_kind {
    DISPATCH_OK = 0,
    DISPATCH_ERR_RUNTIME = 1,         /* RuntimeError */
    DISPATCH_ERR_VALUE = 2,           /* ValueError (shapes, arguments) */
    DISPATCH_ERR_TYPE = 3,            /* TypeError (dtypes, argument kinds) */
    DISPATCH_ERR_INDEX = 4,           /* IndexError (dims, indices, bounds) */
    DISPATCH_ERR_NOT_IMPLEMENTED = 5, /* NotImplementedError (no kernel) */
    DISPATCH_ERR_MEMORY = 6,          /* MemoryError (allocator failed) */
    DISPATCH_ERR_PYTHON = 7,          /* a Python kernel raised; Python keeps the exception */
} dispatch_error_kind;

/* Maximum length of a message, terminating NUL included; longer ones are cut. */
#define DISPATCH_ERROR_MAX 1024

/* Record an error for this thread (printf-style); returns -1 for convenience. */
int dispatch_error_set(dispatch_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same without formatting (for callers that cannot call varargs, e.g. Python). */
int dispatch_error_set_message(int kind, const char *message);
/* The kind and message of this thread's last error (DISPATCH_OK and "" when none). */
int dispatch_error_kind_get(void);
const char *dispatch_error_message(void);
void dispatch_error_clear(void);

/* After (v)snprintf(buf, cap, ...) returned n: when it cut the text, back the
 * end up to a UTF-8 character boundary, so that no message ends in half a
 * character (Python decodes messages as UTF-8). error_set and warning_set
 * do this themselves. */
void dispatch_utf8_cut(char *buf, size_t cap, int n);

/* A shape as messages print it, torch's way: "[2, 3]", "[3]", "[]" for a
 * 0-dim tensor. The one shape formatter of the runtime's messages; cut to
 * cap bytes (ending in "...") when it does not fit. */
void dispatch_format_shape(char *buf, size_t cap, int ndim, const int64_t *sizes);

/* Warnings the caller should show (e.g. a duplicate kernel registration);
 * thread-local, cleared by dispatch_warning_clear(). */
void dispatch_warning_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *dispatch_warning_message(void); /* NULL when none */
void dispatch_warning_clear(void);

#endif /* DISPATCH_ERROR_H_ */
