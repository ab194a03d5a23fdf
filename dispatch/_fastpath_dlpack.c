#include "_fastpath.h"
#include "dispatch/dlpack.h"

/*
 * DLPack capsules (Note [DLPack] in sources/core/dlpack.c). They are made
 * and consumed here, in C, rather than through ctypes.pythonapi: the capsule
 * destructor must be a C function that works at any time the capsule dies
 * (garbage collection, interpreter shutdown, after ctypes is gone), and
 * consuming one (check the name, take the pointer, rename it "used_...")
 * happens in one call holding the GIL, so two consumers of one capsule can
 * never both take it.
 */
static const char DLTENSOR[] = "dltensor", USED_DLTENSOR[] = "used_dltensor";
static const char DLTENSOR_V[] = "dltensor_versioned", USED_DLTENSOR_V[] = "used_dltensor_versioned";

/* A capsule dropped unconsumed still owns its tensor: run the deleter. */
static void dlpack_capsule_destructor(PyObject *capsule) {
    if (PyCapsule_IsValid(capsule, DLTENSOR)) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, DLTENSOR);
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, DLTENSOR_V)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, DLTENSOR_V);
        if (m && m->deleter) m->deleter(m);
    }
}

/* dlpack_capsule(address, versioned): the capsule owning the managed tensor
 * at address (deleted at once if the capsule cannot be made). */
PyObject *py_dlpack_capsule(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *address;
    int versioned;
    if (!PyArg_ParseTuple(args, "Op", &address, &versioned)) return NULL;
    void *m = PyLong_AsVoidPtr(address);
    if (!m) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "NULL DLPack tensor");
        return NULL;
    }
    PyObject *capsule =
        PyCapsule_New(m, versioned ? DLTENSOR_V : DLTENSOR, dlpack_capsule_destructor);
    if (!capsule) { /* nobody owns m: delete it */
        if (versioned) {
            DLManagedTensorVersioned *v = m;
            if (v->deleter) v->deleter(v);
        } else {
            DLManagedTensor *l = m;
            if (l->deleter) l->deleter(l);
        }
    }
    return capsule;
}

/* dlpack_take(capsule): (address, versioned), and the capsule is renamed
 * "used_...": the caller owns the managed tensor now. */
PyObject *py_dlpack_take(PyObject *self, PyObject *capsule) {
    (void)self;
    if (!PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_TypeError, "expected a DLPack capsule (got %.200s)",
                     Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred()) return NULL;
    int versioned;
    if (name && strcmp(name, DLTENSOR) == 0)
        versioned = 0;
    else if (name && strcmp(name, DLTENSOR_V) == 0)
        versioned = 1;
    else if (name && (strcmp(name, USED_DLTENSOR) == 0 || strcmp(name, USED_DLTENSOR_V) == 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "this DLPack capsule was consumed already (a capsule can be consumed "
                        "once: call __dlpack__() again for another)");
        return NULL;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "expected a DLPack capsule named \"dltensor\" or \"dltensor_versioned\" "
                     "(got a capsule named %s%s%s)",
                     name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
        return NULL;
    }
    void *m = PyCapsule_GetPointer(capsule, name);
    if (!m) return NULL;
    if (PyCapsule_SetName(capsule, versioned ? USED_DLTENSOR_V : USED_DLTENSOR) < 0) return NULL;
    PyObject *address = PyLong_FromVoidPtr(m);
    if (!address) { /* undo: the capsule keeps the tensor */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        (void)PyCapsule_SetName(capsule, versioned ? DLTENSOR_V : DLTENSOR);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    return Py_BuildValue("(Ni)", address, versioned);
}
