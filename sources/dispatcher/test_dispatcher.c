/* The dispatcher's C tests: key sets, table computation, fallthrough, TLS
 * include/exclude, redispatch, errors, and the built-in operators. Exit 0
 * when every check passes; each failure prints its line. */
#include <stdio.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"

static int failures;
#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

/* Kernels that record which key ran, then (for wrappers) redispatch. */
static char ran[256];
static void note(const char *what) {
    strncat(ran, what, sizeof ran - strlen(ran) - 1);
    strncat(ran, " ", sizeof ran - strlen(ran) - 1);
}

static int ret_self(dispatch_ivalue *args, dispatch_ivalue *rets) {
    dispatch_tensor_incref(args[0].v.t);
    rets[0].tag = DISPATCH_IV_TENSOR;
    rets[0].v.t = args[0].v.t;
    return 0;
}

static int cpu_kernel(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                      dispatch_ivalue *rets, void *ctx) {
    (void)op, (void)ks, (void)ctx;
    note("cpu");
    return ret_self(args, rets);
}

static int meta_kernel(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                       dispatch_ivalue *rets, void *ctx) {
    (void)op, (void)ks, (void)ctx;
    note("meta");
    return ret_self(args, rets);
}

static int wrapper_kernel(const dispatch_operator *op, dispatch_keyset ks, dispatch_ivalue *args,
                          dispatch_ivalue *rets, void *ctx) {
    (void)ctx;
    note("python");
    return dispatch_redispatch(op, ks & DISPATCH_KEYSET_BELOW(DISPATCH_KEY_PYTHON), args, rets);
}

static void test_keysets(void) {
    CHECK(dispatch_keyset_highest(0) == DISPATCH_KEY_UNDEFINED);
    CHECK(dispatch_keyset_highest(DISPATCH_KEYSET(DISPATCH_KEY_CPU)) == DISPATCH_KEY_CPU);
    dispatch_keyset ks = DISPATCH_KEYSET(DISPATCH_KEY_CPU) | DISPATCH_KEYSET(DISPATCH_KEY_TRACER) |
                         DISPATCH_KEYSET(DISPATCH_KEY_META);
    CHECK(dispatch_keyset_highest(ks) == DISPATCH_KEY_TRACER);
    CHECK(dispatch_keyset_highest(ks & DISPATCH_KEYSET_BELOW(DISPATCH_KEY_TRACER)) ==
          DISPATCH_KEY_META);
    CHECK(dispatch_keyset_highest((dispatch_keyset)1 << 63) == 63);
    CHECK(strcmp(dispatch_key_name(DISPATCH_KEY_META), "Meta") == 0);
    CHECK(dispatch_key_from_name("Tracer") == DISPATCH_KEY_TRACER);
    CHECK(dispatch_key_from_name("Nope") == -1);
    CHECK(dispatch_key_for_device(DISPATCH_DEVICE_META) == DISPATCH_KEY_META);
}

static void test_schema(void) {
    dispatch_schema s;
    CHECK(dispatch_schema_parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                                &s) == 0);
    CHECK(strcmp(s.name, "add") == 0 && strcmp(s.overload, "Tensor") == 0);
    CHECK(s.nargs == 3 && s.nrets == 1);
    CHECK(s.args[2].kwarg_only && s.args[2].has_default && strcmp(s.args[2].default_text, "1") == 0);
    CHECK(dispatch_schema_parse("copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)", &s) == 0);
    CHECK(s.args[0].alias_set == 'a' && s.args[0].alias_write && s.rets[0].alias_write);
    CHECK(dispatch_schema_parse("f(int[2]? dims=[0, 1], float? x=None) -> (Tensor a, Tensor b)",
                                &s) == 0);
    CHECK(s.args[0].is_list && s.args[0].list_size == 2 && s.args[0].is_optional);
    CHECK(s.nrets == 2 && strcmp(s.rets[1].name, "b") == 0);
    char buf[512];
    dispatch_schema_format(&s, buf, sizeof buf);
    CHECK(strcmp(buf, "f(int[2]? dims=[0, 1], float? x=None) -> (Tensor a, Tensor b)") == 0);
    CHECK(dispatch_schema_parse("g(Tensor x) -> ()", &s) == 0 && s.nrets == 0);
    CHECK(dispatch_schema_parse("bad(Tensor x", &s) < 0);
    CHECK(dispatch_error_kind_get() == DISPATCH_ERR_VALUE);
    CHECK(strstr(dispatch_error_message(), "column") != NULL);
    CHECK(dispatch_schema_parse("bad(Blob x) -> Tensor", &s) < 0);
    CHECK(strstr(dispatch_error_message(), "unknown type") != NULL);
}

static void test_registry_and_dispatch(void) {
    CHECK(dispatch_def("t_op(Tensor self) -> Tensor", "test.c:1") != NULL);
    const dispatch_operator *dup = dispatch_def("t_op(Tensor self) -> Tensor", "test.c:2");
    CHECK(dup == NULL);
    CHECK(dispatch_error_kind_get() == DISPATCH_ERR_RUNTIME);
    CHECK(strstr(dispatch_error_message(), "test.c:1") && strstr(dispatch_error_message(), "test.c:2"));
    const dispatch_operator *op = dispatch_find_op("t_op");
    CHECK(op != NULL);
    CHECK(dispatch_impl("t_op", DISPATCH_KEY_CPU, cpu_kernel, NULL, "test.c:3") == 0);

    int64_t one = 1;
    dispatch_tensor *cpu = dispatch_tensor_empty(1, &one, DISPATCH_FLOAT32, DISPATCH_DEVICE_CPU);
    dispatch_tensor *meta = dispatch_tensor_empty(1, &one, DISPATCH_FLOAT32, DISPATCH_DEVICE_META);
    dispatch_ivalue args[DISPATCH_MAX_ARGS], rets[DISPATCH_MAX_RETS];

    /* no kernel for Meta: NotImplementedError naming op, key, and the keys that have kernels */
    args[0].tag = DISPATCH_IV_TENSOR;
    args[0].v.t = meta;
    CHECK(dispatch_call(op, args, 1, rets) < 0);
    CHECK(dispatch_error_kind_get() == DISPATCH_ERR_NOT_IMPLEMENTED);
    const char *msg = dispatch_error_message();
    CHECK(strstr(msg, "'t_op'") && strstr(msg, "'Meta' backend") && strstr(msg, "CPU"));

    /* the table is recomputed at registration: Meta works right after impl */
    CHECK(dispatch_impl("t_op", DISPATCH_KEY_META, meta_kernel, NULL, "test.c:4") == 0);
    ran[0] = 0;
    CHECK(dispatch_call(op, args, 1, rets) == 0);
    dispatch_ivalue_release(rets, 1);
    CHECK(strcmp(ran, "meta ") == 0);

    /* duplicate impl: replaces, returns 1 and leaves a warning naming both sites */
    dispatch_warning_clear();
    CHECK(dispatch_impl("t_op", DISPATCH_KEY_META, meta_kernel, NULL, "test.c:5") == 1);
    CHECK(dispatch_warning_message() && strstr(dispatch_warning_message(), "test.c:4") &&
          strstr(dispatch_warning_message(), "test.c:5"));

    /* TLS exclude: with Meta excluded a meta tensor has no key left that runs */
    dispatch_tls_set_excluded(DISPATCH_KEYSET(DISPATCH_KEY_META));
    CHECK(dispatch_call(op, args, 1, rets) < 0);
    dispatch_tls_set_excluded(0);

    /* a wrapper key via TLS include redispatches below itself */
    CHECK(dispatch_impl("t_op", DISPATCH_KEY_PYTHON, wrapper_kernel, NULL, "test.c:6") == 0);
    args[0].v.t = cpu;
    ran[0] = 0;
    dispatch_tls_set_included(DISPATCH_KEYSET(DISPATCH_KEY_PYTHON));
    CHECK(dispatch_call(op, args, 1, rets) == 0);
    dispatch_ivalue_release(rets, 1);
    CHECK(strcmp(ran, "python cpu ") == 0);

    /* fallthrough: the key is skipped without its kernel running */
    CHECK(dispatch_impl("t_op", DISPATCH_KEY_PYTHON, dispatch_fallthrough_kernel, NULL, "test.c:7") == 1);
    dispatch_warning_clear();
    ran[0] = 0;
    CHECK(dispatch_call(op, args, 1, rets) == 0);
    dispatch_ivalue_release(rets, 1);
    CHECK(strcmp(ran, "cpu ") == 0);
    dispatch_tls_set_included(0);

    /* the tracer (a backend fallback) records and redispatches */
    dispatch_tracer_log_clear();
    dispatch_tls_set_included(DISPATCH_KEYSET(DISPATCH_KEY_TRACER));
    ran[0] = 0;
    CHECK(dispatch_call(op, args, 1, rets) == 0);
    dispatch_ivalue_release(rets, 1);
    dispatch_tls_set_included(0);
    CHECK(dispatch_tracer_log_size() == 1 && strcmp(dispatch_tracer_log_at(0), "t_op") == 0);
    CHECK(strcmp(ran, "cpu ") == 0);
    dispatch_tracer_log_clear();

    /* dump_table names each key's kernel and its registration site */
    char *dump = dispatch_op_dump_table(op);
    CHECK(dump && strstr(dump, "CPU: kernel [test.c:3]") && strstr(dump, "CUDA: missing"));
    dispatch_string_free(dump);

    /* missing required argument */
    CHECK(dispatch_call(op, args, 0, rets) < 0 && dispatch_error_kind_get() == DISPATCH_ERR_TYPE);

    dispatch_tensor_decref(cpu);
    dispatch_tensor_decref(meta);
}

static void test_builtin_add(void) {
    const dispatch_operator *add = dispatch_find_op("add.Tensor");
    CHECK(add != NULL);
    if (!add) return;
    int64_t n = 4;
    dispatch_tensor *a = dispatch_tensor_empty(1, &n, DISPATCH_INT32, DISPATCH_DEVICE_CPU);
    for (int i = 0; i < 4; i++) ((int32_t *)a->data)[i] = i;
    dispatch_tensor *r = dispatch_call_ts(add, a, 0.5, 0, 1, 0);
    CHECK(r && r->dtype == DISPATCH_FLOAT32 && ((float *)r->data)[3] == 3.5f);
    dispatch_tensor_decref(r);
    r = dispatch_call_tt(add, a, a);
    CHECK(r && r->dtype == DISPATCH_INT32 && ((int32_t *)r->data)[2] == 4);
    dispatch_tensor_decref(r);
    /* tensors, then one Scalar past a defaulted argument: add(a, a, alpha=3) */
    dispatch_tensor *aa[2] = {a, a};
    r = dispatch_call_tensors_scalar(add, aa, 2, 2, 0, 3, DISPATCH_NUMBER_INT);
    CHECK(r && r->dtype == DISPATCH_INT32 && ((int32_t *)r->data)[3] == 12);
    if (r) dispatch_tensor_decref(r);
    const dispatch_operator *addcmul = dispatch_find_op("addcmul");
    r = addcmul ? dispatch_call_tensors_scalar(addcmul, (dispatch_tensor *[]){a, a, a}, 3, 3, 0, 2,
                                               DISPATCH_NUMBER_INT)
                : NULL;
    CHECK(r && r->dtype == DISPATCH_INT32 && ((int32_t *)r->data)[2] == 10); /* 2 + 2 * (2 * 2) */
    if (r) dispatch_tensor_decref(r);
    CHECK(dispatch_call_tensors_scalar(add, aa, 2, 1, 0, 1, DISPATCH_NUMBER_INT) == NULL &&
          dispatch_error_kind_get() == DISPATCH_ERR_VALUE); /* the scalar among the tensors */
    dispatch_tensor_decref(a);
    double ns = dispatch_bench_noop_ns(1000);
    CHECK(ns > 0);
}

int main(void) {
    if (dispatch_init() < 0) {
        fprintf(stderr, "dispatch_init: %s\n", dispatch_error_message());
        return 1;
    }
    long storages = dispatch_storage_live_count();
    test_keysets();
    test_schema();
    test_registry_and_dispatch();
    test_builtin_add();
    CHECK(dispatch_storage_live_count() == storages);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_dispatcher: all checks passed\n");
    return failures ? 1 : 0;
}
