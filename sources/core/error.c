/* Thread-local error and warning state; see dispatch/error.h. */
#include "dispatch/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local int tls_kind = DISPATCH_OK;
static _Thread_local char tls_message[DISPATCH_ERROR_MAX];
static _Thread_local char tls_warning[DISPATCH_ERROR_MAX];
static _Thread_local int tls_has_warning = 0;

int dispatch_error_set(dispatch_error_kind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    tls_kind = kind;
    return -1;
}

int dispatch_error_set_message(int kind, const char *message) {
    return dispatch_error_set((dispatch_error_kind)kind, "%s", message);
}

int dispatch_error_kind_get(void) { return tls_kind; }

const char *dispatch_error_message(void) { return tls_kind == DISPATCH_OK ? "" : tls_message; }

void dispatch_error_clear(void) {
    tls_kind = DISPATCH_OK;
    tls_message[0] = '\0';
}

void dispatch_warning_set(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_warning, sizeof tls_warning, fmt, ap);
    va_end(ap);
    tls_has_warning = 1;
}

const char *dispatch_warning_message(void) { return tls_has_warning ? tls_warning : NULL; }

void dispatch_warning_clear(void) { tls_has_warning = 0; }
