#include "_fastpath.h"

/*
 * Note [Views in C]
 * ~~~~~~~~~~~~~~~~~
 * t.shape, t.ndim, t.view(...), t.reshape(...) and t[index] make no copy,
 * so their cost is all binding: through Python and cffi, t[0] took 2.0 us
 * and t.view(-1) 1.6 (NumPy's 0.1-0.2), most of it converting the sizes to
 * a cffi array, wrapping the result and, when it was freed, a call back
 * into Python for its address. Here the common case is read and made in C:
 * - shape and ndim from the tensor's own fields;
 * - view/reshape/permute/expand of sizes given as Python ints or one
 *   tuple/list of them: dispatch_tensor_view / _reshape / _permute / _expand;
 * - transpose(d0, d1) and unsqueeze(d) of Python ints, and T:
 *   dispatch_tensor_transpose / _unsqueeze / _t (1.3-1.5 us -> 0.1);
 * - t[index] for an int, a slice of ints and None, or a tuple of those:
 *   dispatch_tensor_select / _slice, one dim after the other, with the
 *   Python path's rules (a slice's bounds beyond int64 clamp to it).
 * Anything else (NumPy integers, None and Ellipsis in an index, an int
 * beyond int64, too many indices) goes to the Python function init_views()
 * was handed, which keeps every message.
 */
typedef dispatch_tensor *(*sizes_fn)(dispatch_tensor *t, int ndim, const int64_t *sizes);
typedef dispatch_tensor *(*select_fn)(dispatch_tensor *t, int64_t dim, int64_t index);
typedef dispatch_tensor *(*slice_fn)(dispatch_tensor *t, int64_t dim, int64_t start, int64_t stop,
                                     int64_t step, int has_start, int has_stop);
typedef dispatch_tensor *(*dims_fn)(dispatch_tensor *t, int64_t d0, int64_t d1);
typedef dispatch_tensor *(*dim_fn)(dispatch_tensor *t, int64_t dim);
typedef dispatch_tensor *(*self_fn)(dispatch_tensor *t);

enum { VIEW, RESHAPE, GETITEM, PERMUTE, EXPAND, TRANSPOSE, UNSQUEEZE, REVERSED, NFALLBACKS };

static struct {
    sizes_fn view, reshape, permute, expand;
    select_fn select;
    slice_fn slice;
    dims_fn transpose;
    dim_fn unsqueeze;
    self_fn t;
    PyObject *fallback[NFALLBACKS];
} V;

/* fallback(self, *args): the Python function for what is not taken here. */
static PyObject *fallback(int which, PyObject *self, PyObject *const *args, Py_ssize_t n) {
    return call_python_path(V.fallback[which], self, args, (size_t)n, NULL);
}

PyObject *tensor_shape(TensorBase *self, void *closure) {
    (void)closure;
    dispatch_tensor *p = pointer_of(self);
    if (!p) return NULL;
    PyObject *t = PyTuple_New(p->ndim);
    for (int d = 0; t && d < p->ndim; d++) {
        PyObject *v = PyLong_FromLongLong(p->sizes[d]);
        if (!v) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, d, v);
    }
    return t;
}

PyObject *tensor_ndim(TensorBase *self, void *closure) {
    (void)closure;
    dispatch_tensor *p = pointer_of(self);
    return p ? PyLong_FromLong(p->ndim) : NULL;
}

static PyObject *with_sizes(sizes_fn fn, int which, PyObject *self, PyObject *const *args,
                            Py_ssize_t n) {
    int64_t sizes[DISPATCH_MAX_DIMS];
    const int k = fn ? read_sizes(args, n, sizes) : -1;
    dispatch_tensor *p = k >= 0 ? pointer_of((TensorBase *)self) : NULL;
    if (!p) return PyErr_Occurred() ? NULL : fallback(which, self, args, n);
    return wrap(fn(p, k, sizes));
}

static PyObject *tensor_view(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    return with_sizes(V.view, VIEW, self, args, n);
}

static PyObject *tensor_reshape(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    return with_sizes(V.reshape, RESHAPE, self, args, n);
}

static PyObject *tensor_permute(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    return with_sizes(V.permute, PERMUTE, self, args, n);
}

static PyObject *tensor_expand(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    return with_sizes(V.expand, EXPAND, self, args, n);
}

/* transpose(d0, d1) (which TRANSPOSE) or unsqueeze(d) (UNSQUEEZE) of exact
 * ints; dims by keyword (dim0=, dim=) and every other case: the Python path. */
static PyObject *dims_view(int which, PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames) {
    const Py_ssize_t want = which == TRANSPOSE ? 2 : 1;
    int64_t d[2];
    int take = (which == TRANSPOSE ? V.transpose != NULL : V.unsqueeze != NULL) && !kwnames &&
               PyVectorcall_NARGS(nargsf) == want;
    for (Py_ssize_t k = 0; take && k < want; k++) take = exact_int64(args[k], &d[k]);
    dispatch_tensor *p = take ? pointer_of((TensorBase *)self) : NULL;
    if (!p)
        return PyErr_Occurred() ? NULL
                                : call_python_path(V.fallback[which], self, args, nargsf, kwnames);
    return wrap(which == TRANSPOSE ? V.transpose(p, d[0], d[1]) : V.unsqueeze(p, d[0]));
}

static PyObject *tensor_transpose(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    return dims_view(TRANSPOSE, self, args, nargsf, kwnames);
}

static PyObject *tensor_unsqueeze(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    return dims_view(UNSQUEEZE, self, args, nargsf, kwnames);
}

PyObject *tensor_T(TensorBase *self, void *closure) {
    (void)closure;
    dispatch_tensor *p = V.t ? pointer_of(self) : NULL;
    if (!p) return PyErr_Occurred() ? NULL : fallback(REVERSED, (PyObject *)self, NULL, 0);
    return wrap(V.t(p));
}

PyMethodDef tensor_view_methods[] = {
    {"view", (PyCFunction)(void (*)(void))tensor_view, METH_FASTCALL,
     "view($self, /, *shape)\n--\n\nThe same elements in another shape (one size may be -1); "
     "RuntimeError when the strides do not allow a view."},
    {"reshape", (PyCFunction)(void (*)(void))tensor_reshape, METH_FASTCALL,
     "reshape($self, /, *shape)\n--\n\nA view in another shape when the strides allow one, else "
     "a copy."},
    {"permute", (PyCFunction)(void (*)(void))tensor_permute, METH_FASTCALL,
     "permute($self, /, *dims)\n--\n\nA view with the dims in the order given."},
    {"expand", (PyCFunction)(void (*)(void))tensor_expand, METH_FASTCALL,
     "expand($self, /, *sizes)\n--\n\nA view broadcast to sizes (-1 keeps a dim; dims of 1 "
     "repeat with stride 0)."},
    {"transpose", (PyCFunction)(void (*)(void))tensor_transpose, METH_FASTCALL | METH_KEYWORDS,
     "transpose($self, /, dim0, dim1)\n--\n\nA view with dims dim0 and dim1 swapped."},
    {"unsqueeze", (PyCFunction)(void (*)(void))tensor_unsqueeze, METH_FASTCALL | METH_KEYWORDS,
     "unsqueeze($self, /, dim)\n--\n\nA view with a dim of size 1 inserted at dim."},
    {NULL, NULL, 0, NULL},
};

/* A slice bound or step: None (has = 0), or an int clamped to int64 (as
 * the Python path's _clamp64); 0 for anything else. */
static int slice_part(PyObject *v, int64_t *out, int *has) {
    *has = v != Py_None;
    if (v == Py_None) return 1;
    if (!PyLong_CheckExact(v)) return 0;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : x;
    return 1;
}

/* One item of an index: an int (in start) or a slice's parts. */
typedef struct index_item {
    int is_slice, has_start, has_stop, has_step;
    int64_t start, stop, step;
} index_item;

/* t[index] for ints and slices: the view, NULL with an error, or NULL with
 * no error for the Python path. */
static PyObject *index_view(dispatch_tensor *p, PyObject *const *items, Py_ssize_t n) {
    if (n == 0 || n > p->ndim) return NULL; /* t[()], too many: the Python path's */
    index_item ix[DISPATCH_MAX_DIMS];
    for (Py_ssize_t k = 0; k < n; k++) { /* what this path takes, read before any work */
        PyObject *it = items[k];
        ix[k] = (index_item){.is_slice = PySlice_Check(it), .step = 1};
        if (ix[k].is_slice) {
            const PySliceObject *s = (const PySliceObject *)it;
            if (!slice_part(s->start, &ix[k].start, &ix[k].has_start) ||
                !slice_part(s->stop, &ix[k].stop, &ix[k].has_stop) ||
                !slice_part(s->step, &ix[k].step, &ix[k].has_step))
                return NULL;
        } else if (!exact_int64(it, &ix[k].start)) {
            return NULL;
        }
    }
    dispatch_tensor *cur = p, *next; /* cur: borrowed until the first step */
    int64_t dim = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (ix[k].is_slice)
            next = V.slice(cur, dim++, ix[k].start, ix[k].stop, ix[k].has_step ? ix[k].step : 1,
                           ix[k].has_start, ix[k].has_stop);
        else
            next = V.select(cur, dim, ix[k].start);
        if (cur != p) S.decref(cur);
        if (!next) return wrap(NULL); /* raises the runtime's error */
        cur = next;
    }
    return wrap(cur);
}

static PyObject *tensor_getitem(PyObject *self, PyObject *index) {
    dispatch_tensor *p = V.select ? pointer_of((TensorBase *)self) : NULL;
    PyObject *r = NULL;
    if (p) {
        if (PyTuple_CheckExact(index))
            r = index_view(p, &PyTuple_GET_ITEM(index, 0), PyTuple_GET_SIZE(index));
        else
            r = index_view(p, &index, 1);
    }
    if (r || PyErr_Occurred()) return r;
    return fallback(GETITEM, self, &index, 1);
}

PyMappingMethods tensor_view_mapping = {
    .mp_subscript = tensor_getitem,
};

/* init_views(addresses, fallbacks): the runtime's dispatch_tensor_view,
 * _reshape, _select, _slice, _permute, _expand, _transpose, _unsqueeze and
 * _t, and the Python functions for the other cases of view, reshape,
 * __getitem__, permute, expand, transpose, unsqueeze and T (Note [Views in
 * C]); once, from dispatch._tensor. */
static PyObject *init_views(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *a[9], *fb[NFALLBACKS];
    if (!PyArg_ParseTuple(args, "(OOOOOOOOO)(OOOOOOOO)", &a[0], &a[1], &a[2], &a[3], &a[4],
                          &a[5], &a[6], &a[7], &a[8], &fb[0], &fb[1], &fb[2], &fb[3], &fb[4],
                          &fb[5], &fb[6], &fb[7]))
        return NULL;
    if (V.select) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch._fastpath.init_views is called once");
        return NULL;
    }
    if (callables("init_views", fb, NFALLBACKS) < 0) return NULL;
    void *at[9];
    for (int i = 0; i < 9 && !PyErr_Occurred(); i++) at[i] = address(a[i]);
    if (PyErr_Occurred()) return NULL;
    for (int i = 0; i < NFALLBACKS; i++) V.fallback[i] = Py_NewRef(fb[i]);
    V.view = (sizes_fn)at[0], V.reshape = (sizes_fn)at[1], V.slice = (slice_fn)at[3];
    V.permute = (sizes_fn)at[4], V.expand = (sizes_fn)at[5], V.transpose = (dims_fn)at[6];
    V.unsqueeze = (dim_fn)at[7], V.t = (self_fn)at[8];
    V.select = (select_fn)at[2]; /* last: the sign that init_views ran */
    Py_RETURN_NONE;
}

PyMethodDef view_functions[] = {
    {"init_views", init_views, METH_VARARGS,
     "Connect shape, T and the views to the runtime (once; Note [Views in C])."},
    {NULL, NULL, 0, NULL},
};
