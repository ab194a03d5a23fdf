"""The elementwise engine on raw strided buffers (NumPy arrays or anything
with ``__array_interface__``), without tensors: for tests and benchmarks.
See ``sources/include/dispatch/iterator.h``.

>>> import numpy as np
>>> from dispatch import iterator
>>> a = np.arange(6, dtype=np.float32).reshape(2, 3); out = np.empty_like(a)
>>> iterator.elementwise("add", out, a, np.float32(10) * np.ones(3, np.float32))
>>> out.tolist()
[[10.0, 11.0, 12.0], [13.0, 14.0, 15.0]]
"""

from __future__ import annotations

from typing import Any

from ._core import ffi, lib

__all__ = ["DTYPES", "LOOPS", "elementwise", "get_num_threads", "reduce", "set_num_threads"]

# dtype.h order
DTYPES = {"bool": 0, "int8": 1, "uint8": 2, "int16": 3, "int32": 4, "int64": 5,
          "float16": 6, "float32": 7, "float64": 8}
_TYPESTR = {"|b1": 0, "|i1": 1, "|u1": 2, "<i2": 3, "<i4": 4, "<i8": 5, "<f2": 6, "<f4": 7,
            "<f8": 8}
_CTX = {7: "float[1]", 8: "double[1]", 4: "int32_t[1]", 5: "int64_t[1]"}
# loops.h order
LOOPS = {name: i for i, name in enumerate(
    ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "neg", "abs", "sqrt", "exp", "log", "copy", "addcmul", "where", "fill"])}
_REDUCE = {"sum": 0, "mean": 1, "max": 2, "min": 3}
_ERRORS = {1: RuntimeError, 2: ValueError, 3: TypeError, 4: IndexError, 5: NotImplementedError,
           6: MemoryError}


def _raise() -> None:
    kind = lib.dispatch_error_kind_get()
    msg = ffi.string(lib.dispatch_error_message()).decode()
    raise _ERRORS.get(kind, RuntimeError)(msg)


def _operand(arr: Any, keep: list) -> Any:
    ai = arr.__array_interface__
    dtype = _TYPESTR.get(ai["typestr"])
    if dtype is None:
        raise TypeError(f"unsupported element type {ai['typestr']!r}")
    shape = ai["shape"]
    itemsize = int(ai["typestr"][2:])
    strides = ai["strides"]
    if strides is None:  # C-contiguous
        strides, s = [], itemsize
        for n in reversed(shape):
            strides.insert(0, s)
            s *= n
    shp = ffi.new("int64_t[]", list(shape) or [0])
    std = ffi.new("int64_t[]", list(strides) or [0])
    keep += [shp, std, arr]
    return ffi.cast("char *", ai["data"][0]), len(shape), shp, std, dtype


def elementwise(op: str, out: Any, *inputs: Any, dtype: str | None = None,
                ctx: float | None = None) -> None:
    """Run loop ``op`` (loops.h name) into ``out``, broadcasting the inputs.

    ``dtype`` is the loop's dtype (default: out's); operands of another dtype
    are cast chunk by chunk. ``ctx`` is the loop's scalar (alpha, value).
    """
    if op not in LOOPS:
        raise ValueError(f"unknown loop {op!r}")
    keep: list = []
    ops = ffi.new("dispatch_iter_operand[]", len(inputs) + 1)
    for i, a in enumerate((out, *inputs)):
        (ops[i].data, ops[i].ndim, ops[i].shape, ops[i].strides, ops[i].dtype) = _operand(a, keep)
    loop_dtype = DTYPES[dtype] if dtype else ops[0].dtype
    c = ffi.new(_CTX[loop_dtype], [ctx]) if ctx is not None else ffi.NULL
    if lib.dispatch_iter_elementwise_op(LOOPS[op], loop_dtype, len(inputs) + 1, ops, c) != 0:
        _raise()


def reduce(op: str, x: Any, out: Any, dims: tuple | None = None, keepdim: bool = False) -> None:
    """``out = op(x)`` over ``dims`` (all when None); op: sum, mean, max, min."""
    keep: list = []
    src = ffi.new("dispatch_iter_operand *")
    dst = ffi.new("dispatch_iter_operand *")
    (src.data, src.ndim, src.shape, src.strides, src.dtype) = _operand(x, keep)
    (dst.data, dst.ndim, dst.shape, dst.strides, dst.dtype) = _operand(out, keep)
    nd = src.ndim
    mask = (1 << nd) - 1 if dims is None else sum(1 << (d % nd if nd else 0) for d in dims)
    if lib.dispatch_iter_reduce(_REDUCE[op], src, mask, int(keepdim), dst) != 0:
        _raise()


def set_num_threads(n: int) -> None:
    """Threads the engine may use (elementwise above 32768 elements, reductions)."""
    if lib.dispatch_set_num_threads(n) != 0:
        _raise()


def get_num_threads() -> int:
    """Threads the engine may use."""
    return lib.dispatch_get_num_threads()
