"""Interop: NumPy and DLPack in and out of tensors (NumPy imported on use only).

from_numpy and from_dlpack share the producer's memory; tensor() of NumPy
data (dispatch/_factories.py) copies it through here. A NumPy array as an
operand of + - * / or a comparison comes here too, through the fast path's
operand hook (Note [Operator fast path] in dispatch/_fastpath.c).

>>> import dispatch
>>> dispatch.from_dlpack(dispatch.arange(3)).tolist()
[0, 1, 2]
"""

from __future__ import annotations

import builtins
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from . import _devices, _fastpath
from ._core import ffi, lib
from ._devices import _DEVICE_NAMES, _DL_CPU, _DL_CUDA, _cuda_allocator, _device_num
from ._dtypes import _DTYPES, _as_dtype, _by_numpy, _overflow, dtype, float64, int64
from ._errors import _raise
from ._tensor import Tensor, _copy_on_device, _cptr, _new_empty, _wrap
from ._values import _is_ndarray, _numpy

__all__ = ["from_numpy", "from_dlpack"]


# Foreign memory ------------------------------------------------------------------------

# Note [Owner table without a lock]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# _owners keeps each NumPy array a foreign storage views alive (its key, the
# id of the pair that holds it, is the storage's release context) until the
# C core releases it. It has no lock, on purpose: Python code
# can run in the middle of any Python function (a signal handler between two
# bytecodes, a __del__ or weakref callback when a reference drops, the cyclic
# GC on any allocation), and code that runs there may call from_numpy or drop
# another tensor. With a plain Lock held that is a deadlock (issue 35: the
# release callback dropped the array, and so ran its __del__s, under the lock).
# Nor does the table need one: one dict store or pop with an int key is
# atomic (the GIL; per-object locking in a free-threaded build) and runs no
# Python code.
# What runs Python code is dropping the popped owner (it may free the array
# and its owners), and that happens after the pop, with nothing held.
_owners: dict[int, Any] = {}  # id(owner) -> owner: (array given, its base-class view)


@ffi.def_extern()
def dispatch_py_release_owner(ctx):  # noqa: ANN001, ANN201  (cffi callback)
    """Called by the C core when the last reference to a foreign storage goes
    (a storage from_numpy made through cffi; the others release in C, as this
    does: Note [Foreign tensors in C] in dispatch/_fastpath_foreign.c)."""
    owner = _owners.pop(int(ffi.cast("uintptr_t", ctx)), None)
    del owner  # may run __del__s: nothing is held here (Note [Owner table without a lock])


_fastpath.init_foreign(tuple(int(ffi.cast("uintptr_t", ffi.addressof(lib, f))) for f in (
    "dispatch_storage_from_foreign", "dispatch_storage_set_readonly",
    "dispatch_tensor_from_storage", "dispatch_storage_decref")), _owners)


# Note [Arrays that lie]
# ~~~~~~~~~~~~~~~~~~~~~~
# An ndarray subclass written in Python can override any attribute: shape,
# strides, dtype, flags, __array_interface__, ctypes, data, itemsize, ... and
# `isinstance` itself believes a `__class__` property. Nothing that sizes or
# points at memory may come from those: from_numpy and tensor() of an array
# take the array's type from type() and read its memory through
# np.ndarray.view(a, type=np.ndarray), a base-class view made in C from the
# C-level array (no Python hook of the subclass runs), whose every attribute
# is NumPy's own. The storage keeps both alive (the view's base is the
# memory's owner, which need not be a itself).

def _base_view(np: Any, a: Any) -> Any:
    """a as a plain np.ndarray over the same memory (a itself when it is one)."""
    return a if type(a) is np.ndarray else np.ndarray.view(a, type=np.ndarray)


def from_numpy(a: Any) -> Tensor:
    """A tensor sharing a's memory (zero-copy); a stays alive as long as the storage.

    A read-only array (writeable flag False: a read-only memmap, np.frombuffer
    of bytes, ...) gives a read-only tensor: it and its views can be read, and
    every write (add_, +=, fill_, copy_, t[i] = v) raises ValueError; its
    NumPy export is read-only too. An ndarray subclass is read as the array
    it is in C, whatever its Python attributes say (Note [Arrays that lie]).
    """
    if not _is_ndarray(a):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    given, a = a, _base_view(_numpy(), a)
    d = _by_numpy(a.dtype)
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type {a.dtype}. The only supported types "
                        f"are: {', '.join(x.name for x in _DTYPES if x.typestr)}.")
    owner = (given, a)  # (the view's base may be given's, not given)
    key = id(owner)  # unique while the table holds it
    _owners[key] = owner  # Note [Owner table without a lock]
    # the strides' checks, storage, tensor and wrapper in one call, the address
    # from a's buffer (Note [Foreign tensors in C])
    t = _fastpath.foreign_tensor(a, key, a.shape, a.strides, a.itemsize, d.num,
                                 not a.flags.writeable)
    if t is _fastpath.NO_MATCH:  # nothing made: the errors' words, or the runtime's
        _owners.pop(key, None)
        t = _from_numpy_cffi(given, a, d)
    return t


def _from_numpy_cffi(given: Any, a: Any, d: dtype) -> Tensor:
    """from_numpy of what the C call does not take: a negative stride or one
    that is not whole elements (their errors), more dims than the runtime has
    (its error, through the cffi calls)."""
    shape, byte_strides, isz = a.shape, a.strides, a.itemsize
    strides = []
    nbytes = isz  # the span from the first element to the end of the last
    for n, st in zip(shape, byte_strides):
        if st < 0:
            raise ValueError("At least one stride in the given numpy array is negative; this "
                             "is not supported (use a.copy() first)")
        if st % isz:
            raise ValueError(f"strides {byte_strides} of the given numpy array are not "
                             f"multiples of its itemsize {isz}")
        strides.append(st // isz)
        nbytes += (n - 1) * st
    if a.size == 0:
        nbytes = 0
    owner = (given, a)
    key = id(owner)
    _owners[key] = owner
    data = ffi.cast("void *", a.__array_interface__["data"][0])
    s = lib.dispatch_storage_from_foreign(0, data, nbytes, lib.dispatch_py_release_owner,
                                          ffi.cast("void *", key))
    if s == ffi.NULL:
        _owners.pop(key, None)
        _raise()
    if not a.flags.writeable:  # Note [Read-only tensors] in sources/dispatcher/dispatcher.c
        lib.dispatch_storage_set_readonly(s)
    p = lib.dispatch_tensor_from_storage(s, a.ndim, list(shape), strides, 0, d.num)
    lib.dispatch_storage_decref(s)  # the tensor holds the storage now (or it is released)
    return _wrap(p)


# DLPack's other device types, for the errors that name them
_DL_DEVICE_NAMES = {2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
                    13: "CUDA managed", 14: "oneAPI"}


def _dl_cuda_usable(what: str, dev_id: int) -> None:
    """BufferError unless DLPack device (2, dev_id) can be imported here."""
    if dev_id != 0:
        raise BufferError(f"from_dlpack: {what} is on CUDA device {dev_id} (DLPack device "
                          f"({_DL_CUDA}, {dev_id})); this runtime uses CUDA device 0 only")
    try:
        _cuda_allocator()  # the first CUDA use loads the module (Note [Lazy CUDA])
    except RuntimeError as e:
        raise BufferError(f"from_dlpack: {what} is on a CUDA device (DLPack device "
                          f"({_DL_CUDA}, {dev_id})), but CUDA is not available here: "
                          f"{_devices.backend('cuda').unavailable_reason()}") from e


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None) -> Tensor:
    """A tensor sharing the memory of x, any DLPack producer (zero-copy; cpu or cuda data).

    x is an object with ``__dlpack__`` (a NumPy array, a PyTorch tensor, a
    dispatch tensor, ...) or, for old producers, a DLPack capsule itself
    (consumed: a capsule can be used once, and one that is refused, for its
    device, dtype or strides, is consumed too: its deleter runs). The tensor keeps x's memory alive
    until its last view goes. Strides and offsets are kept; a read-only
    source (flagged so by the versioned protocol) gives a read-only tensor.
    CUDA data (CUDA device 0, where CUDA is available) gives a cuda tensor;
    the producer is asked with stream=1, the legacy default stream this
    runtime works on, so its pending work is ordered before ours.
    ``device`` None keeps x's device; "cpu" or "cuda" moves it there by a copy
    (a CUDA producer is asked for a host copy, dl_device=(1, 0)).
    ``copy=True`` asks for a copy, ``copy=False`` refuses one (BufferError
    when ``device`` needs one).
    """
    want = None if device is None else _device_num(device)
    if want is not None and want not in (0, 1):
        raise ValueError(f"from_dlpack: device {device!r} is not supported (only 'cpu' or "
                         "'cuda')")
    if type(x).__name__ == "PyCapsule":  # the legacy form: a capsule
        capsule = x
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack "
                            f"capsule (got {type(x).__name__})")
        dev_type, dev_id = _DL_CPU, 0
        if hasattr(x, "__dlpack_device__"):
            dev = x.__dlpack_device__()
            if (not isinstance(dev, tuple) or len(dev) != 2
                    or not all(isinstance(v, int) for v in dev)):
                raise TypeError(f"from_dlpack: {type(x).__name__}.__dlpack_device__() returned "
                                f"{dev!r}; expected a (device_type, device_id) tuple of ints")
            dev_type, dev_id = (int(v) for v in dev)
        what = f"the {type(x).__name__}"
        kwargs = {} if copy is None else {"copy": copy}
        if dev_type == _DL_CUDA and want == 0:  # a host copy, made by the producer
            if copy is False:
                raise BufferError(f"from_dlpack: {what} is on CUDA and device='cpu' needs a "
                                  "copy, but copy=False")
            try:
                capsule = x.__dlpack__(max_version=(1, 0), dl_device=(_DL_CPU, 0), copy=True)
            except (TypeError, BufferError, NotImplementedError):
                pass  # a producer that cannot: import on CUDA, then copy here
            else:
                return _from_capsule(capsule, 0, None, False)
        if dev_type == _DL_CUDA:
            _dl_cuda_usable(what, dev_id)
            kwargs["stream"] = 1  # our stream: Note [DLPack streams] in dispatch/cuda.py
        elif dev_type != _DL_CPU:
            name = _DL_DEVICE_NAMES.get(dev_type, "non-CPU")
            raise BufferError(f"from_dlpack: {what} is on a {name} device "
                              f"(DLPack device ({dev_type}, {dev_id})); only CPU and CUDA "
                              "device 0 data can be imported")
        src = 1 if dev_type == _DL_CUDA else 0
        if want is not None and want != src and copy is False:
            raise BufferError(f"from_dlpack: {what} is on "
                              f"{'CUDA' if dev_type == _DL_CUDA else 'the CPU'} and device="
                              f"{device!r} needs a copy, but copy=False")
        try:  # the versioned protocol first, as the DLPack spec recommends
            capsule = x.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # a producer older than DLPack 1.0: no max_version
            legacy = {"stream": kwargs["stream"]} if "stream" in kwargs else {}
            capsule = x.__dlpack__(**legacy)
            return _from_capsule(capsule, want, copy, True)
        return _from_capsule(capsule, want, copy, False)
    return _from_capsule(capsule, want, copy, True)


def _from_capsule(capsule: Any, want: int | None, copy: builtins.bool | None,
                  copy_here: builtins.bool) -> Tensor:
    """Consume capsule; then move it to device `want` when it is elsewhere
    (BufferError for copy=False), or copy it when copy=True and copy_here (the
    producer could not be asked for the copy)."""
    address, versioned = _fastpath.dlpack_take(capsule)  # we own it now
    m = ffi.cast("void *", address)
    dev_id = ffi.new("int *")
    reason = ""
    if lib.dispatch_dlpack_device(m, versioned, dev_id) == _DL_CUDA and dev_id[0] == 0:
        # the first CUDA use registers the allocator the import needs
        reason = _devices.backend("cuda").unavailable_reason()  # Note [Device registry]
    try:
        t = _wrap(lib.dispatch_tensor_from_dlpack(m, versioned))  # releases m on failure
    except RuntimeError as e:
        if reason and lib.dispatch_allocator_get(1) == ffi.NULL:
            raise RuntimeError(f"{e}: {reason}") from None
        raise
    if want is not None and want != _cptr(t).device:
        if copy is False:
            raise BufferError(f"from_dlpack: the capsule is on {t.device} and device="
                              f"{_DEVICE_NAMES[want]!r} needs a copy, but copy=False")
        return t._to_device(_DEVICE_NAMES[want])
    return _copy_on_device(t) if copy and copy_here else t



# NumPy data (imports NumPy) -------------------------------------------------------------

def _infer_array(data: Any) -> Any:
    """NumPy array of data with PyTorch's defaults (Python floats -> float32)."""
    np = _numpy()
    if _is_ndarray(data):
        return _base_view(np, data)  # Note [Arrays that lie]
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not isinstance(data, np.generic):
        with np.errstate(over="ignore"):  # beyond float32: inf, as torch
            arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iu" and not isinstance(data, np.generic) and not (
            arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max):
        arr = arr.astype(np.int64)  # (ints past int64 stay uint64: tensor() checked them)
    return arr


def _check_python_values(raw: Any, d: dtype) -> None:
    """_check_fits for data NumPy reads (lists holding NumPy scalars)."""
    np = _numpy()
    kind = d.typestr[1]
    if raw.dtype.kind == "u" and raw.dtype.itemsize == 8 and kind in "iu" \
            and kind != "u" and raw.size and raw.max() > np.iinfo(np.int64).max:
        raise _overflow(d, raw.max())
    if kind not in "iu" or raw.dtype.kind not in "iuf" or raw.size == 0:
        return
    info = np.iinfo(d.numpy)
    if raw.dtype.kind == "f":
        hi = float(info.max) if info.max < 2**53 else float(2**63)
        ok = (raw >= float(info.min)) & ((raw <= hi) if hi != 2.0**63 else (raw < hi))
    else:
        lo = -int(info.max) if kind == "u" else int(info.min)  # unsigned: wraps
        ok = (raw <= info.max) & (raw >= lo) if raw.dtype.kind == "i" else raw <= info.max
    if not ok.all():
        raise _overflow(d, raw[~ok].flat[0] if raw.ndim else raw[()])


def _tensor_from_numpy_data(data: Any, dtype: Any, device: Any) -> Tensor:
    if dtype is not None and not _as_dtype(dtype).typestr:  # bfloat16: via float64, one rounding
        return _tensor_from_numpy_data(data, float64, device).to(dtype)
    np = _numpy()
    if not _is_ndarray(data):
        raw = np.asarray(data)
        target = _as_dtype(dtype) if dtype is not None else (
            int64 if raw.dtype.kind in "iu" else None)
        if target is not None:
            _check_python_values(raw, target)
    arr = _infer_array(data)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"can't make a tensor from data of type {arr.dtype}")
    d = _as_dtype(arr.dtype if dtype is None else dtype)
    dev = _device_num(device)
    if dev == 0 and _by_numpy(arr.dtype) is d and arr.flags.c_contiguous:
        # the same bytes: a tensor over them, copied, both in C (tensor() of 4
        # int64: 3.5 -> 3.1 us; Note [Foreign tensors in C] in _fastpath_foreign.c)
        return from_numpy(arr).clone()
    t = _new_empty(arr.shape, d, dev)
    c = _cptr(t)
    if c.device != 0 or not c.numel:
        return t
    with np.errstate(over="ignore"):  # floats beyond the dtype: inf, as torch
        np.copyto(t.numpy(), arr, casting="unsafe")
    return t



def _operand(other: Any) -> Any:
    """The fast path's operand hook: a NumPy array as a tensor of its dtype (0-d:
    a 0-dim tensor), anything else NotImplemented (numbers never come here)."""
    if _is_ndarray(other):
        return _tensor_from_numpy_data(other, None, None)
    return NotImplemented


_fastpath.set_operand_hook(_operand)
