/* The schema parser; see dispatch/schema.h for the grammar. */
#include "dispatch/schema.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/error.h"

/* The largest N of a fixed-size list type T[N]: a shape has at most
 * DISPATCH_MAX_DIMS entries, so anything near int's range is a typo. */
#define DISPATCH_SCHEMA_MAX_LIST 1000000
#define DISPATCH_SCHEMA_MAX_LIST_TEXT "1000000"

typedef struct parser {
    const char *text;
    const char *p;
} parser;

static int fail(parser *ps, const char *what) {
    return dispatch_error_set(DISPATCH_ERR_VALUE, "invalid schema '%s': %s at column %d",
                              ps->text, what, (int)(ps->p - ps->text) + 1);
}

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n') ps->p++;
}

static int accept(parser *ps, const char *tok) {
    skip_ws(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) == 0) {
        ps->p += n;
        return 1;
    }
    return 0;
}

/* identifier: [A-Za-z_][A-Za-z0-9_]* */
static int ident(parser *ps, char *out, size_t size) {
    skip_ws(ps);
    const char *s = ps->p;
    if (!(isalpha((unsigned char)*s) || *s == '_')) return fail(ps, "expected a name");
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
    size_t n = (size_t)(ps->p - s);
    if (n >= size) return fail(ps, "name too long");
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

static const struct {
    const char *name;
    int kind;
} base_types[] = {
    {"Tensor", DISPATCH_TYPE_TENSOR}, {"Scalar", DISPATCH_TYPE_SCALAR},
    {"int", DISPATCH_TYPE_INT},       {"float", DISPATCH_TYPE_FLOAT},
    {"bool", DISPATCH_TYPE_BOOL},     {"str", DISPATCH_TYPE_STR},
    {"ScalarType", DISPATCH_TYPE_SCALARTYPE},
};

static int parse_type(parser *ps, dispatch_schema_arg *a) {
    char name[DISPATCH_SCHEMA_MAX_NAME];
    const char *start = ps->p;
    if (ident(ps, name, sizeof name) < 0) return -1;
    a->kind = -1;
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++)
        if (strcmp(name, base_types[i].name) == 0) a->kind = base_types[i].kind;
    if (a->kind < 0) {
        ps->p = start;
        skip_ws(ps);
        return fail(ps, "unknown type (expected Tensor, Scalar, int, float, bool, str or ScalarType)");
    }
    if (accept(ps, "(")) { /* alias annotation */
        skip_ws(ps);
        if (!islower((unsigned char)*ps->p)) return fail(ps, "expected an alias set letter");
        a->alias_set = *ps->p++;
        if (accept(ps, "!")) a->alias_write = 1;
        if (!accept(ps, ")")) return fail(ps, "expected ')' closing the alias annotation");
    }
    if (accept(ps, "[")) {
        a->is_list = 1;
        skip_ws(ps);
        while (isdigit((unsigned char)*ps->p)) {
            if (a->list_size > (DISPATCH_SCHEMA_MAX_LIST - (*ps->p - '0')) / 10)
                return fail(ps, "list size too large (at most " DISPATCH_SCHEMA_MAX_LIST_TEXT ")");
            a->list_size = a->list_size * 10 + (*ps->p++ - '0');
        }
        if (!accept(ps, "]")) return fail(ps, "expected ']'");
    }
    if (accept(ps, "?")) a->is_optional = 1;
    return 0;
}

/* A default value: everything up to the next ',' or ')' outside brackets. */
static int parse_default(parser *ps, dispatch_schema_arg *a) {
    skip_ws(ps);
    const char *s = ps->p;
    int depth = 0;
    while (*ps->p && (depth > 0 || (*ps->p != ',' && *ps->p != ')'))) {
        if (*ps->p == '[') depth++;
        if (*ps->p == ']') depth--;
        ps->p++;
    }
    const char *e = ps->p;
    while (e > s && e[-1] == ' ') e--;
    if (e == s) return fail(ps, "expected a default value");
    if ((size_t)(e - s) >= sizeof a->default_text) return fail(ps, "default value too long");
    memcpy(a->default_text, s, (size_t)(e - s));
    a->default_text[e - s] = '\0';
    a->has_default = 1;
    return 0;
}

static int parse_args(parser *ps, dispatch_schema *out) {
    if (!accept(ps, "(")) return fail(ps, "expected '('");
    if (accept(ps, ")")) return 0;
    int kwarg_only = 0;
    do {
        if (accept(ps, "*")) {
            if (kwarg_only) return fail(ps, "'*' given twice");
            kwarg_only = 1;
            continue;
        }
        if (out->nargs == DISPATCH_SCHEMA_MAX_ARGS) return fail(ps, "too many arguments");
        dispatch_schema_arg *a = &out->args[out->nargs];
        memset(a, 0, sizeof *a);
        if (parse_type(ps, a) < 0 || ident(ps, a->name, sizeof a->name) < 0) return -1;
        for (int i = 0; i < out->nargs; i++)
            if (strcmp(out->args[i].name, a->name) == 0) return fail(ps, "duplicate argument name");
        a->kwarg_only = kwarg_only;
        if (accept(ps, "=")) {
            if (parse_default(ps, a) < 0) return -1;
        } else if (!kwarg_only && out->nargs > 0 && out->args[out->nargs - 1].has_default) {
            return fail(ps, "a positional argument without a default follows one with a default");
        }
        out->nargs++;
    } while (accept(ps, ","));
    if (!accept(ps, ")")) return fail(ps, "expected ',' or ')'");
    return 0;
}

static int parse_ret(parser *ps, dispatch_schema *out) {
    if (out->nrets == DISPATCH_SCHEMA_MAX_ARGS) return fail(ps, "too many returns");
    dispatch_schema_arg *r = &out->rets[out->nrets];
    memset(r, 0, sizeof *r);
    if (parse_type(ps, r) < 0) return -1;
    skip_ws(ps);
    if (isalpha((unsigned char)*ps->p) && ident(ps, r->name, sizeof r->name) < 0) return -1;
    out->nrets++;
    return 0;
}

int dispatch_schema_parse(const char *text, dispatch_schema *out) {
    parser ps = {text, text};
    memset(out, 0, sizeof *out);
    if (ident(&ps, out->name, sizeof out->name) < 0) return -1;
    if (*ps.p == '.') {
        ps.p++;
        if (ident(&ps, out->overload, sizeof out->overload) < 0) return -1;
    }
    if (parse_args(&ps, out) < 0) return -1;
    if (!accept(&ps, "->")) return fail(&ps, "expected '->'");
    if (accept(&ps, "(")) {
        if (!accept(&ps, ")")) {
            do {
                if (parse_ret(&ps, out) < 0) return -1;
            } while (accept(&ps, ","));
            if (!accept(&ps, ")")) return fail(&ps, "expected ',' or ')' in the returns");
        }
    } else if (parse_ret(&ps, out) < 0) {
        return -1;
    }
    skip_ws(&ps);
    if (*ps.p) return fail(&ps, "unexpected text after the returns");
    return 0;
}

static int format_type(const dispatch_schema_arg *a, char *buf, int size) {
    const char *base = "?";
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++)
        if (base_types[i].kind == a->kind) base = base_types[i].name;
    char alias[8] = "", list[24] = "";
    if (a->alias_set) snprintf(alias, sizeof alias, "(%c%s)", a->alias_set, a->alias_write ? "!" : "");
    if (a->is_list) {
        if (a->list_size) snprintf(list, sizeof list, "[%d]", a->list_size);
        else snprintf(list, sizeof list, "[]");
    }
    return snprintf(buf, (size_t)size, "%s%s%s%s", base, alias, list, a->is_optional ? "?" : "");
}

int dispatch_schema_format(const dispatch_schema *s, char *buf, int size) {
    /* Room for the longest schema (names and defaults < 64 bytes, at most
     * DISPATCH_SCHEMA_MAX_ARGS of each, list sizes <= 7 digits: ~4.3 KB), so
     * no snprintf below is ever cut and n never passes sizeof tmp. */
    char tmp[8192];
    int n = snprintf(tmp, sizeof tmp, "%s%s%s(", s->name, s->overload[0] ? "." : "", s->overload);
    int star = 0;
    for (int i = 0; i < s->nargs; i++) {
        const dispatch_schema_arg *a = &s->args[i];
        if (i) n += snprintf(tmp + n, sizeof tmp - (size_t)n, ", ");
        if (a->kwarg_only && !star) {
            star = 1;
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "*, ");
        }
        n += format_type(a, tmp + n, (int)sizeof tmp - n);
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, " %s", a->name);
        if (a->has_default) n += snprintf(tmp + n, sizeof tmp - (size_t)n, "=%s", a->default_text);
    }
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, ") -> ");
    if (s->nrets != 1) n += snprintf(tmp + n, sizeof tmp - (size_t)n, "(");
    for (int i = 0; i < s->nrets; i++) {
        if (i) n += snprintf(tmp + n, sizeof tmp - (size_t)n, ", ");
        n += format_type(&s->rets[i], tmp + n, (int)sizeof tmp - n);
        if (s->rets[i].name[0]) n += snprintf(tmp + n, sizeof tmp - (size_t)n, " %s", s->rets[i].name);
    }
    if (s->nrets != 1) n += snprintf(tmp + n, sizeof tmp - (size_t)n, ")");
    if (size > 0) snprintf(buf, (size_t)size, "%s", tmp);
    return n;
}
