"""Elementwise operators on plans of short rows (Note [2-D loops] in
sources/include/dispatch/loops.h): a broadcast row or column, in place and
not, 2-D and 3-D, whole and split across threads at any element, give
NumPy's bits; a 2-D loop takes every whole row of a range, the
1-D loop its partial first and last rows."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
# (rows, columns): above the grain (32768) so 2 threads split it, columns not
# a multiple of any vector, so a thread's range starts inside a row
SHAPES = [(300, 257), (4099, 9), (3, 64)]


def _values(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 4).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


def _operands(dtype, shape, layout, seed):
    rng = np.random.default_rng(seed)
    a = _values(rng, shape, dtype)
    other = {"row": shape[1:], "col": shape[:1] + (1,), "full": shape}[layout]
    return a, _values(rng, other, dtype)


OPS = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "lt": np.less, "eq": np.equal}


def _want(op, a, b):
    if op == "add" and a.dtype == bool:
        return a | b
    if op == "mul" and a.dtype == bool:
        return a & b
    return OPS[op](a, b)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_with_a_broadcast_operand(threads, dtype, shape, layout, nthreads):
    threads(nthreads)
    a, b = _operands(dtype, shape, layout, 1)
    x, y = dispatch.from_numpy(a), dispatch.from_numpy(b)
    for op in OPS:
        got = getattr(dispatch.ops, op)(x, y).numpy()
        want = _want(op, a, b)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (op, dtype)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("layout", ["row", "col", "full"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_in_place_with_a_broadcast_operand(threads, dtype, shape, layout, nthreads):
    threads(nthreads)
    a, b = _operands(dtype, shape, layout, 2)
    for method, ufunc in [("add_", np.add), ("sub_", np.subtract), ("mul_", np.multiply)]:
        x = dispatch.from_numpy(a.copy())
        getattr(x, method)(dispatch.from_numpy(b))
        assert x.numpy().tobytes() == ufunc(a, b).tobytes(), (method, dtype)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_scaled_in_place_and_a_view_of_every_other_row(threads, nthreads):
    """alpha read once for all rows; an output whose rows are not adjacent."""
    threads(nthreads)
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (600, 129)).astype(np.int16)
    row = rng.integers(-50, 50, 129).astype(np.int16)
    x = dispatch.from_numpy(a.copy())
    x[::2].add_(dispatch.from_numpy(row), alpha=3)
    want = a.copy()
    want[::2] = (want[::2] + np.int16(3) * row).astype(np.int16)
    assert x.numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_three_dims_and_copies(threads, dtype, nthreads):
    threads(nthreads)
    rng = np.random.default_rng(4)
    a = _values(rng, (7, 130, 37), dtype)
    col = _values(rng, (130, 1), dtype)
    x = dispatch.from_numpy(a)
    got = dispatch.ops.maximum(x, dispatch.from_numpy(col)).numpy()
    assert got.tobytes() == np.maximum(a, col).tobytes()
    into = dispatch.from_numpy(np.zeros((7, 130, 37), dtype))
    into.copy_(dispatch.from_numpy(col))  # a broadcast column, each row one value
    assert into.numpy().tobytes() == np.broadcast_to(col, a.shape).tobytes()
    view = dispatch.from_numpy(a.copy())
    view[:, :, ::2].fill_(1)
    want = a.copy()
    want[:, :, ::2] = 1
    assert view.numpy().tobytes() == want.tobytes()
