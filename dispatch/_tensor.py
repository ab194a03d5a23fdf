"""Tensors: dtypes, the Tensor class and its factories, over the C core.

A ``Tensor`` holds one pointer to a C ``dispatch_tensor`` (a view over a
refcounted storage) and drops its reference when collected; every method that
returns a tensor returns a new view or a new tensor made in C.

>>> import dispatch
>>> t = dispatch.arange(6).view(2, 3)
>>> t.T.shape
(3, 2)
"""

from __future__ import annotations

import builtins
import threading
import warnings
from typing import Any, Iterable, Sequence

import numpy as np

from . import _fastpath
from ._core import ffi, lib

__all__ = [
    "Tensor", "dtype", "tensor", "empty", "zeros", "ones", "full", "arange", "from_numpy",
    "bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64",
    "live_storages", "live_tensors",
]


# Errors --------------------------------------------------------------------------

_EXCEPTIONS = {
    1: RuntimeError, 2: ValueError, 3: TypeError, 4: IndexError,
    5: NotImplementedError, 6: MemoryError,
}
_ERR_PYTHON = 7
_pending = threading.local()  # the exception a Python kernel raised, per thread


def _raise() -> None:
    """Raise the error the C runtime recorded for this thread."""
    kind = lib.dispatch_error_kind_get()
    if kind == _ERR_PYTHON:
        exc = getattr(_pending, "exc", None)
        _pending.exc = None
        lib.dispatch_error_clear()
        if exc is not None:
            raise exc
    msg = ffi.string(lib.dispatch_error_message()).decode(errors="backslashreplace")
    lib.dispatch_error_clear()
    raise _EXCEPTIONS.get(kind, RuntimeError)(msg or "unknown error in the dispatch runtime")


def _warn_if_any(stacklevel: int = 3) -> None:
    """Turn a warning the C runtime recorded (e.g. a duplicate kernel) into a UserWarning."""
    msg = lib.dispatch_warning_message()
    if msg != ffi.NULL:
        text = ffi.string(msg).decode(errors="backslashreplace")
        lib.dispatch_warning_clear()
        warnings.warn(text, UserWarning, stacklevel=stacklevel)


if lib.dispatch_init() < 0:
    _raise()


# dtypes ------------------------------------------------------------------------------

class dtype:  # noqa: N801  (named like torch.dtype)
    """An element type: ``dispatch.float32`` and friends."""

    __slots__ = ("name", "num", "itemsize", "numpy", "is_floating_point")

    def __init__(self, name: str, num: int, np_dtype: str) -> None:
        self.name = name
        self.num = num
        self.itemsize = int(lib.dispatch_dtype_itemsize(num))
        self.numpy = np.dtype(np_dtype)
        self.is_floating_point = name.startswith("float")

    def __repr__(self) -> str:
        return f"dispatch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool = dtype("bool", 0, "bool")  # noqa: A001  (like torch.bool)
int8 = dtype("int8", 1, "int8")
uint8 = dtype("uint8", 2, "uint8")
int16 = dtype("int16", 3, "int16")
int32 = dtype("int32", 4, "int32")
int64 = dtype("int64", 5, "int64")
float16 = dtype("float16", 6, "float16")
float32 = dtype("float32", 7, "float32")
float64 = dtype("float64", 8, "float64")

_DTYPES = (bool, int8, uint8, int16, int32, int64, float16, float32, float64)
_BY_NUMPY = {d.numpy: d for d in _DTYPES}
_DEVICES = {"cpu": 0, "cuda": 1, "meta": 2}
_DEVICE_NAMES = {v: k for k, v in _DEVICES.items()}


def _as_dtype(d: Any) -> dtype:
    if isinstance(d, dtype):
        return d
    try:
        return _BY_NUMPY[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}; expected one of "
                        f"{', '.join(x.name for x in _DTYPES)}") from None


def _device_num(device: Any) -> int:
    if device is None:
        return 0
    name = str(device).split(":")[0]
    if name not in _DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {sorted(_DEVICES)}")
    return _DEVICES[name]


# Foreign memory ------------------------------------------------------------------------

_owners: dict[int, Any] = {}  # handle address -> ffi handle keeping a NumPy array alive
_owners_lock = threading.Lock()


@ffi.def_extern()
def dispatch_py_release_owner(ctx):  # noqa: ANN001, ANN201  (cffi callback)
    """Called by the C core when the last reference to a foreign storage goes."""
    with _owners_lock:
        _owners.pop(int(ffi.cast("uintptr_t", ctx)), None)


def live_storages() -> int:
    """Storages alive in the process (for leak tests)."""
    return int(lib.dispatch_storage_live_count())


def live_tensors() -> int:
    """C tensor objects alive in the process (for leak tests)."""
    return int(lib.dispatch_tensor_live_count())


# The Tensor ------------------------------------------------------------------------------

def _wrap(p: Any) -> Tensor:
    """Own the new reference p (raising the runtime's error when it is NULL)."""
    if p == ffi.NULL:
        _raise()
    t = _new_tensor(Tensor)
    t._p = p
    return t


def _sizes(shape: tuple) -> tuple:
    """Accept f(2, 3), f((2, 3)) and f([2, 3])."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return shape


def _int64s(values: Sequence[int], what: str = "shape") -> list:
    """values as a list for C, each in int64's range (else a ValueError naming them)."""
    out = list(values)
    for v in out:
        if isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError(f"{what} {tuple(out)} is too large: {v} does not fit in int64")
    return out


_decref = lib.dispatch_tensor_decref
_call_tt = lib.dispatch_call_tt
_call_ts = lib.dispatch_call_ts
_SCALAR_KIND = {builtins.bool: 2, int: 0, float: 1}


def _handle(name: str) -> Any:
    h = lib.dispatch_find_op(name.encode())
    if h == ffi.NULL:
        _raise()
    return h


_ADD, _SUB, _MUL, _DIV = (_handle(n) for n in ("add.Tensor", "sub.Tensor", "mul.Tensor",
                                                "div.Tensor"))
_EQ, _NE, _LT, _LE, _GT, _GE = (_handle(n + ".Tensor") for n in ("eq", "ne", "lt", "le", "gt", "ge"))
_NEG, _ABS = _handle("neg"), _handle("abs")


def _binary(h: Any, a: Tensor, b: Any, reverse: builtins.bool = False) -> Any:
    """a <op> b (b <op> a when reverse) with b a Tensor or a Python number."""
    if type(b) is Tensor:
        p = _call_tt(h, b._p, a._p) if reverse else _call_tt(h, a._p, b._p)
    else:
        kind = _SCALAR_KIND.get(type(b))
        if kind is None:
            if isinstance(b, Tensor):
                kind = -1
            elif isinstance(b, (builtins.bool, np.bool_)):
                b, kind = builtins.bool(b), 2
            elif isinstance(b, (int, np.integer)):
                b, kind = int(b), 0
            elif isinstance(b, (float, np.floating)):
                b, kind = float(b), 1
            elif isinstance(b, np.ndarray):  # a tensor of its dtype (0-d: a 0-dim tensor)
                b, kind = tensor(b), -1
            else:
                return NotImplemented
        if kind == -1:
            p = _call_tt(h, b._p, a._p) if reverse else _call_tt(h, a._p, b._p)
        elif kind == 1:
            p = _call_ts(h, a._p, b, 0, 1, reverse)
        else:
            p = _call_ts(h, a._p, 0.0, b, kind, reverse)
    if p == ffi.NULL:
        _raise()
    t = _new_tensor(Tensor)
    t._p = p
    return t


_new_tensor = _fastpath.TensorBase.__new__


class Tensor(_fastpath.TensorBase):
    """An n-dimensional view over a refcounted storage (see the module doc).

    Its runtime pointer ``_p`` and the operators + - * / == != < <= > >= live
    in the C base class (Note [Operator fast path] in dispatch/_fastpath.c).
    """

    __slots__ = ()

    # NumPy's operators defer to ours: np.float64(2.5) * t and np.ones(3) + t
    # are t's reflected operators (a Tensor, torch's promotion), not ndarrays.
    __array_ufunc__ = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("create tensors with dispatch.tensor(), empty(), zeros(), ...")

    # Metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        p = self._p
        return tuple(p.sizes[0:p.ndim])

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> Any:
        p = self._p
        st = tuple(p.strides[0:p.ndim])
        return st if dim is None else st[dim]

    @property
    def ndim(self) -> int:
        return int(self._p.ndim)

    def dim(self) -> int:
        return int(self._p.ndim)

    def numel(self) -> int:
        return int(self._p.numel)

    def storage_offset(self) -> int:
        return int(self._p.offset)

    @property
    def dtype(self) -> dtype:
        return _DTYPES[self._p.dtype]

    @property
    def device(self) -> str:
        return _DEVICE_NAMES[self._p.device]

    def is_contiguous(self) -> builtins.bool:
        return builtins.bool(self._p.is_contiguous)

    def data_ptr(self) -> int:
        return int(ffi.cast("uintptr_t", self._p.data))

    def _storage_ptr(self) -> int:
        """Identity of the storage (views of one tensor share it)."""
        return int(ffi.cast("uintptr_t", self._p.storage))

    def __len__(self) -> int:
        if self._p.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._p.sizes[0])

    # Views ------------------------------------------------------------------------------
    def view(self, *shape: int) -> Tensor:
        shape = _sizes(shape)
        return _wrap(lib.dispatch_tensor_view(self._p, len(shape), _int64s(shape)))

    def reshape(self, *shape: int) -> Tensor:
        shape = _sizes(shape)
        return _wrap(lib.dispatch_tensor_reshape(self._p, len(shape), _int64s(shape)))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _wrap(lib.dispatch_tensor_transpose(self._p, dim0, dim1))

    def permute(self, *dims: int) -> Tensor:
        dims = _sizes(dims)
        return _wrap(lib.dispatch_tensor_permute(self._p, len(dims), dims))

    @property
    def T(self) -> Tensor:  # noqa: N802
        return _wrap(lib.dispatch_tensor_t(self._p))

    def unsqueeze(self, dim: int) -> Tensor:
        return _wrap(lib.dispatch_tensor_unsqueeze(self._p, dim))

    def expand(self, *sizes: int) -> Tensor:
        sizes = _sizes(sizes)
        return _wrap(lib.dispatch_tensor_expand(self._p, len(sizes), _int64s(sizes)))

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        return self.expand(*shape)

    def as_strided(self, size: Sequence[int], stride: Sequence[int],
                   storage_offset: int | None = None) -> Tensor:
        if len(size) != len(stride):
            raise ValueError(f"as_strided: {len(size)} sizes but {len(stride)} strides")
        off = self._p.offset if storage_offset is None else storage_offset
        _int64s((off,), "storage offset")
        return _wrap(lib.dispatch_tensor_as_strided(self._p, len(size), _int64s(size),
                                                    _int64s(stride, "strides"), off))

    def __getitem__(self, index: Any) -> Tensor:
        return _wrap(_index(self._p, index))

    def __setitem__(self, index: Any, value: Any) -> None:
        target = self[index]
        if isinstance(value, Tensor):
            target.copy_(value)
        else:
            target.fill_(value)

    # Copies ------------------------------------------------------------------------------
    def contiguous(self) -> Tensor:
        return _wrap(lib.dispatch_tensor_contiguous(self._p))

    def clone(self) -> Tensor:
        return _wrap(lib.dispatch_tensor_clone(self._p))

    def to(self, dtype: Any) -> Tensor:
        """A tensor of another dtype (self when it already has it)."""
        return _wrap(lib.dispatch_tensor_to_dtype(self._p, _as_dtype(dtype).num))

    # NumPy and Python values -------------------------------------------------------------
    @property
    def __array_interface__(self) -> dict:
        p = self._p
        if p.device != 0:
            raise TypeError(f"can't convert {self.device} tensor to numpy (only cpu tensors "
                            "have data on the host)")
        d = _DTYPES[p.dtype]
        n = p.ndim
        return {
            "version": 3,
            "shape": tuple(p.sizes[0:n]),
            # a size-1 dim never steps: its stride may be anything in C (even
            # beyond NumPy's intp once in bytes), so NumPy gets 0
            "strides": tuple(s * d.itemsize if size > 1 else 0
                             for s, size in zip(p.strides[0:n], p.sizes[0:n])),
            "typestr": d.numpy.str,
            "data": (int(ffi.cast("uintptr_t", p.data)),
                     builtins.bool(lib.dispatch_storage_is_readonly(p.storage))),
        }

    def numpy(self) -> np.ndarray:
        """A NumPy array sharing this tensor's memory (zero-copy; cpu only)."""
        return np.asarray(self)

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def item(self) -> Any:
        p = self._p
        if p.numel != 1:
            raise ValueError(f"a Tensor with {p.numel} elements cannot be converted to Scalar")
        if p.device != 0:
            raise TypeError(f"item() of a {self.device} tensor: it has no data")
        if p.dtype >= 6:
            return float(lib.dispatch_tensor_get_double(p, 0))
        v = int(lib.dispatch_tensor_get_int(p, 0))
        return builtins.bool(v) if p.dtype == 0 else v

    def __bool__(self) -> builtins.bool:
        return builtins.bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __iter__(self) -> Iterable[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        suffix = "" if self.dtype in (float32, int64, bool) else f", dtype={self.dtype!r}"
        if self._p.device != 0:
            return f"tensor(..., size={self.shape}, device='{self.device}'{suffix})"
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        return f"tensor({body}{suffix})"

    __hash__ = object.__hash__

    # Operators (+ - * / and comparisons: the C base) ---------------------------------------
    # In place, like PyTorch: the result is written into self (views see it).
    def __iadd__(self, other: Any) -> Tensor:
        return _inplace("add_", self, other)

    def __isub__(self, other: Any) -> Tensor:
        return _inplace("sub_", self, other)

    def __imul__(self, other: Any) -> Tensor:
        return _inplace("mul_", self, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _inplace("div_", self, other)

    def __neg__(self) -> Tensor:
        return _fastpath.call1(_NEG_AT, self)

    def __abs__(self) -> Tensor:
        return _fastpath.call1(_ABS_AT, self)

    # Operator methods t.<name>(...) = dispatch.ops.<name>(t, ...): set on the
    # class below (_METHODS), so a call is no attribute miss.




def _inplace(name: str, self: Tensor, other: Any) -> Any:
    if isinstance(other, np.ndarray):
        other = tensor(other)
    if not isinstance(other, (Tensor, builtins.bool, int, float, np.bool_, np.number)):
        return NotImplemented
    return getattr(_ops(), name)(self, other)


def _address(p: Any) -> int:
    return int(ffi.cast("uintptr_t", p))


def _fallbacks(reverse: builtins.bool) -> tuple:
    return tuple((lambda h: lambda a, b: _binary(h, a, b, reverse))(h) for h in _FAST_OPS)


_NEG_AT, _ABS_AT = _address(_NEG), _address(_ABS)
# The operators of the C base, in dispatch/_fastpath.c's order.
_FAST_OPS = (_ADD, _SUB, _MUL, _DIV, _EQ, _NE, _LT, _LE, _GT, _GE)
_fastpath.init(Tensor, dtype, tuple(_address(ffi.addressof(lib, f)) for f in (
                   "dispatch_call_tt", "dispatch_call_t", "dispatch_call_tensors_scalar",
                   "dispatch_tensor_decref", "dispatch_call", "dispatch_op_default",
                   "dispatch_ivalue_release")),
               tuple(_address(h) for h in _FAST_OPS), _fallbacks(False), _fallbacks(True),
               lambda addr: ffi.cast("dispatch_tensor *", addr), _address, _raise)

_METHODS = frozenset({
    "add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "neg", "abs", "sqrt", "exp", "log", "addcmul", "sum", "mean", "max", "min", "dot",
    "copy_", "fill_", "cast", "add_", "sub_", "mul_", "div_", "argmax", "argmin",
})


def _operator_method(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(_ops(), name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"dispatch.ops.{name}(self, ...)"
    return method


for _name in _METHODS:
    setattr(Tensor, _name, _operator_method(_name))


_ops_module: Any = None


def _ops() -> Any:
    """dispatch.ops (imported late: it imports this module)."""
    global _ops_module
    if _ops_module is None:
        from . import ops

        _ops_module = ops
    return _ops_module


# Indexing -------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _clamp64(v: int) -> int:
    return _INT64_MIN if v < _INT64_MIN else _INT64_MAX if v > _INT64_MAX else v


def _index(p: Any, index: Any) -> Any:
    """The C view for t[index]: ints, slices (step > 0), None and Ellipsis."""
    items = index if isinstance(index, tuple) else (index,)
    consumed = 0
    for it in items:
        if it is None or it is Ellipsis:
            continue
        if isinstance(it, (int, np.integer, slice)) and not isinstance(it, builtins.bool):
            consumed += 1
        else:
            raise TypeError("only integers, slices (`:`), ellipsis (`...`) and None are valid "
                            f"indices, got {type(it).__name__}")
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > p.ndim:
        raise IndexError(f"too many indices for tensor of dimension {p.ndim}")
    cur = p
    lib.dispatch_tensor_incref(cur)
    dim = 0
    try:
        for it in items:
            if it is Ellipsis:
                dim += p.ndim - consumed
                continue
            if it is None:
                nxt = lib.dispatch_tensor_unsqueeze(cur, dim)
                dim += 1
            elif isinstance(it, slice):
                # Bounds beyond int64 clamp (as slice.indices would); a step
                # beyond it takes one element at most, as INT64_MAX does.
                step = 1 if it.step is None else _clamp64(int(it.step))
                nxt = lib.dispatch_tensor_slice(
                    cur, dim, 0 if it.start is None else _clamp64(int(it.start)),
                    0 if it.stop is None else _clamp64(int(it.stop)), step,
                    it.start is not None, it.stop is not None)
                dim += 1
            else:
                i = int(it)
                if _clamp64(i) != i:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                                     f"{cur.sizes[dim]}")
                nxt = lib.dispatch_tensor_select(cur, dim, i)
            if nxt == ffi.NULL:
                _raise()
            _decref(cur)
            cur = nxt
    except BaseException:
        _decref(cur)
        raise
    return cur


# Factories -------------------------------------------------------------------------------

def empty(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialised tensor (float32 unless dtype says otherwise)."""
    size = _sizes(size)
    d = float32 if dtype is None else _as_dtype(dtype)
    return _wrap(lib.dispatch_tensor_empty(len(size), _int64s(size), d.num,
                                           _device_num(device)))


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of one value; the dtype follows the value (bool, int64, float32) by default."""
    if dtype is None:
        dtype = (bool if isinstance(fill_value, builtins.bool)
                 else int64 if isinstance(fill_value, int) else float32)
    t = empty(*_sizes(tuple(size) if isinstance(size, (list, tuple)) else (size,)),
              dtype=dtype, device=device)
    return t.fill_(fill_value)


def zeros(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    return full(_sizes(size), 0, dtype=dtype or float32, device=device)


def ones(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    return full(_sizes(size), 1, dtype=dtype or float32, device=device)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing a's memory (zero-copy); a stays alive as long as the storage.

    A read-only array (writeable flag False: a read-only memmap, np.frombuffer
    of bytes, ...) gives a read-only tensor: it and its views can be read, and
    every write (add_, +=, fill_, copy_, t[i] = v) raises ValueError; its
    NumPy export is read-only too.
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    d = _BY_NUMPY.get(a.dtype.newbyteorder("=")) if a.dtype.isnative else None
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type {a.dtype}. The only supported types "
                        f"are: {', '.join(x.name for x in _DTYPES)}.")
    if any(s < 0 for s in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative; this is "
                         "not supported (use a.copy() first)")
    if any(s % a.itemsize for s in a.strides):
        raise ValueError(f"strides {a.strides} of the given numpy array are not multiples of "
                         f"its itemsize {a.itemsize}")
    nbytes = 0 if a.size == 0 else (
        sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize)
    handle = ffi.new_handle(a)
    key = int(ffi.cast("uintptr_t", handle))
    with _owners_lock:
        _owners[key] = handle
    data = ffi.cast("void *", a.__array_interface__["data"][0])
    s = lib.dispatch_storage_from_foreign(0, data, nbytes, lib.dispatch_py_release_owner, handle)
    if s == ffi.NULL:
        with _owners_lock:
            _owners.pop(key, None)
        _raise()
    if not a.flags.writeable:  # Note [Read-only tensors] in sources/dispatcher/dispatcher.c
        lib.dispatch_storage_set_readonly(s)
    strides = [st // a.itemsize for st in a.strides]
    p = lib.dispatch_tensor_from_storage(s, a.ndim, list(a.shape), strides, 0, d.num)
    lib.dispatch_storage_decref(s)  # the tensor holds the storage now (or it is released)
    return _wrap(p)


def _infer_array(data: Any) -> np.ndarray:
    """NumPy array of data with PyTorch's defaults (Python floats -> float32)."""
    if isinstance(data, np.ndarray):
        return data
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not isinstance(data, np.generic):
        with np.errstate(over="ignore"):  # beyond float32: inf, as torch
            arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iu" and not isinstance(data, np.generic) and not (
            arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max):
        arr = arr.astype(np.int64)  # (ints past int64 stay uint64: tensor() checked them)
    return arr


def _check_python_values(raw: np.ndarray, d: dtype) -> None:
    """Python numbers bound for an integer dtype must fit it, as torch's
    checked conversion says (floats truncate; negative ints down to -255 wrap
    into uint8); an int beyond int64 never fits."""
    if raw.dtype.kind == "u" and raw.dtype.itemsize == 8 and d.numpy.kind in "iu" \
            and d is not uint8 and raw.size and raw.max() > np.iinfo(np.int64).max:
        raise ValueError(f"value cannot be converted to type {d.name} without overflow: "
                         f"{raw.max()}")
    if d.numpy.kind not in "iu" or raw.dtype.kind not in "iuf" or raw.size == 0:
        return
    info = np.iinfo(d.numpy)
    if raw.dtype.kind == "f":
        hi = float(info.max) if info.max < 2**53 else float(2**63)
        ok = (raw >= float(info.min)) & ((raw <= hi) if hi != 2.0**63 else (raw < hi))
    else:
        lo = -int(info.max) if d is uint8 else int(info.min)
        ok = (raw <= info.max) & (raw >= lo) if raw.dtype.kind == "i" else raw <= info.max
    if not ok.all():
        bad = raw[~ok].flat[0] if raw.ndim else raw[()]
        raise ValueError(f"value cannot be converted to type {d.name} without overflow: {bad}")


def tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A new tensor holding a copy of data (nested sequences, numbers, arrays, tensors).

    Python numbers (not NumPy arrays) are checked as torch does: one that does
    not fit an integer dtype is a ValueError, never a wrapped value."""
    if isinstance(data, Tensor):
        t = data.clone()
        return t if dtype is None else t.to(dtype)
    if not isinstance(data, np.ndarray):
        raw = np.asarray(data)
        target = _as_dtype(dtype) if dtype is not None else (
            int64 if raw.dtype.kind in "iu" else None)
        if target is not None:
            _check_python_values(raw, target)
    arr = _infer_array(data)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"can't make a tensor from data of type {arr.dtype}")
    d = _as_dtype(arr.dtype if dtype is None else dtype)
    t = empty(*arr.shape, dtype=d, device=device)
    if t._p.device == 0 and t._p.numel:
        with np.errstate(over="ignore"):  # floats beyond the dtype: inf, as torch
            np.copyto(t.numpy(), arr, casting="unsafe")
    return t


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Tensor:
    """Values from start (0 when only end is given) to end, exclusive, by step."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if ints else float32
    d = _as_dtype(dtype)
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    return tensor(np.arange(start, end, step, dtype=np.float64 if d.is_floating_point else None
                            ).astype(d.numpy), dtype=d, device=device)
