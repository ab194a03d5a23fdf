/*
 * dispatch._fastpath: the C base class of dispatch.Tensor, holding its
 * runtime pointer and implementing the arithmetic and comparison operators.
 *
 * Note [Operator fast path]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * Everything else binds the runtime through cffi (dispatch._core), but a
 * Python-level __add__ costs more than NumPy's whole `a + b`: a frame for the
 * method, a cffi call, a Python __del__ and a second cffi call to free. Here
 * `a + b` of two tensors is the type slot itself: one C call into the
 * dispatcher (dispatch_call_tt), and the result's pointer lives in the C
 * object, freed by tp_dealloc.
 *
 * This module does not link the runtime (a second copy would have its own
 * dispatcher and loop table). dispatch/_tensor.py hands it, once, the
 * addresses of dispatch_call_tt and dispatch_tensor_decref from
 * dispatch._core, the operator handles, and Python callables for the rest:
 * converting between addresses and cffi pointers, raising the runtime's
 * error, and the Python fallbacks for non-tensor operands (numbers,
 * NotImplemented). The cffi pointer `_p` the Python code uses is made on
 * first access and kept; a tensor made from Python (`t._p = p`) gets its
 * address on first need.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "dispatch/dispatcher.h"
#include "dispatch/dlpack.h"
#include "dispatch/tensor.h"

typedef dispatch_tensor *(*call_tt_fn)(const void *op, dispatch_tensor *a, dispatch_tensor *b);
typedef dispatch_tensor *(*call_t_fn)(const void *op, dispatch_tensor *a);
typedef dispatch_tensor *(*call_ts_fn)(const void *op, dispatch_tensor *const *ts, int nt, int si,
                                       double d, int64_t i, int kind);
typedef void (*decref_fn)(dispatch_tensor *t);
typedef int (*call_fn)(const void *op, dispatch_ivalue *args, int nargs, dispatch_ivalue *rets);
typedef int (*default_fn)(const void *op, int i, dispatch_ivalue *out);
typedef void (*release_fn)(dispatch_ivalue *v, int n);

/* The operators, in the order init() receives them. */
enum { ADD, SUB, MUL, DIV, EQ, NE, LT, LE, GT, GE, NOPS };
/* Elements from which a call releases the GIL (below, the release costs
 * more than the work). */
#define RELEASE_GIL_NUMEL 65536

static struct {
    int ready;
    PyTypeObject *tensor_type; /* dispatch.Tensor, the Python subclass */
    call_tt_fn call_tt;
    call_t_fn call_t;
    call_ts_fn call_tensors_scalar;
    decref_fn decref;
    call_fn call;
    default_fn op_default;
    release_fn release;
    PyTypeObject *dtype_type;  /* dispatch.dtype: ScalarType arguments */
    PyObject *no_match, *fallback; /* bind_call's two refusals */
    const void *ops[NOPS];
    PyObject *forward[NOPS]; /* fallback(self, other) for non-tensor other */
    PyObject *reverse[NOPS]; /* fallback(self, other) computing other <op> self */
    PyObject *to_cdata;      /* int address -> cffi dispatch_tensor * */
    PyObject *to_address;    /* cffi dispatch_tensor * -> int address */
    PyObject *raise_error;   /* raises the runtime's recorded error */
} S;

typedef struct {
    PyObject_HEAD
    dispatch_tensor *ptr; /* owned reference, or NULL until known */
    PyObject *cdata;      /* the cffi pointer Python code sees as _p, or NULL */
    PyObject *weakrefs;
} TensorBase;

static PyTypeObject TensorBaseType;

/* The tensor's runtime pointer, from its cffi pointer on first need. */
static dispatch_tensor *pointer_of(TensorBase *t) {
    if (t->ptr) return t->ptr;
    if (!t->cdata) {
        PyErr_SetString(PyExc_RuntimeError, "this Tensor was never initialised");
        return NULL;
    }
    PyObject *addr = PyObject_CallOneArg(S.to_address, t->cdata);
    if (!addr) return NULL;
    t->ptr = PyLong_AsVoidPtr(addr);
    Py_DECREF(addr);
    return t->ptr;
}

static void tensor_dealloc(TensorBase *t) {
    if (t->weakrefs) PyObject_ClearWeakRefs((PyObject *)t);
    /* Only the object that owns a reference frees it: one made by the fast
     * path (ptr, no cdata yet) or one whose _p was set from Python. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    dispatch_tensor *p = S.ready ? pointer_of(t) : t->ptr;
    if (p) S.decref(p);
    else PyErr_Clear();
    PyErr_Restore(type, value, tb);
    Py_CLEAR(t->cdata);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* A new dispatch.Tensor owning r, or NULL with the runtime's error raised. */
static PyObject *wrap(dispatch_tensor *r) {
    if (!r) {
        PyObject *res = PyObject_CallNoArgs(S.raise_error);
        if (res) { /* it should have raised */
            Py_DECREF(res);
            PyErr_SetString(PyExc_RuntimeError, "the dispatch runtime failed without an error");
        }
        return NULL;
    }
    TensorBase *t = (TensorBase *)S.tensor_type->tp_alloc(S.tensor_type, 0);
    if (!t) {
        S.decref(r);
        return NULL;
    }
    t->ptr = r;
    return (PyObject *)t;
}

/* Let other Python threads run during a call on numel input elements; NULL
 * (the GIL kept) below RELEASE_GIL_NUMEL. Pair with reacquire(). */
static PyThreadState *release_for(int64_t numel) {
    return numel < RELEASE_GIL_NUMEL ? NULL : PyEval_SaveThread();
}

static void reacquire(PyThreadState *ts) {
    if (ts) PyEval_RestoreThread(ts);
}

static PyObject *call2(const void *op, TensorBase *a, TensorBase *b) {
    dispatch_tensor *pa = pointer_of(a), *pb = pa ? pointer_of(b) : NULL;
    if (!pb) return NULL;
    PyThreadState *ts = release_for(pa->numel + pb->numel);
    dispatch_tensor *r = S.call_tt(op, pa, pb);
    reacquire(ts);
    return wrap(r);
}

static PyObject *call1(const void *op, TensorBase *a) {
    dispatch_tensor *pa = pointer_of(a);
    if (!pa) return NULL;
    PyThreadState *ts = release_for(pa->numel);
    dispatch_tensor *r = S.call_t(op, pa);
    reacquire(ts);
    return wrap(r);
}

static int is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &TensorBaseType); }

static PyObject *binary(int op, PyObject *x, PyObject *y) {
    if (!S.ready) Py_RETURN_NOTIMPLEMENTED;
    int tx = is_tensor(x), ty = is_tensor(y);
    if (tx && ty) return call2(S.ops[op], (TensorBase *)x, (TensorBase *)y);
    return tx ? PyObject_CallFunctionObjArgs(S.forward[op], x, y, NULL)
              : PyObject_CallFunctionObjArgs(S.reverse[op], y, x, NULL);
}

static PyObject *nb_add(PyObject *x, PyObject *y) { return binary(ADD, x, y); }
static PyObject *nb_sub(PyObject *x, PyObject *y) { return binary(SUB, x, y); }
static PyObject *nb_mul(PyObject *x, PyObject *y) { return binary(MUL, x, y); }
static PyObject *nb_div(PyObject *x, PyObject *y) { return binary(DIV, x, y); }

static PyObject *richcompare(PyObject *x, PyObject *y, int cmp) {
    static const int op_of[] = {[Py_LT] = LT, [Py_LE] = LE, [Py_EQ] = EQ,
                                [Py_NE] = NE, [Py_GT] = GT, [Py_GE] = GE};
    return binary(op_of[cmp], x, y);
}

static PyObject *get_p(TensorBase *t, void *closure) {
    (void)closure;
    if (!t->cdata) {
        if (!t->ptr) {
            PyErr_SetString(PyExc_AttributeError, "_p");
            return NULL;
        }
        PyObject *addr = PyLong_FromVoidPtr(t->ptr);
        if (!addr) return NULL;
        t->cdata = PyObject_CallOneArg(S.to_cdata, addr);
        Py_DECREF(addr);
        if (!t->cdata) return NULL;
    }
    return Py_NewRef(t->cdata);
}

static int set_p(TensorBase *t, PyObject *value, void *closure) {
    (void)closure;
    if (!value || t->cdata || t->ptr) {
        PyErr_SetString(PyExc_AttributeError, "a Tensor's _p is set once, when it is made");
        return -1;
    }
    t->cdata = Py_NewRef(value); /* the address is read on first need */
    return 0;
}

static PyGetSetDef tensor_getset[] = {
    {"_p", (getter)get_p, (setter)set_p, "the runtime's dispatch_tensor * (cffi)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyNumberMethods tensor_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
};

static PyTypeObject TensorBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dispatch._fastpath.TensorBase",
    .tp_doc = "The C base of dispatch.Tensor (see Note [Operator fast path]).",
    .tp_basicsize = sizeof(TensorBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_as_number = &tensor_number,
    .tp_richcompare = richcompare,
    .tp_getset = tensor_getset,
    .tp_weaklistoffset = offsetof(TensorBase, weakrefs),
};

static void *address(PyObject *o) {
    void *p = PyLong_AsVoidPtr(o);
    if (!p && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a NULL address");
    return p;
}

/* init(tensor_type, dtype_type, (call_tt, call_t, call_tensors_scalar,
 *      decref, call, op_default, ivalue_release), ops, forward, reverse,
 *      to_cdata, to_address, raise_error): see the Note. The third argument
 * holds function addresses; ops, forward and reverse are tuples in the order
 * of the enum above. */
static PyObject *init(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *type, *dtype_type, *call_tt, *call_t, *call_ts, *decref, *call, *op_default,
        *release, *ops, *fwd, *rev, *to_cdata, *to_address, *raise_error;
    if (!PyArg_ParseTuple(args, "O!O!(OOOOOOO)O!O!O!OOO", &PyType_Type, &type, &PyType_Type,
                          &dtype_type, &call_tt, &call_t, &call_ts, &decref, &call, &op_default,
                          &release, &PyTuple_Type, &ops, &PyTuple_Type, &fwd, &PyTuple_Type,
                          &rev, &to_cdata, &to_address, &raise_error))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)type, &TensorBaseType) || PyTuple_GET_SIZE(ops) != NOPS ||
        PyTuple_GET_SIZE(fwd) != NOPS || PyTuple_GET_SIZE(rev) != NOPS) {
        PyErr_SetString(PyExc_TypeError, "init: a TensorBase subclass and three tuples of "
                                         "one entry per operator");
        return NULL;
    }
    if (S.ready) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath is initialised once");
        return NULL;
    }
    S.call_tt = (call_tt_fn)address(call_tt);
    S.call_t = (call_t_fn)address(call_t);
    S.call_tensors_scalar = (call_ts_fn)address(call_ts);
    S.call = (call_fn)address(call);
    S.op_default = (default_fn)address(op_default);
    S.release = (release_fn)address(release);
    S.decref = (decref_fn)address(decref);
    for (int i = 0; i < NOPS; i++) S.ops[i] = address(PyTuple_GET_ITEM(ops, i));
    if (PyErr_Occurred()) return NULL;
    for (int i = 0; i < NOPS; i++) {
        S.forward[i] = Py_NewRef(PyTuple_GET_ITEM(fwd, i));
        S.reverse[i] = Py_NewRef(PyTuple_GET_ITEM(rev, i));
    }
    S.tensor_type = (PyTypeObject *)Py_NewRef(type);
    S.dtype_type = (PyTypeObject *)Py_NewRef(dtype_type);
    S.to_cdata = Py_NewRef(to_cdata);
    S.to_address = Py_NewRef(to_address);
    S.raise_error = Py_NewRef(raise_error);
    S.ready = 1;
    Py_RETURN_NONE;
}

/* call1(op_address, tensor) / call2(op_address, a, b): an operator handle's
 * (Tensor) or (Tensor, Tensor) overload with defaults for the rest, called
 * from C: the fast path of dispatch.ops.<name>(...) and Tensor methods. */
static int check_call(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const void **op) {
    if (!S.ready || nargs != want) {
        PyErr_Format(PyExc_TypeError, "expected %zd arguments", want);
        return -1;
    }
    for (Py_ssize_t i = 1; i < nargs; i++) {
        if (!is_tensor(args[i])) {
            PyErr_SetString(PyExc_TypeError, "expected Tensor arguments");
            return -1;
        }
    }
    *op = PyLong_AsVoidPtr(args[0]);
    return *op ? 0 : -1;
}

static PyObject *py_call1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const void *op;
    if (check_call(args, nargs, 2, &op) < 0) return NULL;
    return call1(op, (TensorBase *)args[1]);
}

static PyObject *py_call2(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const void *op;
    if (check_call(args, nargs, 3, &op) < 0) return NULL;
    return call2(op, (TensorBase *)args[1], (TensorBase *)args[2]);
}

/* call_scalar(op_address, scalar_index, value, *tensors): the overload
 * taking the tensors first and one Scalar (a Python bool, int or float) at
 * scalar_index, defaults elsewhere: ops.addcmul(a, b, c, value=0.5). */
static PyObject *py_call_scalar(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    enum { MAXT = 8 };
    if (!S.ready || nargs < 3 || nargs - 3 > MAXT) {
        PyErr_SetString(PyExc_TypeError, "call_scalar(op, index, value, *tensors)");
        return NULL;
    }
    const void *op = PyLong_AsVoidPtr(args[0]);
    long si = PyLong_AsLong(args[1]);
    if (!op || (si == -1 && PyErr_Occurred())) return NULL;
    PyObject *v = args[2];
    double d = 0;
    long long i = 0;
    int kind;
    if (PyBool_Check(v)) {
        kind = 2, i = v == Py_True;
    } else if (PyLong_CheckExact(v)) {
        kind = 0, i = PyLong_AsLongLong(v);
        if (i == -1 && PyErr_Occurred()) return NULL;
    } else if (PyFloat_CheckExact(v)) {
        kind = 1, d = PyFloat_AS_DOUBLE(v);
    } else {
        PyErr_SetString(PyExc_TypeError, "call_scalar: the value must be a bool, int or float");
        return NULL;
    }
    dispatch_tensor *ts[MAXT];
    Py_ssize_t nt = nargs - 3;
    int64_t numel = 0;
    for (Py_ssize_t k = 0; k < nt; k++) {
        if (!is_tensor(args[3 + k])) {
            PyErr_SetString(PyExc_TypeError, "expected Tensor arguments");
            return NULL;
        }
        if (!(ts[k] = pointer_of((TensorBase *)args[3 + k]))) return NULL;
        numel += ts[k]->numel;
    }
    PyThreadState *state = release_for(numel);
    dispatch_tensor *r = S.call_tensors_scalar(op, ts, (int)nt, (int)si, d, (int64_t)i, kind);
    reacquire(state);
    return wrap(r);
}

/*
 * Note [Binding in C]
 * ~~~~~~~~~~~~~~~~~~~
 * bind_call(op_address, spec, names, nrets, args, kwargs) binds a Python
 * call to one overload and runs it, the C twin of OpOverload._bind in
 * dispatch/ops.py, for the plain cases: None, bool, int, float, tuples and
 * lists of ints, tensors and dtypes. It returns the result, or one of two
 * refusals before anything ran: NO_MATCH when _bind would reject the
 * overload too (the caller tries the next one), FALLBACK for anything else
 * (a NumPy scalar, a number for a Tensor argument, a value out of range):
 * the caller then resolves the whole call in Python. spec has one byte per
 * argument: kind (ops.py's _TENSOR ... _SCALARTYPE) | is_list << 3 |
 * optional << 4 | kwarg_only << 5 | has_default << 6.
 */
enum { K_TENSOR, K_SCALAR, K_INT, K_FLOAT, K_BOOL, K_STR, K_SCALARTYPE };
enum { BIND_OK, BIND_NO_MATCH, BIND_FALLBACK, BIND_ERROR };

static int exact_int(PyObject *v, int64_t *out) {
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear(); /* out of int64: Python's path reports it */
        return BIND_FALLBACK;
    }
    *out = x;
    return BIND_OK;
}

static int convert(PyObject *v, unsigned char spec, dispatch_ivalue *iv) {
    int kind = spec & 7, is_list = spec >> 3 & 1, optional = spec >> 4 & 1;
    if (v == Py_None) {
        if (!optional) return BIND_NO_MATCH;
        iv->tag = DISPATCH_IV_NONE;
        return BIND_OK;
    }
    if (is_list) {
        if (PyLong_CheckExact(v)) {
            iv->tag = DISPATCH_IV_INTLIST, iv->n = 1;
            return exact_int(v, &iv->list[0]);
        }
        if (!PyTuple_CheckExact(v) && !PyList_CheckExact(v)) {
            return PyBool_Check(v) || PyFloat_CheckExact(v) || is_tensor(v) ? BIND_NO_MATCH
                                                                             : BIND_FALLBACK;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        if (n > DISPATCH_MAX_DIMS) return BIND_FALLBACK;
        PyObject **items = PySequence_Fast_ITEMS(v);
        for (Py_ssize_t k = 0; k < n; k++) {
            if (!PyLong_CheckExact(items[k])) return BIND_FALLBACK;
            int rc = exact_int(items[k], &iv->list[k]);
            if (rc != BIND_OK) return rc;
        }
        iv->tag = DISPATCH_IV_INTLIST, iv->n = (int32_t)n;
        return BIND_OK;
    }
    if (PyTuple_CheckExact(v) || PyList_CheckExact(v))
        return BIND_NO_MATCH; /* as _convert: a sequence fits a list argument only */
    int is_bool = PyBool_Check(v), is_int = PyLong_CheckExact(v), is_float = PyFloat_CheckExact(v);
    int tensor = is_tensor(v), is_dtype = PyObject_TypeCheck(v, S.dtype_type);
    if (!is_bool && !is_int && !is_float && !tensor && !is_dtype) return BIND_FALLBACK;
    switch (kind) {
    case K_TENSOR:
        if (!tensor) return is_dtype ? BIND_NO_MATCH : BIND_FALLBACK; /* numbers get wrapped */
        iv->tag = DISPATCH_IV_TENSOR;
        iv->v.t = pointer_of((TensorBase *)v);
        return iv->v.t ? BIND_OK : BIND_ERROR;
    case K_SCALAR:
    case K_INT:
    case K_FLOAT:
    case K_BOOL:
        if (tensor || is_dtype) return BIND_NO_MATCH;
        if (kind == K_BOOL || (kind == K_SCALAR && is_bool)) {
            if (!is_bool) return BIND_NO_MATCH;
            iv->tag = DISPATCH_IV_BOOL, iv->v.i = v == Py_True;
            return BIND_OK;
        }
        if (is_bool) return BIND_NO_MATCH; /* int/float arguments refuse bools */
        if (kind == K_FLOAT || (kind == K_SCALAR && is_float)) {
            iv->tag = DISPATCH_IV_DOUBLE;
            iv->v.d = is_float ? PyFloat_AS_DOUBLE(v) : PyLong_AsDouble(v);
            if (iv->v.d == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                return BIND_FALLBACK;
            }
            return BIND_OK;
        }
        if (!is_int) return BIND_NO_MATCH; /* a float for an int argument */
        iv->tag = DISPATCH_IV_INT;
        return exact_int(v, &iv->v.i);
    case K_SCALARTYPE: {
        if (!is_dtype) return BIND_NO_MATCH;
        PyObject *num = PyObject_GetAttrString(v, "num");
        if (!num) return BIND_ERROR;
        iv->tag = DISPATCH_IV_INT;
        iv->v.i = PyLong_AsLongLong(num);
        Py_DECREF(num);
        return PyErr_Occurred() ? BIND_ERROR : BIND_OK;
    }
    default:
        return BIND_NO_MATCH; /* str arguments: as _convert */
    }
}

static int bind(const void *op, const unsigned char *spec, Py_ssize_t np, PyObject *names,
                PyObject *const *pos, Py_ssize_t npos_given, PyObject *kwargs,
                dispatch_ivalue *iv, int *last_out) {
    Py_ssize_t npos = 0;
    for (Py_ssize_t i = 0; i < np; i++) npos += !(spec[i] >> 5 & 1);
    if (npos_given > npos) return BIND_NO_MATCH;
    char given[DISPATCH_MAX_ARGS] = {0};
    Py_ssize_t kpos = 0;
    PyObject *key, *value;
    if (kwargs) { /* every keyword must name an argument, before converting */
        while (PyDict_Next(kwargs, &kpos, &key, &value)) {
            if (PySequence_Contains(names, key) != 1) return BIND_NO_MATCH;
        }
    }
    for (Py_ssize_t i = 0; i < npos_given; i++) {
        int rc = convert(pos[i], spec[i], &iv[i]);
        if (rc != BIND_OK) return rc;
        given[i] = 1;
    }
    int last = (int)npos_given;
    kpos = 0;
    while (kwargs && PyDict_Next(kwargs, &kpos, &key, &value)) {
        Py_ssize_t i = PySequence_Index(names, key);
        if (i < 0) return BIND_ERROR;
        if (given[i]) return BIND_NO_MATCH;
        int rc = convert(value, spec[i], &iv[i]);
        if (rc != BIND_OK) return rc;
        given[i] = 1;
        if (i + 1 > last) last = (int)i + 1;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        if (given[i]) continue;
        if (!(spec[i] >> 6 & 1)) return BIND_NO_MATCH;
        if (i < last && S.op_default(op, (int)i, &iv[i]) < 0) return BIND_FALLBACK;
    }
    *last_out = last;
    return BIND_OK;
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
        for (int k = 0; l && k < v->n; k++) PyList_SET_ITEM(l, k, PyLong_FromLongLong(v->list[k]));
        return l;
    }
    default: Py_RETURN_NONE;
    }
}

static PyObject *py_bind_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!S.ready || nargs != 6 || !PyBytes_Check(args[1]) || !PyTuple_Check(args[2]) ||
        !PyTuple_Check(args[4]) || (args[5] != Py_None && !PyDict_Check(args[5]))) {
        PyErr_SetString(PyExc_TypeError, "bind_call(op, spec, names, nrets, args, kwargs)");
        return NULL;
    }
    const void *op = PyLong_AsVoidPtr(args[0]);
    long nrets = PyLong_AsLong(args[3]);
    if (!op || (nrets == -1 && PyErr_Occurred())) return NULL;
    Py_ssize_t np = PyBytes_GET_SIZE(args[1]);
    if (np > DISPATCH_MAX_ARGS || nrets > DISPATCH_MAX_RETS || nrets < 0) return Py_NewRef(S.fallback);
    dispatch_ivalue iv[DISPATCH_MAX_ARGS], rets[DISPATCH_MAX_RETS];
    int last = 0;
    int rc = bind(op, (const unsigned char *)PyBytes_AS_STRING(args[1]), np, args[2],
                  &PyTuple_GET_ITEM(args[4], 0), PyTuple_GET_SIZE(args[4]),
                  args[5] == Py_None ? NULL : args[5], iv, &last);
    if (rc == BIND_ERROR) return NULL;
    if (rc == BIND_NO_MATCH) return Py_NewRef(S.no_match);
    if (rc == BIND_FALLBACK) return Py_NewRef(S.fallback);
    int64_t numel = 0;
    for (int k = 0; k < last; k++)
        if (iv[k].tag == DISPATCH_IV_TENSOR) numel += iv[k].v.t->numel;
    PyThreadState *ts = release_for(numel);
    int status = S.call(op, iv, last, rets);
    reacquire(ts);
    if (status < 0) return wrap(NULL); /* raises the runtime's error */
    PyObject *out = NULL;
    if (nrets == 1) {
        out = ivalue_out(&rets[0]);
    } else if (nrets == 0) {
        out = Py_NewRef(Py_None);
    } else if ((out = PyTuple_New(nrets))) {
        for (long k = 0; k < nrets; k++) {
            PyObject *o = ivalue_out(&rets[k]);
            if (!o) {
                Py_CLEAR(out);
                break;
            }
            PyTuple_SET_ITEM(out, k, o);
        }
    }
    S.release(rets, (int)nrets); /* what was not handed to Python */
    return out;
}

/*
 * DLPack capsules (Note [DLPack] in sources/core/dlpack.c). They are made
 * and consumed here, in C, rather than through ctypes.pythonapi: the capsule
 * destructor must be a C function that works at any time the capsule dies
 * (garbage collection, interpreter shutdown, after ctypes is gone), and
 * consuming one (check the name, take the pointer, rename it "used_...")
 * happens in one call holding the GIL, so two consumers of one capsule can
 * never both take it.
 */
static const char DLTENSOR[] = "dltensor", USED_DLTENSOR[] = "used_dltensor";
static const char DLTENSOR_V[] = "dltensor_versioned", USED_DLTENSOR_V[] = "used_dltensor_versioned";

/* A capsule dropped unconsumed still owns its tensor: run the deleter. */
static void dlpack_capsule_destructor(PyObject *capsule) {
    if (PyCapsule_IsValid(capsule, DLTENSOR)) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, DLTENSOR);
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, DLTENSOR_V)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, DLTENSOR_V);
        if (m && m->deleter) m->deleter(m);
    }
}

/* dlpack_capsule(address, versioned): the capsule owning the managed tensor
 * at address (deleted at once if the capsule cannot be made). */
static PyObject *py_dlpack_capsule(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *address;
    int versioned;
    if (!PyArg_ParseTuple(args, "Op", &address, &versioned)) return NULL;
    void *m = PyLong_AsVoidPtr(address);
    if (!m) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "NULL DLPack tensor");
        return NULL;
    }
    PyObject *capsule =
        PyCapsule_New(m, versioned ? DLTENSOR_V : DLTENSOR, dlpack_capsule_destructor);
    if (!capsule) { /* nobody owns m: delete it */
        if (versioned) {
            DLManagedTensorVersioned *v = m;
            if (v->deleter) v->deleter(v);
        } else {
            DLManagedTensor *l = m;
            if (l->deleter) l->deleter(l);
        }
    }
    return capsule;
}

/* dlpack_take(capsule): (address, versioned), and the capsule is renamed
 * "used_...": the caller owns the managed tensor now. */
static PyObject *py_dlpack_take(PyObject *self, PyObject *capsule) {
    (void)self;
    if (!PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_TypeError, "expected a DLPack capsule (got %.200s)",
                     Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred()) return NULL;
    int versioned;
    if (name && strcmp(name, DLTENSOR) == 0)
        versioned = 0;
    else if (name && strcmp(name, DLTENSOR_V) == 0)
        versioned = 1;
    else if (name && (strcmp(name, USED_DLTENSOR) == 0 || strcmp(name, USED_DLTENSOR_V) == 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "this DLPack capsule was consumed already (a capsule can be consumed "
                        "once: call __dlpack__() again for another)");
        return NULL;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "expected a DLPack capsule named \"dltensor\" or \"dltensor_versioned\" "
                     "(got a capsule named %s%s%s)",
                     name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
        return NULL;
    }
    void *m = PyCapsule_GetPointer(capsule, name);
    if (!m) return NULL;
    if (PyCapsule_SetName(capsule, versioned ? USED_DLTENSOR_V : USED_DLTENSOR) < 0) return NULL;
    PyObject *address = PyLong_FromVoidPtr(m);
    if (!address) { /* undo: the capsule keeps the tensor */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        (void)PyCapsule_SetName(capsule, versioned ? DLTENSOR_V : DLTENSOR);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    return Py_BuildValue("(Ni)", address, versioned);
}

static PyMethodDef methods[] = {
    {"dlpack_capsule", py_dlpack_capsule, METH_VARARGS,
     "dlpack_capsule(address, versioned): a DLPack capsule owning the tensor at address."},
    {"dlpack_take", py_dlpack_take, METH_O,
     "dlpack_take(capsule): (address, versioned) of its tensor; marks the capsule used."},
    {"bind_call", (PyCFunction)(void (*)(void))py_bind_call, METH_FASTCALL,
     "bind_call(op, spec, names, nrets, args, kwargs): Note [Binding in C]."},
    {"call_scalar", (PyCFunction)(void (*)(void))py_call_scalar, METH_FASTCALL,
     "call_scalar(op_address, index, value, *tensors): tensors, then one Scalar."},
    {"init", init, METH_VARARGS, "Connect the fast path to dispatch._core (once)."},
    {"call1", (PyCFunction)(void (*)(void))py_call1, METH_FASTCALL,
     "call1(op_address, t): the operator's (Tensor) overload, from C."},
    {"call2", (PyCFunction)(void (*)(void))py_call2, METH_FASTCALL,
     "call2(op_address, a, b): the operator's (Tensor, Tensor) overload, from C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastpath", "The C base of dispatch.Tensor.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastpath(void) {
    /* Defining tp_richcompare alone would make tensors unhashable. */
    TensorBaseType.tp_hash = PyBaseObject_Type.tp_hash;
    if (PyType_Ready(&TensorBaseType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    S.no_match = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    S.fallback = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (!S.no_match || !S.fallback ||
        PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0 ||
        PyModule_AddObjectRef(m, "NO_MATCH", S.no_match) < 0 ||
        PyModule_AddObjectRef(m, "FALLBACK", S.fallback) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
