/* The Tensor type's slots (Note [Operator fast path] in _fastpath.c): the
 * C base of dispatch.Tensor holding its runtime pointer, + - * / and the
 * comparisons as type slots, and the fixed-shape calls call1 and call2 of
 * dispatch.ops. */
#include "_fastpath.h"

/* The tensor's runtime pointer, from its cffi pointer on first need. */
dispatch_tensor *pointer_of(TensorBase *t) {
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
PyObject *wrap(dispatch_tensor *r) {
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
PyThreadState *release_for(int64_t numel) {
    return numel < RELEASE_GIL_NUMEL ? NULL : PyEval_SaveThread();
}

void reacquire(PyThreadState *ts) {
    if (ts) PyEval_RestoreThread(ts);
}

int callables(const char *init, PyObject *const *fb, int n) {
    for (int i = 0; i < n; i++)
        if (!PyCallable_Check(fb[i])) {
            PyErr_Format(PyExc_TypeError, "%s: the fallbacks must be callable", init);
            return -1;
        }
    return 0;
}

PyObject *call_python_path(PyObject *fn, PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames) {
    if (!fn) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath is not connected to its Python "
                                            "paths (init_copies, init_empty, init_views)");
        return NULL;
    }
    if (!self) return PyObject_Vectorcall(fn, args, nargsf, kwnames);
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *small[8], **a = n + nk + 1 <= 8 ? small
                                             : PyMem_Malloc(sizeof(PyObject *) * (size_t)(n + nk + 1));
    if (!a) return PyErr_NoMemory();
    a[0] = self;
    for (Py_ssize_t i = 0; i < n + nk; i++) a[1 + i] = args[i];
    PyObject *r = PyObject_Vectorcall(fn, a, (size_t)(n + 1), kwnames);
    if (a != small) PyMem_Free(a);
    return r;
}

/* wrap(r), or the argument object a when r is its tensor (an in-place
 * operator returns self: the same object, as PyTorch's). */
static PyObject *wrap_or_same(dispatch_tensor *r, TensorBase *a) {
    if (!r || r != a->ptr) return wrap(r);
    S.decref(r);
    return Py_NewRef((PyObject *)a);
}

PyObject *call2(const void *op, TensorBase *a, TensorBase *b) {
    dispatch_tensor *pa = pointer_of(a), *pb = pa ? pointer_of(b) : NULL;
    if (!pb) return NULL;
    PyThreadState *ts = release_for(pa->numel + pb->numel);
    dispatch_tensor *r = S.call_tt(op, pa, pb);
    reacquire(ts);
    return wrap_or_same(r, a);
}

PyObject *call1(const void *op, TensorBase *a) {
    dispatch_tensor *pa = pointer_of(a);
    if (!pa) return NULL;
    PyThreadState *ts = release_for(pa->numel);
    dispatch_tensor *r = S.call_t(op, pa);
    reacquire(ts);
    return wrap_or_same(r, a);
}

static int is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &TensorBaseType); }

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
    /* _fastpath_views.c */
    {"shape", (getter)tensor_shape, NULL, "The sizes, a tuple of ints.", NULL},
    {"ndim", (getter)tensor_ndim, NULL, "The number of dims.", NULL},
    {"T", (getter)tensor_T, NULL, "The dims reversed (a view).", NULL},
    /* _fastpath_numpy.c */
    {"__array_interface__", (getter)tensor_array_interface, NULL,
     "NumPy's array interface (version 3) of this tensor's memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyNumberMethods tensor_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
};

PyTypeObject TensorBaseType = {
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
    .tp_as_mapping = &tensor_view_mapping, /* t[index]: _fastpath_views.c */
    /* .tp_methods: the module's init joins _fastpath_factories.c's and
     * _fastpath_views.c's */
    .tp_weaklistoffset = offsetof(TensorBase, weakrefs),
};

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

PyObject *py_call1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const void *op;
    if (check_call(args, nargs, 2, &op) < 0) return NULL;
    return call1(op, (TensorBase *)args[1]);
}

PyObject *py_call2(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const void *op;
    if (check_call(args, nargs, 3, &op) < 0) return NULL;
    return call2(op, (TensorBase *)args[1], (TensorBase *)args[2]);
}
