#include "_fastpath.h"
#include <structmember.h>

/*
 * Note [Operator packets]
 * ~~~~~~~~~~~~~~~~~~~~~~~
 * dispatch.ops.<name>(...) and t.<name>(...) call an OpOverloadPacket
 * (dispatch/ops.py), whose base is this type: the call itself is here, in
 * C. A Python __call__ cost a frame and an args tuple and kwargs dict
 * before anything was bound, as much as the whole call of a small
 * elementwise operator (0.4-0.6 us of a 0.9 us `ops.add(x, y)` at 4K
 * elements). The call, in order:
 * - `out=None` is dropped when an overload takes a Tensor `out` (the
 *   functional call, as torch's: its .out overloads never take None);
 * - one or two tensors (exactly dispatch.Tensor) and no keywords go to the
 *   (Tensor) / (Tensor, Tensor) overload the binder resolves to, when it
 *   returns one Tensor (_fast1_at, _fast2_at: chosen by ops.py with
 *   resolve(), so they cannot disagree with the binder);
 * - anything else is bound by bind_call (Note [Binding in C]);
 * - when no overload binds, the packet's _no_overload (Python) words the
 *   TypeError.
 * The Python subclass keeps everything else (overloads, docs, __getattr__).
 */
typedef struct {
    PyObject_HEAD
    PyObject *plans;          /* _plans: one binding plan per overload, in order */
    PyObject *fast1, *fast2;  /* _fast1_at, _fast2_at: an operator address or None */
    const void *op1, *op2;    /* ... read once */
    char out_none;            /* _out_none: drop out=None */
    vectorcallfunc vectorcall;
} OperatorPacket;

static PyObject *str_out, *str_no_overload;

/* The TypeError of a call no overload takes, from the packet's
 * _no_overload(args, kwargs). */
static PyObject *no_overload(PyObject *self, const call_args *c) {
    Py_ssize_t nk = c->kwnames ? PyTuple_GET_SIZE(c->kwnames) : 0;
    PyObject *pos = PyTuple_New(c->npos), *kw = PyDict_New();
    for (Py_ssize_t i = 0; pos && i < c->npos; i++) PyTuple_SET_ITEM(pos, i, Py_NewRef(c->args[i]));
    for (Py_ssize_t k = 0; kw && k < nk; k++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(c->kwnames, k), c->args[c->npos + k]) < 0)
            Py_CLEAR(kw);
    PyObject *r = pos && kw ? PyObject_CallMethodObjArgs(self, str_no_overload, pos, kw, NULL)
                            : NULL;
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    if (r) { /* it should have raised */
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "no overload of this operator takes these arguments");
    }
    return NULL;
}

/* The index of the keyword out=None among c's keywords, or -1. */
static Py_ssize_t out_none_keyword(const call_args *c) {
    if (!c->kwnames) return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(c->kwnames); k++) {
        PyObject *key = PyTuple_GET_ITEM(c->kwnames, k);
        if (c->args[c->npos + k] == Py_None &&
            (key == str_out || PyUnicode_Compare(key, str_out) == 0))
            return k;
    }
    return -1;
}

/* The call with c's keyword k left out. */
static PyObject *call_without_keyword(OperatorPacket *p, const call_args *c, Py_ssize_t k) {
    Py_ssize_t nk = PyTuple_GET_SIZE(c->kwnames);
    PyObject **a = PyMem_Malloc(sizeof(PyObject *) * (size_t)(c->npos + nk));
    PyObject *names = nk > 1 ? PyTuple_New(nk - 1) : NULL;
    if (!a || (nk > 1 && !names)) {
        PyMem_Free(a);
        Py_XDECREF(names);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < c->npos; i++) a[i] = c->args[i];
    for (Py_ssize_t j = 0, o = 0; j < nk; j++) {
        if (j == k) continue;
        a[c->npos + o] = c->args[c->npos + j];
        PyTuple_SET_ITEM(names, o++, Py_NewRef(PyTuple_GET_ITEM(c->kwnames, j)));
    }
    call_args d = {a, c->npos, names};
    PyObject *r = bind_call(p->plans, &d);
    if (r == S.no_match) {
        Py_DECREF(r);
        r = no_overload((PyObject *)p, &d);
    }
    Py_XDECREF(names);
    PyMem_Free(a);
    return r;
}

static PyObject *packet_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    OperatorPacket *p = (OperatorPacket *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames) == 0) kwnames = NULL;
    if (!S.ready || !p->plans) {
        PyErr_SetString(PyExc_RuntimeError, "an operator packet called before it was set up");
        return NULL;
    }
    if (!kwnames) {
        if (n == 2 && p->op2 && Py_IS_TYPE(args[0], S.tensor_type) &&
            Py_IS_TYPE(args[1], S.tensor_type))
            return call2(p->op2, (TensorBase *)args[0], (TensorBase *)args[1]);
        if (n == 1 && p->op1 && Py_IS_TYPE(args[0], S.tensor_type))
            return call1(p->op1, (TensorBase *)args[0]);
    }
    call_args c = {args, n, kwnames};
    if (p->out_none) {
        Py_ssize_t k = out_none_keyword(&c);
        if (k >= 0) return call_without_keyword(p, &c, k);
    }
    PyObject *r = bind_call(p->plans, &c);
    if (r != S.no_match) return r;
    Py_DECREF(r);
    return no_overload(self, &c);
}

PyObject *packet_call(PyObject *packet, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    /* a subclass that defines __call__ has its own tp_call */
    if (PyObject_TypeCheck(packet, &OperatorPacketType) &&
        Py_TYPE(packet)->tp_call == OperatorPacketType.tp_call)
        return packet_vectorcall(packet, args, nargsf, kwnames);
    return PyObject_Vectorcall(packet, args, nargsf, kwnames);
}

static PyObject *packet_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)args, (void)kwds;
    OperatorPacket *p = (OperatorPacket *)type->tp_alloc(type, 0);
    if (!p) return NULL;
    p->fast1 = Py_NewRef(Py_None);
    p->fast2 = Py_NewRef(Py_None);
    p->vectorcall = packet_vectorcall;
    return (PyObject *)p;
}

static int packet_traverse(OperatorPacket *p, visitproc visit, void *arg) {
    Py_VISIT(p->plans);
    Py_VISIT(p->fast1);
    Py_VISIT(p->fast2);
    return 0; /* a Python subclass's traverse visits its type */
}

static int packet_clear(OperatorPacket *p) {
    Py_CLEAR(p->plans);
    Py_CLEAR(p->fast1);
    Py_CLEAR(p->fast2);
    p->op1 = p->op2 = NULL;
    return 0;
}

static void packet_dealloc(OperatorPacket *p) {
    PyObject_GC_UnTrack(p);
    packet_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p); /* a Python subclass's dealloc drops its type */
}

/* _fast1_at / _fast2_at: an operator address (int) or None. */
static PyObject *get_fast(OperatorPacket *p, void *which) {
    return Py_NewRef(which ? p->fast2 : p->fast1);
}

static int set_fast(OperatorPacket *p, PyObject *v, void *which) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "an operator packet's fast path is set, not deleted");
        return -1;
    }
    const void *op = NULL;
    if (v != Py_None && !(op = address(v))) return -1;
    if (which) {
        Py_SETREF(p->fast2, Py_NewRef(v));
        p->op2 = op;
    } else {
        Py_SETREF(p->fast1, Py_NewRef(v));
        p->op1 = op;
    }
    return 0;
}

static int set_plans(OperatorPacket *p, PyObject *v, void *closure) {
    (void)closure;
    if (!v || !PyTuple_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "_plans is a tuple of binding plans");
        return -1;
    }
    Py_XSETREF(p->plans, Py_NewRef(v));
    return 0;
}

static PyObject *get_plans(OperatorPacket *p, void *closure) {
    (void)closure;
    if (!p->plans) {
        PyErr_SetString(PyExc_AttributeError, "_plans");
        return NULL;
    }
    return Py_NewRef(p->plans);
}

/* Python 3.12 gives a subclass that keeps this tp_call the vectorcall
 * flag (gh-93274); 3.11 does not, so every keyword call would pack a dict
 * and unpack it again. Set here, for a subclass that does not define
 * __call__. */
static PyObject *packet_init_subclass(PyObject *cls, PyObject *unused) {
    (void)unused;
    PyTypeObject *t = (PyTypeObject *)cls;
    if (t->tp_call == OperatorPacketType.tp_call &&
        t->tp_vectorcall_offset == OperatorPacketType.tp_vectorcall_offset &&
        !(t->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL)) {
        t->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
        PyType_Modified(t);
    }
    Py_RETURN_NONE;
}

static PyMethodDef packet_methods[] = {
    {"__init_subclass__", packet_init_subclass, METH_NOARGS | METH_CLASS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef packet_getset[] = {
    {"_plans", (getter)get_plans, (setter)set_plans, "the binding plans, in resolution order",
     NULL},
    {"_fast1_at", (getter)get_fast, (setter)set_fast,
     "the (Tensor) overload's address, or None", NULL},
    {"_fast2_at", (getter)get_fast, (setter)set_fast,
     "the (Tensor, Tensor) overload's address, or None", (void *)1},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef packet_members[] = {
    {"_out_none", T_BOOL, offsetof(OperatorPacket, out_none), 0,
     "drop out=None before binding"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject OperatorPacketType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dispatch._fastpath.OperatorPacket",
    .tp_doc = "The call of an operator packet (Note [Operator packets]); "
              "dispatch.ops.OpOverloadPacket is the class to use.",
    .tp_basicsize = sizeof(OperatorPacket),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = packet_new,
    .tp_dealloc = (destructor)packet_dealloc,
    .tp_traverse = (traverseproc)packet_traverse,
    .tp_clear = (inquiry)packet_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(OperatorPacket, vectorcall),
    .tp_getset = packet_getset,
    .tp_members = packet_members,
    .tp_methods = packet_methods,
};

/* Called once by the module's init. */
int packet_type_ready(void) {
    str_out = PyUnicode_InternFromString("out");
    str_no_overload = PyUnicode_InternFromString("_no_overload");
    if (!str_out || !str_no_overload) return -1;
    return PyType_Ready(&OperatorPacketType);
}
