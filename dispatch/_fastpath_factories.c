#include "_fastpath.h"
#include "dispatch/iterator.h" /* DISPATCH_ITER_GRAIN */

/*
 * Note [New tensors in C]
 * ~~~~~~~~~~~~~~~~~~~~~~~
 * dispatch.empty(), t.to(dtype), t.clone() and t.contiguous() make a tensor
 * with no operator, so neither the type slots nor the packets' call runs
 * them; in Python each cost a frame, two or three cffi calls and, when the
 * result was freed, a call back into Python for its address: 1.3-1.8 us a
 * call where the copy of 4K elements takes 0.1 (NumPy's astype 0.45, its
 * empty 0.2). Here the common case is one C call into the runtime:
 * - t.to(d) with d a dispatch.dtype, clone() and contiguous() of a host
 *   tensor (cpu or meta): dispatch_kernels_to_dtype / _clone / _contiguous;
 *   a result that is t's own tensor returns t (to() of t's dtype,
 *   contiguous() of a contiguous t), as torch's;
 * - dispatch.empty(*sizes) / empty(sizes) with Python ints, dtype a
 *   dispatch.dtype or None (float32), device None: dispatch_tensor_empty;
 *   zeros() and ones() alike, of up to DISPATCH_ITER_GRAIN elements (a
 *   fill_ of more runs on threads): dispatch_tensor_filled (0.92 -> 0.2 us
 *   for (8, 512) float32, where empty().fill_(0) was two calls from Python).
 * Anything else (a device string, a cuda tensor, a dtype by name, NumPy
 * integers, a bad size) goes to the Python function init_copies() or
 * init_empty() was handed for it, which says what the runtime's errors do
 * not.
 */
typedef dispatch_tensor *(*to_dtype_fn)(dispatch_tensor *t, int dtype);
typedef dispatch_tensor *(*copy_fn)(dispatch_tensor *t);
typedef dispatch_tensor *(*empty_fn)(int ndim, const int64_t *sizes, int dtype, int device);
typedef dispatch_tensor *(*filled_fn)(int ndim, const int64_t *sizes, int dtype, int64_t value);

enum { TO, CLONE, CONTIGUOUS, EMPTY, ZEROS, ONES, NFALLBACKS };

static struct {
    to_dtype_fn to_dtype;
    copy_fn clone, contiguous;
    empty_fn empty;
    filled_fn filled;
    int float32;                   /* empty()'s default dtype */
    PyObject *fallback[NFALLBACKS]; /* Python: to(self, ...), clone(self), ..., empty(...) */
    PyObject *str_dtype, *str_device;
} F;

/* The Python function for what the fast path does not take. */
static PyObject *fallback(int which, PyObject *self, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames) {
    return call_python_path(F.fallback[which], self, args, nargsf, kwnames);
}

/* The dtype number of a dispatch.dtype, or -1 (no error) for anything else. */
static int dtype_num(PyObject *v) {
    int64_t n;
    if (!S.dtype_type || !Py_IS_TYPE(v, S.dtype_type)) return -1;
    if (dtype_number(v, &n) < 0 || n < 0 || n > INT_MAX) {
        PyErr_Clear();
        return -1;
    }
    return (int)n;
}

/* A host tensor's pointer, or NULL (no error: the fallback's case, or an
 * error set when the tensor was never initialised). */
static dispatch_tensor *host_tensor(PyObject *self) {
    dispatch_tensor *p = pointer_of((TensorBase *)self);
    return p && p->device != DISPATCH_DEVICE_CUDA ? p : NULL;
}

/* r as a Tensor: self when r is self's tensor. */
static PyObject *result(dispatch_tensor *r, PyObject *self) {
    if (r && r == ((TensorBase *)self)->ptr) {
        S.decref(r);
        return Py_NewRef(self);
    }
    return wrap(r);
}

static PyObject *tensor_to(PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames) {
    dispatch_tensor *p;
    int d;
    if (F.to_dtype && PyVectorcall_NARGS(nargsf) == 1 && !kwnames &&
        (d = dtype_num(args[0])) >= 0 && (p = host_tensor(self))) {
        PyThreadState *ts = release_for(p->numel);
        dispatch_tensor *r = F.to_dtype(p, d);
        reacquire(ts);
        return result(r, self);
    }
    if (PyErr_Occurred()) return NULL;
    return fallback(TO, self, args, nargsf, kwnames);
}

static PyObject *copy_with(copy_fn fn, int which, PyObject *self) {
    dispatch_tensor *p = fn ? host_tensor(self) : NULL;
    if (!p) return PyErr_Occurred() ? NULL : fallback(which, self, NULL, 0, NULL);
    PyThreadState *ts = release_for(p->numel);
    dispatch_tensor *r = fn(p);
    reacquire(ts);
    return result(r, self);
}

static PyObject *tensor_clone(PyObject *self, PyObject *unused) {
    (void)unused;
    return copy_with(F.to_dtype ? F.clone : NULL, CLONE, self);
}

static PyObject *tensor_contiguous(PyObject *self, PyObject *unused) {
    (void)unused;
    return copy_with(F.to_dtype ? F.contiguous : NULL, CONTIGUOUS, self);
}

PyMethodDef tensor_factory_methods[] = {
    {"to", (PyCFunction)(void (*)(void))tensor_to, METH_FASTCALL | METH_KEYWORDS,
     "to($self, dtype)\n--\n\nA tensor of another dtype, or on another device (\"cuda\", "
     "\"cpu\"); self when it already is."},
    {"clone", tensor_clone, METH_NOARGS, "clone($self, /)\n--\n\nA copy of this tensor."},
    {"contiguous", tensor_contiguous, METH_NOARGS,
     "contiguous($self, /)\n--\n\nThis tensor when it is contiguous, else a contiguous copy."},
    {NULL, NULL, 0, NULL},
};

/* dispatch.empty(*size, dtype=None, device=None), zeros() and ones() alike:
 * which is EMPTY, ZEROS or ONES. */
static PyObject *new_tensor(int which, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int dtype = F.float32, fast = F.empty != NULL;
    for (Py_ssize_t k = 0; k < nk && fast; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *v = args[n + k];
        if (PyUnicode_Compare(key, F.str_dtype) == 0)
            fast = v == Py_None || (dtype = dtype_num(v)) >= 0;
        else
            fast = PyUnicode_Compare(key, F.str_device) == 0 && v == Py_None;
    }
    int64_t sizes[DISPATCH_MAX_DIMS];
    int ndim = fast ? read_sizes(args, n, sizes) : -1;
    if (PyErr_Occurred()) return NULL;
    if (ndim >= 0 && which != EMPTY) { /* few elements: filled here (the note) */
        int64_t numel = 1; /* a negative size or an overflow: the Python path says so */
        for (int d = 0; d < ndim; d++)
            if (sizes[d] < 0 || __builtin_mul_overflow(numel, sizes[d], &numel) ||
                numel > DISPATCH_ITER_GRAIN) {
                ndim = -1;
                break;
            }
    }
    if (ndim < 0) return fallback(which, NULL, args, nargsf, kwnames);
    if (which == EMPTY) return wrap(F.empty(ndim, sizes, dtype, DISPATCH_DEVICE_CPU));
    return wrap(F.filled(ndim, sizes, dtype, which == ONES));
}

static PyObject *empty(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    (void)self;
    return new_tensor(EMPTY, args, nargsf, kwnames);
}

static PyObject *zeros(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    (void)self;
    return new_tensor(ZEROS, args, nargsf, kwnames);
}

static PyObject *ones(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    (void)self;
    return new_tensor(ONES, args, nargsf, kwnames);
}

static int intern_names(void) {
    if (F.str_dtype) return 0;
    F.str_dtype = PyUnicode_InternFromString("dtype");
    F.str_device = PyUnicode_InternFromString("device");
    return F.str_dtype && F.str_device ? 0 : -1;
}

/* init_copies((to_dtype, clone, contiguous), (to, clone, contiguous)): the
 * runtime's addresses and the Python functions for the other cases (Note
 * [New tensors in C]); once, from dispatch._tensor. */
static PyObject *init_copies(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *to, *clone, *contiguous, *fb[3];
    if (!PyArg_ParseTuple(args, "(OOO)(OOO)", &to, &clone, &contiguous, &fb[0], &fb[1], &fb[2]))
        return NULL;
    if (F.to_dtype) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath.init_copies is called once");
        return NULL;
    }
    to_dtype_fn t = (to_dtype_fn)address(to);
    copy_fn c = (copy_fn)address(clone), g = (copy_fn)address(contiguous);
    if (PyErr_Occurred() || callables("init_copies", fb, 3) < 0 || intern_names() < 0) return NULL;
    F.fallback[TO] = Py_NewRef(fb[0]);
    F.fallback[CLONE] = Py_NewRef(fb[1]);
    F.fallback[CONTIGUOUS] = Py_NewRef(fb[2]);
    F.clone = c, F.contiguous = g, F.to_dtype = t;
    Py_RETURN_NONE;
}

/* init_empty(empty, filled, float32, empty_py, zeros_py, ones_py): the
 * addresses of dispatch_tensor_empty and dispatch_tensor_filled, the default
 * dtype's number and the Python empty, zeros and ones for the other cases;
 * once, from dispatch._factories. */
static PyObject *init_empty(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *emp, *fil, *fb[3];
    int float32;
    if (!PyArg_ParseTuple(args, "OOiOOO", &emp, &fil, &float32, &fb[0], &fb[1], &fb[2]))
        return NULL;
    if (F.empty) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath.init_empty is called once");
        return NULL;
    }
    empty_fn e = (empty_fn)address(emp);
    filled_fn f = PyErr_Occurred() ? NULL : (filled_fn)address(fil);
    if (PyErr_Occurred() || callables("init_empty", fb, 3) < 0 || intern_names() < 0) return NULL;
    for (int k = 0; k < 3; k++) F.fallback[EMPTY + k] = Py_NewRef(fb[k]);
    F.float32 = float32;
    F.filled = f;
    F.empty = e;
    Py_RETURN_NONE;
}

PyMethodDef factory_functions[] = {
    {"empty", (PyCFunction)(void (*)(void))empty, METH_FASTCALL | METH_KEYWORDS,
     "empty(*size, dtype=None, device=None)\n--\n\n"
     "An uninitialised tensor (float32 unless dtype says otherwise)."},
    {"zeros", (PyCFunction)(void (*)(void))zeros, METH_FASTCALL | METH_KEYWORDS,
     "zeros(*size, dtype=None, device=None)\n--\n\n"
     "A tensor of zeros (float32 unless dtype says otherwise)."},
    {"ones", (PyCFunction)(void (*)(void))ones, METH_FASTCALL | METH_KEYWORDS,
     "ones(*size, dtype=None, device=None)\n--\n\n"
     "A tensor of ones (float32 unless dtype says otherwise)."},
    {"init_copies", init_copies, METH_VARARGS,
     "Connect Tensor.to/clone/contiguous to the runtime (once; Note [New tensors in C])."},
    {"init_empty", init_empty, METH_VARARGS,
     "Connect empty() to the runtime (once; Note [New tensors in C])."},
    {NULL, NULL, 0, NULL},
};
