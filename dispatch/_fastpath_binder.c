#include "_fastpath.h"

/*
 * Note [Binding in C]
 * ~~~~~~~~~~~~~~~~~~~
 * The schema binder: the one place that decides how a Python call's
 * arguments fit an operator's schema (dispatch.ops calls it for every
 * packet and overload; nothing in Python restates the rules).
 *
 * bind_call(plans, args, kwargs) tries the overloads in plans in order (the
 * table's resolution order) and runs the first that binds, returning its
 * result; NO_MATCH when none binds (the caller words the TypeError).
 * resolve(plans, args, kwargs) binds the same way and runs nothing: the
 * index of the overload bind_call would run, or -1 (dispatch.ops picks its
 * shortcuts with it). Each plan is (op_address, spec, names, nrets); spec
 * has one byte per argument: kind (K_TENSOR ... K_SCALARTYPE below, the
 * dispatch_type_kind of schema.h) | is_list << 3 | optional << 4 |
 * kwarg_only << 5 | has_default << 6; names is the tuple of argument names.
 *
 * The rules, per overload:
 * - more positional arguments than non-kwarg-only ones, or a keyword naming
 *   no argument: no match, before anything is converted;
 * - positional arguments, then keywords in call order, are converted (a
 *   keyword naming a positional one already given: no match); an argument
 *   left out takes its default, and one without a default is no match;
 * - a value fits: None an optional argument; for int[]: an int (not a bool)
 *   or a tuple/list of ints (not bools), at most DISPATCH_MAX_DIMS
 *   (TypeError beyond); Tensor: a Tensor, or a number (wrapped into a 0-dim
 *   tensor for the call); Scalar: a bool, int or float (kept as such); int:
 *   an int, not a bool; float: an int or a float, not a bool; bool: a bool;
 *   ScalarType: a dispatch.dtype. "int", "float" and "bool" include NumPy's
 *   integer, floating and bool_ scalars once NumPy is imported (as
 *   dispatch/_values.py's _is_int and _is_bool say), and subclasses;
 * - an int beyond int64 raises OverflowError ("int too big to convert"), a
 *   float conversion its own OverflowError, at the first value that needs it:
 *   later overloads are not tried.
 */
enum { K_TENSOR, K_SCALAR, K_INT, K_FLOAT, K_BOOL, K_STR, K_SCALARTYPE };
enum { BIND_OK, BIND_NO_MATCH, BIND_ERROR };

/* One overload's bound arguments, and the 0-dim tensors made for numbers
 * given as Tensor arguments (owned, released after the call). */
typedef struct {
    dispatch_ivalue iv[DISPATCH_MAX_ARGS];
    dispatch_tensor *made[DISPATCH_MAX_ARGS];
    int nmade, last;
} bound;

static void bound_release(bound *b) {
    for (int k = 0; k < b->nmade; k++) S.decref(b->made[k]);
    b->nmade = 0;
}

/* A number as a 0-dim tensor argument (dispatch_tensor_wrap_*). */
static int wrap_number(PyObject *v, int f, dispatch_ivalue *iv, bound *b) {
    int64_t i;
    double d;
    dispatch_tensor *t;
    if (f & V_BOOL) {
        if (to_bool(v, &i) < 0) return BIND_ERROR;
        t = S.wrap_bool((int)i);
    } else if (f & V_INT) {
        if (to_int64(v, &i) < 0) return BIND_ERROR;
        t = S.wrap_int(i);
    } else {
        if (to_double(v, &d) < 0) return BIND_ERROR;
        t = S.wrap_double(d);
    }
    if (!t) {
        PyObject *res = wrap(NULL); /* raises the runtime's error */
        Py_XDECREF(res);
        return BIND_ERROR;
    }
    b->made[b->nmade++] = t;
    iv->tag = DISPATCH_IV_TENSOR, iv->v.t = t;
    return BIND_OK;
}

/* An int[] argument: an int, or a tuple/list of ints. */
static int bind_int_list(PyObject *v, int f, PyObject *name, dispatch_ivalue *iv) {
    if ((f & V_INT) && !PyBool_Check(v)) {
        iv->tag = DISPATCH_IV_INTLIST, iv->n = 1;
        return to_int64(v, &iv->list[0]) < 0 ? BIND_ERROR : BIND_OK;
    }
    if (!(f & V_SEQ)) return BIND_NO_MATCH;
    /* a tuple of its items: converting one may run Python code (__int__) */
    PyObject *seq = PyTuple_CheckExact(v) ? Py_NewRef(v) : PySequence_Tuple(v);
    if (!seq) return BIND_ERROR;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    int rc = BIND_OK;
    for (Py_ssize_t k = 0; k < n && rc == BIND_OK; k++) {
        PyObject *x = PyTuple_GET_ITEM(seq, k);
        int g = classify(x);
        rc = g < 0 ? BIND_ERROR : !(g & V_INT) || PyBool_Check(x) ? BIND_NO_MATCH : BIND_OK;
    }
    if (rc == BIND_OK && n > DISPATCH_MAX_DIMS) {
        PyErr_Format(PyExc_TypeError, "argument '%U': at most %d values", name, DISPATCH_MAX_DIMS);
        rc = BIND_ERROR;
    }
    for (Py_ssize_t k = 0; k < n && rc == BIND_OK; k++)
        if (to_int64(PyTuple_GET_ITEM(seq, k), &iv->list[k]) < 0) rc = BIND_ERROR;
    Py_DECREF(seq);
    if (rc == BIND_OK) iv->tag = DISPATCH_IV_INTLIST, iv->n = (int32_t)n;
    return rc;
}

/* One argument of the call: v stored into iv as the schema argument spec
 * (named name) takes it, or BIND_NO_MATCH when this overload cannot take v. */
static int bind_argument(PyObject *v, unsigned char spec, PyObject *name, dispatch_ivalue *iv,
                         bound *b) {
    int kind = spec & 7, is_list = spec >> 3 & 1, optional = spec >> 4 & 1;
    if (v == Py_None) {
        if (!optional) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_NONE;
        return BIND_OK;
    }
    int f = classify(v);
    if (f < 0) return BIND_ERROR;
    if (is_list) return bind_int_list(v, f, name, iv);
    int number = f & (V_BOOL | V_INT | V_FLOAT);
    switch (kind) {
    case K_TENSOR:
        if (f & V_TENSOR) {
            iv->tag = DISPATCH_IV_TENSOR;
            iv->v.t = pointer_of((TensorBase *)v);
            return iv->v.t ? BIND_OK : BIND_ERROR;
        }
        return number ? wrap_number(v, f, iv, b) : BIND_NO_MATCH;
    case K_SCALAR:
        if (!number) return BIND_NO_MATCH;
        if (f & V_BOOL) {
            iv->tag = DISPATCH_IV_BOOL;
            return to_bool(v, &iv->v.i) < 0 ? BIND_ERROR : BIND_OK;
        }
        if (f & V_INT) {
            iv->tag = DISPATCH_IV_INT;
            return to_int64(v, &iv->v.i) < 0 ? BIND_ERROR : BIND_OK;
        }
        iv->tag = DISPATCH_IV_DOUBLE;
        return to_double(v, &iv->v.d) < 0 ? BIND_ERROR : BIND_OK;
    case K_INT:
        if (!(f & V_INT) || PyBool_Check(v)) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_INT;
        return to_int64(v, &iv->v.i) < 0 ? BIND_ERROR : BIND_OK;
    case K_FLOAT:
        if (!(f & (V_INT | V_FLOAT)) || PyBool_Check(v)) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_DOUBLE;
        return to_double(v, &iv->v.d) < 0 ? BIND_ERROR : BIND_OK;
    case K_BOOL:
        if (!(f & V_BOOL)) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_BOOL;
        return to_bool(v, &iv->v.i) < 0 ? BIND_ERROR : BIND_OK;
    case K_SCALARTYPE: {
        if (!(f & V_DTYPE)) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_INT;
        return dtype_number(v, &iv->v.i) < 0 ? BIND_ERROR : BIND_OK;
    }
    default:
        return BIND_NO_MATCH; /* str arguments */
    }
}

/* The index of keyword key among an overload's argument names, -1 when it
 * names none, -2 with an error set. The names are interned, as keywords
 * usually are: identity first, then equality (a key built at run time). */
static Py_ssize_t name_index(PyObject *names, PyObject *key) {
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyTuple_GET_ITEM(names, i) == key) return i;
    for (Py_ssize_t i = 0; i < n; i++) {
        int r = PyObject_RichCompareBool(PyTuple_GET_ITEM(names, i), key, Py_EQ);
        if (r != 0) return r > 0 ? i : -2;
    }
    return -1;
}

/* Bind a call to one overload (the rules of the Note); on BIND_OK, b holds
 * the arguments, b->last of them given or before one given. */
static int bind(const void *op, const unsigned char *spec, Py_ssize_t np, PyObject *names,
                const call_args *c, bound *b) {
    b->nmade = 0;
    Py_ssize_t npos = 0, nkw = c->kwnames ? PyTuple_GET_SIZE(c->kwnames) : 0;
    for (Py_ssize_t i = 0; i < np; i++) npos += !(spec[i] >> 5 & 1);
    if (c->npos > npos) return BIND_NO_MATCH;
    char given[DISPATCH_MAX_ARGS] = {0};
    Py_ssize_t at[DISPATCH_MAX_ARGS];
    if (nkw > np) return BIND_NO_MATCH;
    for (Py_ssize_t k = 0; k < nkw; k++) { /* every keyword must name an argument, first */
        at[k] = name_index(names, PyTuple_GET_ITEM(c->kwnames, k));
        if (at[k] < 0) return at[k] == -2 ? BIND_ERROR : BIND_NO_MATCH;
    }
    for (Py_ssize_t i = 0; i < c->npos; i++) {
        int rc = bind_argument(c->args[i], spec[i], PyTuple_GET_ITEM(names, i), &b->iv[i], b);
        if (rc != BIND_OK) return rc;
        given[i] = 1;
    }
    int last = (int)c->npos;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(c->kwnames, k);
        Py_ssize_t i = at[k];
        if (given[i]) return BIND_NO_MATCH;
        int rc = bind_argument(c->args[c->npos + k], spec[i], key, &b->iv[i], b);
        if (rc != BIND_OK) return rc;
        given[i] = 1;
        if (i + 1 > last) last = (int)i + 1;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        if (given[i]) continue;
        if (!(spec[i] >> 6 & 1)) return BIND_NO_MATCH;
        if (i < last && S.op_default(op, (int)i, &b->iv[i]) < 0) {
            PyObject *res = wrap(NULL); /* raises the runtime's error */
            Py_XDECREF(res);
            return BIND_ERROR;
        }
    }
    b->last = last;
    return BIND_OK;
}

/* One plan of bind_call/resolve: (op_address, spec, names, nrets). */
typedef struct {
    const void *op;
    const unsigned char *spec;
    Py_ssize_t np;
    PyObject *names;
    long nrets;
    PyObject *rtype; /* borrowed: called with the results when nrets > 1, or NULL */
} plan;

static int read_plan(PyObject *p, plan *out) {
    if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) < 4 || PyTuple_GET_SIZE(p) > 5 ||
        !PyBytes_Check(PyTuple_GET_ITEM(p, 1)) || !PyTuple_Check(PyTuple_GET_ITEM(p, 2))) {
        PyErr_SetString(PyExc_TypeError,
                        "a binding plan is (op_address, spec, names, nrets[, result_type])");
        return -1;
    }
    out->rtype = PyTuple_GET_SIZE(p) == 5 && PyTuple_GET_ITEM(p, 4) != Py_None
                     ? PyTuple_GET_ITEM(p, 4) : NULL;
    out->op = PyLong_AsVoidPtr(PyTuple_GET_ITEM(p, 0));
    out->nrets = PyLong_AsLong(PyTuple_GET_ITEM(p, 3));
    if (!out->op || (out->nrets == -1 && PyErr_Occurred())) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a NULL operator address");
        return -1;
    }
    PyObject *spec = PyTuple_GET_ITEM(p, 1);
    out->spec = (const unsigned char *)PyBytes_AS_STRING(spec);
    out->np = PyBytes_GET_SIZE(spec);
    out->names = PyTuple_GET_ITEM(p, 2);
    if (out->np > DISPATCH_MAX_ARGS || PyTuple_GET_SIZE(out->names) != out->np ||
        out->nrets < 0 || out->nrets > DISPATCH_MAX_RETS) {
        PyErr_SetString(PyExc_ValueError, "a binding plan beyond the runtime's limits");
        return -1;
    }
    return 0;
}

/* The index of the first plan the call binds to (b holds its arguments),
 * -1 when none does, -2 with an error set. */
static Py_ssize_t bind_first(PyObject *plans, const call_args *c, plan *pl, bound *b) {
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(plans); j++) {
        if (read_plan(PyTuple_GET_ITEM(plans, j), pl) < 0) return -2;
        int rc = bind(pl->op, pl->spec, pl->np, pl->names, c, b);
        if (rc == BIND_OK) return j;
        bound_release(b);
        if (rc == BIND_ERROR) return -2;
    }
    return -1;
}

/* resolve/bind_call's (plans, args, kwargs) as call_args: the positional
 * arguments then the keywords' values in *store (PyMem; free it after). */
static int python_call_args(PyObject *const *args, Py_ssize_t nargs, PyObject **plans,
                            call_args *c, PyObject ***store) {
    *store = NULL;
    if (!S.ready || !S.wrap_double || nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        (args[2] != Py_None && !PyDict_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "expected (plans, args, kwargs)");
        return -1;
    }
    *plans = args[0];
    PyObject *pos = args[1], *kwargs = args[2] == Py_None ? NULL : args[2];
    Py_ssize_t np = PyTuple_GET_SIZE(pos), nk = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
    c->npos = np, c->kwnames = NULL, c->args = &PyTuple_GET_ITEM(pos, 0);
    if (nk == 0) return 0;
    PyObject **a = PyMem_Malloc(sizeof(PyObject *) * (size_t)(np + nk));
    PyObject *names = PyTuple_New(nk);
    if (!a || !names) {
        PyMem_Free(a);
        Py_XDECREF(names);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < np; i++) a[i] = PyTuple_GET_ITEM(pos, i);
    Py_ssize_t k = 0, o = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &k, &key, &value)) {
        PyTuple_SET_ITEM(names, o, Py_NewRef(key));
        a[np + o++] = value;
    }
    c->args = a, c->kwnames = names, *store = a;
    return 0;
}

static void python_call_args_free(call_args *c, PyObject **store) {
    if (store) Py_XDECREF(c->kwnames);
    PyMem_Free(store);
}

PyObject *py_resolve(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *plans, **store;
    call_args c;
    if (python_call_args(args, nargs, &plans, &c, &store) < 0) return NULL;
    plan pl;
    bound b;
    Py_ssize_t j = bind_first(plans, &c, &pl, &b);
    python_call_args_free(&c, store);
    if (j == -2) return NULL;
    if (j >= 0) bound_release(&b);
    return PyLong_FromSsize_t(j);
}

static PyObject *ivalue_out(dispatch_ivalue *v) {
    switch (v->tag) {
    case DISPATCH_IV_TENSOR: {
        dispatch_tensor *t = v->v.t;
        v->tag = DISPATCH_IV_NONE; /* wrap owns it now */
        return wrap(t);
    }
    case DISPATCH_IV_INT: return PyLong_FromLongLong(v->v.i);
    case DISPATCH_IV_DOUBLE: return PyFloat_FromDouble(v->v.d);
    case DISPATCH_IV_BOOL: return PyBool_FromLong((long)v->v.i);
    case DISPATCH_IV_INTLIST: {
        PyObject *l = PyList_New(v->n);
        for (int k = 0; l && k < v->n; k++) {
            PyObject *x = PyLong_FromLongLong(v->list[k]);
            if (!x) {
                Py_CLEAR(l);
                break;
            }
            PyList_SET_ITEM(l, k, x);
        }
        return l;
    }
    default: Py_RETURN_NONE;
    }
}

/* The Tensor among a call's arguments (positional, then keyword) whose
 * tensor is t, as a new reference, or NULL (no error): an operator that
 * returns an argument (out=, in place: Tensor(a!)) returns that object. */
static PyObject *argument_object(const dispatch_tensor *t, const call_args *c) {
    Py_ssize_t n = c->npos + (c->kwnames ? PyTuple_GET_SIZE(c->kwnames) : 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = c->args[i];
        if (PyObject_TypeCheck(v, &TensorBaseType) && ((TensorBase *)v)->ptr == t)
            return Py_NewRef(v);
    }
    return NULL;
}

PyObject *bind_call(PyObject *plans, const call_args *c) {
    plan pl;
    bound b;
    Py_ssize_t j = bind_first(plans, c, &pl, &b);
    if (j == -2) return NULL;
    if (j == -1) return Py_NewRef(S.no_match);
    int64_t numel = 0;
    for (int k = 0; k < b.last; k++)
        if (b.iv[k].tag == DISPATCH_IV_TENSOR) numel += b.iv[k].v.t->numel;
    dispatch_ivalue rets[DISPATCH_MAX_RETS];
    PyThreadState *ts = release_for(numel);
    int status = S.call(pl.op, b.iv, b.last, rets);
    reacquire(ts);
    bound_release(&b);
    if (status < 0) return wrap(NULL); /* raises the runtime's error */
    PyObject *out = NULL;
    if (pl.nrets == 1 && rets[0].tag == DISPATCH_IV_TENSOR &&
        (out = argument_object(rets[0].v.t, c))) {
        /* Tensor(a!): the argument itself, as PyTorch (out=, in place) */
    } else if (pl.nrets == 1) {
        out = ivalue_out(&rets[0]);
    } else if (pl.nrets == 0) {
        out = Py_NewRef(Py_None);
    } else if ((out = PyTuple_New(pl.nrets))) {
        for (long k = 0; k < pl.nrets; k++) {
            PyObject *o = ivalue_out(&rets[k]);
            if (!o) {
                Py_CLEAR(out);
                break;
            }
            PyTuple_SET_ITEM(out, k, o);
        }
        if (out && pl.rtype) { /* (values, indices) with names, as torch.return_types */
            Py_SETREF(out, PyObject_Call(pl.rtype, out, NULL));
        }
    }
    S.release(rets, (int)pl.nrets); /* what was not handed to Python */
    return out;
}

PyObject *py_bind_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *plans, **store;
    call_args c;
    if (python_call_args(args, nargs, &plans, &c, &store) < 0) return NULL;
    PyObject *r = bind_call(plans, &c);
    python_call_args_free(&c, store);
    return r;
}

/* bind_init((wrap_double, wrap_int, wrap_bool)): the addresses of
 * dispatch_tensor_wrap_*, for numbers given as Tensor arguments (once,
 * from dispatch.ops). */
PyObject *py_bind_init(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *wd, *wi, *wb;
    if (!PyArg_ParseTuple(args, "(OOO)", &wd, &wi, &wb)) return NULL;
    if (S.wrap_double) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath's binder is initialised once");
        return NULL;
    }
    wrap_double_fn d = (wrap_double_fn)address(wd);
    wrap_int_fn i = (wrap_int_fn)address(wi);
    wrap_bool_fn b = (wrap_bool_fn)address(wb);
    if (PyErr_Occurred()) return NULL;
    S.wrap_int = i, S.wrap_bool = b, S.wrap_double = d;
    Py_RETURN_NONE;
}
