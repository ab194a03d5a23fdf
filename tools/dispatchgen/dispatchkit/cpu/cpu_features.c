/*
 * The runtime feature table, the detection state and the env overrides.
 *
 * The table is generated from tools/dispatchgen/dispatchkit/features/ (ctable.py there);
 * all logic over it is generic: the implication closure,
 * groups as the AND of their members, ENABLE keeping what a feature implies
 * and DISABLE removing what implies a feature.
 *
 * Compiled without the baseline flags: see Note [Baseline guard] in
 * cpu_baseline_guard.c.
 */
#include "cpu_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the configuration macros; no intrinsics (see Note [Baseline guard]). */
#define DISPATCH_NO_CPU_INTRINSICS_HEADERS
#include "dispatch/_cpu_dispatch.h"

/* The rows come from the generated header (dispatch/_cpu_features_table.h,
 * through cpu_features.h): this architecture's table in its order, groups
 * last, a group's `implies` being its members and the smaller groups it
 * holds; then the names only other architectures have, so env values can
 * tell them from typos. The closure
 * code iterates to a fixed point, so neither order nor cycles matter for
 * correctness. */
#define ROW_HERE(NAME, IMPLIES, IS_GROUP) \
    {DISPATCH_CPU_FEATURE_##NAME, #NAME, IMPLIES, IS_GROUP, 1},
#define ROW_ELSEWHERE(NAME, IS_GROUP) \
    {DISPATCH_CPU_FEATURE_##NAME, #NAME, "", IS_GROUP, 0},
static const dispatch_cpu_feature_info dispatch__cpu_table[] = {
    DISPATCH__CPU_TABLE_ROWS(ROW_HERE, ROW_ELSEWHERE)
};
#define TABLE_N ((int)(sizeof(dispatch__cpu_table) / sizeof(dispatch__cpu_table[0])))
#define MAX_IMPLIES DISPATCH__CPU_MAX_IMPLIES

int dispatch_cpu_feature_count(void)
{
    return TABLE_N;
}

const dispatch_cpu_feature_info *dispatch_cpu_feature_at(int index)
{
    return (index >= 0 && index < TABLE_N) ? &dispatch__cpu_table[index] : NULL;
}

static int dispatch__cpu_upper(int c)
{
    return (c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c;
}

/* Id of the table name spelled by s[0..len), case-insensitively; 0 if none. */
static int dispatch__cpu_lookup(const char *s, size_t len)
{
    for (int i = 0; i < TABLE_N; ++i) {
        const char *name = dispatch__cpu_table[i].name;
        if (strlen(name) != len) {
            continue;
        }
        size_t k = 0;
        while (k < len && dispatch__cpu_upper((unsigned char)s[k]) == name[k]) {
            ++k;
        }
        if (k == len) {
            return dispatch__cpu_table[i].id;
        }
    }
    return DISPATCH_CPU_FEATURE_NONE;
}

int dispatch_cpu_feature_id(const char *name)
{
    return name ? dispatch__cpu_lookup(name, strlen(name)) : DISPATCH_CPU_FEATURE_NONE;
}

const char *dispatch_cpu_feature_name(int feature)
{
    for (int i = 0; i < TABLE_N; ++i) {
        if (dispatch__cpu_table[i].id == feature) {
            return dispatch__cpu_table[i].name;
        }
    }
    return NULL;
}

const char *dispatch_cpu_arch(void)
{
#if defined(__x86_64__) || defined(_M_X64)
    return "x86_64";
#elif defined(__i386__) || defined(_M_IX86)
    return "x86";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__arm__)
    return "armhf";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return "ppc64le";
#elif defined(__powerpc64__)
    return "ppc64";
#elif defined(__s390x__)
    return "s390x";
#elif defined(__riscv) && defined(__LP64__)
    return "riscv64";
#elif defined(__loongarch64)
    return "loongarch64";
#else
    return "unknown";
#endif
}

const char *dispatch_cpu_baseline_names(void)
{
    return DISPATCH_WITH_CPU_BASELINE;
}

const char *dispatch_cpu_dispatch_names(void)
{
    return DISPATCH_WITH_CPU_DISPATCH;
}

#define DISPATCH_STR_(x) #x
#define DISPATCH_STR(x) DISPATCH_STR_(x)

const char *dispatch_cpu_compiler(void)
{
#if defined(__clang__)
    return "clang " DISPATCH_STR(__clang_major__) "." DISPATCH_STR(__clang_minor__) "."
        DISPATCH_STR(__clang_patchlevel__);
#elif defined(__GNUC__)
    return "gcc " DISPATCH_STR(__GNUC__) "." DISPATCH_STR(__GNUC_MINOR__) "."
        DISPATCH_STR(__GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
    return "msvc " DISPATCH_STR(_MSC_FULL_VER);
#else
    return "unknown";
#endif
}

/* ------------------------------------------------------------------------
 * Tokens: names separated by spaces, tabs or commas.
 * ------------------------------------------------------------------------ */

static int dispatch__cpu_is_sep(char c)
{
    return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r';
}

/* Next token of *cursor: its start and length, or 0 at the end. */
static int dispatch__cpu_next_token(const char **cursor, const char **start, size_t *len)
{
    const char *p = *cursor;
    while (*p && dispatch__cpu_is_sep(*p)) {
        ++p;
    }
    if (!*p) {
        return 0;
    }
    *start = p;
    while (*p && !dispatch__cpu_is_sep(*p)) {
        ++p;
    }
    *len = (size_t)(p - *start);
    *cursor = p;
    return 1;
}

/* Direct implications of row i, as ids; returns how many. */
static int dispatch__cpu_implies_of(int i, int out[MAX_IMPLIES])
{
    const char *cursor = dispatch__cpu_table[i].implies, *tok;
    size_t len;
    int n = 0;
    while (n < MAX_IMPLIES && dispatch__cpu_next_token(&cursor, &tok, &len)) {
        int id = dispatch__cpu_lookup(tok, len);
        if (id != DISPATCH_CPU_FEATURE_NONE) {
            out[n++] = id;
        }
    }
    return n;
}

/* Mark the ids named in a space separated list (the build's sets). */
static void dispatch__cpu_mark_names(const char *names, unsigned char marks[DISPATCH_CPU_FEATURE_MAX])
{
    const char *cursor = names, *tok;
    size_t len;
    while (dispatch__cpu_next_token(&cursor, &tok, &len)) {
        marks[dispatch__cpu_lookup(tok, len)] = 1;
    }
    marks[DISPATCH_CPU_FEATURE_NONE] = 0;
}

/* Downward closure: add everything the marked features imply. */
static void dispatch__cpu_close_down(unsigned char marks[DISPATCH_CPU_FEATURE_MAX])
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = TABLE_N - 1; i >= 0; --i) {
            if (!marks[dispatch__cpu_table[i].id]) {
                continue;
            }
            int imp[MAX_IMPLIES], n = dispatch__cpu_implies_of(i, imp);
            for (int k = 0; k < n; ++k) {
                changed |= !marks[imp[k]];
                marks[imp[k]] = 1;
            }
        }
    }
}

/* Upward closure: add everything that implies a marked feature. */
static void dispatch__cpu_close_up(unsigned char marks[DISPATCH_CPU_FEATURE_MAX])
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < TABLE_N; ++i) {
            const int id = dispatch__cpu_table[i].id;
            int imp[MAX_IMPLIES], n = dispatch__cpu_implies_of(i, imp);
            for (int k = 0; k < n && !marks[id]; ++k) {
                if (marks[imp[k]]) {
                    marks[id] = 1;
                    changed = 1;
                }
            }
        }
    }
}

/* A feature stays only while everything it implies does (the greatest fixed
 * point, so mutually implying SSE/SSE2 stay when both are there). */
static void dispatch__cpu_require_implied(unsigned char have[DISPATCH_CPU_FEATURE_MAX])
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < TABLE_N; ++i) {
            const int id = dispatch__cpu_table[i].id;
            int imp[MAX_IMPLIES], n = dispatch__cpu_implies_of(i, imp);
            for (int k = 0; k < n && have[id]; ++k) {
                if (!have[imp[k]]) {
                    have[id] = 0;
                    changed = 1;
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------
 * Messages: fixed buffers, written only under the init lock.
 * ------------------------------------------------------------------------ */

typedef struct {
    char *buf;
    size_t cap, len;
} dispatch__cpu_text;

static void dispatch__cpu_appendf(dispatch__cpu_text *t, const char *fmt, ...)
{
    if (t->len + 1 >= t->cap) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        t->len += (size_t)n;
        if (t->len >= t->cap) {
            t->len = t->cap - 1;
        }
    }
}

/* Append the table names of the marked features (in table order), or
 * "(none)". */
static void dispatch__cpu_append_set(dispatch__cpu_text *t, const unsigned char marks[DISPATCH_CPU_FEATURE_MAX])
{
    int any = 0;
    for (int i = 0; i < TABLE_N; ++i) {
        if (marks[dispatch__cpu_table[i].id]) {
            dispatch__cpu_appendf(t, any ? " %s" : "%s", dispatch__cpu_table[i].name);
            any = 1;
        }
    }
    if (!any) {
        dispatch__cpu_appendf(t, "(none)");
    }
}

/* ------------------------------------------------------------------------
 * The state. See Note [Detection state].
 * ------------------------------------------------------------------------ */

/* Note [Detection state]
 * Detection runs once, on the first call of any API function, under a spin
 * lock (an atomic_flag: nothing to allocate or initialise, works before
 * main and in every thread library). `ready` is stored with release order
 * after the arrays and buffers are written, and read with acquire order
 * before they are read, so readers see complete results without the lock.
 * Only dispatch_cpu_redetect_for_tests() writes again; its contract forbids
 * concurrent readers, and the arrays are atomics so even a violation is a
 * stale answer rather than undefined behaviour. */
static atomic_flag dispatch__cpu_lock = ATOMIC_FLAG_INIT;
static atomic_int dispatch__cpu_ready;
static _Atomic unsigned char dispatch__cpu_detected[DISPATCH_CPU_FEATURE_MAX];
static _Atomic unsigned char dispatch__cpu_have[DISPATCH_CPU_FEATURE_MAX];
static int dispatch__cpu_result;
static int dispatch__cpu_kind;
static char dispatch__cpu_error_buf[2048];
static char dispatch__cpu_warn_buf[2048];

/* Note [Env prefix]
 * Every package that compiles this runtime reads its own variables:
 * <PREFIX>_DISABLE_CPU_FEATURES and <PREFIX>_ENABLE_CPU_FEATURES, PREFIX
 * being DISPATCH_CPU_ENV_PREFIX (a bare token, e.g. -DDISPATCH_CPU_ENV_PREFIX=HELLO;
 * `dispatchgen configure --package hello` writes it into the runtime it
 * generates). Each extension links its own hidden copy of this file, so two
 * packages never read each other's settings. */
#ifndef DISPATCH_CPU_ENV_PREFIX
    #define DISPATCH_CPU_ENV_PREFIX DISPATCH
#endif
#define DISPATCH__CPU_STR_(X) #X
#define DISPATCH__CPU_STR(X) DISPATCH__CPU_STR_(X)
#define ENV_DISABLE DISPATCH__CPU_STR(DISPATCH_CPU_ENV_PREFIX) "_DISABLE_CPU_FEATURES"
#define ENV_ENABLE DISPATCH__CPU_STR(DISPATCH_CPU_ENV_PREFIX) "_ENABLE_CPU_FEATURES"

static int dispatch__cpu_fail(dispatch__cpu_text *err, int kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->buf, err->cap, fmt, ap);
    va_end(ap);
    err->len = n < 0 ? 0 : ((size_t)n >= err->cap ? err->cap - 1 : (size_t)n);
    return kind;
}

static const char *dispatch__cpu_env(const char *name)
{
    const char *v = getenv(name);
    if (!v) {
        return NULL;
    }
    for (const char *p = v; *p; ++p) {
        if (!dispatch__cpu_is_sep(*p)) {
            return v;
        }
    }
    return NULL; /* empty or only separators: as if unset */
}

/* Note [Escaped env tokens]
 * An unknown name in the env variables is quoted in the error, which a
 * program prints to a terminal. Its bytes are the user's: an ESC byte there
 * (DISPATCH_DISABLE_CPU_FEATURES=$'\e]0;...\a') would reach the terminal as
 * a control sequence. So the token is shown much as Python's repr shows
 * text: printable ASCII and well-formed UTF-8 as they are, every control
 * character (C0, DEL and the C1 range U+0080..U+009F, which some terminals
 * obey) as \xNN, a backslash as \\, and every byte that is not UTF-8 as
 * \xNN. The result holds no control character, and Python decodes it as it
 * is (tests/toolkit/test_hostile_input.py). */
#define DISPATCH__CPU_ESCAPED_MAX(N) (4 * (N) + 1)

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0. */
static size_t dispatch__cpu_utf8_len(const unsigned char *s, size_t n)
{
    size_t need;
    unsigned int cp;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        need = 2, cp = s[0] & 0x1Fu;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        need = 3, cp = s[0] & 0x0Fu;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        need = 4, cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (n < need) {
        return 0;
    }
    for (size_t i = 1; i < need; ++i) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((need == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (need == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        return 0; /* overlong, a surrogate, or beyond Unicode */
    }
    return need;
}

/* The n bytes at s, escaped into out (DISPATCH__CPU_ESCAPED_MAX(n) bytes). */
static void dispatch__cpu_escape(const char *s, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] >= 0x80 ? dispatch__cpu_utf8_len(u + i, n - i) : 0;
        unsigned int c = u[i];
        if (k == 2 && u[i] == 0xC2 && u[i + 1] < 0xA0) {
            c = u[i + 1]; /* a C1 control: \x80..\x9f, as Python shows it */
            k = 0;
            i += 1;
        }
        if (k > 0) {
            memcpy(out + o, u + i, k);
            o += k;
            i += k;
        } else if (c >= 0x20 && c < 0x7F && c != '\\') {
            out[o++] = (char)c;
            i += 1;
        } else if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
            i += 1;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 0xF];
            i += 1;
        }
    }
    out[o] = '\0';
}

/* Note [Baseline token]
 * NumPy's ENABLE keeps the named features, what they imply, and the
 * baseline; an empty value counts as unset (a shell's `VAR=` is no request).
 * So forcing the baseline variants, for a test or a benchmark of them, is
 * spelled <PREFIX>_ENABLE_CPU_FEATURES=baseline: the word names no feature
 * beyond the baseline, which ENABLE always keeps, so only the baseline is
 * left and every chooser picks its baseline variant. `baseline` beside
 * feature names adds nothing (`baseline avx2` is `avx2`). In DISABLE it is
 * refused as a baseline feature is. It is the word `__cpu_targets__` and
 * DISPATCH_CPU_TARGET_NAME use for that variant. */
static int dispatch__cpu_is_baseline_token(const char *tok, size_t len)
{
    static const char word[] = "BASELINE";
    if (len != sizeof(word) - 1) {
        return 0;
    }
    for (size_t i = 0; i < len; ++i) {
        if (dispatch__cpu_upper((unsigned char)tok[i]) != word[i]) {
            return 0;
        }
    }
    return 1;
}

/* Apply the env overrides to `have` (a copy of `detected`). Returns the error
 * kind; on error `have` is left for the caller to discard. */
static int dispatch__cpu_apply_env(const unsigned char detected[DISPATCH_CPU_FEATURE_MAX],
                                   unsigned char have[DISPATCH_CPU_FEATURE_MAX],
                                   dispatch__cpu_text *err, dispatch__cpu_text *warn)
{
    const char *disable = dispatch__cpu_env(ENV_DISABLE);
    const char *enable = dispatch__cpu_env(ENV_ENABLE);
    if (disable && enable) {
        return dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_CONFLICT,
            ENV_DISABLE " and " ENV_ENABLE " are both set; set only one of them: "
            ENV_DISABLE " turns the named features off, " ENV_ENABLE
            " keeps only the named ones (with what they imply) and the baseline");
    }
    const char *var = disable ? ENV_DISABLE : ENV_ENABLE;
    const char *value = disable ? disable : enable;
    if (!value) {
        return DISPATCH_CPU_ERROR_NONE;
    }
    size_t value_len = strlen(value);
    if (value_len > DISPATCH_CPU_ENV_MAX) {
        return dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_ENV,
            "%s is %zu characters long; at most %d are accepted", var, value_len,
            DISPATCH_CPU_ENV_MAX);
    }

    unsigned char baseline[DISPATCH_CPU_FEATURE_MAX] = {0};
    unsigned char dispatched[DISPATCH_CPU_FEATURE_MAX] = {0};
    unsigned char named[DISPATCH_CPU_FEATURE_MAX] = {0};
    dispatch__cpu_mark_names(DISPATCH_WITH_CPU_BASELINE, baseline);
    dispatch__cpu_close_down(baseline);
    dispatch__cpu_mark_names(DISPATCH_WITH_CPU_DISPATCH, dispatched);

    const char *cursor = value, *tok;
    size_t len;
    while (dispatch__cpu_next_token(&cursor, &tok, &len)) {
        if (dispatch__cpu_is_baseline_token(tok, len)) {
            /* Note [Baseline token] */
            if (disable) {
                dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_ENV,
                    "%s cannot disable the baseline (", var);
                dispatch__cpu_append_set(err, baseline);
                dispatch__cpu_appendf(err, "), which all of its code may use unconditionally; "
                    "to run only the baseline variants, set " ENV_ENABLE "=baseline instead");
                return DISPATCH_CPU_ERROR_ENV;
            }
            continue; /* ENABLE keeps the baseline anyway: it names nothing more */
        }
        const int id = dispatch__cpu_lookup(tok, len);
        if (id == DISPATCH_CPU_FEATURE_NONE) {
            /* At most 64 bytes of the token, cut on a UTF-8 character boundary,
             * escaped: see Note [Escaped env tokens]. */
            size_t shown = len;
            if (shown > 64) {
                shown = 64;
                while (shown > 61 && ((unsigned char)tok[shown] & 0xC0) == 0x80) shown--;
            }
            char escaped[DISPATCH__CPU_ESCAPED_MAX(64)];
            dispatch__cpu_escape(tok, shown, escaped);
            dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_ENV,
                "%s names '%s', which is not a CPU feature; the features of %s are: ",
                var, escaped, dispatch_cpu_arch());
            unsigned char arch[DISPATCH_CPU_FEATURE_MAX] = {0};
            for (int i = 0; i < TABLE_N; ++i) {
                arch[dispatch__cpu_table[i].id] = (unsigned char)dispatch__cpu_table[i].on_this_arch;
            }
            dispatch__cpu_append_set(err, arch);
            return DISPATCH_CPU_ERROR_ENV;
        }
        const char *name = dispatch_cpu_feature_name(id);
        if (disable && baseline[id]) {
            dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_ENV,
                "%s cannot disable %s: it is part of this build's baseline (", var, name);
            dispatch__cpu_append_set(err, baseline);
            dispatch__cpu_appendf(err, "), which all of its code may use unconditionally; "
                "to run without it, rebuild with a lower -Dcpu-baseline");
            return DISPATCH_CPU_ERROR_ENV;
        }
        if (enable && !detected[id]) {
            unsigned char need[DISPATCH_CPU_FEATURE_MAX] = {0};
            need[id] = 1;
            dispatch__cpu_close_down(need);
            for (int f = 0; f < DISPATCH_CPU_FEATURE_MAX; ++f) {
                need[f] = need[f] && !detected[f];
            }
            dispatch__cpu_fail(err, DISPATCH_CPU_ERROR_ENV,
                "%s cannot enable %s: this machine does not support it (missing: ", var, name);
            dispatch__cpu_append_set(err, need);
            dispatch__cpu_appendf(err, ")");
            return DISPATCH_CPU_ERROR_ENV;
        }
        if (!dispatched[id] && !baseline[id]) {
            dispatch__cpu_appendf(warn, "%s names %s, which this build does not dispatch, so no "
                "compiled code depends on it; the dispatched features are: ", var, name);
            dispatch__cpu_append_set(warn, dispatched);
            dispatch__cpu_appendf(warn, "\n");
        }
        named[id] = 1;
    }

    if (disable) {
        dispatch__cpu_close_up(named);
        for (int f = 0; f < DISPATCH_CPU_FEATURE_MAX; ++f) {
            have[f] = have[f] && !named[f];
        }
    } else {
        dispatch__cpu_close_down(named);
        for (int i = 0; i < TABLE_N; ++i) {
            const int id = dispatch__cpu_table[i].id;
            /* groups are re-derived from their members below */
            const int keep = named[id] || baseline[id] || dispatch__cpu_table[i].is_group;
            have[id] = have[id] && keep;
        }
    }
    dispatch__cpu_require_implied(have);
    return DISPATCH_CPU_ERROR_NONE;
}

void dispatch__cpu_detect_hardware(unsigned char raw[DISPATCH_CPU_FEATURE_MAX])
{
    dispatch__cpu_detect(raw);
    for (int i = 0; i < TABLE_N; ++i) {
        if (dispatch__cpu_table[i].is_group && dispatch__cpu_table[i].on_this_arch) {
            raw[dispatch__cpu_table[i].id] = 1; /* the AND of its members, below */
        }
    }
    dispatch__cpu_require_implied(raw);
}

/* Detect and apply the env; caller holds the lock. */
static void dispatch__cpu_run_locked(void)
{
    unsigned char raw[DISPATCH_CPU_FEATURE_MAX], have[DISPATCH_CPU_FEATURE_MAX];
    dispatch__cpu_detect_hardware(raw);

    memcpy(have, raw, sizeof(have));
    dispatch__cpu_text err = {dispatch__cpu_error_buf, sizeof(dispatch__cpu_error_buf), 0};
    dispatch__cpu_text warn = {dispatch__cpu_warn_buf, sizeof(dispatch__cpu_warn_buf), 0};
    err.buf[0] = warn.buf[0] = '\0';
    const int kind = dispatch__cpu_apply_env(raw, have, &err, &warn);
    if (kind != DISPATCH_CPU_ERROR_NONE) {
        memcpy(have, raw, sizeof(have)); /* a refused request changes nothing */
    }
    for (int f = 0; f < DISPATCH_CPU_FEATURE_MAX; ++f) {
        atomic_store_explicit(&dispatch__cpu_detected[f], raw[f], memory_order_relaxed);
        atomic_store_explicit(&dispatch__cpu_have[f], have[f], memory_order_relaxed);
    }
    dispatch__cpu_kind = kind;
    dispatch__cpu_result = kind == DISPATCH_CPU_ERROR_NONE ? 0 : -1;
}

static void dispatch__cpu_lock_acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&dispatch__cpu_lock, memory_order_acquire)) {
        /* detection takes microseconds; spin */
    }
}

static void dispatch__cpu_lock_release(void)
{
    atomic_flag_clear_explicit(&dispatch__cpu_lock, memory_order_release);
}

int dispatch_cpu_init(void)
{
    if (atomic_load_explicit(&dispatch__cpu_ready, memory_order_acquire)) {
        return dispatch__cpu_result;
    }
    dispatch__cpu_lock_acquire();
    if (!atomic_load_explicit(&dispatch__cpu_ready, memory_order_relaxed)) {
        dispatch__cpu_run_locked();
        atomic_store_explicit(&dispatch__cpu_ready, 1, memory_order_release);
    }
    dispatch__cpu_lock_release();
    return dispatch__cpu_result;
}

int dispatch__cpu_redetect(void)
{
    dispatch__cpu_lock_acquire();
    dispatch__cpu_run_locked();
    atomic_store_explicit(&dispatch__cpu_ready, 1, memory_order_release);
    dispatch__cpu_lock_release();
    return dispatch__cpu_result;
}

int dispatch_cpu_have(int feature)
{
    if (feature <= 0 || feature >= DISPATCH_CPU_FEATURE_MAX) {
        return 0;
    }
    (void)dispatch_cpu_init();
    return atomic_load_explicit(&dispatch__cpu_have[feature], memory_order_relaxed);
}

int dispatch_cpu_have_detected(int feature)
{
    if (feature <= 0 || feature >= DISPATCH_CPU_FEATURE_MAX) {
        return 0;
    }
    (void)dispatch_cpu_init();
    return atomic_load_explicit(&dispatch__cpu_detected[feature], memory_order_relaxed);
}

const char *dispatch_cpu_error(void)
{
    (void)dispatch_cpu_init();
    return dispatch__cpu_error_buf;
}

int dispatch_cpu_error_kind(void)
{
    (void)dispatch_cpu_init();
    return dispatch__cpu_kind;
}

const char *dispatch_cpu_warnings(void)
{
    (void)dispatch_cpu_init();
    return dispatch__cpu_warn_buf;
}
