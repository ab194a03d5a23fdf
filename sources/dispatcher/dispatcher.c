/* The operator registry and dispatcher; see dispatch/dispatcher.h. */
#include "dispatch/dispatcher.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"

/*
 * Note [Key order]
 * ~~~~~~~~~~~~~~~~
 * A key's value is its bit in a key set and its priority: the highest set bit
 * (63 - clz) is the key a call runs. Backends sit lowest, in device order
 * (key = device + 1, which sources/core/tensor.c relies on to stamp a
 * tensor's key set without including this header). Functionality keys sit
 * above every backend, so that they see a call first and pass it down by
 * masking themselves out: Python below Tracer, so a traced call into a
 * Python kernel is recorded once, at the outside.
 *
 * Note [Dispatch table]
 * ~~~~~~~~~~~~~~~~~~~~~
 * Each operator owns an immutable table: key -> (kernel, ctx), plus the mask
 * of keys that are not fallthrough. It is rebuilt, under the registry lock,
 * whenever a kernel of the operator or any backend fallback is registered,
 * from (1) the operator's own kernel for the key, else (2) the backend
 * fallback for the key, else (3) nothing (calling it is an error). The new
 * table is published with one atomic pointer store; a call loads the pointer
 * once, so it always sees one consistent table and takes no lock. Old tables
 * are retired, not freed: a call in flight may still read one, and there are
 * only as many as there were registrations.
 */

typedef struct kernel_slot {
    dispatch_kernel_fn fn;
    void *ctx;
    int source; /* 0 missing, 1 operator kernel, 2 backend fallback */
} kernel_slot;

typedef struct dispatch_table {
    kernel_slot slots[DISPATCH_NUM_KEYS];
    dispatch_keyset non_fallthrough; /* keys whose slot is not the fallthrough kernel */
    struct dispatch_table *retired_next;
} dispatch_table;

typedef struct registration {
    dispatch_kernel_fn fn;
    void *ctx;
    char debug[256];
    int present;
} registration;

struct dispatch_operator {
    char name[2 * DISPATCH_SCHEMA_MAX_NAME + 2];
    dispatch_schema schema;
    char debug[256];
    registration kernels[DISPATCH_NUM_KEYS];
    dispatch_ivalue defaults[DISPATCH_SCHEMA_MAX_ARGS];
    int ntensor_args;
    int tensor_args[DISPATCH_SCHEMA_MAX_ARGS];
    _Atomic(dispatch_table *) table;
    dispatch_table *retired;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static dispatch_operator **ops;
static _Atomic int nops;
static int ops_capacity;
static registration fallbacks[DISPATCH_NUM_KEYS];

static const char *const key_names[DISPATCH_NUM_KEYS] = {
#define KEY_NAME_(NAME, name) [DISPATCH_KEY_##NAME] = name,
    DISPATCH_FORALL_KEYS(KEY_NAME_)
#undef KEY_NAME_
};

_Static_assert(DISPATCH_KEY_CPU == DISPATCH_DEVICE_CPU + 1, "see Note [Key order]");
_Static_assert(DISPATCH_KEY_CUDA == DISPATCH_DEVICE_CUDA + 1, "see Note [Key order]");
_Static_assert(DISPATCH_KEY_META == DISPATCH_DEVICE_META + 1, "see Note [Key order]");

const char *dispatch_key_name(int key) {
    return key >= 0 && key < DISPATCH_NUM_KEYS ? key_names[key] : "?";
}

int dispatch_key_from_name(const char *name) {
    for (int k = 1; k < DISPATCH_NUM_KEYS; k++)
        if (strcmp(name, key_names[k]) == 0) return k;
    return -1;
}

int dispatch_key_for_device(int device) { return device + 1; }

int dispatch_fallthrough_kernel(const dispatch_operator *op, dispatch_keyset ks,
                                dispatch_ivalue *args, dispatch_ivalue *rets, void *ctx) {
    /* Never called through a table (the key is masked out); a direct call
     * behaves as the fallthrough it stands for. */
    (void)ctx;
    return dispatch_redispatch(op, ks & ~DISPATCH_KEYSET(dispatch_keyset_highest(ks)), args, rets);
}

/* Thread-local key sets ---------------------------------------------------- */
static _Thread_local dispatch_keyset tls_included, tls_excluded;

dispatch_keyset dispatch_tls_included(void) { return tls_included; }
dispatch_keyset dispatch_tls_excluded(void) { return tls_excluded; }
void dispatch_tls_set_included(dispatch_keyset ks) { tls_included = ks; }
void dispatch_tls_set_excluded(dispatch_keyset ks) { tls_excluded = ks; }

/* Tables -------------------------------------------------------------------- */

/* Caller holds registry_lock. */
static int recompute_table(dispatch_operator *op) {
    dispatch_table *t = calloc(1, sizeof *t);
    if (!t) return dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory building a dispatch table");
    t->non_fallthrough = ~(dispatch_keyset)0;
    for (int k = 1; k < DISPATCH_NUM_KEYS; k++) {
        const registration *r = op->kernels[k].present ? &op->kernels[k]
                                : fallbacks[k].present ? &fallbacks[k]
                                                       : NULL;
        if (!r) continue;
        if (r->fn == dispatch_fallthrough_kernel) {
            t->non_fallthrough &= ~DISPATCH_KEYSET(k);
            continue;
        }
        t->slots[k].fn = r->fn;
        t->slots[k].ctx = r->ctx;
        t->slots[k].source = op->kernels[k].present ? 1 : 2;
    }
    dispatch_table *old = atomic_exchange(&op->table, t);
    if (old) {
        old->retired_next = op->retired;
        op->retired = old;
    }
    return 0;
}

/* Defaults ------------------------------------------------------------------- */

static int parse_int_list(const char *s, dispatch_ivalue *v) {
    v->tag = DISPATCH_IV_INTLIST;
    v->n = 0;
    const char *p = s;
    if (*p == '[') p++;
    while (*p && *p != ']') {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p || v->n == DISPATCH_MAX_DIMS) return -1;
        v->list[v->n++] = x;
        p = end;
        while (*p == ' ' || *p == ',') p++;
    }
    return 0;
}

static int parse_default_value(const dispatch_schema_arg *a, dispatch_ivalue *v) {
    const char *s = a->default_text;
    memset(v, 0, sizeof *v);
    if (strcmp(s, "None") == 0) {
        if (!a->is_optional)
            return dispatch_error_set(DISPATCH_ERR_VALUE,
                                      "argument '%s' defaults to None but its type is not optional",
                                      a->name);
        v->tag = DISPATCH_IV_NONE;
        return 0;
    }
    if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
        v->tag = DISPATCH_IV_BOOL;
        v->v.i = s[0] == 'T';
        return 0;
    }
    if (a->is_list) {
        if (parse_int_list(s, v) < 0)
            return dispatch_error_set(DISPATCH_ERR_VALUE, "bad default '%s' for list argument '%s'",
                                      s, a->name);
        return 0;
    }
    char *end;
    long long i = strtoll(s, &end, 10);
    if (*end == '\0') {
        v->tag = DISPATCH_IV_INT;
        v->v.i = i;
        return 0;
    }
    double d = strtod(s, &end);
    if (*end == '\0') {
        v->tag = DISPATCH_IV_DOUBLE;
        v->v.d = d;
        return 0;
    }
    return dispatch_error_set(DISPATCH_ERR_VALUE, "unsupported default '%s' for argument '%s'", s,
                              a->name);
}

/* Registration ---------------------------------------------------------------- */

static dispatch_operator *find_locked(const char *name) {
    int n = atomic_load(&nops);
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i]->name, name) == 0) return ops[i];
    return NULL;
}

const dispatch_operator *dispatch_find_op(const char *name) {
    pthread_mutex_lock(&registry_lock);
    dispatch_operator *op = find_locked(name);
    pthread_mutex_unlock(&registry_lock);
    if (!op) dispatch_error_set(DISPATCH_ERR_VALUE, "no operator named '%s'", name);
    return op;
}

int dispatch_num_ops(void) { return atomic_load(&nops); }

const dispatch_operator *dispatch_op_at(int i) {
    pthread_mutex_lock(&registry_lock);
    const dispatch_operator *op = i >= 0 && i < atomic_load(&nops) ? ops[i] : NULL;
    pthread_mutex_unlock(&registry_lock);
    return op;
}

static dispatch_operator *new_operator(const char *schema_text, const char *debug) {
    dispatch_operator *op = calloc(1, sizeof *op);
    if (!op) {
        dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory registering an operator");
        return NULL;
    }
    if (dispatch_schema_parse(schema_text, &op->schema) < 0) goto fail;
    const dispatch_schema *s = &op->schema;
    snprintf(op->name, sizeof op->name, "%s%s%s", s->name, s->overload[0] ? "." : "", s->overload);
    dispatch_utf8_cut(op->debug, sizeof op->debug,
                      snprintf(op->debug, sizeof op->debug, "%s", debug ? debug : "<unknown>"));
    for (int i = 0; i < s->nargs; i++) {
        const dispatch_schema_arg *a = &s->args[i];
        if (a->kind == DISPATCH_TYPE_STR) {
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "operator '%s': str arguments are not supported by the boxed "
                               "calling convention (argument '%s')", op->name, a->name);
            goto fail;
        }
        if (a->kind == DISPATCH_TYPE_TENSOR && a->is_list) {
            dispatch_error_set(DISPATCH_ERR_VALUE,
                               "operator '%s': Tensor[] arguments are not supported (argument '%s')",
                               op->name, a->name);
            goto fail;
        }
        if (a->kind == DISPATCH_TYPE_TENSOR) op->tensor_args[op->ntensor_args++] = i;
        if (a->has_default && parse_default_value(a, &op->defaults[i]) < 0) goto fail;
    }
    if (s->nrets > DISPATCH_MAX_RETS) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "operator '%s': at most %d returns", op->name,
                           DISPATCH_MAX_RETS);
        goto fail;
    }
    return op;
fail:
    free(op);
    return NULL;
}

const dispatch_operator *dispatch_def(const char *schema, const char *debug) {
    dispatch_operator *op = new_operator(schema, debug);
    if (!op) return NULL;
    pthread_mutex_lock(&registry_lock);
    dispatch_operator *prev = find_locked(op->name);
    if (prev) {
        dispatch_error_set(DISPATCH_ERR_RUNTIME,
                           "operator '%s' is already defined: first registered at %s, registered "
                           "again at %s",
                           op->name, prev->debug, op->debug);
        pthread_mutex_unlock(&registry_lock);
        free(op);
        return NULL;
    }
    if (atomic_load(&nops) == ops_capacity) {
        int cap = ops_capacity ? 2 * ops_capacity : 64;
        dispatch_operator **grown = realloc(ops, sizeof *grown * (size_t)cap);
        if (!grown) {
            pthread_mutex_unlock(&registry_lock);
            free(op);
            dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory registering an operator");
            return NULL;
        }
        ops = grown;
        ops_capacity = cap;
    }
    if (recompute_table(op) < 0) {
        pthread_mutex_unlock(&registry_lock);
        free(op);
        return NULL;
    }
    ops[atomic_load(&nops)] = op;
    atomic_fetch_add(&nops, 1);
    pthread_mutex_unlock(&registry_lock);
    return op;
}

static int set_registration(registration *r, const char *what, int key, dispatch_kernel_fn fn,
                            void *ctx, const char *debug) {
    int replaced = r->present;
    if (replaced)
        dispatch_warning_set("Overriding a previously registered kernel for the same operator and "
                             "the same dispatch key\n  operator: %s\n  dispatch key: %s\n  "
                             "previous kernel: %s\n       new kernel: %s",
                             what, dispatch_key_name(key), r->debug, debug ? debug : "<unknown>");
    r->fn = fn;
    r->ctx = ctx;
    r->present = 1;
    dispatch_utf8_cut(r->debug, sizeof r->debug,
                      snprintf(r->debug, sizeof r->debug, "%s", debug ? debug : "<unknown>"));
    return replaced;
}

static int check_key(int key) {
    if (key <= DISPATCH_KEY_UNDEFINED || key >= DISPATCH_NUM_KEYS)
        return dispatch_error_set(DISPATCH_ERR_VALUE, "invalid dispatch key %d", key);
    return 0;
}

int dispatch_impl(const char *name, int key, dispatch_kernel_fn fn, void *ctx, const char *debug) {
    if (check_key(key) < 0) return -1;
    if (!fn) return dispatch_error_set(DISPATCH_ERR_VALUE, "impl: NULL kernel for '%s'", name);
    pthread_mutex_lock(&registry_lock);
    dispatch_operator *op = find_locked(name);
    if (!op) {
        pthread_mutex_unlock(&registry_lock);
        return dispatch_error_set(DISPATCH_ERR_VALUE,
                                  "impl: no operator named '%s' (define it first)", name);
    }
    int replaced = set_registration(&op->kernels[key], op->name, key, fn, ctx, debug);
    int rc = recompute_table(op);
    pthread_mutex_unlock(&registry_lock);
    return rc < 0 ? -1 : replaced;
}

int dispatch_register_fallback(int key, dispatch_kernel_fn fn, void *ctx, const char *debug) {
    if (check_key(key) < 0) return -1;
    if (!fn) return dispatch_error_set(DISPATCH_ERR_VALUE, "fallback: NULL kernel");
    pthread_mutex_lock(&registry_lock);
    int replaced = set_registration(&fallbacks[key], "(backend fallback)", key, fn, ctx, debug);
    int rc = 0;
    for (int i = 0; i < atomic_load(&nops) && rc == 0; i++) rc = recompute_table(ops[i]);
    pthread_mutex_unlock(&registry_lock);
    return rc < 0 ? -1 : replaced;
}

const char *dispatch_op_name(const dispatch_operator *op) { return op->name; }
const dispatch_schema *dispatch_op_schema(const dispatch_operator *op) { return &op->schema; }
const char *dispatch_op_debug(const dispatch_operator *op) { return op->debug; }

dispatch_keyset dispatch_op_kernel_keys(const dispatch_operator *op) {
    dispatch_keyset ks = 0;
    pthread_mutex_lock(&registry_lock);
    for (int k = 1; k < DISPATCH_NUM_KEYS; k++)
        if (op->kernels[k].present) ks |= DISPATCH_KEYSET(k);
    pthread_mutex_unlock(&registry_lock);
    return ks;
}

int dispatch_op_kernel_at(const dispatch_operator *op, int key, dispatch_kernel_fn *fn, void **ctx) {
    if (check_key(key) < 0) return -1;
    pthread_mutex_lock(&registry_lock);
    int present = op->kernels[key].present;
    *fn = present ? op->kernels[key].fn : NULL;
    *ctx = present ? op->kernels[key].ctx : NULL;
    pthread_mutex_unlock(&registry_lock);
    return present;
}

char *dispatch_op_dump_table(const dispatch_operator *op) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    len += (size_t)snprintf(buf + len, cap - len, "name: %s\nschema defined at: %s\n", op->name,
                            op->debug);
    for (int k = 1; k < DISPATCH_NUM_KEYS; k++) {
        const registration *r = op->kernels[k].present ? &op->kernels[k]
                                : fallbacks[k].present ? &fallbacks[k]
                                                       : NULL;
        const char *kind = !r ? "missing"
                           : r->fn == dispatch_fallthrough_kernel
                               ? (op->kernels[k].present ? "fallthrough" : "fallthrough (fallback)")
                           : op->kernels[k].present ? "kernel"
                                                    : "fallback";
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s: %s%s%s%s\n", key_names[k], kind,
                                    r ? " [" : "", r ? r->debug : "", r ? "]" : "");
    }
    pthread_mutex_unlock(&registry_lock);
    return buf;
}

void dispatch_string_free(char *s) { free(s); }

int dispatch_op_default(const dispatch_operator *op, int i, dispatch_ivalue *out) {
    if (i < 0 || i >= op->schema.nargs || !op->schema.args[i].has_default)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s: argument %d has no default", op->name, i);
    *out = op->defaults[i];
    return 0;
}

/* Calls --------------------------------------------------------------------- */

void dispatch_ivalue_release(dispatch_ivalue *v, int n) {
    for (int i = 0; i < n; i++) {
        if (v[i].tag == DISPATCH_IV_TENSOR) dispatch_tensor_decref(v[i].v.t);
        v[i].tag = DISPATCH_IV_NONE;
    }
}

dispatch_keyset dispatch_compute_keyset(const dispatch_operator *op, const dispatch_ivalue *args) {
    dispatch_keyset ks = 0;
    for (int i = 0; i < op->ntensor_args; i++) {
        const dispatch_ivalue *v = &args[op->tensor_args[i]];
        if (v->tag == DISPATCH_IV_TENSOR) ks |= v->v.t->keyset;
    }
    return (ks | tls_included) & ~tls_excluded;
}

static int no_kernel_error(const dispatch_operator *op, int key) {
    char have[512] = "";
    size_t len = 0;
    dispatch_table *t = atomic_load(&op->table);
    for (int k = 1; k < DISPATCH_NUM_KEYS; k++) {
        const char *how = t->slots[k].source == 1   ? ""
                          : t->slots[k].source == 2 ? " (fallback)"
                          : !(t->non_fallthrough & DISPATCH_KEYSET(k)) ? " (fallthrough)"
                                                                      : NULL;
        if (how && len < sizeof have)
            len += (size_t)snprintf(have + len, sizeof have - len, "%s%s%s", len ? ", " : "",
                                    key_names[k], how);
    }
    if (key == DISPATCH_KEY_UNDEFINED)
        return dispatch_error_set(DISPATCH_ERR_NOT_IMPLEMENTED,
                                  "Could not run '%s' with no dispatch keys (no tensor argument "
                                  "and nothing in the thread's include set). '%s' has kernels "
                                  "for: [%s].",
                                  op->name, op->name, have);
    return dispatch_error_set(DISPATCH_ERR_NOT_IMPLEMENTED,
                              "Could not run '%s' with arguments from the '%s' backend. '%s' is "
                              "only available for these backends: [%s].",
                              op->name, key_names[key], op->name, have);
}

int dispatch_redispatch(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                        dispatch_ivalue *rets) {
    const dispatch_table *t = atomic_load_explicit(&op->table, memory_order_acquire);
    int key = dispatch_keyset_highest(ks & t->non_fallthrough);
    const kernel_slot *slot = &t->slots[key];
    if (!slot->fn) return no_kernel_error(op, key);
    return slot->fn(op, ks, args, rets, slot->ctx);
}

static int fill_defaults(const dispatch_operator *op, dispatch_ivalue *args, int nargs) {
    const dispatch_schema *s = &op->schema;
    if (nargs > s->nargs)
        return dispatch_error_set(DISPATCH_ERR_TYPE, "%s() takes %d arguments but %d were given",
                                  op->name, s->nargs, nargs);
    for (int i = nargs; i < s->nargs; i++) {
        if (!s->args[i].has_default)
            return dispatch_error_set(DISPATCH_ERR_TYPE,
                                      "%s() missing required argument '%s' (position %d)",
                                      op->name, s->args[i].name, i);
        args[i] = op->defaults[i];
    }
    return 0;
}

/* Note [Read-only tensors]: an argument the schema writes (Tensor(a!)) must
 * not live on a read-only storage; checked here, once for every operator
 * (built-in or defined from Python) and every backend. */
static int check_written_args(const dispatch_operator *op, const dispatch_ivalue *args) {
    for (int i = 0; i < op->ntensor_args; i++) {
        int a = op->tensor_args[i];
        if (op->schema.args[a].alias_write && args[a].tag == DISPATCH_IV_TENSOR &&
            dispatch_tensor_check_writable(args[a].v.t, op->name) < 0)
            return -1;
    }
    return 0;
}

/* Note [One device per call]: a CUDA tensor and a CPU tensor in one call is
 * an error naming both devices, as in PyTorch; a 0-dim CPU tensor (a wrapped
 * number) may join CUDA tensors, and copy_ moves data between devices. Only
 * looked at when a CUDA tensor is in the call. */
static int check_devices(const dispatch_operator *op, const dispatch_ivalue *args) {
    const char *cpu_arg = NULL, *cuda_arg = NULL;
    for (int i = 0; i < op->ntensor_args; i++) {
        int a = op->tensor_args[i];
        if (args[a].tag != DISPATCH_IV_TENSOR) continue;
        const dispatch_tensor *t = args[a].v.t;
        if (t->device == DISPATCH_DEVICE_CUDA && !cuda_arg) cuda_arg = op->schema.args[a].name;
        if (t->device == DISPATCH_DEVICE_CPU && t->ndim > 0 && !cpu_arg)
            cpu_arg = op->schema.args[a].name;
    }
    if (!cpu_arg || !cuda_arg || strcmp(op->name, "copy_") == 0) return 0;
    return dispatch_error_set(DISPATCH_ERR_RUNTIME,
                              "Expected all tensors to be on the same device, but found at least "
                              "two devices, cuda and cpu! ('%s': argument '%s' is on cuda, "
                              "argument '%s' on cpu)",
                              op->name, cuda_arg, cpu_arg);
}

int dispatch_call(const dispatch_operator *op, dispatch_ivalue *args, int nargs,
                  dispatch_ivalue *rets) {
    if (fill_defaults(op, args, nargs) < 0) return -1;
    if (check_written_args(op, args) < 0) return -1;
    dispatch_keyset ks = dispatch_compute_keyset(op, args);
    if ((ks & DISPATCH_KEYSET(DISPATCH_KEY_CUDA)) && check_devices(op, args) < 0) return -1;
    return dispatch_redispatch(op, ks, args, rets);
}

static dispatch_tensor *single_tensor_result(const dispatch_operator *op, int rc,
                                             dispatch_ivalue *rets) {
    if (rc < 0) return NULL;
    if (op->schema.nrets != 1 || rets[0].tag != DISPATCH_IV_TENSOR) {
        dispatch_ivalue_release(rets, op->schema.nrets);
        dispatch_error_set(DISPATCH_ERR_TYPE, "%s does not return one Tensor", op->name);
        return NULL;
    }
    return rets[0].v.t;
}

dispatch_tensor *dispatch_call_t(const dispatch_operator *op, dispatch_tensor *a) {
    dispatch_ivalue args[DISPATCH_SCHEMA_MAX_ARGS], rets[DISPATCH_MAX_RETS];
    args[0].tag = DISPATCH_IV_TENSOR;
    args[0].v.t = a;
    return single_tensor_result(op, dispatch_call(op, args, 1, rets), rets);
}

dispatch_tensor *dispatch_call_tt(const dispatch_operator *op, dispatch_tensor *a,
                                  dispatch_tensor *b) {
    dispatch_ivalue args[DISPATCH_SCHEMA_MAX_ARGS], rets[DISPATCH_MAX_RETS];
    args[0].tag = DISPATCH_IV_TENSOR;
    args[0].v.t = a;
    args[1].tag = DISPATCH_IV_TENSOR;
    args[1].v.t = b;
    return single_tensor_result(op, dispatch_call(op, args, 2, rets), rets);
}

dispatch_tensor *dispatch_call_tensors_scalar(const dispatch_operator *op,
                                              dispatch_tensor *const *ts, int nt, int si,
                                              double d, int64_t i, int kind) {
    dispatch_ivalue args[DISPATCH_SCHEMA_MAX_ARGS], rets[DISPATCH_MAX_RETS];
    if (nt < 0 || si < nt || si >= DISPATCH_SCHEMA_MAX_ARGS) {
        dispatch_error_set(DISPATCH_ERR_VALUE, "%s: bad fast-call layout (%d tensors, scalar "
                           "at %d)", op->name, nt, si);
        return NULL;
    }
    for (int k = 0; k < nt; k++) {
        args[k].tag = DISPATCH_IV_TENSOR;
        args[k].v.t = ts[k];
    }
    for (int k = nt; k < si; k++)
        if (dispatch_op_default(op, k, &args[k]) < 0) return NULL;
    args[si].tag = kind == DISPATCH_NUMBER_FLOAT  ? DISPATCH_IV_DOUBLE
                   : kind == DISPATCH_NUMBER_BOOL ? DISPATCH_IV_BOOL
                                                  : DISPATCH_IV_INT;
    if (kind == DISPATCH_NUMBER_FLOAT) args[si].v.d = d;
    else args[si].v.i = kind == DISPATCH_NUMBER_BOOL ? i != 0 : i;
    return single_tensor_result(op, dispatch_call(op, args, si + 1, rets), rets);
}

dispatch_tensor *dispatch_call_ts(const dispatch_operator *op, dispatch_tensor *a, double d,
                                  int64_t i, int kind, int reverse) {
    dispatch_tensor *w = kind == DISPATCH_NUMBER_FLOAT  ? dispatch_tensor_wrap_double(d)
                         : kind == DISPATCH_NUMBER_BOOL ? dispatch_tensor_wrap_bool(i != 0)
                                     : dispatch_tensor_wrap_int(i);
    if (!w) return NULL;
    dispatch_tensor *r = reverse ? dispatch_call_tt(op, w, a) : dispatch_call_tt(op, a, w);
    dispatch_tensor_decref(w);
    return r;
}

/* The tracer ---------------------------------------------------------------- */

static _Thread_local const char **trace_log;
static _Thread_local int trace_size, trace_cap;

static int tracer_kernel(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                         dispatch_ivalue *rets, void *ctx) {
    (void)ctx;
    if (trace_size == trace_cap) {
        int cap = trace_cap ? 2 * trace_cap : 64;
        const char **grown = realloc(trace_log, sizeof *grown * (size_t)cap);
        if (!grown) return dispatch_error_set(DISPATCH_ERR_MEMORY, "out of memory in the tracer");
        trace_log = grown;
        trace_cap = cap;
    }
    trace_log[trace_size++] = op->name; /* operators are never freed */
    return dispatch_redispatch(op, ks & DISPATCH_KEYSET_BELOW(DISPATCH_KEY_TRACER), args, rets);
}

int dispatch_tracer_log_size(void) { return trace_size; }
const char *dispatch_tracer_log_at(int i) { return i >= 0 && i < trace_size ? trace_log[i] : NULL; }
void dispatch_tracer_log_clear(void) {
    free(trace_log);
    trace_log = NULL;
    trace_size = trace_cap = 0;
}

/* Built-ins ------------------------------------------------------------------ */

int dispatch_register_generated_ops(void); /* generated from operators.toml */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;
static char init_error[DISPATCH_ERROR_MAX];
static int init_error_kind;

static void init_builtins(void) {
    if (dispatch_register_fallback(DISPATCH_KEY_TRACER, tracer_kernel, NULL,
                                   "sources/dispatcher/dispatcher.c (tracer_kernel)") < 0 ||
        dispatch_register_fallback(DISPATCH_KEY_PYTHON, dispatch_fallthrough_kernel, NULL,
                                   "sources/dispatcher/dispatcher.c (Python fallthrough)") < 0 ||
        dispatch_register_generated_ops() < 0) {
        init_status = -1;
        init_error_kind = dispatch_error_kind_get();
        snprintf(init_error, sizeof init_error, "%s", dispatch_error_message());
    }
}

int dispatch_init(void) {
    pthread_once(&init_once, init_builtins);
    if (init_status < 0)
        return dispatch_error_set(init_error_kind, "dispatch_init failed: %s", init_error);
    return 0;
}
