/*
 * dispatch._fastpath: the C base class of dispatch.Tensor, holding its
 * runtime pointer and implementing the arithmetic and comparison operators,
 * the schema binder, the operator methods, the operator packets' call, the
 * tensors made with no operator (empty, to, clone) and the views (shape,
 * view, t[index]), one file each (_fastpath.h);
 * this file is the module: its functions, init() and the state they share.
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
#include "_fastpath.h"

/* Connected once by init() and bind_init(). */
struct fastpath_state S;

/* init(tensor_type, dtype_type, (call_tt, call_t, call_ts, decref, call,
 *      op_default, ivalue_release), ops, to_cdata, to_address, raise_error):
 * see the Note. The third argument holds
 * function addresses; ops is a tuple in the order of the enum above. */
static PyObject *init(PyObject *self, PyObject *args) {
    (void)self;
    if (S.ready) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath is initialised once");
        return NULL;
    }
    PyObject *type, *dtype_type, *call_tt, *call_t, *call_number, *decref, *call,
        *op_default, *release, *ops, *to_cdata, *to_address, *raise_error;
    if (!PyArg_ParseTuple(args, "O!O!(OOOOOOO)O!OOO", &PyType_Type, &type, &PyType_Type,
                          &dtype_type, &call_tt, &call_t, &call_number, &decref, &call,
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

/* TensorBase's methods: each file's table, in one (PyType_Ready takes one). */
static PyMethodDef tensor_methods[16];

static int join_tensor_methods(void) {
    const PyMethodDef *tables[] = {tensor_factory_methods, tensor_view_methods};
    size_t n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const PyMethodDef *m = tables[t]; m->ml_name; m++) {
            if (n + 1 >= sizeof tensor_methods / sizeof tensor_methods[0]) {
                PyErr_SetString(PyExc_SystemError, "_fastpath: tensor_methods is too small");
                return -1;
            }
            tensor_methods[n++] = *m;
        }
    TensorBaseType.tp_methods = tensor_methods;
    return 0;
}

PyMODINIT_FUNC PyInit__fastpath(void) {
    /* Defining tp_richcompare alone would make tensors unhashable. */
    TensorBaseType.tp_hash = PyBaseObject_Type.tp_hash;
    if (join_tensor_methods() < 0) return NULL;
    if (PyType_Ready(&TensorBaseType) < 0 || PyType_Ready(&OperatorMethodType) < 0 ||
        packet_type_ready() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    S.no_match = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (!S.no_match || PyModule_AddFunctions(m, factory_functions) < 0 ||
        PyModule_AddFunctions(m, view_functions) < 0 ||
        PyModule_AddFunctions(m, numpy_functions) < 0 ||
        PyModule_AddFunctions(m, foreign_functions) < 0 ||
        PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0 ||
        PyModule_AddObjectRef(m, "OperatorMethod", (PyObject *)&OperatorMethodType) < 0 ||
        PyModule_AddObjectRef(m, "OperatorPacket", (PyObject *)&OperatorPacketType) < 0 ||
        PyModule_AddObjectRef(m, "NO_MATCH", S.no_match) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
