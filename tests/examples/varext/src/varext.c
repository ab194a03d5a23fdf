/* varext._varext: xor of two byte strings through the variant the CPU runs
 * best, chosen once in the module init (behind the toolkit's guard). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dispatch/cpu_module.h"
#include "varext.h"
#include "varext_dispatch.h"

static void (*xor_fn)(uint8_t *, const uint8_t *, const uint8_t *, size_t);
static const char *(*impl_fn)(void);

static PyObject *py_xor(PyObject *self, PyObject *args)
{
    Py_buffer a, b;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b)) return NULL;
    PyObject *out = NULL;
    if (a.len != b.len) {
        PyErr_SetString(PyExc_ValueError, "xor: the two byte strings differ in length");
    } else if ((out = PyBytes_FromStringAndSize(NULL, a.len)) != NULL) {
        xor_fn((uint8_t *)PyBytes_AS_STRING(out), a.buf, b.buf, (size_t)a.len);
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return out;
}

static PyObject *py_impl(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    return PyUnicode_FromString(impl_fn());
}

static PyMethodDef methods[] = {
    {"xor", py_xor, METH_VARARGS, "xor(a, b) -> bytes"},
    {"impl", py_impl, METH_NOARGS, "the chosen variant's file"},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_varext", NULL, -1, methods,
                                 NULL, NULL, NULL, NULL};

DISPATCH_MODULE_INIT(_varext)
{
    xor_fn = VAREXT_DISPATCH(xor);   /* recorded as varext.xor in __cpu_targets__ */
    impl_fn = VAREXT_DISPATCH(impl);
    return PyModule_Create(&def);
}
