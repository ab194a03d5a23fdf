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

import operator
import os
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from . import _tables
from ._core import ffi, lib

__all__ = ["DTYPES", "LOOPS", "elementwise", "get_num_threads", "reduce", "set_num_threads"]

# Read from C (dispatch/_tables.py), never retyped: dtype.h's and loops.h's ids.
DTYPES = dict(_tables.DTYPES)
_TYPESTR = {t: d for d, t in enumerate(_tables.DTYPE_TYPESTRS) if t}  # (bfloat16: none)
_CTX = {d: _tables.ctx_ctype(d) + "[1]" for d in range(_tables.NUM_DTYPES)}
LOOPS = dict(_tables.LOOPS)
_CTX_OPTIONAL = _tables.LOOP_CTX_OPTIONAL  # alpha; None means 1
_CTX_REQUIRED = _tables.LOOP_CTX_REQUIRED  # value
_REDUCE = dict(_tables.REDUCTIONS)
_ERRORS = _tables.ERRORS


def _raise() -> None:
    kind = lib.dispatch_error_kind_get()
    msg = ffi.string(lib.dispatch_error_message()).decode(errors="backslashreplace")
    raise _ERRORS.get(kind, RuntimeError)(msg)


def _operand(arr: Any, keep: list, what: str, writable: bool = False) -> Any:
    """(data, ndim, shape, strides, dtype) of a NumPy array or buffer, checked.

    Everything comes from the array itself (Note [Checked raw buffers] in
    dispatch/kernels.py): a NumPy array's own interface, or else NumPy's view
    of the buffer protocol (so formats, item sizes and read-only flags are
    the buffer's); anything else is a TypeError.
    """
    import numpy as np  # only here: `import dispatch` imports this module for the thread count
    if not isinstance(arr, np.ndarray):
        try:
            arr = np.asarray(memoryview(arr)) if not hasattr(arr, "__array_interface__") \
                else np.asarray(arr)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what} must be a NumPy array or a buffer, got "
                            f"{type(arr).__name__} ({e})") from None
    ai = np.ndarray.__array_interface__.__get__(arr)
    dtype = _TYPESTR.get(ai["typestr"])
    if dtype is None:
        raise TypeError(f"{what}: unsupported element type {ai['typestr']!r}")
    if writable and ai["data"][1]:
        raise ValueError(f"{what} is read-only (a NumPy array whose writeable flag is False, "
                         "a read-only memmap or bytes); pass a writable array")
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


def _ctx(op: str, loop_dtype: int, ctx: Any) -> Any:
    if ctx is None:
        if op in _CTX_REQUIRED:
            raise TypeError(f"{op} needs ctx= (its scalar value)")
        return ffi.NULL
    if op not in _CTX_OPTIONAL and op not in _CTX_REQUIRED:
        raise TypeError(f"{op} takes no ctx (got ctx={ctx!r})")
    if lib.dispatch_dtype_is_narrow_float(loop_dtype):  # its bits, rounded as the casts do
        ctx = lib.dispatch_narrow_bits_from_double(loop_dtype, float(ctx))
    try:
        return ffi.new(_CTX[loop_dtype], [ctx])
    except (TypeError, OverflowError) as e:
        name = next(k for k, v in DTYPES.items() if v == loop_dtype)
        raise type(e)(f"ctx={ctx!r} does not fit the loop's dtype {name}: {e}") from None


def elementwise(op: str, out: Any, *inputs: Any, dtype: str | None = None,
                ctx: float | None = None) -> None:
    """Run loop ``op`` (loops.h name) into ``out``, broadcasting the inputs.

    ``dtype`` is the loop's dtype (default: out's); operands of another dtype
    are cast chunk by chunk. ``ctx`` is the loop's scalar (alpha of add/sub,
    optional; the value of addcmul and fill, required; other loops take
    none). ``out`` must be writable; ValueError/TypeError otherwise.
    """
    if op not in LOOPS:
        raise ValueError(f"unknown loop {op!r}; known: {', '.join(LOOPS)}")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}")
    if len(inputs) + 1 > 8:  # DISPATCH_ITER_MAX_OPERANDS
        raise ValueError(f"{op} takes at most 7 inputs, got {len(inputs)}")
    keep: list = []
    ops = ffi.new("dispatch_iter_operand[]", len(inputs) + 1)
    for i, a in enumerate((out, *inputs)):
        (ops[i].data, ops[i].ndim, ops[i].shape, ops[i].strides, ops[i].dtype) = _operand(
            a, keep, "out" if i == 0 else f"input {i}", writable=i == 0)
    loop_dtype = DTYPES[dtype] if dtype else ops[0].dtype
    c = _ctx(op, loop_dtype, ctx)
    if lib.dispatch_iter_elementwise_op(LOOPS[op], loop_dtype, len(inputs) + 1, ops, c) != 0:
        _raise()


def reduce(op: str, x: Any, out: Any, dims: tuple | None = None, keepdim: bool = False) -> None:
    """``out = op(x)`` over ``dims`` (all when None); op: sum, mean, max, min, prod."""
    if op not in _REDUCE:
        raise ValueError(f"unknown reduction {op!r}; known: {', '.join(_REDUCE)}")
    keep: list = []
    src = ffi.new("dispatch_iter_operand *")
    dst = ffi.new("dispatch_iter_operand *")
    (src.data, src.ndim, src.shape, src.strides, src.dtype) = _operand(x, keep, "x")
    (dst.data, dst.ndim, dst.shape, dst.strides, dst.dtype) = _operand(out, keep, "out",
                                                                       writable=True)
    nd = src.ndim
    if nd > _tables.MAX_DIMS:  # the dim mask has a bit per dim: refuse before making it
        raise ValueError(f"operand x has {nd} dims; at most {_tables.MAX_DIMS}")
    mask = ffi.new("uint32_t *", (1 << nd) - 1 if dims is None else 0)
    if dims:  # the dims' range and repeats: C's one reduction check (iterator.h)
        for d in dims:
            if not isinstance(d, int) or isinstance(d, bool) or not -(1 << 63) <= d < 1 << 63:
                raise IndexError(f"dim {d!r} out of range for {nd} dims")
        out_nd, out_shape, count = ffi.new("int *"), ffi.new("int64_t[16]"), ffi.new("int64_t *")
        dl = ffi.new("int64_t[]", list(dims))
        if lib.dispatch_iter_reduce_check(ffi.NULL, _REDUCE[op], nd, src.shape, len(dims), dl,
                                          mask, int(keepdim), out_nd, out_shape, count) != 0:
            _raise()
    if lib.dispatch_iter_reduce(_REDUCE[op], src, mask[0], int(keepdim), dst) != 0:
        _raise()


def set_num_threads(n: int) -> None:
    """Threads the engine may use (elementwise above 32768 elements, reductions).

    Safe to call from any thread at any time; a call already running keeps the
    count it started with. The default is 1, or the environment variable
    DISPATCH_NUM_THREADS (1 to 256) read at first use. Results never depend on
    it: reductions give the same bits for any thread count."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"set_num_threads: expected an int, got {type(n).__name__}") from None
    if not -(1 << 63) <= n < 1 << 63:  # C's range check takes an int64_t
        raise ValueError(f"set_num_threads: {n} is not a thread count")
    if lib.dispatch_set_num_threads(n) != 0:
        _raise()


def get_num_threads() -> int:
    """Threads the engine may use."""
    return lib.dispatch_get_num_threads()


def _warn_on_a_bad_thread_env() -> None:
    """C ignores a DISPATCH_NUM_THREADS that is not 1 to 256 (parallel.c's
    read_env: strtol, the whole value); say so once, naming it, rather than
    run on one thread unannounced."""
    e = os.environ.get("DISPATCH_NUM_THREADS")
    if not e:
        return
    digits = e.lstrip(" \t\n\r\f\v")
    negative = digits[:1] == "-"
    digits = digits[1:] if digits[:1] in ("+", "-") else digits
    # int() of the digits themselves would refuse more than 4300 of them
    # (sys.set_int_max_str_digits): only the significant ones are read,
    # and more than three are out of range anyway (strtol saturates there).
    significant = digits.lstrip("0")
    if (digits.isascii() and digits.isdigit() and not negative and len(significant) <= 3
            and 1 <= int(significant or "0") <= 256):
        return
    shown = repr(e) if len(e) <= 40 else f"{e[:40]!r}... ({len(e)} characters)"
    warnings.warn(f"DISPATCH_NUM_THREADS={shown} is not a thread count (1 to 256): ignored, "
                  "using 1 thread", RuntimeWarning, stacklevel=2)


_warn_on_a_bad_thread_env()
