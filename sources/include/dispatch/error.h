/*
 * Errors of the runtime: a kind plus a thread-local message.
 *
 * Every fallible runtime function reports failure through its return value
 * (a negative int or a NULL pointer) and records what happened with
 * dispatch_error_set(); the Python layer turns the kind into an exception
 * class (see dispatch/_errors.py). Nothing in the runtime prints or aborts.
 */
#ifndef DISPATCH_ERROR_H_
#define DISPATCH_ERROR_H_

#include <stddef.h>
#include <stdint.h>

/* X(NAME, value, python) per kind: DISPATCH_ERR_<NAME> and the name of the
 * Python exception class it becomes ("" for PYTHON: the exception a Python
 * kernel raised, which Python keeps). Python reads this list from C through
 * dispatch_error_kind_name (dispatch/_tables.py). */
#define DISPATCH_FORALL_ERRORS(X)                                                        \
    X(RUNTIME, 1, "RuntimeError")                                                        \
    X(VALUE, 2, "ValueError")                   /* shapes, arguments */                  \
    X(TYPE, 3, "TypeError")                     /* dtypes, argument kinds */             \
    X(INDEX, 4, "IndexError")                   /* dims, indices, bounds */              \
    X(NOT_IMPLEMENTED, 5, "NotImplementedError") /* no kernel */                         \
    X(MEMORY, 6, "MemoryError")                 /* the allocator failed */               \
    X(PYTHON, 7, "")                            /* a Python kernel raised */

typedef enum dispatch_error_kind {
    DISPATCH_OK = 0,
#define DISPATCH_ERROR_ENUM_(NAME, value, python) DISPATCH_ERR_##NAME = value,
    DISPATCH_FORALL_ERRORS(DISPATCH_ERROR_ENUM_)
#undef DISPATCH_ERROR_ENUM_
    DISPATCH_NUM_ERROR_KINDS,
} dispatch_error_kind;

/* The Python exception class name of a kind ("ValueError"); "" for OK,
 * PYTHON and out of range. */
const char *dispatch_error_kind_name(int kind);

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
