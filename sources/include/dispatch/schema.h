/*
 * Operator schemas in PyTorch's grammar:
 *
 *   name[.overload]( arg, ..., [*, kwarg, ...] ) -> ret | (ret, ...) | ()
 *   arg  := type [name] [= default]
 *   type := base [ '(' alias ['!'] ')' ] [ '[' [N] ']' ] [ '?' ]
 *   base := Tensor | Scalar | int | float | bool | str | ScalarType
 *
 * e.g. "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
 *      "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)".
 */
#ifndef DISPATCH_SCHEMA_H_
#define DISPATCH_SCHEMA_H_

#include <stdint.h>

#define DISPATCH_SCHEMA_MAX_ARGS 16
#define DISPATCH_SCHEMA_MAX_NAME 64

typedef enum dispatch_type_kind {
    DISPATCH_TYPE_TENSOR = 0,
    DISPATCH_TYPE_SCALAR = 1,
    DISPATCH_TYPE_INT = 2,
    DISPATCH_TYPE_FLOAT = 3,
    DISPATCH_TYPE_BOOL = 4,
    DISPATCH_TYPE_STR = 5,
    DISPATCH_TYPE_SCALARTYPE = 6,
} dispatch_type_kind;

typedef struct dispatch_schema_arg {
    char name[DISPATCH_SCHEMA_MAX_NAME];
    int32_t kind;          /* dispatch_type_kind */
    int32_t is_list;       /* T[] or T[N] */
    int32_t list_size;     /* N of T[N], 0 when absent */
    int32_t is_optional;   /* T? */
    int32_t kwarg_only;    /* after '*' */
    int32_t alias_set;     /* 'a' of Tensor(a!), 0 when none */
    int32_t alias_write;   /* the '!' */
    int32_t has_default;
    char default_text[DISPATCH_SCHEMA_MAX_NAME];
} dispatch_schema_arg;

typedef struct dispatch_schema {
    char name[DISPATCH_SCHEMA_MAX_NAME];     /* "add" */
    char overload[DISPATCH_SCHEMA_MAX_NAME]; /* "Tensor", "" for the default */
    int32_t nargs;
    int32_t nrets;
    dispatch_schema_arg args[DISPATCH_SCHEMA_MAX_ARGS];
    dispatch_schema_arg rets[DISPATCH_SCHEMA_MAX_ARGS];
} dispatch_schema;

/* Parse text into out. Returns 0, or -1 with a ValueError that quotes the
 * schema and the column where parsing stopped. */
int dispatch_schema_parse(const char *text, dispatch_schema *out);
/* Print back in canonical form into buf (truncated to size); returns the full length. */
int dispatch_schema_format(const dispatch_schema *s, char *buf, int size);

#endif /* DISPATCH_SCHEMA_H_ */
