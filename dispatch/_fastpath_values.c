/* What a Python value is, and Python and NumPy numbers read as C numbers:
 * for the binder (Note [Binding in C] in _fastpath_binder.c), the Tensor's
 * slots and the C methods' sizes alike. NumPy's scalars count once NumPy is
 * imported. */
#include "_fastpath.h"

static struct {
    PyObject *name;                      /* "numpy" */
    PyObject *bool_, *integer, *floating; /* its scalar types, once it is imported */
} NP;

/* V_BOOL/V_INT/V_FLOAT for a NumPy scalar, 0 for anything else or while
 * NumPy is not imported (nothing is NumPy's then), -1 with an error set. */
static int numpy_kind(PyObject *v) {
    if (!NP.bool_) {
        if (!NP.name && !(NP.name = PyUnicode_InternFromString("numpy"))) return -1;
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

int classify(PyObject *v) {
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
int to_int64(PyObject *v, int64_t *out) {
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
int to_double(PyObject *v, double *out) {
    double d = PyFloat_CheckExact(v) ? PyFloat_AS_DOUBLE(v) : PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *out = d;
    return 0;
}

/* bool(v) of a Python or NumPy bool. */
int to_bool(PyObject *v, int64_t *out) {
    int b = v == Py_True ? 1 : v == Py_False ? 0 : PyObject_IsTrue(v);
    if (b < 0) return -1;
    *out = b;
    return 0;
}

/* A dispatch.dtype's number (its `num`) into *out: 0, or -1 with an error. */
int dtype_number(PyObject *v, int64_t *out) {
    static PyObject *name;
    if (!name && !(name = PyUnicode_InternFromString("num"))) return -1;
    PyObject *num = PyObject_GetAttr(v, name);
    if (!num) return -1;
    int rc = to_int64(num, out);
    Py_DECREF(num);
    return rc < 0 ? -1 : 0;
}

/* An exact Python int in int64's range into *out: 1, or 0 (no error) for
 * anything else, which the caller's Python path then reads and words. */
int exact_int64(PyObject *v, int64_t *out) {
    if (!PyLong_CheckExact(v)) return 0;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = x;
    return 1;
}

/* Sizes given as f(2, 3) or f((2, 3)) / f([2, 3]), each an exact int in
 * int64's range, at most DISPATCH_MAX_DIMS: their count, or -1 (no error)
 * for anything else. */
int read_sizes(PyObject *const *args, Py_ssize_t n, int64_t *sizes) {
    PyObject *const *items = args;
    if (n == 1 && (PyTuple_CheckExact(args[0]) || PyList_CheckExact(args[0]))) {
        items = PySequence_Fast_ITEMS(args[0]);
        n = PySequence_Fast_GET_SIZE(args[0]);
    }
    if (n > DISPATCH_MAX_DIMS) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!exact_int64(items[i], &sizes[i])) return -1;
    return (int)n;
}
