/* pyext._pyext: the module. Its init is DISPATCH_MODULE_INIT, so the
 * toolkit's guard runs first (dispatch/cpu_module.h). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dispatch/cpu_module.h"
#include "dispatch/cpu_runtime.h"
/* Each X.dispatch.h redefines the dispatch macros for its source: include
 * one, then use it (declare, choose), then the next. */
#include "sum.dispatch.h"

DISPATCH_CPU_DISPATCH_DECLARE(double pyext_sum, (const double *x, size_t n))
DISPATCH_CPU_DISPATCH_DECLARE(const char *pyext_sum_target, (void))

static double (*sum_fn)(const double *, size_t);
static const char *(*sum_target_fn)(void);


static void choose_sum(void)
{
    sum_fn = DISPATCH_CPU_DISPATCH_CALL(pyext_sum, );
    sum_target_fn = DISPATCH_CPU_DISPATCH_CALL(pyext_sum_target, );
    DISPATCH_CPU_DISPATCH_TRACE("sum");
}


#include "scale.dispatch.h"

DISPATCH_CPU_DISPATCH_DECLARE(void pyext_scale, (double *x, size_t n, double by))
DISPATCH_CPU_DISPATCH_DECLARE(const char *pyext_scale_target, (void))

static void (*scale_fn)(double *, size_t, double);
static const char *(*scale_target_fn)(void);

static void choose_scale(void)
{
    scale_fn = DISPATCH_CPU_DISPATCH_CALL(pyext_scale, );
    scale_target_fn = DISPATCH_CPU_DISPATCH_CALL(pyext_scale_target, );
    DISPATCH_CPU_DISPATCH_TRACE("scale");
}

static int to_doubles(PyObject *seq, double **out, Py_ssize_t *n)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of numbers");
    if (!fast) {
        return -1;
    }
    *n = PySequence_Fast_GET_SIZE(fast);
    *out = PyMem_Malloc(((size_t)*n + 1) * sizeof(double));
    if (!*out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; ++i) {
        (*out)[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if ((*out)[i] == -1.0 && PyErr_Occurred()) {
            PyMem_Free(*out);
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *py_sum(PyObject *self, PyObject *arg)
{
    (void)self;
    double *x;
    Py_ssize_t n;
    if (to_doubles(arg, &x, &n) < 0) {
        return NULL;
    }
    double s = sum_fn(x, (size_t)n);
    PyMem_Free(x);
    return PyFloat_FromDouble(s);
}

static PyObject *py_scale(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq;
    double by;
    if (!PyArg_ParseTuple(args, "Od", &seq, &by)) {
        return NULL;
    }
    double *x;
    Py_ssize_t n;
    if (to_doubles(seq, &x, &n) < 0) {
        return NULL;
    }
    scale_fn(x, (size_t)n, by);
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; ++i) {
        PyObject *v = PyFloat_FromDouble(x[i]);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    PyMem_Free(x);
    return list;
}

/* What each dispatched function's variant says it is (it names itself). */
static PyObject *py_targets(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_BuildValue("{ssss}", "sum", sum_target_fn(), "scale", scale_target_fn());
}

static PyMethodDef pyext_methods[] = {
    {"sum", py_sum, METH_O, "sum(xs): the sum of a sequence of floats"},
    {"scale", py_scale, METH_VARARGS, "scale(xs, by): [x * by for x in xs]"},
    {"targets", py_targets, METH_NOARGS, "the variant each function runs"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pyext_module = {
    PyModuleDef_HEAD_INIT, "pyext._pyext", "pyext's extension module", -1, pyext_methods,
    NULL, NULL, NULL, NULL,
};

DISPATCH_MODULE_INIT(_pyext)
{
    if (dispatch_cpu_dispatch_register(choose_sum) != 0 ||
        dispatch_cpu_dispatch_register(choose_scale) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "pyext: the dispatch registry is full");
        return NULL;
    }
    return PyModule_Create(&pyext_module);
}
