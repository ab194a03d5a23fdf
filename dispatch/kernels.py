"""Direct access to the SIMD kernels, on raw buffers (no tensor needed).

The kernels are the ``sources/kernels/*.dispatch.c`` loops, chosen once for
this CPU (see ``sources/include/dispatch/kernels.h``). This module is for
tests and benchmarks: it runs one chosen loop on writable contiguous or
strided buffers (anything with the buffer protocol, e.g. NumPy arrays).

>>> import array
>>> from dispatch import kernels
>>> a = array.array("f", [1, 2, 3]); b = array.array("f", [10, 20, 30])
>>> out = array.array("f", [0, 0, 0])
>>> kernels.run("add", out, a, b)
>>> list(out)
[11.0, 21.0, 32.0]
"""

from __future__ import annotations

from typing import Any

from ._core import ffi, lib

__all__ = ["LOOPS", "SOURCES", "chosen", "has", "run", "sum", "time_loop", "triad"]

# Loop ids of sources/include/dispatch/loops.h (the ones with SIMD kernels).
LOOPS = {
    "add": 0, "sub": 1, "mul": 2, "div": 3, "maximum": 4, "minimum": 5,
    "sqrt": 14, "exp": 15, "log": 16, "addcmul": 18,
}
SOURCES = ("arith", "exp_log", "addcmul", "sum", "triad", "int_arith", "half_arith")
_DTYPES = {"e": 6, "f": 7, "d": 8}  # buffer format -> dispatch dtype (float16/32/64)
_CTYPES = {"e": "uint16_t[1]", "f": "float[1]", "d": "double[1]"}

if lib.dispatch_kernels_simd_init() != 0:
    raise RuntimeError(ffi.string(lib.dispatch_cpu_error()).decode())


def chosen(source: str) -> str:
    """The target chosen for a kernel source, e.g. ``chosen("arith")`` -> "AVX512_SKX"."""
    p = lib.dispatch_kernels_chosen(source.encode())
    if p == ffi.NULL:
        raise ValueError(f"unknown kernel source {source!r}; known: {', '.join(SOURCES)}")
    return ffi.string(p).decode()


def has(op: str, dtype: str) -> bool:
    """Whether ``op`` has a SIMD kernel for ``dtype`` ("float16", "float32", "float64",
    "int32", "int64")."""
    d = {"int32": 4, "int64": 5, "float16": 6, "float32": 7, "float64": 8}.get(dtype, -1)
    return op in LOOPS and bool(lib.dispatch_kernels_has(LOOPS[op], d))


def _operand(buf: Any) -> tuple[Any, int, str, int, Any]:
    """(char* to the first element, byte stride, format, length, keep-alive) of a 1-d buffer.

    NumPy arrays may be strided or broadcast (stride 0); other buffers must be
    contiguous.
    """
    ai = getattr(buf, "__array_interface__", None)
    if ai is not None:
        if len(ai["shape"]) != 1:
            raise ValueError(f"kernels take 1-d buffers, got shape {ai['shape']}")
        fmt = {"<f2": "e", "<f4": "f", "<f8": "d"}.get(ai["typestr"])
        if fmt is None:
            raise TypeError(f"kernels take float16, float32 or float64 buffers, got "
                            f"{ai['typestr']!r}")
        stride = ai["strides"][0] if ai["strides"] else int(ai["typestr"][2:])
        return ffi.cast("char *", ai["data"][0]), stride, fmt, ai["shape"][0], buf
    mv = memoryview(buf)
    fmt = mv.format.lstrip("@=<")
    if mv.ndim != 1 or not mv.c_contiguous:
        raise ValueError("kernels take 1-d contiguous buffers (or NumPy arrays)")
    if fmt not in _DTYPES:
        raise TypeError(f"kernels take float16, float32 or float64 buffers, got format "
                        f"{mv.format!r}")
    cdata = ffi.from_buffer(mv)
    return ffi.cast("char *", cdata), mv.itemsize, fmt, len(mv), cdata


def _ctx(fmt: str, value: float | None) -> Any:
    """The loop's scalar in the buffer's dtype (float16 as its bits), or NULL."""
    if value is None:
        return ffi.NULL
    if fmt == "e":
        import numpy as np

        value = int(np.float16(value).view(np.uint16))
    return ffi.new(_CTYPES[fmt], [value])


def run(op: str, out: Any, *inputs: Any, ctx: float | None = None) -> None:
    """Run the chosen loop ``op`` (see LOOPS): ``out[i] = op(inputs[k][i]...)``.

    ``ctx`` is the loop's scalar (alpha of add/sub, value of addcmul). Inputs
    of length 1 with stride 0 broadcast (pass NumPy ``broadcast_to`` views).
    """
    if op not in LOOPS:
        raise ValueError(f"no SIMD kernel {op!r}; known: {', '.join(LOOPS)}")
    ops = [_operand(out)] + [_operand(x) for x in inputs]
    fmt, n = ops[0][2], ops[0][3]
    for o in ops[1:]:
        if o[2] != fmt:
            raise TypeError(f"all operands must have one dtype; got {fmt!r} and {o[2]!r}")
        if o[3] != n:
            raise ValueError(f"length mismatch: out has {n} elements, an input {o[3]}")
    data = ffi.new("char *[]", [o[0] for o in ops])
    steps = ffi.new("intptr_t[]", [o[1] for o in ops])
    c = _ctx(fmt, ctx)
    if lib.dispatch_kernels_run(LOOPS[op], _DTYPES[fmt], data, steps, n, c) != 0:
        raise ValueError(f"no SIMD kernel {op!r} for format {fmt!r}")


def sum(x: Any) -> float:
    """Blocked pairwise sum of a float32/float64 buffer (same bits on every target)."""
    ptr, stride, fmt, n, _keep = _operand(x)
    if fmt == "f":
        return lib.dispatch_kernels_sum_f32(ptr, stride, n)
    return lib.dispatch_kernels_sum_f64(ptr, stride, n)


def triad(a: Any, b: Any, c: Any, s: float) -> None:
    """STREAM triad on float64 buffers: ``a = b + s * c``."""
    pa, pb, pc = (ffi.cast("double *", ffi.from_buffer(x)) for x in (a, b, c))
    lib.dispatch_kernels_triad_f64(pa, pb, pc, s, len(memoryview(a)))


def time_loop(op: str, out: Any, *inputs: Any, ctx: float | None = None,
              reps: int = 10, rounds: int = 7) -> tuple[float, float]:
    """(best, median) nanoseconds of one call of a chosen loop, timed in C.

    ``op`` may also be "sum" (inputs: one buffer; out: a 1-element buffer) or
    "triad" (out = a, inputs = b, c; ctx = s).
    """
    loop = {"sum": -1, "triad": -2}.get(op, LOOPS.get(op))
    if loop is None:
        raise ValueError(f"no kernel {op!r}")
    ops = [_operand(out)] + [_operand(x) for x in inputs]
    fmt = ops[-1][2]
    n = ops[-1][3]
    data = ffi.new("char *[]", [o[0] for o in ops])
    steps = ffi.new("intptr_t[]", [o[1] for o in ops])
    c = _ctx(fmt, ctx)
    res = ffi.new("double[2]")
    if lib.dispatch_kernels_time(loop, _DTYPES[fmt], data, steps, n, c, reps, rounds, res) != 0:
        raise ValueError(f"cannot time {op!r} on format {fmt!r}")
    return res[0], res[1]
