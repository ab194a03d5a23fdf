"""Factories: tensor(), empty, zeros, ones, full, arange.

Python data (nested lists of Python numbers) is read here without NumPy
(Note [NumPy is optional]); NumPy data goes to dispatch/_interop.py.

>>> import dispatch
>>> dispatch.full((2,), 7).tolist(), dispatch.arange(3).dtype
([7, 7], dispatch.int64)
"""

from __future__ import annotations

import array
import builtins
import itertools
import math
import struct
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any, Sequence

from . import _fastpath, _tables
from ._core import ffi, lib
from ._devices import _device_num
from ._dtypes import _DTYPES, _as_dtype, _overflow, bool, dtype, float32, float64, int64
from ._interop import _tensor_from_numpy_data
from ._tensor import Tensor, _address, _cptr, _int64s, _sizes, _wrap
from ._values import _is_ndarray

__all__ = ["tensor", "empty", "zeros", "ones", "full", "arange"]


def _empty(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    """empty() beyond the C common case (Note [New tensors in C]): a device, a
    dtype by name, NumPy integers, and every error's words."""
    size = _sizes(size)
    d = float32 if dtype is None else _as_dtype(dtype)
    return _wrap(lib.dispatch_tensor_empty(len(size), _int64s(size), d.num,
                                           _device_num(device)))


def _zeros(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    """zeros() beyond the C common case: a device, many elements (fill_ on threads)."""
    if device is None:  # on the host: two C calls (empty, fill_), not full()'s checks
        return empty(*size, dtype=dtype or float32).fill_(0)
    return full(_sizes(size), 0, dtype=dtype or float32, device=device)


def _ones(*size: int, dtype: Any = None, device: Any = None) -> Tensor:
    """ones() beyond the C common case, as _zeros."""
    if device is None:
        return empty(*size, dtype=dtype or float32).fill_(1)
    return full(_sizes(size), 1, dtype=dtype or float32, device=device)


for _f, _name in ((_empty, "empty"), (_zeros, "zeros"), (_ones, "ones")):
    _f.__name__ = _f.__qualname__ = _name  # in their TypeErrors


# An uninitialised tensor, or one of zeros or ones (float32 unless dtype says
# otherwise): one C call for ints, a dtype and no device (Note [New tensors in C]).
_fastpath.init_empty(_address(ffi.addressof(lib, "dispatch_tensor_empty")),
                     _address(ffi.addressof(lib, "dispatch_tensor_filled")),
                     float32.num, _empty, _zeros, _ones)
empty = _fastpath.empty
zeros = _fastpath.zeros
ones = _fastpath.ones


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


# Python data (no NumPy: Note [NumPy is optional]) ----------------------------------------

_SEQUENCES = (list, tuple, range)
_REFUSED = (complex, str, bytes, bytearray, dict, set, frozenset, type(None))
# dtype -> (min, max) of each integer dtype, from C (Note [Integer facts] in dtype.h)
_INT_RANGE = {_DTYPES[i]: r for i, r in _tables.DTYPE_INT_RANGES.items()}


class _NotPython(Exception):
    """The data holds something other than nested sequences of Python numbers
    (a NumPy array or scalar, a buffer, a tensor): NumPy reads it."""


def _refuse(v: Any) -> None:
    raise TypeError(f"can't make a tensor from data of type {type(v).__name__}")


def _is_leaf_for_numpy(v: Any) -> builtins.bool:
    t = type(v)
    return t.__module__ == "numpy" or isinstance(v, Tensor) or hasattr(v, "__array_interface__") \
        or hasattr(v, "__array__")


# Note [Sequences that lie]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# A list or tuple subclass can override __len__, __iter__ and __getitem__ so
# that they disagree with each other and with what the sequence holds (a
# __len__ of 1 over 100000 items sized a 1-element tensor, then wrote 100000
# values into it: issue 35). _flatten reads a subclass through the base
# type's own methods (what the sequence really holds), works on lists of its
# own (nothing a caller's Python code does later can resize them), and
# _filled writes no more values than the tensor has elements.

def _real_items(x: Any) -> Any:
    """x itself for a list, tuple or range; a list of what a subclass of list or
    tuple really holds (its own __len__/__iter__ are not asked)."""
    t = type(x)
    if t is list or t is tuple or t is range:
        return x
    return list(list.__iter__(x) if issubclass(t, list) else tuple.__iter__(x))


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
        if not all(t in (list, tuple, range) for t, seq in seqs.items() if seq):
            # Note [Sequences that lie]
            level = [_real_items(x) if seqs[type(x)] else x for x in level]
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
    level = list(level)  # our own copy: Note [Sequences that lie]
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
    if len(values) != _cptr(t).numel:  # never past the tensor's end: Note [Sequences that lie]
        raise ValueError(f"{len(values)} values for a tensor of shape {tuple(shape)} "
                         f"({_cptr(t).numel} elements)")
    if values:
        code = _ARRAY_CODES.get(d.format)
        if code is not None and array.array(code).itemsize == d.itemsize:
            buf = array.array(code, values)  # (converts in C: no argument tuple)
        else:
            buf = struct.pack(f"={len(values)}{d.format}", *values)
        ffi.memmove(_cptr(t).data, buf, len(values) * d.itemsize)
    return t


def _check_fits(values: list, has_float: builtins.bool, d: dtype) -> None:
    """Python numbers bound for an integer dtype must fit it, as torch's
    checked conversion says (floats truncate; negative ints down to -255 wrap
    into an unsigned dtype); an int beyond int64 never fits."""
    lo, hi = _INT_RANGE[d]
    ilo = -hi if lo == 0 else lo  # unsigned: negative ints down to -max wrap
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
    if _is_ndarray(data):  # NumPy reads it (what _flatten would find, after a walk)
        return _tensor_from_numpy_data(data, dtype, device)
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
