/*
 * The operator registry and dispatcher, in the manner of PyTorch's c10.
 *
 * An operator is declared once by schema (schema.h) and gets kernels per
 * dispatch key. A call computes the key set of its arguments (the union of
 * the tensors' keys, plus this thread's include set, minus its exclude set,
 * minus the operator's fallthrough keys), and runs the kernel of the highest
 * key. That kernel may redispatch below itself. Each operator's table (key ->
 * kernel) is computed when kernels or fallbacks are registered, never during
 * a call. See Note [Dispatch table] in sources/dispatcher/dispatcher.c.
 */
#ifndef DISPATCH_DISPATCHER_H_
#define DISPATCH_DISPATCHER_H_

#include <stdint.h>

#include "dispatch/schema.h"
#include "dispatch/tensor.h"

/* Keys, in priority order: a higher value wins. Bit k of a key set is key k.
 * See Note [Key order]. */
/* X(NAME, name) per key, in priority order (the enum below, dispatch_key_name;
 * Python reads them from C). Backends first (CPU, CUDA, Meta: device + 1),
 * then the functionality keys above every backend: Python (kernels written
 * in Python; entered via the TLS include set) and Tracer (a wrapper: records
 * the call, redispatches below itself). */
#define DISPATCH_FORALL_KEYS(X)                                                          \
    X(UNDEFINED, "Undefined")                                                            \
    X(CPU, "CPU")                                                                        \
    X(CUDA, "CUDA")                                                                      \
    X(META, "Meta")                                                                      \
    X(PYTHON, "Python")                                                                  \
    X(TRACER, "Tracer")

typedef enum dispatch_key {
#define DISPATCH_KEY_ENUM_(NAME, name) DISPATCH_KEY_##NAME,
    DISPATCH_FORALL_KEYS(DISPATCH_KEY_ENUM_)
#undef DISPATCH_KEY_ENUM_
    DISPATCH_NUM_KEYS,
} dispatch_key;

typedef uint64_t dispatch_keyset;

#define DISPATCH_KEYSET(k) ((dispatch_keyset)1 << (k))
/* Keys strictly below k. */
#define DISPATCH_KEYSET_BELOW(k) (DISPATCH_KEYSET(k) - 1)
#define DISPATCH_KEYSET_BACKENDS \
    (DISPATCH_KEYSET(DISPATCH_KEY_CPU) | DISPATCH_KEYSET(DISPATCH_KEY_CUDA) | \
     DISPATCH_KEYSET(DISPATCH_KEY_META))

/* The highest key of a set (count-leading-zeros), UNDEFINED for the empty set. */
static inline int dispatch_keyset_highest(dispatch_keyset ks) {
    return ks ? 63 - __builtin_clzll(ks) : DISPATCH_KEY_UNDEFINED;
}

const char *dispatch_key_name(int key); /* "CPU", ...; "?" when out of range */
int dispatch_key_from_name(const char *name); /* -1 when unknown */
int dispatch_key_for_device(int device);

/* Boxed values ----------------------------------------------------------- */
typedef enum dispatch_ivalue_tag {
    DISPATCH_IV_NONE = 0,
    DISPATCH_IV_TENSOR = 1,
    DISPATCH_IV_INT = 2,
    DISPATCH_IV_DOUBLE = 3,
    DISPATCH_IV_BOOL = 4,
    DISPATCH_IV_INTLIST = 5,
} dispatch_ivalue_tag;

typedef struct dispatch_ivalue {
    int32_t tag;
    int32_t n; /* INTLIST length */
    union {
        dispatch_tensor *t; /* borrowed in args, a new reference in rets */
        int64_t i;          /* INT, BOOL (0/1), and ScalarType (a dtype) */
        double d;
    } v;
    int64_t list[DISPATCH_MAX_DIMS];
} dispatch_ivalue;

#define DISPATCH_MAX_ARGS 16
#define DISPATCH_MAX_RETS 4

typedef struct dispatch_operator dispatch_operator;

/*
 * A boxed kernel. args are the operator's arguments in schema order, defaults
 * filled in (borrowed); the kernel writes the schema's returns into rets (new
 * references) and returns 0, or returns -1 with the error set. ks is the key
 * set the call was dispatched with: a wrapper kernel redispatches with
 * ks & DISPATCH_KEYSET_BELOW(its key).
 */
typedef int (*dispatch_kernel_fn)(const dispatch_operator *op, dispatch_keyset ks,
                                  dispatch_ivalue *args, dispatch_ivalue *rets, void *ctx);

/* The fallthrough kernel: a key holding it is skipped (the next key runs). */
int dispatch_fallthrough_kernel(const dispatch_operator *op, dispatch_keyset ks,
                                dispatch_ivalue *args, dispatch_ivalue *rets, void *ctx);

/* Registration (thread-safe) ---------------------------------------------- */
/* Declare an operator. Returns the handle, or NULL with a RuntimeError naming
 * both registration sites when the name was already defined (or a ValueError
 * for a bad schema). debug: "file:line" of the caller. */
const dispatch_operator *dispatch_def(const char *schema, const char *debug);
/* Register a kernel for (operator, key). Returns 0, or 1 when it replaced an
 * earlier kernel for the same key (a warning naming both sites is set with
 * dispatch_warning_set), or -1 with the error set. */
int dispatch_impl(const char *name, int key, dispatch_kernel_fn fn, void *ctx, const char *debug);
/* A kernel for every operator at one key (PyTorch's backend fallback); same return codes. */
int dispatch_register_fallback(int key, dispatch_kernel_fn fn, void *ctx, const char *debug);
/* Find an operator by "name.overload" ("add.Tensor", or "neg" for the default overload). */
const dispatch_operator *dispatch_find_op(const char *name);
/* Operators registered so far (stable order: registration order). */
int dispatch_num_ops(void);
const dispatch_operator *dispatch_op_at(int i);

const char *dispatch_op_name(const dispatch_operator *op); /* "add.Tensor" */
const dispatch_schema *dispatch_op_schema(const dispatch_operator *op);
const char *dispatch_op_debug(const dispatch_operator *op);
/* One line per key: "CPU: kernel [debug]", "Meta: fallback [debug]", "CUDA: missing". Caller frees with free(). */
char *dispatch_op_dump_table(const dispatch_operator *op);
void dispatch_string_free(char *s);
/* The key sets that have a kernel of their own / are fallthrough (for tests and errors). */
dispatch_keyset dispatch_op_kernel_keys(const dispatch_operator *op);
/* The kernel registered for op at key: 1 (with *fn, *ctx), 0 when none, -1 bad key. */
int dispatch_op_kernel_at(const dispatch_operator *op, int key, dispatch_kernel_fn *fn, void **ctx);
/* Register the built-in elementwise kernels (those registered for CPU whose
 * loops a device runs: arithmetic, comparisons, unary math, addcmul, where,
 * in-place forms, fill_, cast, the reductions, and copy_, which also moves
 * data between the host and the device through the device's registered byte
 * copy) for a device's key too: the same host code (promotion, broadcasting,
 * allocation, checks), the device's loops. Returns the number registered, or -1. */
int dispatch_kernels_register_device(int key);
/* copy_ (dst = src, cast and broadcast) with tensors on any devices: on one
 * device its COPY loop or one byte copy, between the host and a device
 * through the device's byte copy (Note [Copies that touch a device] in
 * sources/dispatcher/device_copy.c). */
int dispatch_kernels_copy_(dispatch_tensor *dst, dispatch_tensor *src);
/* clone, contiguous (t itself, a new reference, when it is) and to (t itself
 * when of dtype already) through dispatch_kernels_copy_: on the host split
 * across the pool's threads (Note [Copies across threads] in
 * sources/dispatcher/host_copy.c), core's functions of the same names on one. */
dispatch_tensor *dispatch_kernels_clone(dispatch_tensor *t);
dispatch_tensor *dispatch_kernels_contiguous(dispatch_tensor *t);
dispatch_tensor *dispatch_kernels_to_dtype(dispatch_tensor *t, int dtype);

/* Copy the parsed default of argument i into out; -1 (TypeError) when it has none. */
int dispatch_op_default(const dispatch_operator *op, int i, dispatch_ivalue *out);

/* Calls -------------------------------------------------------------------- */
/* Dispatch a call: args in schema order, nargs of them given (the rest take
 * their defaults). Returns 0 with the returns in rets (the caller owns them;
 * see dispatch_ivalue_release), or -1 with the error set. */
int dispatch_call(const dispatch_operator *op, dispatch_ivalue *args, int nargs,
                  dispatch_ivalue *rets);
/* Dispatch with an explicit key set (no TLS applied): how a kernel calls the
 * kernel below itself. */
int dispatch_redispatch(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                        dispatch_ivalue *rets);
/* The key set a call with these args dispatches on (TLS applied). */
dispatch_keyset dispatch_compute_keyset(const dispatch_operator *op, const dispatch_ivalue *args);

/* Fast entries for the common signatures: the tensors are borrowed, other
 * arguments take their defaults; the result is a new reference or NULL. */
dispatch_tensor *dispatch_call_t(const dispatch_operator *op, dispatch_tensor *a);
dispatch_tensor *dispatch_call_tt(const dispatch_operator *op, dispatch_tensor *a,
                                  dispatch_tensor *b);
/* The kind of a Python number handed to the fast calls below. */
typedef enum dispatch_number_kind {
    DISPATCH_NUMBER_INT = 0,   /* in i */
    DISPATCH_NUMBER_FLOAT = 1, /* in d */
    DISPATCH_NUMBER_BOOL = 2,  /* in i, nonzero is true */
} dispatch_number_kind;

/* nt tensors as the first arguments and one Scalar at argument si >= nt
 * (kind: a dispatch_number_kind); the arguments between take their
 * defaults, as do those after. E.g. addcmul(a, b, c, value=0.5). */
dispatch_tensor *dispatch_call_tensors_scalar(const dispatch_operator *op,
                                              dispatch_tensor *const *ts, int nt, int si,
                                              double d, int64_t i, int kind);
/* Tensor op Python number (kind: a dispatch_number_kind); reverse swaps the operands. */
dispatch_tensor *dispatch_call_ts(const dispatch_operator *op, dispatch_tensor *a, double d,
                                  int64_t i, int kind, int reverse);

/* Release what rets hold (tensor references); leaves NONE behind. */
void dispatch_ivalue_release(dispatch_ivalue *v, int n);

/* Thread-local include/exclude sets ---------------------------------------- */
dispatch_keyset dispatch_tls_included(void);
dispatch_keyset dispatch_tls_excluded(void);
void dispatch_tls_set_included(dispatch_keyset ks);
void dispatch_tls_set_excluded(dispatch_keyset ks);

/* Built-ins ---------------------------------------------------------------- */
/* Register the operators of sources/dispatcher/operators.toml and their CPU/Meta
 * kernels, and the Tracer fallback. Idempotent; returns 0 or -1. */
int dispatch_init(void);

/* The tracer (DISPATCH_KEY_TRACER's backend fallback): while Tracer is in the
 * TLS include set, every call appends the operator's name to this thread's
 * log, then redispatches below Tracer. */
int dispatch_tracer_log_size(void);
const char *dispatch_tracer_log_at(int i);
void dispatch_tracer_log_clear(void);

/* The C-level cost of one dispatched call of a no-op operator
 * ("_bench::noop(Tensor self) -> ()", defined on first use with a CPU kernel
 * that does nothing), in nanoseconds, averaged over iterations calls. -1 on error. */
double dispatch_bench_noop_ns(int64_t iterations);
double dispatch_bench_add_ns(int64_t n, int64_t iterations);

#endif /* DISPATCH_DISPATCHER_H_ */
