"""Note [Stores on whole lines] (sources/kernels/line_head.h): the float
binary loops, int_arith's loops, loop_paths.h's unit-stride loops (8/16-bit
and bool arithmetic, comparisons, neg/abs), mul_bytes.h's byte products,
fill_ and copy_ of a broadcast value run the elements up to the output's
vector (line) boundary first. Whatever the
output's offset in a cache line, the bits are those of the same operation
on 64-byte-aligned copies (NumPy's for the integer loops), for both
operands contiguous, either one broadcast (a scalar), with sub's alpha, in
place and into a fresh tensor, for lengths around the head's threshold."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _aligned import aligned  # noqa: E402
from _bits import assert_same_bits  # noqa: E402

OPS = {
    "add": lambda a, b: dispatch.add(a, b),
    "sub alpha": lambda a, b: dispatch.sub(a, b, alpha=0.375),
    "mul": lambda a, b: dispatch.mul(a, b),
    "div": lambda a, b: dispatch.div(a, b),
    "maximum": lambda a, b: dispatch.maximum(a, b),
}


def _at_offset(values: np.ndarray, offset: int) -> "dispatch.Tensor":
    """A tensor on NumPy memory whose first element sits `offset` elements
    past a 64-byte boundary."""
    view = aligned(values.size, values.dtype, offset)
    view[:] = values
    return dispatch.from_numpy(view)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_any_offset_gives_the_aligned_bits(dtype, op):
    f = OPS[op]
    rng = np.random.default_rng(11)
    for n in (63, 64, 65, 127, 128, 129, 1000):
        a = rng.uniform(-3, 3, n).astype(dtype)
        b = rng.uniform(0.5, 2, n).astype(dtype)
        a[::13] = np.nan
        want = f(_at_offset(a, 0), _at_offset(b, 0))
        want_scalar = f(_at_offset(a, 0), dispatch.tensor(1.25, dtype=getattr(dispatch, dtype)))
        for off in range(1, 16):
            x, y = _at_offset(a, off), _at_offset(b, (off * 5) % 16)
            assert_same_bits(f(x, y), want, f"{op} {dtype} n={n} offset {off}")
            s = dispatch.tensor(1.25, dtype=getattr(dispatch, dtype))
            assert_same_bits(f(x, s), want_scalar, f"{op} {dtype} n={n} offset {off} scalar")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_at_any_offset(dtype):
    rng = np.random.default_rng(12)
    n = 777
    a = rng.uniform(-3, 3, n).astype(dtype)
    want = dispatch.sub(_at_offset(a, 0), 1.5, alpha=2.0)
    for off in range(16):
        x = _at_offset(a, off)
        x.sub_(1.5, alpha=2.0)
        assert_same_bits(x, want, f"sub_ {dtype} offset {off}")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32", "float64"])
def test_integer_loops_fill_and_broadcast_copy_at_any_offset(dtype):
    # int_arith's loops, fill_ and copy_ of a broadcast value (loop_paths.h)
    rng = np.random.default_rng(13)
    for n in (100, 1000):
        a = rng.integers(-100, 100, n).astype(dtype)
        b = rng.integers(-100, 100, n).astype(dtype)
        for off in range(16):
            x, y = _at_offset(a, off), _at_offset(b, (off * 3) % 16)
            for name, got, want in (("add", dispatch.add(x, y), a + b),
                                    ("sub scalar", dispatch.sub(x, 7), a - 7),
                                    ("mul", dispatch.mul(x, y), a * b),
                                    ("maximum", dispatch.maximum(x, y), np.maximum(a, b))):
                assert np.array(got).tolist() == want.tolist(), f"{name} {dtype} {n} {off}"
            x.add_(y)
            assert np.array(x).tolist() == (a + b).tolist(), f"add_ {dtype} {n} {off}"
            x.fill_(5)
            assert np.array(x).tolist() == [5] * n, f"fill_ {dtype} {n} {off}"
            x.copy_(dispatch.tensor(-3, dtype=getattr(dispatch, dtype)))
            assert np.array(x).tolist() == [-3] * n, f"copy_ {dtype} {n} {off}"


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "float32", "float64"])
def test_loop_paths_loops_in_place_and_into_bools_at_any_offset(dtype):
    """loop_paths.h's unit-stride loops (int_loops' arithmetic and every
    comparison) and its contiguous unary loop, and mul_bytes.h's byte
    products: in place on an output at any offset, by a tensor and by a
    number, and comparisons into a bool out= view at any offset, for lengths
    either side of the head's thresholds (Note [A head pays on long runs]:
    8 lines, and as many lines as the head has elements)."""
    rng = np.random.default_rng(16)
    z = np.dtype(dtype).itemsize
    for n in sorted({511 // z, 512 // z, 1000, 4096 // z // z - 1, 4096 // z // z, 4099}):
        if dtype == "bool":
            a, b = rng.random(n) < 0.5, rng.random(n) < 0.5
        else:
            a = rng.integers(-50 if dtype != "uint8" else 0, 50, n).astype(dtype)
            b = rng.integers(1, 50, n).astype(dtype)
        with np.errstate(over="ignore"):
            wants = {"add_": a + b, "mul_": a * b, "add_ 3": a + (True if dtype == "bool" else 3),
                     "mul_ 3": a * (True if dtype == "bool" else 3)}
        for off in range(0, 64 // z, max(1, 8 // z)):
            for name, want in wants.items():
                x = _at_offset(a, off)
                other = _at_offset(b, (off * 3) % 16) if " " not in name else \
                    (True if dtype == "bool" else 3)
                getattr(x, name.split()[0])(other)
                assert np.array(x).tolist() == want.tolist(), f"{name} {dtype} n={n} offset {off}"
            x, y = _at_offset(a, off), _at_offset(b, (off * 5) % 16)
            for op in ("lt", "le", "eq", "ne", "gt", "ge"):
                out = aligned(n, np.bool_, (off * 7) % 64)
                got = getattr(dispatch, op)(x, y, out=dispatch.from_numpy(out))
                want = getattr(np, {"lt": "less", "le": "less_equal", "eq": "equal",
                                    "ne": "not_equal", "gt": "greater", "ge": "greater_equal"}[op])(a, b)
                assert np.array_equal(out, want) and np.array_equal(np.array(got), want), \
                    f"{op} {dtype} n={n} offset {off}"
            for op in ("abs", "neg") if dtype != "bool" else ():
                out = aligned(n, dtype, off)  # the unary loop's output at the offset
                getattr(dispatch, op)(_at_offset(a, 0), out=dispatch.from_numpy(out))
                with np.errstate(over="ignore"):
                    want = np.abs(a) if op == "abs" else -a
                assert out.tolist() == want.tolist(), f"{op} {dtype} n={n} offset {off}"


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("cols", [512, 4100])
def test_rows_of_a_2d_loop_at_any_offset(dtype, cols):
    """A 2-D loop runs its row loop once a row, each row at its own offset in
    a line: a matrix at any offset, in place and compared into bools, by a
    column (a number a row) and by a row, against NumPy. Rows of 512 take no
    head for 1- and 2-byte outputs and a head for wider ones; rows of 4100 a
    head for every dtype (Note [A head pays on long runs])."""
    rng = np.random.default_rng(17)
    rows, z = 5, np.dtype(dtype).itemsize
    if dtype == "bool":
        a = rng.random((rows, cols)) < 0.5
        col, row = rng.random((rows, 1)) < 0.5, rng.random((1, cols)) < 0.5
    else:
        a = rng.integers(-50 if dtype != "uint8" else 0, 50, (rows, cols)).astype(dtype)
        col = rng.integers(1, 9, (rows, 1)).astype(dtype)
        row = rng.integers(1, 9, (1, cols)).astype(dtype)
    for off in range(0, 64 // z, max(1, 8 // z)):
        for name, other in (("col", col), ("row", row)):
            y = _at_offset(other.ravel(), (off * 3) % 16).reshape(other.shape)
            for op in ("add_", "mul_", "maximum"):
                x = _at_offset(a.ravel(), off).reshape(a.shape)
                if op == "maximum":
                    dispatch.maximum(x, y, out=x)
                else:
                    getattr(x, op)(y)
                with np.errstate(over="ignore"):
                    want = {"add_": np.add, "mul_": np.multiply, "maximum": np.maximum}[op](a, other)
                assert np.array(x).tolist() == want.tolist(), f"{op} {dtype} by {name} offset {off}"
            x = _at_offset(a.ravel(), off).reshape(a.shape)
            out = aligned(rows * cols, np.bool_, (off * 7) % 64).reshape(a.shape)
            dispatch.lt(x, y, out=dispatch.from_numpy(out))
            assert np.array_equal(out, a < other), f"lt {dtype} by {name} offset {off}"


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float64"])
def test_contiguous_copies_at_any_offsets_of_both_sides(dtype):
    """copy_ of contiguous runs (vector stores on the output's lines from 1 KiB
    bytes to 1 MiB, memmove past them and where the runs overlap)."""
    rng = np.random.default_rng(14)
    z = np.dtype(dtype).itemsize
    for nbytes in (255, 256, 1000, 1023, 1024, 1025, 1100, 4096, 4100, 65535, 65536, 65600,
                   1048575, 1048576, 1048600):
        n = nbytes // z
        src = rng.integers(0, 100, n).astype(dtype)
        for off_out, off_in in ((0, 0), (1, 0), (0, 3), (5, 9), (15, 1)):
            out = aligned(n + 2, dtype, off_out)
            out[:] = 7
            inp = aligned(n, dtype, off_in)
            inp[:] = src
            dispatch.from_numpy(out[1:n + 1]).copy_(dispatch.from_numpy(inp))
            assert out[0] == 7 and out[n + 1] == 7, f"{dtype} {nbytes} bytes: wrote outside"
            assert np.array_equal(out[1:n + 1], src), f"{dtype} {nbytes} bytes {off_out}/{off_in}"
        # overlapping runs of one buffer, either direction: memmove's bits
        for shift in (1, 3, -1, -5):
            buf = np.arange(n + 8).astype(dtype)
            t = dispatch.from_numpy(buf)
            lo, hi = (shift, 0) if shift > 0 else (0, -shift)
            want = buf.copy()
            want[lo:lo + n] = buf[hi:hi + n].copy()
            t[lo:lo + n].copy_(t[hi:hi + n])
            assert np.array_equal(buf, want), f"{dtype} {nbytes} bytes shift {shift}"


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64"])
@pytest.mark.parametrize("cols", [1, 3, 64, 513, 1024, 5000])
def test_a_row_copied_into_every_row(threads, dtype, cols):
    """Note [Copies of a repeated block]: a row doubled to 4 KiB, then that
    span copied to the end (spans cut short at the end, rows across spans)."""
    rng = np.random.default_rng(15)
    row = rng.integers(0, 100, (1, cols)).astype(dtype)
    for nthreads in (1, 2):
        threads(nthreads)
        for rows in (2, 7, 300):
            out = dispatch.zeros((rows, cols), dtype=getattr(dispatch, dtype))
            out.copy_(dispatch.from_numpy(row))
            assert np.array_equal(out.numpy(), np.broadcast_to(row, (rows, cols)))


@pytest.mark.parametrize("src,dst", [("uint8", "int8"), ("int8", "uint8"), ("bool", "int8"),
                                     ("bool", "uint8")])
def test_same_width_integer_casts_copy_their_bits(src, dst):
    """A cast between integers of one width (bool's 0 and 1 too) is their
    bits: contiguous runs of 1 KiB to 1 MiB copy on the output's lines, wrapping
    as NumPy's astype does, into outputs at any offset."""
    rng = np.random.default_rng(21)
    for n in (1000, 1024, 1025, 4100, 65536, 1048575, 1048576, 1048600):
        a = rng.integers(0, 2, n).astype(src) if src == "bool" else \
            rng.integers(np.iinfo(src).min, int(np.iinfo(src).max) + 1, n).astype(src)
        got = dispatch.from_numpy(a).to(getattr(dispatch, dst)).numpy()
        assert got.dtype == np.dtype(dst) and np.array_equal(got, a.astype(dst)), n
        out = aligned(n + 2, dst, 3)
        out[:] = 7
        dispatch.from_numpy(out[1:n + 1]).copy_(dispatch.from_numpy(a))
        assert out[0] == 7 and out[n + 1] == 7 and np.array_equal(out[1:n + 1], a.astype(dst)), n
