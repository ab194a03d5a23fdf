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

#include "dispatch/tensor.h"

typedef dispatch_tensor *(*call_tt_fn)(const void *op, dispatch_tensor *a, dispatch_tensor *b);
typedef dispatch_tensor *(*call_t_fn)(const void *op, dispatch_tensor *a);
typedef void (*decref_fn)(dispatch_tensor *t);

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
    decref_fn decref;
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

static PyObject *call2(const void *op, TensorBase *a, TensorBase *b) {
    dispatch_tensor *pa = pointer_of(a), *pb = pa ? pointer_of(b) : NULL;
    if (!pb) return NULL;
    dispatch_tensor *r;
    if (pa->numel + pb->numel < RELEASE_GIL_NUMEL) {
        r = S.call_tt(op, pa, pb);
    } else {
        Py_BEGIN_ALLOW_THREADS
        r = S.call_tt(op, pa, pb);
        Py_END_ALLOW_THREADS
    }
    return wrap(r);
}

static PyObject *call1(const void *op, TensorBase *a) {
    dispatch_tensor *pa = pointer_of(a);
    if (!pa) return NULL;
    dispatch_tensor *r;
    if (pa->numel < RELEASE_GIL_NUMEL) {
        r = S.call_t(op, pa);
    } else {
        Py_BEGIN_ALLOW_THREADS
        r = S.call_t(op, pa);
        Py_END_ALLOW_THREADS
    }
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

/* init(tensor_type, call_tt, call_t, decref, ops, forward, reverse, to_cdata,
 *      to_address, raise_error): see the Note. ops, forward and reverse are
 * tuples in the order of the enum above. */
static PyObject *init(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *type, *call_tt, *call_t, *decref, *ops, *fwd, *rev, *to_cdata, *to_address,
        *raise_error;
    if (!PyArg_ParseTuple(args, "O!OOOO!O!O!OOO", &PyType_Type, &type, &call_tt, &call_t,
                          &decref, &PyTuple_Type, &ops, &PyTuple_Type, &fwd, &PyTuple_Type, &rev,
                          &to_cdata, &to_address, &raise_error))
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
    S.decref = (decref_fn)address(decref);
    for (int i = 0; i < NOPS; i++) S.ops[i] = address(PyTuple_GET_ITEM(ops, i));
    if (PyErr_Occurred()) return NULL;
    for (int i = 0; i < NOPS; i++) {
        S.forward[i] = Py_NewRef(PyTuple_GET_ITEM(fwd, i));
        S.reverse[i] = Py_NewRef(PyTuple_GET_ITEM(rev, i));
    }
    S.tensor_type = (PyTypeObject *)Py_NewRef(type);
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

static PyMethodDef methods[] = {
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
    if (PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
