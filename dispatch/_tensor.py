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

import array
import builtins
import itertools
import math
import operator
import struct
import sys
import threading
import warnings
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any, Iterable, Sequence

# No NumPy here: `import dispatch` must not import it (Note [NumPy is optional]).
from . import _fastpath, _format, _tables
from ._core import ffi, lib

__all__ = [
    "Tensor", "dtype", "tensor", "empty", "zeros", "ones", "full", "arange", "from_numpy",
    "from_dlpack",
    "bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64",
    "live_storages", "live_tensors",
]


# Errors --------------------------------------------------------------------------

_EXCEPTIONS = _tables.ERRORS  # error kind -> exception class, read from C
_ERR_PYTHON = _tables.ERR_PYTHON
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


# NumPy values ------------------------------------------------------------------------
#
# Note [NumPy is optional]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# `import dispatch` imports no NumPy, and tensors, factories, every operator
# and repr work without it installed: dtypes carry their own name, item size
# and struct format; tensor() of nested lists, tolist(), repr (dispatch/
# _format.py) and arange are plain Python over the C core. NumPy is imported
# only by interop: from_numpy, .numpy(), tensor() of an array or of NumPy
# scalars, a dtype given as a NumPy dtype. A NumPy value can only exist once
# NumPy is imported, so the scalar checks below look in sys.modules instead
# of importing it (np.bool_ is no numbers.Integral, hence the explicit types).


def _numpy() -> Any:
    """NumPy, imported for interop (ImportError naming the extra when absent)."""
    try:
        import numpy
    except ImportError as e:
        raise ImportError("this needs NumPy, which is not installed: "
                          "pip install 'dispatch[numpy]' (or numpy)") from e
    return numpy


def _loaded_numpy() -> Any:
    """NumPy when something imported it already, else None (then no value is NumPy's)."""
    return sys.modules.get("numpy")


def _is_bool(v: Any) -> builtins.bool:
    """A Python or NumPy bool."""
    if isinstance(v, builtins.bool):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.bool_)


def _is_int(v: Any) -> builtins.bool:
    """A Python int (bool included, as isinstance says) or a NumPy integer."""
    if isinstance(v, int):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.integer)


def _is_float(v: Any) -> builtins.bool:
    """A Python float or a NumPy floating scalar."""
    if isinstance(v, float):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.floating)


def _is_number(v: Any) -> builtins.bool:
    """A real number: Python bool/int/float or a NumPy bool/integer/floating."""
    if isinstance(v, (int, float)):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, (np.integer, np.floating, np.bool_))


def _is_ndarray(v: Any) -> builtins.bool:
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.ndarray)


# dtypes ------------------------------------------------------------------------------

class dtype:  # noqa: N801  (named like torch.dtype)
    """An element type: ``dispatch.float32`` and friends."""

    __slots__ = ("name", "num", "itemsize", "format", "typestr", "is_floating_point")

    def __init__(self, num: int) -> None:
        """The dtype of id ``num``: everything about it comes from C's one list."""
        self.name = _tables.DTYPE_NAMES[num]
        self.num = num
        self.itemsize = _tables.DTYPE_ITEMSIZES[num]
        self.format = _tables.DTYPE_FORMATS[num]  # the struct / buffer-protocol format
        self.typestr = _tables.DTYPE_TYPESTRS[num]
        self.is_floating_point = _tables.DTYPE_CATEGORIES[num] == _tables.CAT_FLOAT

    @property
    def numpy(self) -> Any:
        """The NumPy dtype (imports NumPy); TypeError for bfloat16, which NumPy lacks."""
        if not self.typestr:
            raise TypeError(_no_numpy_message(self))
        return _numpy().dtype(self.typestr)

    def __repr__(self) -> str:
        return f"dispatch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


# One dtype object per dtype of C's list (Note [One dtype list] in
# sources/include/dispatch/dtype.h), by id, each a module attribute named as
# in C (dispatch.float32 and friends; `bool`, `int64`, ... below are these).
_DTYPES = tuple(dtype(num) for num in range(_tables.NUM_DTYPES))
_BY_NAME = {d.name: d for d in _DTYPES}
globals().update(_BY_NAME)
__all__ += [d.name for d in _DTYPES if d.name not in __all__]
_BY_PYTHON_TYPE = {builtins.bool: bool, int: int64, float: float64}  # as np.dtype(int) etc.
_DEVICES = dict(_tables.DEVICES)  # name -> id, read from C
_DEVICE_NAMES = {v: k for k, v in _DEVICES.items()}
_CPU = _DEVICES["cpu"]


def _no_numpy_message(d: dtype) -> str:
    """Why a dtype NumPy lacks (bfloat16) has no NumPy export (README, "bfloat16")."""
    return (f"NumPy has no {d.name} dtype: convert with .to(dispatch.float32) (torch's "
            f".float()) before .numpy(), and back with .to(dispatch.{d.name})")


def _by_numpy(np_dtype: Any) -> Any:
    """Our dtype of a NumPy dtype (native byte order), else None (also for a
    NumPy extension dtype named like one NumPy lacks, e.g. ml_dtypes' bfloat16)."""
    if not np_dtype.isnative:
        return None
    d = _BY_NAME.get(np_dtype.name)
    return d if d is not None and d.typestr else None


def _as_dtype(d: Any) -> dtype:
    if isinstance(d, dtype):
        return d
    found = _BY_NAME.get(d) if isinstance(d, str) else _BY_PYTHON_TYPE.get(d)
    if found is not None:
        return found
    np = _loaded_numpy()
    if np is None and isinstance(d, str):
        try:  # a NumPy spelling ("f4", "<i8", "double"): ask NumPy when it is installed
            np = _numpy()
        except ImportError:
            np = None
    if np is not None:
        try:
            found = _by_numpy(np.dtype(d))
        except TypeError:
            found = None
        if found is not None:
            return found
    raise TypeError(f"unsupported dtype {d!r}; expected one of "
                    f"{', '.join(x.name for x in _DTYPES)}")


def _dlpack_major(max_version: Any) -> int:
    """The major number of __dlpack__'s max_version, a (major, minor) pair of ints."""
    if (not isinstance(max_version, (tuple, list)) or len(max_version) != 2
            or not all(isinstance(v, int) and not isinstance(v, builtins.bool)
                       for v in max_version)):
        raise TypeError("__dlpack__(max_version=...) takes None or a (major, minor) tuple of "
                        f"ints, got {max_version!r}")
    return max_version[0]


def _device_num(device: Any) -> int:
    if device is None:
        return 0
    name = str(device).split(":")[0]
    if name not in _DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {sorted(_DEVICES)}")
    if name == "cuda":
        _cuda_allocator()
    return _DEVICES[name]


def _cuda_allocator() -> None:
    """Device "cuda" needs the CUDA module's allocator: the first use loads it
    (Note [Lazy CUDA] in dispatch/cuda.py); where CUDA cannot run, say why."""
    if lib.dispatch_allocator_get(1) == ffi.NULL:
        from . import cuda

        reason = cuda.unavailable_reason()
        if reason:
            raise RuntimeError("no allocator is registered for device 'cuda': CUDA is not "
                               f"available: {reason}")


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
    """values as a list for C, each an int (or has __index__, as a NumPy
    integer) in int64's range: else a TypeError or ValueError naming them."""
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, int):
            try:
                out[i] = operator.index(v)
            except TypeError:
                raise TypeError(f"{what} {tuple(out)} must hold integers, got "
                                f"{type(v).__name__}") from None
    for v in out:
        if isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError(f"{what} {tuple(out)} is too large: {v} does not fit in int64")
    return out


_decref = lib.dispatch_tensor_decref
_call_tt = lib.dispatch_call_tt
_call_ts = lib.dispatch_call_ts
_NUM_INT, _NUM_FLOAT, _NUM_BOOL = lib.DISPATCH_NUMBER_INT, lib.DISPATCH_NUMBER_FLOAT, lib.DISPATCH_NUMBER_BOOL
_SCALAR_KIND = {builtins.bool: _NUM_BOOL, int: _NUM_INT, float: _NUM_FLOAT}


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
            elif _is_bool(b):
                b, kind = builtins.bool(b), _NUM_BOOL
            elif _is_int(b):
                b, kind = int(b), _NUM_INT
            elif _is_float(b):
                b, kind = float(b), _NUM_FLOAT
            elif _is_ndarray(b):  # a tensor of its dtype (0-d: a 0-dim tensor)
                b, kind = tensor(b), -1
            else:
                return NotImplemented
        if kind == -1:
            p = _call_tt(h, b._p, a._p) if reverse else _call_tt(h, a._p, b._p)
        elif kind == _NUM_FLOAT:
            p = _call_ts(h, a._p, b, 0, _NUM_FLOAT, reverse)
        else:
            if not _INT64_MIN <= b <= _INT64_MAX:  # name the value, as the other paths do
                raise OverflowError(f"int too big to convert: {b} is outside int64's range "
                                    "[-2**63, 2**63 - 1]")
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
        if self._p.device == 1 and not self.is_contiguous():
            return _copy_on_device(self)  # C's contiguous walks host memory
        return _wrap(lib.dispatch_tensor_contiguous(self._p))

    def clone(self) -> Tensor:
        if self._p.device == 1:
            return _copy_on_device(self)  # C's clone walks host memory
        return _wrap(lib.dispatch_tensor_clone(self._p))

    def to(self, dtype: Any) -> Tensor:
        """A tensor of another dtype, or on another device ("cuda", "cpu"); self when
        it already is."""
        if isinstance(dtype, str) and dtype.split(":")[0] in _DEVICES:
            return self._to_device(dtype)
        if self._p.device == 1 and _as_dtype(dtype) != self.dtype:
            return _copy_on_device(self, _as_dtype(dtype))  # a cast by the CUDA copy_ kernel
        return _wrap(lib.dispatch_tensor_to_dtype(self._p, _as_dtype(dtype).num))

    # NumPy and Python values -------------------------------------------------------------
    @property
    def __array_interface__(self) -> dict:
        p = self._p
        if p.device == 1:  # torch's words (its __array__ and numpy() say so)
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if p.device != _CPU:
            raise TypeError(f"can't convert {self.device} tensor to numpy (only cpu tensors "
                            "have data on the host)")
        d = _DTYPES[p.dtype]
        if not d.typestr:
            raise TypeError(_no_numpy_message(d))
        n = p.ndim
        return {
            "version": 3,
            "shape": tuple(p.sizes[0:n]),
            # a size-1 dim never steps: its stride may be anything in C (even
            # beyond NumPy's intp once in bytes), so NumPy gets 0
            "strides": tuple(s * d.itemsize if size > 1 else 0
                             for s, size in zip(p.strides[0:n], p.sizes[0:n])),
            "typestr": d.typestr,
            "data": (int(ffi.cast("uintptr_t", p.data)),
                     builtins.bool(lib.dispatch_storage_is_readonly(p.storage))),
        }

    def numpy(self) -> Any:
        """A NumPy array sharing this tensor's memory (zero-copy; cpu only; imports NumPy).

        TypeError for a bfloat16 tensor (NumPy has no bfloat16): call .to(float32) first;
        for a cuda tensor, as torch's: .cpu() first (this would not copy)."""
        if self._p.device == 1:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if not _DTYPES[self._p.dtype].typestr:
            raise TypeError(_no_numpy_message(_DTYPES[self._p.dtype]))
        return _numpy().asarray(self)

    # DLPack (Note [DLPack] in sources/core/dlpack.c) -------------------------------------
    def __dlpack__(self, *, stream: Any = None, max_version: tuple | None = None,
                   dl_device: tuple | None = None, copy: builtins.bool | None = None) -> Any:
        """A DLPack capsule viewing this tensor (zero-copy; cpu and cuda tensors).

        As the DLPack / array API protocol says: ``max_version`` (1, x) or
        higher gives a versioned capsule ("dltensor_versioned", flagged
        read-only for a read-only tensor), None or (0, x) a legacy one
        ("dltensor"; a read-only tensor is refused then, since it cannot say
        so). ``stream`` must be None on the CPU; for a cuda tensor it is the
        consumer's stream (None or 1 the legacy default stream, 2 the
        per-thread one, else a cudaStream_t; -1 no synchronization), made to
        wait for this tensor's pending work (Note [DLPack streams] in
        dispatch/cuda.py). ``dl_device`` None or the tensor's own device, or
        (1, 0) for a cuda tensor: a host copy (refused with copy=False).
        ``copy=True`` exports a copy (flagged as one), ``copy=False`` never
        copies, None only to change device.
        """
        p = self._p
        here = self.__dlpack_device__()  # BufferError for a meta tensor
        target = here
        if dl_device is not None:
            try:
                dev_type, dev_id = dl_device
                target = (int(dev_type), int(dev_id))
            except (TypeError, ValueError):
                raise TypeError(f"dl_device must be a (device type, device id) pair as "
                                f"__dlpack_device__() gives (got {dl_device!r})") from None
        if target == (_DL_CPU, 0) and stream is not None:
            raise ValueError(f"stream must be None for a cpu tensor (got {stream!r}): the CPU "
                             "has no streams to synchronize" if p.device == 0 else
                             f"stream must be None for an export to the CPU, dl_device="
                             f"{target} (got {stream!r}): the copy to the host is synchronous")
        to_host = target != here and p.device == 1 and target == (_DL_CPU, 0)
        if target != here and not to_host:
            raise BufferError(f"cannot export a {self.device} tensor to DLPack device {target} "
                              + (f"(only {here}, its own, or ({_DL_CPU}, 0), the CPU, as a copy)"
                                 if p.device == 1 else f"(only ({_DL_CPU}, 0), the CPU)"))
        if to_host and copy is False:
            raise BufferError(f"cannot export a cuda tensor to DLPack device {target} (the CPU) "
                              "with copy=False: that needs a copy to the host")
        wait = None
        if p.device == 1 and not to_host:
            from . import cuda

            wait = cuda.dlpack_stream(stream)  # TypeError/ValueError before any work
        versioned = max_version is not None and _dlpack_major(max_version) >= 1
        copied = builtins.bool(copy) or to_host
        keep = self
        if to_host:
            keep = self.cpu()  # synchronous: ready for any host consumer
            p = keep._p
        elif copy:
            keep = _copy_on_device(self)  # alive until the capsule holds its storage
            p = keep._p
        elif not versioned and lib.dispatch_storage_is_readonly(p.storage):
            raise BufferError("cannot export a read-only tensor as a legacy (unversioned) DLPack "
                              "capsule, which cannot flag it read-only: ask for max_version=(1, 0)")
        if wait is not None:
            cuda.stream_wait(wait)  # after the copy: that is work the consumer waits for
        m = lib.dispatch_tensor_to_dlpack(p, versioned, copied)
        del keep
        if m == ffi.NULL:
            _raise()
        # the capsule owns m (its destructor calls the deleter unless consumed);
        # on failure, the deleter has run already
        return _fastpath.dlpack_capsule(int(ffi.cast("uintptr_t", m)), versioned)

    def __dlpack_device__(self) -> tuple:
        """(device type, device id) as DLPack numbers them: (1, 0) for the CPU,
        (2, 0) for CUDA (this runtime uses CUDA device 0)."""
        if self._p.device == 1:
            return (_DL_CUDA, 0)
        if self._p.device != _CPU:
            raise BufferError(f"a {self.device} tensor has no DLPack device (only cpu and cuda "
                              "tensors)")
        return (_DL_CPU, 0)

    def tolist(self) -> Any:
        """The values as (nested lists of) Python bool, int or float; a cuda
        tensor's are copied to the host first (after its queued work, as torch's)."""
        t = self if self._p.device == _CPU else self.cpu()  # meta: "Cannot copy out ..."
        return _nest(_flat_values(t), t.shape)

    def item(self) -> Any:
        """The one value as a Python bool, int or float (a cuda tensor's is
        copied to the host first, as torch's)."""
        p = self._p
        if p.numel != 1:
            raise ValueError(f"a Tensor with {p.numel} elements cannot be converted to Scalar")
        if p.device == _DEVICES["meta"]:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors (the meta "
                               "device holds shapes only)")
        if p.device != _CPU:
            return self.cpu().item()  # synchronous: the device's work is done
        if _DTYPES[p.dtype].is_floating_point:
            return float(lib.dispatch_tensor_get_double(p, 0))
        v = int(lib.dispatch_tensor_get_int(p, 0))
        return builtins.bool(v) if _DTYPES[p.dtype] is bool else v

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
        # torch's order: values, device (a cuda tensor's as 'cuda:0'), size
        # (meta, which has no values), dtype
        suffix = "" if self.dtype in (float32, int64, bool) else f", dtype={self.dtype!r}"
        if self._p.device == _DEVICES["meta"]:
            return f"tensor(..., device='meta', size={self.shape}{suffix})"
        if self._p.device != _CPU:
            suffix = f", device='{self.device}:0'{suffix}"  # this runtime's CUDA device is 0
        # a cuda tensor's values come to the host through tolist()/item()
        body = _format.format_nested(_summarized(self), self.dtype.name, "tensor(", self.ndim)
        return f"tensor({body}{suffix})"

    __hash__ = object.__hash__

    # Devices (dispatch/cuda.py does the CUDA work) ---------------------------------------
    def cuda(self) -> Tensor:
        """This tensor on the CUDA device (self when it is there)."""
        return self._to_device("cuda")

    def cpu(self) -> Tensor:
        """This tensor on the host (self when it is there)."""
        return self._to_device("cpu")

    @property
    def is_cuda(self) -> builtins.bool:
        return self._p.device == 1

    def _to_device(self, device: Any) -> Tensor:
        n = _device_num(device)
        if n == self._p.device:
            return self
        # The meta device holds shapes only, as torch's: a tensor goes there
        # as a new one of its shape and dtype; nothing comes back from it.
        if n == _DEVICES["meta"]:
            return empty(*self.shape, dtype=self.dtype, device="meta")
        if self._p.device == _DEVICES["meta"]:
            raise NotImplementedError("Cannot copy out of meta tensor; no data! (the meta "
                                      "device holds shapes only)")
        from . import cuda

        return cuda._copy_to_device(self, n)

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

    # Operator methods t.<name>(...) = dispatch.ops.<name>(t, ...): installed
    # by dispatch.ops (this module never imports it).




def _inplace(name: str, self: Tensor, other: Any) -> Any:
    if _is_ndarray(other):
        other = tensor(other)
    np = _loaded_numpy()
    if not isinstance(other, (Tensor, builtins.bool, int, float)) and not (
            np is not None and isinstance(other, (np.bool_, np.number))):
        return NotImplemented
    return getattr(Tensor, name)(self, other)  # the method dispatch.ops installs


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
        if (isinstance(it, (int, slice)) or _is_int(it)) and not isinstance(it, builtins.bool):
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
    if _device_num(device) == 1:  # made on the host, then copied (no CUDA fill kernel yet)
        return full(size, fill_value, dtype=dtype).to("cuda")
    t = empty(*_sizes(tuple(size) if isinstance(size, (list, tuple)) else (size,)),
              dtype=dtype, device=device)
    return t.fill_(fill_value)


def zeros(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    return full(_sizes(size), 0, dtype=dtype or float32, device=device)


def ones(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    return full(_sizes(size), 1, dtype=dtype or float32, device=device)


def from_numpy(a: Any) -> Tensor:
    """A tensor sharing a's memory (zero-copy); a stays alive as long as the storage.

    A read-only array (writeable flag False: a read-only memmap, np.frombuffer
    of bytes, ...) gives a read-only tensor: it and its views can be read, and
    every write (add_, +=, fill_, copy_, t[i] = v) raises ValueError; its
    NumPy export is read-only too.
    """
    if not _is_ndarray(a):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    d = _by_numpy(a.dtype)
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type {a.dtype}. The only supported types "
                        f"are: {', '.join(x.name for x in _DTYPES if x.typestr)}.")
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


_DL_CPU, _DL_CUDA = 1, 2  # DLDeviceType kDLCPU, kDLCUDA
_DL_DEVICE_NAMES = {2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
                    13: "CUDA managed", 14: "oneAPI"}


def _copy_on_device(t: Tensor, dtype: Any = None) -> Tensor:
    """A copy of t on its own device, of dtype `dtype` (default t's), for a cuda
    tensor through the dispatcher's CUDA copy_ kernel: C's clone walks host memory."""
    if t._p.device != 1:
        return t.clone() if dtype is None else t.to(dtype)
    out = empty(*t.shape, dtype=t.dtype if dtype is None else dtype, device="cuda")
    from . import cuda

    try:
        module = cuda._lib()
    except RuntimeError:
        module = None
    if module is None:  # a fake device (the tests'): copy_'s kernels
        out.copy_(t)
    # else the module's COPY loop directly (one launch, stream-ordered), not
    # copy_'s Python kernel and a ctypes cudaMemcpy: clone of 2^20 float32
    # took 22 us on an H100 against torch's 9 (issue 26)
    elif out.numel() and lib.dispatch_kernels_copy_(out._p, t._p) < 0:
        _raise()
    return out


def _dl_cuda_usable(what: str, dev_id: int) -> None:
    """BufferError unless DLPack device (2, dev_id) can be imported here."""
    if dev_id != 0:
        raise BufferError(f"from_dlpack: {what} is on CUDA device {dev_id} (DLPack device "
                          f"({_DL_CUDA}, {dev_id})); this runtime uses CUDA device 0 only")
    try:
        _cuda_allocator()  # the first CUDA use loads the module (Note [Lazy CUDA])
    except RuntimeError as e:
        from . import cuda

        raise BufferError(f"from_dlpack: {what} is on a CUDA device (DLPack device "
                          f"({_DL_CUDA}, {dev_id})), but CUDA is not available here: "
                          f"{cuda.unavailable_reason()}") from e


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
        from . import cuda

        # the first CUDA use registers the allocator the import needs
        reason = cuda.unavailable_reason()
    try:
        t = _wrap(lib.dispatch_tensor_from_dlpack(m, versioned))  # releases m on failure
    except RuntimeError as e:
        if reason and lib.dispatch_allocator_get(1) == ffi.NULL:
            raise RuntimeError(f"{e}: {reason}") from None
        raise
    if want is not None and want != t._p.device:
        if copy is False:
            raise BufferError(f"from_dlpack: the capsule is on {t.device} and device="
                              f"{_DEVICE_NAMES[want]!r} needs a copy, but copy=False")
        return t._to_device(_DEVICE_NAMES[want])
    return _copy_on_device(t) if copy and copy_here else t


# Python values in and out (no NumPy: Note [NumPy is optional]) ------------------------

_SEQUENCES = (list, tuple, range)
_REFUSED = (complex, str, bytes, bytearray, dict, set, frozenset, type(None))
_INT_RANGE = {int8: (-2**7, 2**7 - 1), uint8: (0, 2**8 - 1), int16: (-2**15, 2**15 - 1),
              int32: (-2**31, 2**31 - 1), int64: (-2**63, 2**63 - 1)}


class _NotPython(Exception):
    """The data holds something other than nested sequences of Python numbers
    (a NumPy array or scalar, a buffer, a tensor): NumPy reads it."""


def _refuse(v: Any) -> None:
    raise TypeError(f"can't make a tensor from data of type {type(v).__name__}")


def _is_leaf_for_numpy(v: Any) -> builtins.bool:
    t = type(v)
    return t.__module__ == "numpy" or isinstance(v, Tensor) or hasattr(v, "__array_interface__") \
        or hasattr(v, "__array__")


def _flatten(data: Any) -> tuple[tuple, list, set]:
    """(shape, values in C order, their types) of nested lists/tuples of
    Python bools, ints and floats, checked rectangular as torch checks it.
    Raises _NotPython for other leaves NumPy can read, TypeError for the rest
    (complex, str, None, ...)."""
    shape: list = []
    level = [data]
    while True:
        types = set(map(type, level))  # (per distinct type, not per item: lists are long)
        seqs = {t: issubclass(t, _SEQUENCES) for t in types}
        if not any(seqs.values()):
            break
        if not all(seqs.values()):
            for x in level:
                if not seqs[type(x)] and _is_leaf_for_numpy(x):
                    raise _NotPython
            raise ValueError(f"expected a sequence at dim {len(shape)} (got a mix of "
                             "sequences and numbers)")
        n = len(level[0])
        if len(set(map(len, level))) > 1:
            bad = next(x for x in level if len(x) != n)
            raise ValueError(f"expected sequence of length {n} at dim {len(shape)} "
                             f"(got {len(bad)})")
        shape.append(n)
        if len(shape) > _tables.MAX_DIMS:  # also ends a list that contains itself
            raise ValueError(f"tensors have at most {_tables.MAX_DIMS} dims, got more "
                             f"than {_tables.MAX_DIMS} levels of nested sequences")
        level = level[0] if len(level) == 1 else list(itertools.chain.from_iterable(level))
        if n == 0:
            types = set()
            break
    level = level if type(level) is list else list(level)
    for t in types - {builtins.bool, int, float}:
        v = next(x for x in level if type(x) is t)
        if t.__module__ == "numpy" or not issubclass(t, (int, float)):
            if isinstance(v, _REFUSED):
                _refuse(v)
            if _is_leaf_for_numpy(v) or hasattr(v, "__len__"):
                raise _NotPython
            _refuse(v)
    return tuple(shape), level, types


_ARRAY_CODES = {"?": "b", "q": "q", "d": "d"}  # carrier formats -> array.array typecodes


def _filled(d: dtype, shape: tuple, values: list) -> Tensor:
    """A new cpu tensor of dtype d holding values (C order), packed as d's format."""
    t = empty(*shape, dtype=d)
    if values:
        code = _ARRAY_CODES.get(d.format)
        if code is not None and array.array(code).itemsize == d.itemsize:
            buf = array.array(code, values)  # (converts in C: no argument tuple)
        else:
            buf = struct.pack(f"={len(values)}{d.format}", *values)
        ffi.memmove(t._p.data, buf, len(values) * d.itemsize)
    return t


def _flat_values(t: Tensor) -> list:
    """t's values in C order as Python bool / int / float (a cpu tensor)."""
    p = t._p
    n = int(p.numel)
    if n == 0:
        return []
    if not p.is_contiguous:
        t = t.contiguous()
        p = t._p
    d = _DTYPES[p.dtype]
    if not d.format:  # no struct format (bfloat16): its float32 values, exact
        return _flat_values(t.to(float32))
    return list(struct.unpack(f"={n}{d.format}", ffi.buffer(p.data, n * d.itemsize)))


def _nest(flat: list, shape: tuple) -> Any:
    """flat (C order) as nested lists of shape (a 0-d shape: the one value)."""
    if not shape:
        return flat[0]
    if 0 in shape:
        def empty_nest(s: tuple) -> list:
            return [] if s[0] == 0 else [empty_nest(s[1:]) for _ in range(s[0])]
        return empty_nest(shape)
    for size in reversed(shape[1:]):
        flat = [flat[i:i + size] for i in range(0, len(flat), size)]
    return flat


def _edges(t: Tensor) -> Any:
    """t as nested lists keeping EDGE_ITEMS at each end of long dimensions."""
    if t.ndim == 0:
        return t.item()
    n, e = t.shape[0], _format.EDGE_ITEMS
    if t.ndim == 1:  # a row's edges in two tolist()s (a cuda tensor: two copies, not 2e)
        return t[:e].tolist() + [_format.SUMMARY] + t[n - e:].tolist() if n > 2 * e \
            else t.tolist()
    if n > 2 * e:
        return ([_edges(t[i]) for i in range(e)] + [_format.SUMMARY]
                + [_edges(t[i]) for i in range(n - e, n)])
    return [_edges(t[i]) for i in range(n)]


def _summarized(t: Tensor) -> Any:
    """What repr shows of t: all of it, or its edges past THRESHOLD elements."""
    return t.tolist() if t.numel() <= _format.THRESHOLD else _edges(t)


def _overflow(d: dtype, v: Any) -> ValueError:
    return ValueError(f"value cannot be converted to type {d.name} without overflow: {v}")


def _check_fits(values: list, has_float: builtins.bool, d: dtype) -> None:
    """Python numbers bound for an integer dtype must fit it, as torch's
    checked conversion says (floats truncate; negative ints down to -255 wrap
    into uint8); an int beyond int64 never fits."""
    lo, hi = _INT_RANGE[d]
    ilo = -hi if d is uint8 else lo
    if not has_float and d is int64:
        return  # filling the int64 carrier checks it (OverflowError: _tensor_from_python)
    if not has_float:
        if values and (min(values) < ilo or max(values) > hi):
            raise _overflow(d, next(v for v in values if not ilo <= v <= hi))
        return
    exclusive = hi >= 2**53  # float(hi) rounds up to 2**63: a float must stay below
    fhi = float(2**63) if exclusive else float(hi)

    def fits(v: Any) -> builtins.bool:
        if isinstance(v, float):
            return lo <= v < fhi if exclusive else lo <= v <= fhi
        return ilo <= v <= hi

    bad = next((v for v in values if not fits(v)), None)
    if bad is not None:
        raise _overflow(d, bad)


def _tensor_from_python(shape: tuple, values: list, types: set, dtype: Any,
                        device: Any) -> Tensor:
    has_float = any(issubclass(t, float) for t in types)
    all_bool = all(issubclass(t, builtins.bool) for t in types)
    if dtype is not None:
        d = _as_dtype(dtype)
    else:  # torch's inference: bool, int64, the default float32 (empty: float32)
        d = float32 if has_float or not values else bool if all_bool else int64
    if d in _INT_RANGE:
        _check_fits(values, has_float, d)
    if _device_num(device) != 0:
        return empty(*shape, dtype=d, device=device)
    # Fill a carrier dtype that holds the Python values exactly, then cast in C.
    if d is bool:
        carrier, values = bool, values if all_bool else [builtins.bool(v) for v in values]
    elif not has_float and (d in _INT_RANGE or not values or (
            min(values) >= -2**63 and max(values) < 2**63)):
        carrier = int64  # (range-checked above for an integer dtype)
    elif d in _INT_RANGE:
        carrier, values = int64, [int(v) for v in values]  # floats truncate, as torch
    else:
        carrier = float64
        if not types <= {float, int, builtins.bool}:
            values = [float(v) for v in values]  # (float/int subclasses: their value)
        try:
            return _filled(carrier, shape, values).to(d)
        except OverflowError:  # an int beyond float64
            raise _overflow(d, next(v for v in values if abs(v) >= 2**1024)) from None
    try:
        t = _filled(carrier, shape, values)
    except OverflowError:  # (int64: the range check of _check_fits)
        raise _overflow(d, next(v for v in values if not -2**63 <= v < 2**63)) from None
    return t if carrier is d else t.to(d)


# NumPy data (imports NumPy) -------------------------------------------------------------

def _infer_array(data: Any) -> Any:
    """NumPy array of data with PyTorch's defaults (Python floats -> float32)."""
    np = _numpy()
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


def _check_python_values(raw: Any, d: dtype) -> None:
    """_check_fits for data NumPy reads (lists holding NumPy scalars)."""
    np = _numpy()
    kind = d.typestr[1]
    if raw.dtype.kind == "u" and raw.dtype.itemsize == 8 and kind in "iu" \
            and d is not uint8 and raw.size and raw.max() > np.iinfo(np.int64).max:
        raise _overflow(d, raw.max())
    if kind not in "iu" or raw.dtype.kind not in "iuf" or raw.size == 0:
        return
    info = np.iinfo(d.numpy)
    if raw.dtype.kind == "f":
        hi = float(info.max) if info.max < 2**53 else float(2**63)
        ok = (raw >= float(info.min)) & ((raw <= hi) if hi != 2.0**63 else (raw < hi))
    else:
        lo = -int(info.max) if d is uint8 else int(info.min)
        ok = (raw <= info.max) & (raw >= lo) if raw.dtype.kind == "i" else raw <= info.max
    if not ok.all():
        raise _overflow(d, raw[~ok].flat[0] if raw.ndim else raw[()])


def _tensor_from_numpy_data(data: Any, dtype: Any, device: Any) -> Tensor:
    if dtype is not None and not _as_dtype(dtype).typestr:  # bfloat16: via float64, one rounding
        return _tensor_from_numpy_data(data, float64, device).to(dtype)
    np = _numpy()
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


def tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A new tensor holding a copy of data (nested sequences, numbers, arrays, tensors).

    Python numbers (not NumPy arrays) are checked as torch does: one that does
    not fit an integer dtype is a ValueError, never a wrapped value. Nested
    lists of Python numbers need no NumPy; NumPy arrays and scalars are read
    by NumPy."""
    if device is not None and _device_num(device) == 1:
        return tensor(data, dtype).to("cuda")
    if isinstance(data, Tensor):
        t = data.clone()
        return t if dtype is None else t.to(dtype)
    try:
        shape, values, types = _flatten(data)
    except _NotPython:
        return _tensor_from_numpy_data(data, dtype, device)
    return _tensor_from_python(shape, values, types, dtype, device)


def _arange_length(start: Any, end: Any, step: Any) -> int:
    try:
        n = math.ceil((end - start) / step)
    except (OverflowError, ValueError):
        raise ValueError(f"arange: cannot compute the length of ({start}, {end}, {step})") \
            from None
    return max(n, 0)


def _check_length(n: int, start: Any, end: Any, step: Any, d: dtype) -> None:
    """n values fit a tensor: named with the arguments before any index list is built."""
    if n >= 2**63:
        raise ValueError(f"arange: ({start}, {end}, {step}) has {n} values, more than a "
                         "tensor can hold (2**63 - 1)")
    if n > _BLOCK:
        empty(n, dtype=d)  # the allocator's own message for a length memory cannot hold


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Tensor:
    """Values from start (0 when only end is given) to end, exclusive, by step.

    As NumPy's arange (and torch's): integer arguments give exact integers;
    otherwise the values are start + i * (second - start) in float64, then
    cast to the dtype."""
    if end is None:
        start, end = 0, start
    if _device_num(device) == 1:
        return arange(start, end, step, dtype=dtype).to("cuda")
    ints = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dtype = int64 if ints else float32
    d = _as_dtype(dtype)
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if ints and not d.is_floating_point:
        start, end, step = int(start), int(end), int(step)
        n = range(start, end, step).__len__() if abs(end - start) < 2**62 else \
            max(0, -((start - end) // step))  # len() stops at sys.maxsize
        _check_length(n, start, end, step, d)
        last = start + (n - 1) * step
        if n and not (-2**63 <= start < 2**63 and -2**63 <= last < 2**63):
            raise _overflow(int64, start if not -2**63 <= start < 2**63 else last)
        if n == 0 or _device_num(device) != 0:
            return empty(n, dtype=d, device=device)
        return _linear(n, start, step, int64, start + step).to(d)
    n = _arange_length(start, end, step)
    _check_length(n, start, end, step, d)
    if n == 0 or _device_num(device) != 0:
        return empty(n, dtype=d, device=device)
    first, second = float(start), float(start + step)
    return _linear(n, first, second - first, float64, second).to(d)


_BLOCK = 4096


def _linear(n: int, first: Any, delta: Any, d: dtype, second: Any) -> Tensor:
    """first + i * delta for i in range(n), in dtype d (int64 or float64), with
    element 1 = second exactly (NumPy's arange stores it so)."""
    if n <= _BLOCK:
        values = [first + i * delta for i in range(n)]
    else:  # the index i = row * BLOCK + col by one broadcast add in C
        rows = -(-n // _BLOCK)
        cols = _filled(int64, (1, _BLOCK), list(range(_BLOCK)))
        row_starts = _filled(int64, (rows, 1), list(range(0, rows * _BLOCK, _BLOCK)))
        index = (row_starts + cols).view(-1)[:n]
        t = (index.to(d) * delta + first).contiguous()
        if n > 1:
            t[1] = second
        return t
    if n > 1:
        values[1] = second
    return _filled(d, (n,), values)
