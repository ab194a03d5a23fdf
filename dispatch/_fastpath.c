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
 * A tensor with a number (`t + 1.0`, `2 * t`, `t < np.float32(3)`) takes
 * the same road: the number (a Python or NumPy bool, integer or float) is
 * read here, as the binder reads a Scalar, and dispatch_call_ts wraps it
 * into a 0-dim tensor for the call (the dtype promotion of a Python number,
 * as torch's). Only an operand that is neither a tensor nor a number goes
 * back to Python: the one operand hook dispatch/_interop.py sets (a NumPy
 * array becomes a tensor), else NotImplemented.
 *
 * This module does not link the runtime (a second copy would have its own
 * dispatcher and loop table). dispatch/_tensor.py hands it, once, the
 * addresses of dispatch_call_tt, dispatch_call_ts and dispatch_tensor_decref
 * (and the binder's) from dispatch._core, the operator handles, and Python
 * callables for the rest: converting between addresses and cffi pointers and
 * raising the runtime's error. The cffi pointer `_p` the Python code uses is
 * made on first access and kept; a tensor made from Python (`t._p = p`) gets
 * its address on first need.
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
typedef dispatch_tensor *(*call_number_fn)(const void *op, dispatch_tensor *a, double d,
                                           int64_t i, int kind, int reverse);
typedef void (*decref_fn)(dispatch_tensor *t);
typedef int (*call_fn)(const void *op, dispatch_ivalue *args, int nargs, dispatch_ivalue *rets);
typedef int (*default_fn)(const void *op, int i, dispatch_ivalue *out);
typedef void (*release_fn)(dispatch_ivalue *v, int n);
typedef dispatch_tensor *(*wrap_double_fn)(double v);
typedef dispatch_tensor *(*wrap_int_fn)(int64_t v);
typedef dispatch_tensor *(*wrap_bool_fn)(int v);

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
    call_number_fn call_number; /* tensor <op> number: dispatch_call_ts */
    decref_fn decref;
    call_fn call;
    default_fn op_default;
    release_fn release;
    wrap_double_fn wrap_double; /* bind_init: numbers as Tensor arguments */
    wrap_int_fn wrap_int;
    wrap_bool_fn wrap_bool;
    PyTypeObject *dtype_type;  /* dispatch.dtype: ScalarType arguments */
    PyObject *no_match;        /* bind_call: no overload binds */
    const void *ops[NOPS];
    PyObject *operand_hook;  /* other operand -> Tensor or NotImplemented; NULL: none set */
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

/* wrap(r), or the argument object a when r is its tensor (an in-place
 * operator returns self: the same object, as PyTorch's). */
static PyObject *wrap_or_same(dispatch_tensor *r, TensorBase *a) {
    if (!r || r != a->ptr) return wrap(r);
    S.decref(r);
    return Py_NewRef((PyObject *)a);
}

static PyObject *call2(const void *op, TensorBase *a, TensorBase *b) {
    dispatch_tensor *pa = pointer_of(a), *pb = pa ? pointer_of(b) : NULL;
    if (!pb) return NULL;
    PyThreadState *ts = release_for(pa->numel + pb->numel);
    dispatch_tensor *r = S.call_tt(op, pa, pb);
    reacquire(ts);
    return wrap_or_same(r, a);
}

static PyObject *call1(const void *op, TensorBase *a) {
    dispatch_tensor *pa = pointer_of(a);
    if (!pa) return NULL;
    PyThreadState *ts = release_for(pa->numel);
    dispatch_tensor *r = S.call_t(op, pa);
    reacquire(ts);
    return wrap_or_same(r, a);
}

/* What a value is, for binding: several at once (a bool is an int too). */
enum { V_BOOL = 1, V_INT = 2, V_FLOAT = 4, V_TENSOR = 8, V_DTYPE = 16, V_SEQ = 32 };

static int is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &TensorBaseType); }

static int classify(PyObject *v);
static int to_int64(PyObject *v, int64_t *out);
static int to_double(PyObject *v, double *out);

/* t <op> other (other <op> t when reverse), other neither a tensor nor a
 * number: the operand hook's tensor, or NotImplemented. */
static PyObject *with_operand(int op, TensorBase *t, PyObject *other, int reverse) {
    if (!S.operand_hook) Py_RETURN_NOTIMPLEMENTED;
    PyObject *o = PyObject_CallOneArg(S.operand_hook, other);
    if (!o || o == Py_NotImplemented) return o;
    PyObject *r = NULL;
    if (!is_tensor(o))
        PyErr_SetString(PyExc_TypeError, "the operand hook must return a Tensor or NotImplemented");
    else
        r = reverse ? call2(S.ops[op], (TensorBase *)o, t) : call2(S.ops[op], t, (TensorBase *)o);
    Py_DECREF(o);
    return r;
}

/* t <op> other (other <op> t when reverse), other not a tensor (Note
 * [Operator fast path]): a number goes to dispatch_call_ts as the binder's
 * Scalar does (an int beyond int64 is an OverflowError naming it). */
static PyObject *with_other(int op, TensorBase *t, PyObject *other, int reverse) {
    int f = classify(other);
    if (f < 0) return NULL;
    double d = 0;
    int64_t i = 0;
    int kind;
    if (f & V_BOOL) {
        int b = PyObject_IsTrue(other);
        if (b < 0) return NULL;
        kind = DISPATCH_NUMBER_BOOL, i = b;
    } else if (f & V_INT) {
        if (to_int64(other, &i) < 0) return NULL;
        kind = DISPATCH_NUMBER_INT;
    } else if (f & V_FLOAT) {
        if (to_double(other, &d) < 0) return NULL;
        kind = DISPATCH_NUMBER_FLOAT;
    } else {
        return with_operand(op, t, other, reverse);
    }
    dispatch_tensor *pa = pointer_of(t);
    if (!pa) return NULL;
    PyThreadState *ts = release_for(pa->numel);
    dispatch_tensor *r = S.call_number(S.ops[op], pa, d, i, kind, reverse);
    reacquire(ts);
    return wrap_or_same(r, t);
}

static PyObject *binary(int op, PyObject *x, PyObject *y) {
    if (!S.ready) Py_RETURN_NOTIMPLEMENTED;
    int tx = is_tensor(x), ty = is_tensor(y);
    if (tx && ty) return call2(S.ops[op], (TensorBase *)x, (TensorBase *)y);
    return tx ? with_other(op, (TensorBase *)x, y, 0) : with_other(op, (TensorBase *)y, x, 1);
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
 *      call_ts, decref, call, op_default, ivalue_release), ops, to_cdata,
 *      to_address, raise_error): see the Note. The third argument holds
 * function addresses; ops is a tuple in the order of the enum above. */
static PyObject *init(PyObject *self, PyObject *args) {
    (void)self;
    if (S.ready) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath is initialised once");
        return NULL;
    }
    PyObject *type, *dtype_type, *call_tt, *call_t, *call_ts, *call_number, *decref, *call,
        *op_default, *release, *ops, *to_cdata, *to_address, *raise_error;
    if (!PyArg_ParseTuple(args, "O!O!(OOOOOOOO)O!OOO", &PyType_Type, &type, &PyType_Type,
                          &dtype_type, &call_tt, &call_t, &call_ts, &call_number, &decref, &call,
                          &op_default, &release, &PyTuple_Type, &ops, &to_cdata, &to_address,
                          &raise_error))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)type, &TensorBaseType) || PyTuple_GET_SIZE(ops) != NOPS) {
        PyErr_SetString(PyExc_TypeError, "init: a TensorBase subclass and a tuple of one "
                                         "operator handle per operator slot");
        return NULL;
    }
    S.call_tt = (call_tt_fn)address(call_tt);
    S.call_t = (call_t_fn)address(call_t);
    S.call_tensors_scalar = (call_ts_fn)address(call_ts);
    S.call_number = (call_number_fn)address(call_number);
    S.call = (call_fn)address(call);
    S.op_default = (default_fn)address(op_default);
    S.release = (release_fn)address(release);
    S.decref = (decref_fn)address(decref);
    for (int i = 0; i < NOPS; i++) S.ops[i] = address(PyTuple_GET_ITEM(ops, i));
    if (PyErr_Occurred()) return NULL;
    S.tensor_type = (PyTypeObject *)Py_NewRef(type);
    S.dtype_type = (PyTypeObject *)Py_NewRef(dtype_type);
    S.to_cdata = Py_NewRef(to_cdata);
    S.to_address = Py_NewRef(to_address);
    S.raise_error = Py_NewRef(raise_error);
    S.ready = 1;
    Py_RETURN_NONE;
}

/* set_operand_hook(fn): fn(other) -> Tensor or NotImplemented, for an
 * operand of + - * / and the comparisons that is neither a tensor nor a
 * number (Note [Operator fast path]); set by dispatch/_interop.py. */
static PyObject *set_operand_hook(PyObject *self, PyObject *fn) {
    (void)self;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "set_operand_hook takes a callable");
        return NULL;
    }
    Py_XSETREF(S.operand_hook, Py_NewRef(fn));
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
        kind = DISPATCH_NUMBER_BOOL, i = v == Py_True;
    } else if (PyLong_CheckExact(v)) {
        kind = DISPATCH_NUMBER_INT;
        int64_t i64;
        if (to_int64(v, &i64) < 0) return NULL; /* names the value when it overflows */
        i = i64;
    } else if (PyFloat_CheckExact(v)) {
        kind = DISPATCH_NUMBER_FLOAT, d = PyFloat_AS_DOUBLE(v);
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
    return nt > 0 ? wrap_or_same(r, (TensorBase *)args[3]) : wrap(r);
}

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

static struct {
    PyObject *name;                      /* "numpy" */
    PyObject *bool_, *integer, *floating; /* its scalar types, once it is imported */
} NP;

/* V_BOOL/V_INT/V_FLOAT for a NumPy scalar, 0 for anything else or while
 * NumPy is not imported (nothing is NumPy's then), -1 with an error set. */
static int numpy_kind(PyObject *v) {
    if (!NP.bool_) {
        PyObject *np = PyImport_GetModule(NP.name);
        if (!np) return PyErr_Occurred() ? -1 : 0;
        PyObject *b = PyObject_GetAttrString(np, "bool_"), *i = PyObject_GetAttrString(np, "integer"),
                 *f = PyObject_GetAttrString(np, "floating");
        Py_DECREF(np);
        if (!b || !i || !f) {
            Py_XDECREF(b);
            Py_XDECREF(i);
            Py_XDECREF(f);
            return -1;
        }
        NP.bool_ = b, NP.integer = i, NP.floating = f;
    }
    int r;
    if ((r = PyObject_IsInstance(v, NP.bool_)) != 0) return r < 0 ? -1 : V_BOOL;
    if ((r = PyObject_IsInstance(v, NP.integer)) != 0) return r < 0 ? -1 : V_INT;
    if ((r = PyObject_IsInstance(v, NP.floating)) != 0) return r < 0 ? -1 : V_FLOAT;
    return 0;
}

/* The V_* flags of a value (not None), or -1 with an error set. */
static int classify(PyObject *v) {
    if (PyLong_CheckExact(v)) return V_INT;
    if (PyFloat_CheckExact(v)) return V_FLOAT;
    if (PyBool_Check(v)) return V_BOOL | V_INT;
    if (PyObject_TypeCheck(v, S.tensor_type)) return V_TENSOR;
    int f = (PyLong_Check(v) ? V_INT : 0) | (PyFloat_Check(v) ? V_FLOAT : 0) |
            (PyTuple_Check(v) || PyList_Check(v) ? V_SEQ : 0) |
            (PyObject_TypeCheck(v, S.dtype_type) ? V_DTYPE : 0);
    if (f || PyUnicode_Check(v)) return f;
    return numpy_kind(v);
}

/* int(v) as an int64. */
static int to_int64(PyObject *v, int64_t *out) {
    PyObject *n = PyLong_CheckExact(v) ? Py_NewRef(v) : PyNumber_Long(v);
    if (!n) return -1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (overflow) { /* the value named: a call has several numbers */
        PyErr_Format(PyExc_OverflowError, "int too big to convert: %S is outside int64's range "
                     "[-2**63, 2**63 - 1]", n);
        Py_DECREF(n);
        return -1;
    }
    Py_DECREF(n);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

/* float(v). */
static int to_double(PyObject *v, double *out) {
    double d = PyFloat_CheckExact(v) ? PyFloat_AS_DOUBLE(v) : PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *out = d;
    return 0;
}

/* bool(v) of a Python or NumPy bool. */
static int to_bool(PyObject *v, int64_t *out) {
    int b = v == Py_True ? 1 : v == Py_False ? 0 : PyObject_IsTrue(v);
    if (b < 0) return -1;
    *out = b;
    return 0;
}

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
        PyObject *num = PyObject_GetAttrString(v, "num");
        if (!num) return BIND_ERROR;
        iv->tag = DISPATCH_IV_INT;
        int rc = to_int64(num, &iv->v.i);
        Py_DECREF(num);
        return rc < 0 ? BIND_ERROR : BIND_OK;
    }
    default:
        return BIND_NO_MATCH; /* str arguments */
    }
}

/* Bind a call to one overload (the rules of the Note); on BIND_OK, b holds
 * the arguments, b->last of them given or before one given. */
static int bind(const void *op, const unsigned char *spec, Py_ssize_t np, PyObject *names,
                PyObject *const *pos, Py_ssize_t npos_given, PyObject *kwargs, bound *b) {
    b->nmade = 0;
    Py_ssize_t npos = 0;
    for (Py_ssize_t i = 0; i < np; i++) npos += !(spec[i] >> 5 & 1);
    if (npos_given > npos) return BIND_NO_MATCH;
    char given[DISPATCH_MAX_ARGS] = {0};
    Py_ssize_t kpos = 0;
    PyObject *key, *value;
    if (kwargs) { /* every keyword must name an argument, before converting */
        while (PyDict_Next(kwargs, &kpos, &key, &value)) {
            int r = PySequence_Contains(names, key);
            if (r != 1) return r < 0 ? BIND_ERROR : BIND_NO_MATCH;
        }
    }
    for (Py_ssize_t i = 0; i < npos_given; i++) {
        int rc = bind_argument(pos[i], spec[i], PyTuple_GET_ITEM(names, i), &b->iv[i], b);
        if (rc != BIND_OK) return rc;
        given[i] = 1;
    }
    int last = (int)npos_given;
    kpos = 0;
    while (kwargs && PyDict_Next(kwargs, &kpos, &key, &value)) {
        Py_ssize_t i = PySequence_Index(names, key);
        if (i < 0) return BIND_ERROR;
        if (given[i]) return BIND_NO_MATCH;
        int rc = bind_argument(value, spec[i], key, &b->iv[i], b);
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
static Py_ssize_t bind_first(PyObject *const *args, Py_ssize_t nargs, plan *pl, bound *b) {
    if (!S.ready || !S.wrap_double || nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        (args[2] != Py_None && !PyDict_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "expected (plans, args, kwargs)");
        return -2;
    }
    PyObject *plans = args[0], *kwargs = args[2] == Py_None ? NULL : args[2];
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(plans); j++) {
        if (read_plan(PyTuple_GET_ITEM(plans, j), pl) < 0) return -2;
        int rc = bind(pl->op, pl->spec, pl->np, pl->names, &PyTuple_GET_ITEM(args[1], 0),
                      PyTuple_GET_SIZE(args[1]), kwargs, b);
        if (rc == BIND_OK) return j;
        bound_release(b);
        if (rc == BIND_ERROR) return -2;
    }
    return -1;
}

static PyObject *py_resolve(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    plan pl;
    bound b;
    Py_ssize_t j = bind_first(args, nargs, &pl, &b);
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
static PyObject *argument_object(const dispatch_tensor *t, PyObject *pos, PyObject *kwargs) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pos); i++) {
        PyObject *v = PyTuple_GET_ITEM(pos, i);
        if (PyObject_TypeCheck(v, &TensorBaseType) && ((TensorBase *)v)->ptr == t)
            return Py_NewRef(v);
    }
    Py_ssize_t k = 0;
    PyObject *key, *v;
    while (kwargs != Py_None && PyDict_Next(kwargs, &k, &key, &v))
        if (PyObject_TypeCheck(v, &TensorBaseType) && ((TensorBase *)v)->ptr == t)
            return Py_NewRef(v);
    return NULL;
}

static PyObject *py_bind_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    plan pl;
    bound b;
    Py_ssize_t j = bind_first(args, nargs, &pl, &b);
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
        (out = argument_object(rets[0].v.t, args[1], args[2]))) {
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

/* bind_init((wrap_double, wrap_int, wrap_bool)): the addresses of
 * dispatch_tensor_wrap_*, for numbers given as Tensor arguments (once,
 * from dispatch.ops). */
static PyObject *py_bind_init(PyObject *self, PyObject *args) {
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

/*
 * Note [Operator methods]
 * ~~~~~~~~~~~~~~~~~~~~~~~
 * t.<name>(...) is dispatch.ops.<name>(t, ...) (dispatch/ops.py installs one
 * per method operator). A Python wrapper costs a frame and an args/kwargs
 * repack on the most common way to call an operator; this descriptor is the
 * method in C. Its type has Py_TPFLAGS_METHOD_DESCRIPTOR, so `t.sum(0)`
 * makes no bound object: the interpreter calls it with t as the first
 * argument, and it hands the same argument array (and keyword names) to the
 * packet. The packet is looked up in dispatch.ops at each call, never kept:
 * dispatch.library replaces it when it adds an overload (ops._invalidate).
 * A name missing from the module's dict goes through getattr, so the
 * module's __getattr__ makes the packet, as a Python getattr would.
 */
typedef struct {
    PyObject_HEAD
    PyObject *name;     /* the operator's name (str) */
    PyObject *module;   /* dispatch.ops */
    PyObject *dict;     /* its __dict__ */
    PyObject *qualname, *doc, *module_name; /* __qualname__, __doc__, __module__ */
    vectorcallfunc vectorcall;
} OperatorMethod;

/* "got multiple values" / a keyword self, as a Python method (self, *args,
 * **kwargs) would: the index of "self" among kwnames, or -1. */
static Py_ssize_t self_keyword(PyObject *kwnames) {
    if (!kwnames) return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "self") == 0) return k;
    return -1;
}

/* The call with self given by keyword (Tensor.sum(self=t)): self moved to
 * the front, the other keywords kept. */
static PyObject *method_call_self_keyword(PyObject *packet,
                                          PyObject *const *args, PyObject *kwnames, Py_ssize_t k) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    PyObject **a = PyMem_Malloc(sizeof(PyObject *) * (size_t)nk);
    PyObject *names = PyTuple_New(nk - 1);
    if (!a || !names) {
        PyMem_Free(a);
        Py_XDECREF(names);
        return PyErr_NoMemory();
    }
    a[0] = args[k];
    for (Py_ssize_t j = 0, o = 0; j < nk; j++) {
        if (j == k) continue;
        a[1 + o] = args[j];
        PyTuple_SET_ITEM(names, o, Py_NewRef(PyTuple_GET_ITEM(kwnames, j)));
        o++;
    }
    PyObject *r = PyObject_Vectorcall(packet, a, 1, nk > 1 ? names : NULL);
    Py_DECREF(names);
    PyMem_Free(a);
    return r;
}

static PyObject *method_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    OperatorMethod *m = (OperatorMethod *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t k = self_keyword(kwnames);
    if (nargs == 0 && k < 0) {
        PyErr_Format(PyExc_TypeError, "%U() missing 1 required positional argument: 'self'",
                     m->qualname);
        return NULL;
    }
    if (nargs > 0 && k >= 0) {
        PyErr_Format(PyExc_TypeError, "%U() got multiple values for argument 'self'",
                     m->qualname);
        return NULL;
    }
    if (!m->dict) { /* cleared by the cycle collector (interpreter shutdown) */
        PyErr_Format(PyExc_RuntimeError, "%U(): dispatch.ops is gone", m->qualname);
        return NULL;
    }
    /* the packet dispatch.ops holds now (Note [Operator methods]) */
    PyObject *packet = PyDict_GetItemWithError(m->dict, m->name);
    if (packet) {
        Py_INCREF(packet);
    } else {
        if (PyErr_Occurred()) return NULL;
        packet = PyObject_GetAttr(m->module, m->name);
        if (!packet) return NULL;
    }
    /* dispatch.ops.<name> bound to a method (ops.sum = Tensor.sum) calls this
     * descriptor again with no Python frame between: the limit a Python
     * function would meet, a RecursionError rather than a stack overflow. */
    if (Py_EnterRecursiveCall(" while calling an operator method")) {
        Py_DECREF(packet);
        return NULL;
    }
    PyObject *r = nargs ? PyObject_Vectorcall(packet, args, nargsf, kwnames)
                        : method_call_self_keyword(packet, args, kwnames, k);
    Py_LeaveRecursiveCall();
    Py_DECREF(packet);
    return r;
}

/* Tensor.sum is the descriptor itself; t.sum a bound method (a method object
 * calls us with t prepended, as it would a function). */
static PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *method_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *module, *name;
    static char *kwlist[] = {"module", "name", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!U:OperatorMethod", kwlist, &PyModule_Type,
                                     &module, &name))
        return NULL;
    PyObject *dict = PyModule_GetDict(module); /* borrowed */
    PyObject *module_name = PyModule_GetNameObject(module);
    if (!dict || !module_name) {
        Py_XDECREF(module_name);
        return NULL;
    }
    OperatorMethod *m = (OperatorMethod *)type->tp_alloc(type, 0);
    if (!m) {
        Py_DECREF(module_name);
        return NULL;
    }
    m->name = Py_NewRef(name);
    PyUnicode_InternInPlace(&m->name); /* module dict keys are interned: pointer-equal lookups */
    m->module = Py_NewRef(module);
    m->dict = Py_NewRef(dict);
    m->qualname = Py_NewRef(name);
    m->doc = PyUnicode_FromFormat("%U.%U(self, ...)", module_name, name);
    m->module_name = module_name;
    m->vectorcall = method_vectorcall;
    if (!m->doc) {
        Py_DECREF(m);
        return NULL;
    }
    return (PyObject *)m;
}

static int method_traverse(OperatorMethod *m, visitproc visit, void *arg) {
    Py_VISIT(m->module);
    Py_VISIT(m->dict);
    return 0;
}

static int method_clear(OperatorMethod *m) {
    Py_CLEAR(m->module);
    Py_CLEAR(m->dict);
    return 0;
}

static void method_dealloc(OperatorMethod *m) {
    PyObject_GC_UnTrack(m);
    method_clear(m);
    Py_CLEAR(m->name);
    Py_CLEAR(m->qualname);
    Py_CLEAR(m->doc);
    Py_CLEAR(m->module_name);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *method_repr(OperatorMethod *m) {
    return PyUnicode_FromFormat("<operator method %U of dispatch.Tensor>", m->name);
}

/* Like a function's: pickled by name, as getattr(dispatch.Tensor, name). */
static PyObject *method_reduce(OperatorMethod *m, PyObject *unused) {
    (void)unused;
    if (!S.tensor_type) {
        PyErr_SetString(PyExc_TypeError, "an operator method pickles once dispatch is imported");
        return NULL;
    }
    PyObject *getattr = PyDict_GetItemString(PyEval_GetBuiltins(), "getattr"); /* borrowed */
    if (!getattr) {
        PyErr_SetString(PyExc_RuntimeError, "no builtins.getattr");
        return NULL;
    }
    return Py_BuildValue("O(OO)", getattr, (PyObject *)S.tensor_type, m->name);
}

static PyObject *method_text_signature(OperatorMethod *m, void *closure) {
    (void)m, (void)closure;
    return PyUnicode_FromString("(self, *args, **kwargs)");
}

static PyMemberDef method_members[] = {
    {"__name__", T_OBJECT_EX, offsetof(OperatorMethod, name), READONLY, NULL},
    /* read-only: the error messages format it */
    {"__qualname__", T_OBJECT_EX, offsetof(OperatorMethod, qualname), READONLY, NULL},
    {"__doc__", T_OBJECT, offsetof(OperatorMethod, doc), 0, NULL},
    {"__module__", T_OBJECT, offsetof(OperatorMethod, module_name), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef method_getset[] = {
    {"__text_signature__", (getter)method_text_signature, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef method_methods[] = {
    {"__reduce__", (PyCFunction)method_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject OperatorMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dispatch._fastpath.OperatorMethod",
    .tp_doc = "OperatorMethod(module, name): the method t.<name>(...) = module.<name>(t, ...), "
              "looked up at each call (Note [Operator methods]).",
    .tp_basicsize = sizeof(OperatorMethod),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = method_new,
    .tp_dealloc = (destructor)method_dealloc,
    .tp_traverse = (traverseproc)method_traverse,
    .tp_clear = (inquiry)method_clear,
    .tp_repr = (reprfunc)method_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(OperatorMethod, vectorcall),
    .tp_descr_get = method_get,
    .tp_members = method_members,
    .tp_getset = method_getset,
    .tp_methods = method_methods,
};

static PyMethodDef methods[] = {
    {"dlpack_capsule", py_dlpack_capsule, METH_VARARGS,
     "dlpack_capsule(address, versioned): a DLPack capsule owning the tensor at address."},
    {"dlpack_take", py_dlpack_take, METH_O,
     "dlpack_take(capsule): (address, versioned) of its tensor; marks the capsule used."},
    {"bind_call", (PyCFunction)(void (*)(void))py_bind_call, METH_FASTCALL,
     "bind_call(plans, args, kwargs): run the first overload that binds (Note [Binding in C])."},
    {"resolve", (PyCFunction)(void (*)(void))py_resolve, METH_FASTCALL,
     "resolve(plans, args, kwargs): the index bind_call would run, or -1 (Note [Binding in C])."},
    {"bind_init", py_bind_init, METH_VARARGS,
     "bind_init((wrap_double, wrap_int, wrap_bool)): connect the binder (once)."},
    {"call_scalar", (PyCFunction)(void (*)(void))py_call_scalar, METH_FASTCALL,
     "call_scalar(op_address, index, value, *tensors): tensors, then one Scalar."},
    {"init", init, METH_VARARGS, "Connect the fast path to dispatch._core (once)."},
    {"set_operand_hook", set_operand_hook, METH_O,
     "fn(other) -> Tensor or NotImplemented for a non-tensor, non-number operand."},
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
    if (PyType_Ready(&TensorBaseType) < 0 || PyType_Ready(&OperatorMethodType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    S.no_match = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    NP.name = PyUnicode_InternFromString("numpy");
    if (!S.no_match || !NP.name ||
        PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0 ||
        PyModule_AddObjectRef(m, "OperatorMethod", (PyObject *)&OperatorMethodType) < 0 ||
        PyModule_AddObjectRef(m, "NO_MATCH", S.no_match) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
