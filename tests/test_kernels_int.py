"""Integer kernels (int_arith.dispatch.c) through the engine: two's
complement wrap-around like NumPy, every layout, alpha for add/sub."""

from __future__ import annotations

import numpy as np
import pytest

from dispatch import iterator, kernels

INTS = [np.int32, np.int64]
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
       "minimum": np.minimum}


def ints(n, dtype, seed):
    info = np.iinfo(dtype)
    x = np.random.default_rng(seed).integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    edges = np.array([info.min, info.max, -1, 0], dtype=dtype)
    x[:4] = edges[:min(n, 4)]
    return x


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(OPS))
def test_int_kernels_exist_for_this_cpu(op, dtype):
    assert kernels.has(op, np.dtype(dtype).name)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("n", [0, 1, 7, 64, 1001])
def test_int_ops_wrap_like_numpy(op, dtype, n):
    a, b = ints(n, dtype, 1), ints(n, dtype, 2)
    out = np.empty(n, dtype)
    iterator.elementwise(op, out, a, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, OPS[op](a, b))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(OPS))
def test_int_ops_on_broadcast_and_strided_operands(op, dtype):
    a = ints(3000, dtype, 3)[::3]
    s = np.array(7, dtype)
    out = np.empty(1000, dtype)
    iterator.elementwise(op, out, a, s)
    np.testing.assert_array_equal(out, OPS[op](a, s))
    iterator.elementwise(op, out, s, a)
    np.testing.assert_array_equal(out, OPS[op](s, a))


@pytest.mark.parametrize("dtype", INTS)
def test_int_add_with_alpha(dtype):
    a, b = ints(500, dtype, 4), ints(500, dtype, 5)
    out = np.empty(500, dtype)
    iterator.elementwise("add", out, a, b, ctx=3)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a + dtype(3) * b)
