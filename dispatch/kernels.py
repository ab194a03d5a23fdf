"""Direct access to the SIMD kernels, on raw buffers (no tensor needed).

The kernels are the ``sources/kernels/*.dispatch.c`` loops, chosen once for
this CPU (see ``sources/include/dispatch/kernels.h``). This module is for
tests and benchmarks: it runs one chosen loop on contiguous or strided 1-d
buffers (anything with the buffer protocol, e.g. NumPy arrays).

Every argument is checked before C sees it (Note [Checked raw buffers]):
float16/float32/float64 elements only (a ``bytearray`` is bytes: pass
``memoryview(b).cast("d")``), one dtype and one length for all operands,
the number of inputs and the ``ctx`` the loop needs, a writable output
(NumPy's read-only flag, ``bytes``, read-only memmaps are refused) that
overlaps no input except exactly (``out is a`` is fine).

>>> import array
>>> from dispatch import kernels
>>> a = array.array("f", [1, 2, 3]); b = array.array("f", [10, 20, 30])
>>> out = array.array("f", [0, 0, 0])
>>> kernels.run("add", out, a, b)
>>> list(out)
[11.0, 22.0, 33.0]
"""

from __future__ import annotations

import numbers
import sys
from typing import Any, NamedTuple

from . import _tables
from ._core import ffi, lib

__all__ = ["LOOPS", "SOURCES", "chosen", "has", "run", "sum", "time_loop", "triad"]

if lib.dispatch_kernels_simd_init() != 0:
    raise RuntimeError(ffi.string(lib.dispatch_cpu_error()).decode(errors="backslashreplace"))

# Everything below is read from C (dispatch/_tables.py), never retyped.
# The kernel sources, in meson's loop_kernel_sources order (sources/kernels/meson.build).
def _source_names() -> tuple[str, ...]:
    names: list[str] = []
    while (p := lib.dispatch_kernels_source_name(len(names))) != ffi.NULL:
        names.append(ffi.string(p).decode())
    return tuple(names)


SOURCES = _source_names()
# Buffer format -> dispatch dtype id, for the float dtypes the kernels take (float16/32/64).
_DTYPES = {_tables.DTYPE_FORMATS[d]: d for d in range(_tables.NUM_DTYPES)
           if _tables.DTYPE_CATEGORIES[d] == _tables.CAT_FLOAT and _tables.DTYPE_FORMATS[d]}
_ITEMSIZE = {f: _tables.DTYPE_ITEMSIZES[d] for f, d in _DTYPES.items()}
_NAMES = {f: _tables.DTYPE_NAMES[d] for f, d in _DTYPES.items()}
_CTYPES = {f: _tables.ctx_ctype(d) + "[1]" for f, d in _DTYPES.items()}
# Loop ids of loops.h (the ones with a SIMD kernel for some dtype), in id order.
LOOPS = {name: i for name, i in _tables.LOOPS.items()
         if any(lib.dispatch_kernels_has(i, d) for d in range(_tables.NUM_DTYPES))}
_NIN = {name: _tables.LOOP_NIN[name] for name in LOOPS}
_CTX_OPTIONAL = _tables.LOOP_CTX_OPTIONAL & LOOPS.keys()  # alpha; NULL means 1
_CTX_REQUIRED = _tables.LOOP_CTX_REQUIRED & LOOPS.keys()  # value


def chosen(source: str) -> str:
    """The target chosen for a kernel source, e.g. ``chosen("arith")`` -> "AVX512_SKX"."""
    p = lib.dispatch_kernels_chosen(source.encode())
    if p == ffi.NULL:
        raise ValueError(f"unknown kernel source {source!r}; known: {', '.join(SOURCES)}")
    return ffi.string(p).decode(errors="backslashreplace")


def has(op: str, dtype: str) -> bool:
    """Whether ``op`` has a SIMD kernel for ``dtype`` ("float16", "float32", "float64",
    "int32", "int64")."""
    d = _tables.DTYPES.get(dtype, -1)
    return op in LOOPS and bool(lib.dispatch_kernels_has(LOOPS[op], d))


# Note [Checked raw buffers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# The C loops trust their arguments: n elements at data[k] + i * steps[k]
# for every operand. So everything C is told comes from the buffer itself:
# a NumPy array's own __array_interface__ (read through ndarray's
# descriptor, so a subclass cannot fake it), or else the buffer protocol
# (memoryview: format, itemsize, readonly, contiguity); lengths are counted
# in elements of the format, never in bytes. Whatever an operand is, it is
# kept alive (and exported) until the call returns.
class _Op(NamedTuple):
    ptr: Any      # char * to element 0
    stride: int   # bytes
    fmt: str      # "e", "f" or "d"
    n: int        # elements
    readonly: bool
    keep: Any


_BY_TYPESTR = {_tables.DTYPE_TYPESTRS[d]: f for f, d in _DTYPES.items()}


def _ndarray_type() -> Any:
    np = sys.modules.get("numpy")
    return None if np is None else np.ndarray


def _operand(buf: Any, what: str) -> _Op:
    """The checked description of a 1-d float buffer (``what`` names it in errors)."""
    nd = _ndarray_type()
    if nd is not None and not isinstance(buf, nd) and hasattr(buf, "__array_interface__") \
            and not isinstance(buf, (bytes, bytearray, memoryview)):
        buf = sys.modules["numpy"].asarray(buf)  # e.g. a dispatch Tensor: NumPy checks it
    if nd is not None and isinstance(buf, nd):
        ai = nd.__array_interface__.__get__(buf)
        if len(ai["shape"]) != 1:
            raise ValueError(f"kernels take 1-d buffers; {what} has shape {ai['shape']}")
        fmt = _BY_TYPESTR.get(ai["typestr"])
        if fmt is None:
            raise TypeError(f"kernels take float16, float32 or float64 buffers; {what} has "
                            f"dtype {buf.dtype}")
        stride = ai["strides"][0] if ai["strides"] else _ITEMSIZE[fmt]
        return _Op(ffi.cast("char *", ai["data"][0]), stride, fmt, ai["shape"][0],
                   bool(ai["data"][1]), buf)
    try:
        mv = memoryview(buf)
    except TypeError:
        raise TypeError(f"kernels take buffers (NumPy arrays, array.array, memoryview); "
                        f"{what} is a {type(buf).__name__}") from None
    fmt = mv.format[1:] if mv.format[:1] in "@=<" and len(mv.format) == 2 else mv.format
    if mv.format[:1] == "<" and sys.byteorder != "little":
        fmt = "?"
    if fmt not in _DTYPES or mv.itemsize != _ITEMSIZE[fmt]:
        hint = (" (a bytes-like buffer counts bytes: view it as elements with "
                "memoryview(buf).cast('d'))") if mv.format in ("B", "b", "c") else ""
        raise TypeError(f"kernels take float16, float32 or float64 buffers; {what} has format "
                        f"{mv.format!r}{hint}")
    if mv.ndim != 1 or not mv.c_contiguous:
        raise ValueError(f"kernels take 1-d contiguous buffers (or NumPy arrays); {what} has "
                         f"shape {mv.shape}")
    cdata = ffi.from_buffer(mv)
    return _Op(ffi.cast("char *", cdata), mv.itemsize, fmt, len(mv), mv.readonly, (mv, cdata))


def _extent(o: _Op) -> tuple[int, int]:
    lo = int(ffi.cast("uintptr_t", o.ptr))
    if o.n == 0:
        return lo, lo
    last = lo + (o.n - 1) * o.stride
    return min(lo, last), max(lo, last) + _ITEMSIZE[o.fmt]


def _check_output(out: _Op, inputs: list[_Op], what: str = "out") -> None:
    """out is writable, does not overlap itself, and meets no input except exactly."""
    if out.readonly:
        raise ValueError(f"{what} is read-only (a bytes object, a read-only memmap or a NumPy "
                         "array whose writeable flag is False); pass a writable buffer")
    if out.stride == 0 and out.n > 1:
        raise ValueError(f"{what} has stride 0: its {out.n} elements are one memory location")
    if abs(out.stride) < _ITEMSIZE[out.fmt] and out.n > 1:
        raise ValueError(f"{what}'s elements overlap (stride {out.stride} bytes)")
    olo, ohi = _extent(out)
    for k, o in enumerate(inputs):
        lo, hi = _extent(o)
        if hi <= olo or lo >= ohi or olo == ohi:
            continue
        if int(ffi.cast("uintptr_t", o.ptr)) == olo and o.stride == out.stride:
            continue  # exactly the output: in place
        raise ValueError(f"{what} partially overlaps input {k + 1}; use a separate output "
                         "or the very same buffer")


def _check_same(ops: list[_Op], n: int, fmt: str, names: list[str]) -> None:
    for o, name in zip(ops, names):
        if o.fmt != fmt:
            raise TypeError(f"all operands must have one dtype; got {_NAMES[fmt]} and "
                            f"{_NAMES[o.fmt]} ({name})")
        if o.n != n:
            raise ValueError(f"length mismatch: {names[0]} has {n} elements, {name} has {o.n}")


def _ctx(op: str, fmt: str, value: float | None) -> Any:
    """The loop's scalar in the buffer's dtype (float16 as its bits), or NULL."""
    if value is None:
        if op in _CTX_REQUIRED:
            raise TypeError(f"{op} needs ctx= (its scalar value)")
        return ffi.NULL
    if op not in _CTX_OPTIONAL and op not in _CTX_REQUIRED:
        raise TypeError(f"{op} takes no ctx (got ctx={value!r})")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"ctx must be a real number, got {type(value).__name__}")
    value = float(value)
    if fmt == "e":  # float16: its bits
        import numpy as np  # lazy: Note [NumPy is optional] (float16 bits only)

        value = int(np.float16(value).view(np.uint16))
    return ffi.new(_CTYPES[fmt], [value])


def _prepare(op: str, out: Any, inputs: tuple, ctx: float | None) -> tuple:
    """(data, steps, n, fmt, ctx, keep) of a checked elementwise call of loop op."""
    if op not in LOOPS:
        raise ValueError(f"no SIMD kernel {op!r}; known: {', '.join(LOOPS)}")
    if len(inputs) != _NIN[op]:
        raise ValueError(f"{op} takes {_NIN[op]} input(s), got {len(inputs)}")
    o = _operand(out, "out")
    ins = [_operand(x, f"input {k + 1}") for k, x in enumerate(inputs)]
    names = ["out"] + [f"input {k + 1}" for k in range(len(ins))]
    _check_same([o, *ins], o.n, o.fmt, names)
    _check_output(o, ins)
    c = _ctx(op, o.fmt, ctx)
    ops = [o, *ins]
    data = ffi.new("char *[]", [x.ptr for x in ops])
    steps = ffi.new("intptr_t[]", [x.stride for x in ops])
    return data, steps, o.n, o.fmt, c, (ops, c)


def run(op: str, out: Any, *inputs: Any, ctx: float | None = None) -> None:
    """Run the chosen loop ``op`` (see LOOPS): ``out[i] = op(inputs[k][i]...)``.

    ``ctx`` is the loop's scalar (alpha of add/sub, optional; value of
    addcmul, required; other loops take none). Every operand has out's
    length and dtype; inputs of length 1 do not broadcast, but NumPy
    ``broadcast_to`` views (stride 0) do. ValueError/TypeError for anything
    else (Note [Checked raw buffers]).
    """
    data, steps, n, fmt, c, _keep = _prepare(op, out, inputs, ctx)
    if lib.dispatch_kernels_run(LOOPS[op], _DTYPES[fmt], data, steps, n, c) != 0:
        raise ValueError(f"no SIMD kernel {op!r} for {_NAMES[fmt]}")


def sum(x: Any) -> float:
    """Blocked pairwise sum of a float32/float64 buffer (same bits on every target)."""
    o = _operand(x, "x")
    if o.fmt == "f":
        return lib.dispatch_kernels_sum_f32(o.ptr, o.stride, o.n)
    if o.fmt == "d":
        return lib.dispatch_kernels_sum_f64(o.ptr, o.stride, o.n)
    raise TypeError(f"sum takes a float32 or float64 buffer, got {_NAMES[o.fmt]}")


def _triad_operands(a: Any, b: Any, c: Any) -> list[_Op]:
    ops = [_operand(x, name) for x, name in ((a, "a"), (b, "b"), (c, "c"))]
    for o, name in zip(ops, "abc"):
        if o.fmt != "d":
            raise TypeError(f"triad takes float64 buffers; {name} is {_NAMES[o.fmt]}")
        if o.stride != 8 and o.n > 1:
            raise ValueError(f"triad takes contiguous buffers; {name} has stride {o.stride} "
                             "bytes")
    _check_same(ops, ops[0].n, "d", ["a", "b", "c"])
    _check_output(ops[0], ops[1:], "a")
    return ops


def triad(a: Any, b: Any, c: Any, s: float) -> None:
    """STREAM triad on contiguous float64 buffers of one length: ``a = b + s * c``."""
    ops = _triad_operands(a, b, c)
    pa, pb, pc = (ffi.cast("double *", o.ptr) for o in ops)
    lib.dispatch_kernels_triad_f64(pa, pb, pc, float(s), ops[0].n)


def time_loop(op: str, out: Any, *inputs: Any, ctx: float | None = None,
              reps: int = 10, rounds: int = 7) -> tuple[float, float]:
    """(best, median) nanoseconds of one call of a chosen loop, timed in C.

    ``op`` may also be "sum" (inputs: one float32/float64 buffer; out: a
    writable 1-element buffer of its dtype) or "triad" (out = a, inputs =
    b, c, all contiguous float64; ctx = s, required). Arguments are checked
    as in run().
    """
    if not isinstance(reps, int) or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    if not isinstance(rounds, int) or not 1 <= rounds <= 64:
        raise ValueError(f"rounds must be an integer from 1 to 64, got {rounds!r}")
    if op == "sum":
        if len(inputs) != 1:
            raise ValueError(f"sum takes 1 input, got {len(inputs)}")
        if ctx is not None:
            raise TypeError(f"sum takes no ctx (got ctx={ctx!r})")
        o, x = _operand(out, "out"), _operand(inputs[0], "input 1")
        if x.fmt not in ("f", "d"):
            raise TypeError(f"sum takes a float32 or float64 buffer, got {_NAMES[x.fmt]}")
        if o.fmt != x.fmt or o.n < 1:
            raise TypeError(f"sum's out must be a 1-element {_NAMES[x.fmt]} buffer; got "
                            f"{o.n} {_NAMES[o.fmt]} element(s)")
        _check_output(o._replace(n=1), [x])
        loop, ops, n, fmt, c = -1, [o, x], x.n, x.fmt, ffi.NULL
    elif op == "triad":
        if len(inputs) != 2:
            raise ValueError(f"triad takes 2 inputs (b, c), got {len(inputs)}")
        if ctx is None:
            raise TypeError("triad needs ctx= (its scalar s)")
        ops = _triad_operands(out, *inputs)
        loop, n, fmt, c = -2, ops[0].n, "d", ffi.new("double[1]", [float(ctx)])
    else:
        _, _, n, fmt, c, (ops, _) = _prepare(op, out, inputs, ctx)
        loop = LOOPS[op]
    data = ffi.new("char *[]", [o.ptr for o in ops])
    steps = ffi.new("intptr_t[]", [o.stride for o in ops])
    res = ffi.new("double[2]")
    if lib.dispatch_kernels_time(loop, _DTYPES[fmt], data, steps, n, c, reps, rounds, res) != 0:
        raise ValueError(f"cannot time {op!r} on {_NAMES[fmt]} (no SIMD kernel)")
    return res[0], res[1]
