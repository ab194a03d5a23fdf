/* Thread-local error and warning state; see dispatch/error.h. */
#include "dispatch/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dispatch_utf8_cut(char *buf, size_t cap, int n) {
    if (n < 0 || (size_t)n < cap || cap == 0) return;
    size_t len = cap - 1, k = len;
    while (k > 0 && len - k < 4 && ((unsigned char)buf[k - 1] & 0xC0) == 0x80) k--;
    if (k == 0) return;
    unsigned char lead = (unsigned char)buf[k - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0xC0 && len - (k - 1) < need) buf[k - 1] = '\0';
}

void dispatch_format_shape(char *buf, size_t cap, int ndim, const int64_t *sizes) {
    if (cap == 0) return;
    if (ndim < 0) ndim = 0;
    size_t used = 0;
    for (int d = -1; d <= ndim; d++) {
        char part[32];
        if (d < 0) snprintf(part, sizeof part, "[");
        else if (d == ndim) snprintf(part, sizeof part, "]");
        else snprintf(part, sizeof part, "%s%lld", d ? ", " : "", (long long)sizes[d]);
        size_t n = strlen(part);
        if (used + n >= cap) { /* cut: end in "..." where it fits */
            size_t keep = cap > 4 ? cap - 4 : 0;
            if (used > keep) used = keep;
            snprintf(buf + used, cap - used, "%s", cap > 4 ? "..." : "");
            return;
        }
        memcpy(buf + used, part, n + 1);
        used += n;
    }
}

static _Thread_local int tls_kind = DISPATCH_OK;
static _Thread_local char tls_message[DISPATCH_ERROR_MAX];
static _Thread_local char tls_warning[DISPATCH_ERROR_MAX];
static _Thread_local int tls_has_warning = 0;

int dispatch_error_set(dispatch_error_kind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    dispatch_utf8_cut(tls_message, sizeof tls_message, n);
    tls_kind = kind;
    return -1;
}

int dispatch_error_set_message(int kind, const char *message) {
    return dispatch_error_set((dispatch_error_kind)kind, "%s", message);
}

int dispatch_error_kind_get(void) { return tls_kind; }

const char *dispatch_error_kind_name(int kind) {
    static const char *const names[DISPATCH_NUM_ERROR_KINDS] = {
#define ERROR_NAME_(NAME, value, python) [DISPATCH_ERR_##NAME] = python,
        DISPATCH_FORALL_ERRORS(ERROR_NAME_)
#undef ERROR_NAME_
    };
    return kind > DISPATCH_OK && kind < DISPATCH_NUM_ERROR_KINDS && names[kind] ? names[kind] : "";
}

const char *dispatch_error_message(void) { return tls_kind == DISPATCH_OK ? "" : tls_message; }

void dispatch_error_clear(void) {
    tls_kind = DISPATCH_OK;
    tls_message[0] = '\0';
}

void dispatch_warning_set(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tls_warning, sizeof tls_warning, fmt, ap);
    va_end(ap);
    dispatch_utf8_cut(tls_warning, sizeof tls_warning, n);
    tls_has_warning = 1;
}

const char *dispatch_warning_message(void) { return tls_has_warning ? tls_warning : NULL; }

void dispatch_warning_clear(void) { tls_has_warning = 0; }
