"""The Tensor class: a Python object over one C ``dispatch_tensor``.

A ``Tensor`` holds one pointer to a C ``dispatch_tensor`` (a view over a
refcounted storage) and drops its reference when collected; every method that
returns a tensor returns a new view or a new tensor made in C. Factories are
in dispatch/_factories.py, NumPy and DLPack in dispatch/_interop.py, the
operator methods come from dispatch/ops.py (which installs them: this module
imports none of those).

>>> import dispatch
>>> t = dispatch.arange(6).view(2, 3)
>>> t.T.shape
(3, 2)
"""

from __future__ import annotations

import builtins
import operator
import struct
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any, Iterable, Sequence

# No NumPy here: `import dispatch` must not import it (Note [NumPy is optional]).
from . import _devices, _fastpath, _format
from ._core import ffi, lib
from ._devices import _CPU, _DEVICE_NAMES, _DEVICES, _DL_CPU, _DL_CUDA, _META, _device_num
from ._dtypes import _DTYPES, _as_dtype, _no_numpy_message, bool, dtype, float32, int64
from ._errors import _raise
from ._values import _is_int, _numpy

# The runtime pointer is read from TensorBase's own C slot through its
# descriptor, never by attribute lookup: a subclass that defines `_p`
# (property, class or instance attribute, __getattr__) must not choose
# the memory C reads (issue 45).
_P = _fastpath.TensorBase.__dict__["_p"]
_cptr = _P.__get__

__all__ = ["Tensor", "live_storages", "live_tensors"]

if lib.dispatch_init() < 0:
    _raise()


def live_storages() -> int:
    """Storages alive in the process (for leak tests)."""
    return int(lib.dispatch_storage_live_count())


def live_tensors() -> int:
    """C tensor objects alive in the process (for leak tests)."""
    return int(lib.dispatch_tensor_live_count())


def _dlpack_major(max_version: Any) -> int:
    """The major number of __dlpack__'s max_version, a (major, minor) pair of ints."""
    if (not isinstance(max_version, (tuple, list)) or len(max_version) != 2
            or not all(isinstance(v, int) and not isinstance(v, builtins.bool)
                       for v in max_version)):
        raise TypeError("__dlpack__(max_version=...) takes None or a (major, minor) tuple of "
                        f"ints, got {max_version!r}")
    return max_version[0]


# The Tensor ------------------------------------------------------------------------------

def _wrap(p: Any) -> Tensor:
    """Own the new reference p (raising the runtime's error when it is NULL)."""
    if p == ffi.NULL:
        _raise()
    t = _new_tensor(Tensor)
    _P.__set__(t, p)
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


def _handle(name: str) -> Any:
    h = lib.dispatch_find_op(name.encode())
    if h == ffi.NULL:
        _raise()
    return h


_ADD, _SUB, _MUL, _DIV = (_handle(n) for n in ("add.Tensor", "sub.Tensor", "mul.Tensor",
                                                "div.Tensor"))
_EQ, _NE, _LT, _LE, _GT, _GE = (_handle(n + ".Tensor") for n in ("eq", "ne", "lt", "le", "gt", "ge"))
_NEG, _ABS = _handle("neg"), _handle("abs")
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
    # shape and ndim are the C base's (Note [Views in C] in dispatch/_fastpath_views.c).
    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> Any:
        p = _cptr(self)
        st = tuple(p.strides[0:p.ndim])
        return st if dim is None else st[dim]

    def dim(self) -> int:
        return int(_cptr(self).ndim)

    def numel(self) -> int:
        return int(_cptr(self).numel)

    def storage_offset(self) -> int:
        return int(_cptr(self).offset)

    @property
    def dtype(self) -> dtype:
        return _DTYPES[_cptr(self).dtype]

    @property
    def device(self) -> str:
        return _DEVICE_NAMES[_cptr(self).device]

    def is_contiguous(self) -> builtins.bool:
        return builtins.bool(_cptr(self).is_contiguous)

    def data_ptr(self) -> int:
        return int(ffi.cast("uintptr_t", _cptr(self).data))

    def _storage_ptr(self) -> int:
        """Identity of the storage (views of one tensor share it)."""
        return int(ffi.cast("uintptr_t", _cptr(self).storage))

    def __len__(self) -> int:
        if _cptr(self).ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(_cptr(self).sizes[0])

    # Views ------------------------------------------------------------------------------
    # view(), reshape(), permute(), expand(), transpose(), unsqueeze(), T and
    # t[index] are the C base's (Note [Views in C]); what it does not take
    # comes to the functions of the same names below (_view, ...).

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        return self.expand(*shape)

    def as_strided(self, size: Sequence[int], stride: Sequence[int],
                   storage_offset: int | None = None) -> Tensor:
        if len(size) != len(stride):
            raise ValueError(f"as_strided: {len(size)} sizes but {len(stride)} strides")
        off = _cptr(self).offset if storage_offset is None else storage_offset
        _int64s((off,), "storage offset")
        return _wrap(lib.dispatch_tensor_as_strided(_cptr(self), len(size), _int64s(size),
                                                    _int64s(stride, "strides"), off))

    def __setitem__(self, index: Any, value: Any) -> None:
        target = self[index]
        if isinstance(value, Tensor):
            target.copy_(value)
        else:
            target.fill_(value)

    # Copies ------------------------------------------------------------------------------
    # contiguous(), clone() and to(dtype) are the C base's (Note [New tensors
    # in C] in dispatch/_fastpath_factories.c); what it does not take comes
    # to _contiguous, _clone and _to below.

    # NumPy and Python values -------------------------------------------------------------
    # __array_interface__ is the C base's (Note [The array interface in C] in
    # dispatch/_fastpath_numpy.c); the tensors it does not take come to
    # _array_interface below.

    def numpy(self) -> Any:
        """A NumPy array sharing this tensor's memory (zero-copy; cpu only; imports NumPy).

        TypeError for a bfloat16 tensor (NumPy has no bfloat16): call .to(float32) first;
        for a cuda tensor, as torch's: .cpu() first (this would not copy)."""
        if _cptr(self).device == 1:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if not _DTYPES[_cptr(self).dtype].typestr:
            raise TypeError(_no_numpy_message(_DTYPES[_cptr(self).dtype]))
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
        p = _cptr(self)
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
        cuda = _devices.backend("cuda") if p.device == 1 else None  # Note [Device registry]
        if p.device == 1 and not to_host:
            wait = cuda.dlpack_stream(stream)  # TypeError/ValueError before any work
        versioned = max_version is not None and _dlpack_major(max_version) >= 1
        copied = builtins.bool(copy) or to_host
        keep = self
        if to_host:
            keep = self.cpu()  # synchronous: ready for any host consumer
            p = _cptr(keep)
        elif copy:
            keep = _copy_on_device(self)  # alive until the capsule holds its storage
            p = _cptr(keep)
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
        if _cptr(self).device == 1:
            return (_DL_CUDA, 0)
        if _cptr(self).device != _CPU:
            raise BufferError(f"a {self.device} tensor has no DLPack device (only cpu and cuda "
                              "tensors)")
        return (_DL_CPU, 0)

    def tolist(self) -> Any:
        """The values as (nested lists of) Python bool, int or float; a cuda
        tensor's are copied to the host first (after its queued work, as torch's)."""
        t = self if _cptr(self).device == _CPU else self.cpu()  # meta: "Cannot copy out ..."
        return _nest(_flat_values(t), t.shape)

    def item(self) -> Any:
        """The one value as a Python bool, int or float (a cuda tensor's is
        copied to the host first, as torch's)."""
        p = _cptr(self)
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
        if _cptr(self).device == _DEVICES["meta"]:
            return f"tensor(..., device='meta', size={self.shape}{suffix})"
        if _cptr(self).device != _CPU:
            suffix = f", device='{self.device}:0'{suffix}"  # this runtime's CUDA device is 0
        # a cuda tensor's values come to the host through tolist()/item()
        d = self.dtype  # a float struct lacks (bfloat16) prints its float32 values, as torch
        shown = "float32" if d.is_floating_point and not d.format else d.name
        body = _format.format_nested(_summarized(self), shown, "tensor(", self.ndim)
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
        return _cptr(self).device == 1

    def _to_device(self, device: Any) -> Tensor:
        n = _device_num(device)
        if n == _cptr(self).device:
            return self
        # The meta device holds shapes only, as torch's: a tensor goes there
        # as a new one of its shape and dtype; nothing comes back from it.
        if n == _META:
            return _new_empty(self.shape, self.dtype, _META)
        if _cptr(self).device == _META:
            raise NotImplementedError("Cannot copy out of meta tensor; no data! (the meta "
                                      "device holds shapes only)")
        return _devices.backend("cuda").copy_to_device(self, n)  # Note [Device registry]

    # Operators (+ - * / and comparisons: the C base) ---------------------------------------
    # In place, like PyTorch: the result is written into self (views see it).
    def __neg__(self) -> Tensor:
        return _fastpath.call1(_NEG_AT, self)

    def __abs__(self) -> Tensor:
        return _fastpath.call1(_ABS_AT, self)

    # Operator methods t.<name>(...) = dispatch.ops.<name>(t, ...): installed
    # by dispatch.ops (this module never imports it).

    # In-place operators (+= -= *= /=): installed by dispatch.ops too, beside
    # the add_/sub_/mul_/div_ methods they call.


def _address(p: Any) -> int:
    return int(ffi.cast("uintptr_t", p))


# Tensor.view/reshape/[] beyond the C base's common case (NumPy integers, None
# and Ellipsis, every error's words): Note [Views in C].
def _view(self: Tensor, *shape: int) -> Tensor:
    shape = _sizes(shape)
    return _wrap(lib.dispatch_tensor_view(_cptr(self), len(shape), _int64s(shape)))


def _reshape(self: Tensor, *shape: int) -> Tensor:
    shape = _sizes(shape)
    return _wrap(lib.dispatch_tensor_reshape(_cptr(self), len(shape), _int64s(shape)))


def _getitem(self: Tensor, index: Any) -> Tensor:
    return _wrap(_index(_cptr(self), index))


def _permute(self: Tensor, *dims: int) -> Tensor:
    dims = _sizes(dims)
    return _wrap(lib.dispatch_tensor_permute(_cptr(self), len(dims), _int64s(dims)))


def _expand(self: Tensor, *sizes: int) -> Tensor:
    sizes = _sizes(sizes)
    return _wrap(lib.dispatch_tensor_expand(_cptr(self), len(sizes), _int64s(sizes)))


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _wrap(lib.dispatch_tensor_transpose(_cptr(self), dim0, dim1))


def _unsqueeze(self: Tensor, dim: int) -> Tensor:
    return _wrap(lib.dispatch_tensor_unsqueeze(_cptr(self), dim))


def _T(self: Tensor) -> Tensor:  # noqa: N802
    return _wrap(lib.dispatch_tensor_t(_cptr(self)))


# Tensor.contiguous/clone/to beyond the C base's common case (a cuda tensor, a
# device string, a dtype by name, a keyword): Note [New tensors in C].
def _contiguous(self: Tensor) -> Tensor:
    if _cptr(self).device == 1 and not self.is_contiguous():
        return _copy_on_device(self)  # C's contiguous walks host memory
    return _wrap(lib.dispatch_kernels_contiguous(_cptr(self)))


def _clone(self: Tensor) -> Tensor:
    if _cptr(self).device == 1:
        return _copy_on_device(self)  # C's clone walks host memory
    return _wrap(lib.dispatch_kernels_clone(_cptr(self)))


def _to(self: Tensor, dtype: Any) -> Tensor:
    if isinstance(dtype, str) and dtype.split(":")[0] in _DEVICES:
        return self._to_device(dtype)
    if _cptr(self).device == 1 and _as_dtype(dtype) != self.dtype:
        return _copy_on_device(self, _as_dtype(dtype))  # a cast by the CUDA copy_ kernel
    p = lib.dispatch_kernels_to_dtype(_cptr(self), _as_dtype(dtype).num)
    if p == _cptr(self):  # its own dtype: self, as the C base's
        lib.dispatch_tensor_decref(p)
        return self
    return _wrap(p)


def _array_interface(self: Tensor) -> dict:
    """Tensor.__array_interface__ in Python: the errors of a tensor NumPy cannot
    view (cuda, meta, bfloat16), and the dict of any other."""
    p = _cptr(self)
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


_NEG_AT, _ABS_AT = _address(_NEG), _address(_ABS)
# The operators of the C base, in dispatch/_fastpath.h's order.
_FAST_OPS = (_ADD, _SUB, _MUL, _DIV, _EQ, _NE, _LT, _LE, _GT, _GE)
_fastpath.init(Tensor, dtype, tuple(_address(ffi.addressof(lib, f)) for f in (
                   "dispatch_call_tt", "dispatch_call_t", "dispatch_call_ts",
                   "dispatch_tensor_decref", "dispatch_call", "dispatch_op_default",
                   "dispatch_ivalue_release")),
               tuple(_address(h) for h in _FAST_OPS),
               lambda addr: ffi.cast("dispatch_tensor *", addr), _address, _raise)
for _f, _name in ((_contiguous, "contiguous"), (_clone, "clone"), (_to, "to"), (_view, "view"),
                  (_reshape, "reshape"), (_getitem, "__getitem__"), (_permute, "permute"),
                  (_expand, "expand"), (_transpose, "transpose"), (_unsqueeze, "unsqueeze"),
                  (_T, "T")):
    _f.__name__, _f.__qualname__ = _name, f"Tensor.{_name}"  # in their TypeErrors
del _f, _name
_fastpath.init_copies(tuple(_address(ffi.addressof(lib, f)) for f in (
                          "dispatch_kernels_to_dtype", "dispatch_kernels_clone",
                          "dispatch_kernels_contiguous")),
                      (_to, _clone, _contiguous))
_fastpath.init_views(tuple(_address(ffi.addressof(lib, f)) for f in (
                         "dispatch_tensor_view", "dispatch_tensor_reshape",
                         "dispatch_tensor_select", "dispatch_tensor_slice",
                         "dispatch_tensor_permute", "dispatch_tensor_expand",
                         "dispatch_tensor_transpose", "dispatch_tensor_unsqueeze",
                         "dispatch_tensor_t")),
                     (_view, _reshape, _getitem, _permute, _expand, _transpose, _unsqueeze, _T))
_fastpath.init_array_interface(tuple(_address(ffi.addressof(lib, f)) for f in (
                                   "dispatch_dtype_typestr", "dispatch_storage_is_readonly")),
                               _array_interface)

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



# New tensors, for this module's methods (the factories are dispatch/_factories.py) --------

def _new_empty(shape: Sequence[int], d: dtype, device_num: int) -> Tensor:
    """An uninitialised tensor of shape, dtype d on device number device_num."""
    return _wrap(lib.dispatch_tensor_empty(len(shape), _int64s(shape), d.num, device_num))


def _copy_on_device(t: Tensor, dtype: Any = None) -> Tensor:
    """A copy of t on its own device, of dtype `dtype` (default t's), for a cuda
    tensor through the dispatcher's CUDA copy_ kernel: C's clone walks host memory."""
    if _cptr(t).device != 1:
        return t.clone() if dtype is None else t.to(dtype)
    out = _new_empty(t.shape, t.dtype if dtype is None else _as_dtype(dtype), 1)
    try:
        module = _devices.backend("cuda")._lib()
    except RuntimeError:
        module = None
    if module is None:  # a fake device (the tests'): copy_'s kernels
        out.copy_(t)
    # else the module's COPY loop directly (one launch, stream-ordered), not
    # copy_'s Python kernel and a ctypes cudaMemcpy: clone of 2^20 float32
    # took 22 us on an H100 against torch's 9 (issue 26)
    elif out.numel() and lib.dispatch_kernels_copy_(_cptr(out), _cptr(t)) < 0:
        _raise()
    return out


# Python values out (no NumPy: Note [NumPy is optional]) ---------------------------------

def _flat_values(t: Tensor) -> list:
    """t's values in C order as Python bool / int / float (a cpu tensor)."""
    p = _cptr(t)
    n = int(p.numel)
    if n == 0:
        return []
    if not p.is_contiguous:
        t = t.contiguous()
        p = _cptr(t)
    d = _DTYPES[p.dtype]
    if not d.format:  # no struct format (bfloat16, a narrow float): its float32 values, exact
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

