"""The column product and the fused dot kernels through the public ops, on
awkward shapes: the bits of the order their notes document.

- prod over dim 0 (Note [Product columns] in sources/kernels/prod.dispatch.c)
  against Note [Product order] written out in NumPy, and against the row
  kernel's product of each column made contiguous;
- dot (Note [Dot order] in sources/kernels/dot.dispatch.c) against the
  float64 products summed by the engine's sum, rounded once, and for
  integers against the wrapping int64 sum of int64 products.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import dispatch
from dispatch import ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bits import bits, same_bits  # noqa: E402

FLOATS = ["float16", "bfloat16", "float32", "float64"]


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = dispatch.get_num_threads()
    dispatch.set_num_threads(request.param)
    yield request.param
    dispatch.set_num_threads(before)


def _tensor(a: np.ndarray, dtype: str):
    """a (float64 or an integer array) as a dispatch tensor of dtype."""
    if dtype == "bfloat16":
        return dispatch.from_numpy(a.astype(np.float32)).to(dispatch.bfloat16)
    return dispatch.from_numpy(a.astype(dtype))


def _near_one(shape, seed, specials=False) -> np.ndarray:
    """Values near 1 and of both signs (long products stay finite), with
    0, -0.0, inf, -inf and NaN sprinkled in when asked."""
    rng = np.random.default_rng(seed)
    a = (1 + rng.uniform(-0.02, 0.02, shape)) * rng.choice([1.0, -1.0], shape, p=[0.8, 0.2])
    if specials:
        flat = a.reshape(-1)
        picks = rng.choice(flat.size, max(1, flat.size // 40), replace=False)
        flat[picks] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], picks.size)
    return a


def _product_order(col: np.ndarray) -> float:
    """Note [Product order]: element i into running product i % 32, then
    the 32 combined pairwise, in float64."""
    acc = np.ones(32)
    with np.errstate(all="ignore"):
        for i, v in enumerate(col.astype(np.float64)):
            acc[i % 32] *= v
        while acc.size > 1:
            acc = acc[0::2] * acc[1::2]
    return float(acc[0])


def _round(v: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values as prod stores them in dtype: a narrow float through
    float32 (its fold runs on a float32 copy, rounded to float32, then to it)."""
    if dtype == "float64":
        return v
    v32 = v.astype(np.float32)
    return v32 if dtype != "float16" else v32.astype(np.float16)


def _same_bits_any_nan(got, want: np.ndarray) -> bool:
    """got's bits are want's, but a NaN may be any NaN (which NaN a multiply
    of two NaNs returns is the hardware's and the compiler's choice: the
    order fixes the values, not the payloads)."""
    g = got.to(dispatch.float64).numpy()
    w = want.astype(np.float64)
    nan = np.isnan(w)
    return bool(np.array_equal(np.isnan(g), nan)) and bool(
        np.array_equal(bits(got)[~nan], bits(want)[~nan]))


def _agree(x, y) -> bool:
    """Two dispatch tensors of one dtype: the same bits, or both NaN."""
    if same_bits(x, y):
        return True
    return bool(np.isnan(float(x.to(dispatch.float64).item())) and
                np.isnan(float(y.to(dispatch.float64).item())))


PROD_SHAPES = [(1, 1), (1, 7), (7, 1), (2, 3), (31, 64), (32, 65), (33, 129), (100, 257),
               (513, 130)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", PROD_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("specials", [False, True], ids=["plain", "specials"])
def test_prod_dim0_is_the_product_order_of_each_column(dtype, shape, specials, threads):
    a = _near_one(shape, seed=shape[0] * 1000 + shape[1], specials=specials).astype(dtype)
    got = ops.prod(dispatch.from_numpy(a), 0)
    want = _round(np.array([_product_order(a[:, j]) for j in range(shape[1])]), dtype)
    assert _same_bits_any_nan(got, want)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "rows stepped", "columns stepped", "3-d"])
def test_prod_dim0_equals_the_row_kernel_of_each_column(dtype, layout, threads):
    if layout == "3-d":
        base = _near_one((45, 3, 70), seed=7, specials=True)
        t = _tensor(base, dtype)
        got = ops.prod(t, 0)
        for i in range(3):
            for j in (0, 1, 37, 69):
                col = ops.prod(t[:, i, j].contiguous(), 0)
                assert same_bits(got[i, j], col), (i, j)
        return
    base = _near_one((97, 2 * 133), seed=11, specials=True)
    t = _tensor(base, dtype)
    if layout == "rows stepped":
        t = t[::2, :]
    elif layout == "columns stepped":
        t = t[:, ::2]
    got = ops.prod(t, 0)
    for j in range(t.shape[1]):
        assert _agree(got[j], ops.prod(t[:, j].contiguous(), 0)), j


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prod_dim0_keepdim_and_out_of_a_wide_matrix(dtype, threads):
    a = _near_one((64, 1031), seed=5).astype(dtype)
    t = dispatch.from_numpy(a)
    want = _round(np.array([_product_order(a[:, j]) for j in range(a.shape[1])]), dtype)
    got = ops.prod(t, 0, True)
    assert tuple(got.shape) == (1, 1031)
    assert same_bits(got, want.reshape(1, -1))


DOT_LENGTHS = [0, 1, 2, 3, 31, 32, 33, 511, 512, 513, 1025, 4097, 70_001, 140_003]


def _dot_reference(ta, tb, dtype: str):
    """The float64 (or int64) products summed by the engine, rounded once."""
    if dtype in FLOATS:
        p = ta.to(dispatch.float64) * tb.to(dispatch.float64)
        return p.sum().to(getattr(dispatch, dtype))
    p = ta.to(dispatch.int64) * tb.to(dispatch.int64)
    return p.sum().to(getattr(dispatch, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", DOT_LENGTHS)
@pytest.mark.parametrize("step", [1, 2, 3])  # 2: float64's every-other rows
def test_float_dot_is_the_sum_of_float64_products(dtype, n, step, threads):
    rng = np.random.default_rng(n + step)
    scale = np.exp2(rng.integers(-8, 8, 2 * step * n + 2))
    a = rng.standard_normal(step * n + 1) * scale[: step * n + 1]
    b = rng.standard_normal(step * n + 1) * scale[step * n + 1:]
    ta, tb = _tensor(a, dtype)[: step * n: step], _tensor(b, dtype)[: step * n: step]
    assert same_bits(ops.dot(ta, tb), _dot_reference(ta, tb, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("special", ["nan", "inf", "inf-inf", "zeros"])
def test_float_dot_specials_are_stored_as_a_sum(dtype, special):
    n = 1000
    a = np.linspace(-2, 2, n)
    b = np.linspace(1, 3, n)
    if special == "nan":
        a[517] = np.nan
    elif special == "inf":
        a[3] = np.inf
    elif special == "inf-inf":
        a[3], a[900] = np.inf, np.inf
        b[900] = -1.0
    else:  # -0.0 products only: the sum is +0.0, as torch's
        a[:] = -0.0
    ta, tb = _tensor(a, dtype), _tensor(b, dtype)
    got = ops.dot(ta, tb)
    assert same_bits(got, _dot_reference(ta, tb, dtype))
    value = float(got.to(dispatch.float64).item())
    if special in ("nan", "inf-inf"):
        assert np.isnan(value) and int(bits(got.to(dispatch.float64))) == 0x7FF8000000000000
    elif special == "inf":
        assert value == np.inf
    else:
        assert value == 0.0 and not np.signbit(value)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("n", [0, 1, 33, 1000, 70_001])
@pytest.mark.parametrize("step", [1, 2])
def test_integer_dot_wraps_in_its_dtype(dtype, n, step, threads):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(n * 7 + step)
    a = rng.integers(info.min, info.max, step * n + 1, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, step * n + 1, endpoint=True).astype(dtype)
    a[:3] = info.max  # products that overflow the dtype at once
    b[:3] = info.max if info.min == 0 else info.min
    ta = dispatch.from_numpy(a)[: step * n: step]
    tb = dispatch.from_numpy(b)[: step * n: step]
    got = ops.dot(ta, tb)
    assert same_bits(got, _dot_reference(ta, tb, dtype))
    with np.errstate(over="ignore"):
        want = np.sum(a[: step * n: step].astype(np.int64) * b[: step * n: step].astype(np.int64))
    assert got.item() == int(np.array(want).astype(dtype))
