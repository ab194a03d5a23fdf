/*
 * Tensor.__array_interface__ in C: what np.asarray(t) and t.numpy() read.
 *
 * Note [The array interface in C]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * NumPy asks for the interface on every conversion, and built in Python it
 * cost 2.3 us of t.numpy()'s 3.4 (the shape and strides read through cffi,
 * one element at a time). A CPU tensor of a dtype NumPy has gets its dict
 * here, from the tensor's own fields: version 3, the shape, the strides in
 * bytes (0 for a dim of size 1, which never steps: its stride may be
 * anything, even past NumPy's intp once in bytes), the typestr, and the
 * data address with the storage's read-only flag. Any other tensor (cuda,
 * meta, bfloat16) goes to the Python function init_array_interface was
 * given, which raises the error that names what to do.
 */
#include "_fastpath.h"

typedef const char *(*typestr_fn)(int dtype);
typedef int (*is_readonly_fn)(const dispatch_storage *s);

static struct {
    typestr_fn typestr; /* dispatch_dtype_typestr; NULL until init_array_interface */
    is_readonly_fn is_readonly;
    PyObject *fallback; /* fallback(t): the Python path, for the tensors above */
    /* the dict's keys, and each dtype's typestr as a str, made once */
    PyObject *version, *shape, *strides, *typestr_key, *data;
    PyObject *typestrs[64];
} N;

/* dtype's typestr as a str (made on first need), or NULL when NumPy has
 * none (bfloat16, an unknown dtype: the fallback's case). */
static PyObject *typestr_of(int dtype) {
    if (dtype < 0 || dtype >= (int)(sizeof N.typestrs / sizeof N.typestrs[0])) return NULL;
    if (!N.typestrs[dtype]) {
        const char *ts = N.typestr(dtype);
        if (!ts[0]) return NULL;
        N.typestrs[dtype] = PyUnicode_InternFromString(ts);
        if (!N.typestrs[dtype]) PyErr_Clear(); /* then the fallback builds it */
    }
    return N.typestrs[dtype];
}

/* The strides in bytes, 0 for a dim of size 1 (the shape: tensor_shape). */
static PyObject *byte_strides(const dispatch_tensor *p, int64_t itemsize) {
    const int n = (int)p->ndim;
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *v = PyLong_FromLongLong(p->sizes[k] > 1 ? p->strides[k] * itemsize : 0);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

PyObject *tensor_array_interface(TensorBase *self, void *closure) {
    (void)closure;
    if (!N.typestr) {
        PyErr_SetString(PyExc_AttributeError, "__array_interface__");
        return NULL;
    }
    dispatch_tensor *p = pointer_of(self);
    if (!p) return NULL;
    PyObject *ts = p->device == DISPATCH_DEVICE_CPU ? typestr_of(p->dtype) : NULL;
    if (!ts) return PyObject_CallOneArg(N.fallback, (PyObject *)self);
    /* "<f4", "|b1": the size follows the byte order and the kind */
    const int64_t itemsize = atoi(PyUnicode_AsUTF8(ts) + 2);
    PyObject *d = PyDict_New(), *shape = tensor_shape(self, NULL);
    PyObject *strides = byte_strides(p, itemsize);
    PyObject *addr = PyLong_FromVoidPtr(p->data);
    PyObject *data = addr ? PyTuple_Pack(2, addr, N.is_readonly(p->storage) ? Py_True : Py_False)
                          : NULL;
    PyObject *three = PyLong_FromLong(3);
    if (!d || !shape || !strides || !data || !three ||
        PyDict_SetItem(d, N.version, three) < 0 || PyDict_SetItem(d, N.shape, shape) < 0 ||
        PyDict_SetItem(d, N.strides, strides) < 0 || PyDict_SetItem(d, N.typestr_key, ts) < 0 ||
        PyDict_SetItem(d, N.data, data) < 0)
        Py_CLEAR(d);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(addr);
    Py_XDECREF(data);
    Py_XDECREF(three);
    return d;
}

/* init_array_interface((typestr, is_readonly), fallback): the runtime's
 * dispatch_dtype_typestr and dispatch_storage_is_readonly, and the Python
 * path for the tensors C does not take; once, from dispatch._tensor. */
static PyObject *init_array_interface(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *a[2], *fb;
    if (!PyArg_ParseTuple(args, "(OO)O", &a[0], &a[1], &fb)) return NULL;
    if (N.typestr) {
        PyErr_SetString(PyExc_RuntimeError,
                        "dispatch._fastpath.init_array_interface is called once");
        return NULL;
    }
    if (callables("init_array_interface", &fb, 1) < 0) return NULL;
    void *at[2];
    for (int i = 0; i < 2; i++)
        if (!(at[i] = address(a[i]))) return NULL;
    N.version = PyUnicode_InternFromString("version");
    N.shape = PyUnicode_InternFromString("shape");
    N.strides = PyUnicode_InternFromString("strides");
    N.typestr_key = PyUnicode_InternFromString("typestr");
    N.data = PyUnicode_InternFromString("data");
    if (!N.version || !N.shape || !N.strides || !N.typestr_key || !N.data) return NULL;
    N.fallback = Py_NewRef(fb);
    N.is_readonly = (is_readonly_fn)at[1];
    N.typestr = (typestr_fn)at[0]; /* last: the sign that init ran */
    Py_RETURN_NONE;
}

PyMethodDef numpy_functions[] = {
    {"init_array_interface", init_array_interface, METH_VARARGS,
     "Connect Tensor.__array_interface__ to the runtime (once; Note [The array interface "
     "in C])."},
    {NULL, NULL, 0, NULL},
};
