#include "_fastpath.h"
#include <structmember.h>

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
    PyObject *r = packet_call(packet, a, 1, nk > 1 ? names : NULL);
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
    PyObject *r = nargs ? packet_call(packet, args, nargsf, kwnames)
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

PyTypeObject OperatorMethodType = {
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
