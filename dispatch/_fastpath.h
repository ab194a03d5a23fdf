/*
 * Private to the module dispatch._fastpath (Note [Operator fast path] in
 * _fastpath.c): what its files share. One job per file:
 *   _fastpath.c          the module: its functions, init(), the state S
 *   _fastpath_tensor.c   the Tensor type's slots (+ - * / and comparisons)
 *                        and the fixed-shape calls call1/call2
 *   _fastpath_binder.c   the schema binder (Note [Binding in C])
 *   _fastpath_values.c   Python and NumPy numbers, read for both of them
 *   _fastpath_method.c   the operator method descriptor (Note [Operator methods])
 *   _fastpath_packet.c   the call of dispatch.ops.<name> (Note [Operator packets])
 *   _fastpath_factories.c  empty(), Tensor.to/clone/contiguous (Note [New tensors in C])
 *   _fastpath_views.c    shape, ndim, view, reshape, t[index] (Note [Views in C])
 *   _fastpath_dlpack.c   DLPack capsules
 *   _fastpath_numpy.c    Tensor.__array_interface__ (Note [The array interface in C])
 *   _fastpath_foreign.c  from_numpy's tensor and its release (Note [Foreign tensors in C])
 */
#ifndef DISPATCH_FASTPATH_H_
#define DISPATCH_FASTPATH_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dispatch/dispatcher.h"
#include "dispatch/tensor.h"

typedef dispatch_tensor *(*call_tt_fn)(const void *op, dispatch_tensor *a, dispatch_tensor *b);
typedef dispatch_tensor *(*call_t_fn)(const void *op, dispatch_tensor *a);
typedef dispatch_tensor *(*call_number_fn)(const void *op, dispatch_tensor *a, double d,
                                           int64_t i, int kind, int reverse);
typedef void (*decref_fn)(dispatch_tensor *t);
typedef int (*call_fn)(const void *op, dispatch_ivalue *args, int nargs, dispatch_ivalue *rets);
typedef int (*default_fn)(const void *op, int i, dispatch_ivalue *out);
typedef void (*release_fn)(dispatch_ivalue *v, int n);
typedef dispatch_tensor *(*wrap_double_fn)(double v);
typedef dispatch_tensor *(*wrap_int_fn)(int64_t v);
typedef dispatch_tensor *(*wrap_bool_fn)(int v);

/* The operators, in the order init() receives them. */
enum { ADD, SUB, MUL, DIV, EQ, NE, LT, LE, GT, GE, NOPS };
/* Elements from which a call releases the GIL (below, the release costs
 * more than the work). */
#define RELEASE_GIL_NUMEL 65536

/* What init() and bind_init() connected (_fastpath.c, _fastpath_binder.c). */
struct fastpath_state {
    int ready;
    PyTypeObject *tensor_type; /* dispatch.Tensor, the Python subclass */
    call_tt_fn call_tt;
    call_t_fn call_t;
    call_number_fn call_number; /* tensor <op> number: dispatch_call_ts */
    decref_fn decref;
    call_fn call;
    default_fn op_default;
    release_fn release;
    wrap_double_fn wrap_double; /* bind_init: numbers as Tensor arguments */
    wrap_int_fn wrap_int;
    wrap_bool_fn wrap_bool;
    PyTypeObject *dtype_type;  /* dispatch.dtype: ScalarType arguments */
    PyObject *no_match;        /* bind_call: no overload binds */
    const void *ops[NOPS];
    PyObject *operand_hook;  /* other operand -> Tensor or NotImplemented; NULL: none set */
    PyObject *to_cdata;      /* int address -> cffi dispatch_tensor * */
    PyObject *to_address;    /* cffi dispatch_tensor * -> int address */
    PyObject *raise_error;   /* raises the runtime's recorded error */
};
extern struct fastpath_state S;

typedef struct {
    PyObject_HEAD
    dispatch_tensor *ptr; /* owned reference, or NULL until known */
    PyObject *cdata;      /* the cffi pointer Python code sees as _p, or NULL */
    PyObject *weakrefs;
} TensorBase;

/* _fastpath_tensor.c ---------------------------------------------------------- */

extern PyTypeObject TensorBaseType;
/* The tensor's runtime pointer, from its cffi pointer on first need. */
dispatch_tensor *pointer_of(TensorBase *t);
/* A new dispatch.Tensor owning r, or NULL with the runtime's error raised. */
PyObject *wrap(dispatch_tensor *r);
/* Let other Python threads run during a call on numel input elements
 * (NULL: not worth it), and take the GIL back. */
PyThreadState *release_for(int64_t numel);
void reacquire(PyThreadState *ts);
/* fn(self, *args, **kwargs), vectorcall's way (self NULL: fn(*args, ...)):
 * a C method's Python path for what it does not take itself. */
PyObject *call_python_path(PyObject *fn, PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames);
/* 0 when the n Python paths handed to an init_*() are callable; -1 with
 * TypeError (naming that init) otherwise. */
int callables(const char *init, PyObject *const *fb, int n);
/* The (Tensor) / (Tensor, Tensor) overload op, returning one Tensor. */
PyObject *call1(const void *op, TensorBase *a);
PyObject *call2(const void *op, TensorBase *a, TensorBase *b);
PyObject *py_call1(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_call2(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* _fastpath_values.c ---------------------------------------------------------- */

/* What a value is, for binding: several at once (a bool is an int too). */
enum { V_BOOL = 1, V_INT = 2, V_FLOAT = 4, V_TENSOR = 8, V_DTYPE = 16, V_SEQ = 32 };
/* The V_* flags of a value (not None), or -1 with an error set. */
int classify(PyObject *v);
/* int(v) as an int64; float(v); bool(v) of a Python or NumPy bool. 0, or -1
 * with an error set. */
int to_int64(PyObject *v, int64_t *out);
int to_double(PyObject *v, double *out);
int to_bool(PyObject *v, int64_t *out);
/* The C methods' fast paths: an exact int in int64's range (1, else 0 and no
 * error); sizes as ints or one tuple/list of them (the count, else -1 and no
 * error). */
int exact_int64(PyObject *v, int64_t *out);
int dtype_number(PyObject *v, int64_t *out);
int read_sizes(PyObject *const *args, Py_ssize_t n, int64_t *sizes);

/* _fastpath_binder.c ---------------------------------------------------------- */

/* A call's arguments as vectorcall lays them out: npos positional ones, then
 * the values of the keywords kwnames names (NULL: none). */
typedef struct {
    PyObject *const *args;
    Py_ssize_t npos;
    PyObject *kwnames;
} call_args;

/* Run the first of plans the call binds to (Note [Binding in C]): its
 * result, S.no_match (a new reference) when none binds, NULL on error. */
PyObject *bind_call(PyObject *plans, const call_args *c);

PyObject *py_resolve(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_bind_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_bind_init(PyObject *self, PyObject *args);

/* _fastpath_method.c ---------------------------------------------------------- */

extern PyTypeObject OperatorMethodType;

/* _fastpath_packet.c ---------------------------------------------------------- */

extern PyTypeObject OperatorPacketType;
int packet_type_ready(void);
/* packet(*args, **kwargs), vectorcall's way. */
PyObject *packet_call(PyObject *packet, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* _fastpath_factories.c ------------------------------------------------------- */

extern PyMethodDef tensor_factory_methods[]; /* TensorBase's to, clone, contiguous */
extern PyMethodDef factory_functions[];      /* the module's empty, init_copies, init_empty */

/* _fastpath_views.c ----------------------------------------------------------- */

PyObject *tensor_shape(TensorBase *self, void *closure); /* TensorBase's getters */
PyObject *tensor_ndim(TensorBase *self, void *closure);
PyObject *tensor_T(TensorBase *self, void *closure);
extern PyMethodDef tensor_view_methods[]; /* TensorBase's view, reshape, permute, ... */
extern PyMappingMethods tensor_view_mapping; /* TensorBase's t[index] */
extern PyMethodDef view_functions[];      /* the module's init_views */

/* _fastpath_dlpack.c ---------------------------------------------------------- */

PyObject *py_dlpack_capsule(PyObject *self, PyObject *args);
PyObject *py_dlpack_take(PyObject *self, PyObject *capsule);

/* _fastpath_numpy.c ----------------------------------------------------------- */

PyObject *tensor_array_interface(TensorBase *self, void *closure); /* TensorBase's getter */
extern PyMethodDef numpy_functions[]; /* the module's init_array_interface */

/* _fastpath_foreign.c --------------------------------------------------------- */

extern PyMethodDef foreign_functions[]; /* the module's foreign_tensor, init_foreign */

/* An address handed over from Python as an int, or NULL with an error. */
static inline void *address(PyObject *o) {
    void *p = PyLong_AsVoidPtr(o);
    if (!p && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a NULL address");
    return p;
}

#endif /* DISPATCH_FASTPATH_H_ */
