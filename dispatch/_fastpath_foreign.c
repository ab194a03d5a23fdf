/*
 * from_numpy's tensor over an array's memory in one call, and the release
 * that lets the array go.
 *
 * Note [Foreign tensors in C]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * from_numpy took 4.4 us a call against torch's 0.55: 2.2 of them were the
 * cffi calls that made the storage and the tensor (its shape and strides
 * converted from lists) and the wrapper, 1.0 the release (a cffi callback
 * into Python), and the rest the strides' checks, the address (the buffer
 * protocol, or __array_interface__'s dict for any other layout) and the
 * ffi handle. Which array and which dtype stay Python's (Note [Arrays that
 * lie] in dispatch/_interop.py), and so does the owner table (Note [Owner
 * table without a lock]); foreign_tensor checks the strides, reads the
 * address from the array's buffer, and makes the storage, its read-only
 * flag, the tensor and its wrapper. The storage's release is release_owner
 * below: it takes the GIL, pops the array's owner from the table and drops
 * it after the pop, as the Python callback did (the drop may run __del__s,
 * and nothing is held then). What the checks refuse, and more dims than the
 * runtime has, is answered NO_MATCH before anything is made: from_numpy's
 * cffi path then says what is wrong, in the words it always had.
 */
#include "_fastpath.h"

typedef dispatch_storage *(*from_foreign_fn)(int device, void *data, size_t nbytes,
                                             void (*release)(void *ctx), void *ctx);
typedef void (*storage_fn)(dispatch_storage *s);
typedef dispatch_tensor *(*from_storage_fn)(dispatch_storage *s, int ndim, const int64_t *sizes,
                                            const int64_t *strides, int64_t offset, int dtype);

static struct {
    from_foreign_fn from_foreign; /* NULL until init_foreign */
    storage_fn set_readonly, decref;
    from_storage_fn from_storage;
    PyObject *owners; /* dispatch._interop._owners: id(owner) -> owner */
} FG;

/* Pop key from the owner table and drop the owner, after the pop (Note
 * [Owner table without a lock]: dropping it may run __del__s); an error
 * set before is kept. */
static void drop_owner(PyObject *key) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *owner = PyDict_GetItemWithError(FG.owners, key);
    Py_XINCREF(owner);
    if (owner && PyDict_DelItem(FG.owners, key) < 0) Py_CLEAR(owner);
    Py_XDECREF(owner);
    if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL); /* out of memory: the array leaks */
    PyErr_Restore(type, value, tb);
}

/* The storage's release (Note [Foreign tensors in C]): any thread, any time
 * the last reference goes, the GIL held or not. After the interpreter is
 * gone there is nothing left to release. */
static void release_owner(void *ctx) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *key = PyLong_FromVoidPtr(ctx);
    if (key) drop_owner(key);
    else PyErr_WriteUnraisable(NULL);
    Py_XDECREF(key);
    PyGILState_Release(g);
}

/* The address of an array's first element: where its buffer with strides
 * starts, whatever the layout (__array_interface__ builds a dict for it,
 * 2 us). NULL with an error set, or NULL and no error for the address 0. */
static void *data_of(PyObject *array) {
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_STRIDES) < 0) return NULL;
    void *p = view.buf;
    PyBuffer_Release(&view); /* the owner table keeps the array alive, and its memory */
    return p;
}

/* Strides in elements from byte strides of itemsize elements, and the span
 * from the first element to the end of the last (0 for no elements): 0, or
 * -1 where from_numpy's checks have words to say (a negative stride, one
 * that is not whole elements) or the span overflows. */
static int element_strides(int ndim, const int64_t *sizes, const int64_t *byte_strides,
                           int64_t itemsize, int64_t *strides, int64_t *nbytes) {
    int64_t span = itemsize, step;
    int empty = 0;
    for (int k = 0; k < ndim; k++) {
        if (byte_strides[k] < 0 || byte_strides[k] % itemsize) return -1;
        strides[k] = byte_strides[k] / itemsize;
        empty |= sizes[k] == 0;
        if (sizes[k] > 0 && (__builtin_mul_overflow(sizes[k] - 1, byte_strides[k], &step) ||
                             __builtin_add_overflow(span, step, &span)))
            return -1;
    }
    *nbytes = empty ? 0 : span;
    return 0;
}

/* foreign_tensor(array, key, shape, strides, itemsize, dtype, readonly): a
 * Tensor over the array's memory of shape and strides (in bytes, as NumPy
 * gives them), whose storage releases _owners[key] when it goes. NO_MATCH,
 * with nothing made and key left as it was, for what from_numpy's Python
 * path says more about: a negative stride or one that is not whole
 * elements, more dims than the runtime has. Any other failure pops key here
 * and raises: the runtime's error when the storage cannot be made. */
static PyObject *foreign_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!FG.from_foreign) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath.init_foreign was not called");
        return NULL;
    }
    if (nargs != 7 || !PyLong_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "foreign_tensor(array, key, shape, strides, itemsize, "
                                         "dtype, readonly): key an int");
        return NULL;
    }
    int64_t sizes[DISPATCH_MAX_DIMS], byte_strides[DISPATCH_MAX_DIMS];
    int64_t strides[DISPATCH_MAX_DIMS], nbytes, itemsize;
    /* (each a tuple: read_sizes takes one tuple or list of up to DISPATCH_MAX_DIMS ints) */
    const int ndim = read_sizes(&args[2], 1, sizes);
    if (ndim < 0 || read_sizes(&args[3], 1, byte_strides) != ndim ||
        !exact_int64(args[4], &itemsize) ||
        itemsize <= 0 || element_strides(ndim, sizes, byte_strides, itemsize, strides, &nbytes))
        return Py_NewRef(S.no_match);
    /* from here on the key is popped on any failure: no storage will release it */
    void *data = data_of(args[0]);
    const long dtype = PyErr_Occurred() ? 0 : PyLong_AsLong(args[5]);
    const int readonly = PyErr_Occurred() ? 0 : PyObject_IsTrue(args[6]);
    void *key = PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(args[1]);
    if (PyErr_Occurred()) {
        drop_owner(args[1]);
        return NULL;
    }
    dispatch_storage *s =
        FG.from_foreign(DISPATCH_DEVICE_CPU, data, (size_t)nbytes, release_owner, key);
    if (!s) {
        drop_owner(args[1]);
        return wrap(NULL); /* the runtime's error */
    }
    if (readonly) FG.set_readonly(s); /* Note [Read-only tensors] in dispatcher.c */
    dispatch_tensor *t = FG.from_storage(s, ndim, sizes, strides, 0, (int)dtype);
    FG.decref(s); /* the tensor holds the storage now (or it is released) */
    return wrap(t);
}

/* init_foreign((from_foreign, set_readonly, from_storage, decref), owners):
 * the addresses of dispatch_storage_from_foreign, dispatch_storage_set_readonly,
 * dispatch_tensor_from_storage and dispatch_storage_decref, and the owner
 * table; once, from dispatch._interop. */
static PyObject *init_foreign(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *a[4], *owners;
    if (!PyArg_ParseTuple(args, "(OOOO)O!", &a[0], &a[1], &a[2], &a[3], &PyDict_Type, &owners))
        return NULL;
    if (FG.from_foreign) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath.init_foreign is called once");
        return NULL;
    }
    void *at[4];
    for (int i = 0; i < 4; i++)
        if (!(at[i] = address(a[i]))) return NULL;
    FG.owners = Py_NewRef(owners);
    FG.set_readonly = (storage_fn)at[1];
    FG.from_storage = (from_storage_fn)at[2];
    FG.decref = (storage_fn)at[3];
    FG.from_foreign = (from_foreign_fn)at[0]; /* last: the sign that init ran */
    Py_RETURN_NONE;
}

PyMethodDef foreign_functions[] = {
    {"foreign_tensor", (PyCFunction)(void (*)(void))foreign_tensor, METH_FASTCALL,
     "foreign_tensor(array, key, shape, strides, itemsize, dtype, readonly)\n--\n\n"
     "A Tensor over foreign memory whose release drops the owner table's key "
     "(Note [Foreign tensors in C])."},
    {"init_foreign", init_foreign, METH_VARARGS,
     "Connect foreign_tensor to the runtime and the owner table (once)."},
    {NULL, NULL, 0, NULL},
};
