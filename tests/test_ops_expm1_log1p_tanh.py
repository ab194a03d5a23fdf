"""expm1, log1p and tanh through the public API: dispatch.ops.<op>, Tensor.<op>().

They were added through the operator table alone (docs/contributing.md):
these tests hold them to the same contract as exp and log. float32/float64
run the SIMD kernels (their bounds: tests/test_kernels_accuracy.py);
float16 computes in float32 and rounds once; integer and bool inputs give
float32, as in torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatch
from dispatch import iterator, kernels, ops

OPS = ["expm1", "log1p", "tanh"]
BOUND = {"expm1": 1.5, "log1p": 1.0, "tanh": 2.5}  # ulps, as documented


def _ulps(y: np.ndarray, ref: np.ndarray, dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    mag = np.maximum(np.abs(ref), np.longdouble(fi.smallest_normal))
    ulp = np.exp2(np.floor(np.log2(mag)) - fi.nmant)
    with np.errstate(invalid="ignore"):
        err = np.abs(y.astype(np.longdouble) - ref) / ulp
    err[np.isnan(y) & np.isnan(ref)] = 0
    err[np.isinf(y) & (y.astype(np.longdouble) == ref)] = 0
    err[np.isinf(y) & (np.abs(ref) > np.longdouble(fi.max))] = 0  # rounds to inf
    return err


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", OPS)
def test_operator_and_method_match_numpy_within_the_bound(op, dtype):
    rng = np.random.default_rng(11)
    a = np.concatenate([rng.uniform(-20, 20, 5000), rng.uniform(-1, 1, 5000) * 1e-3,
                        [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    if op == "log1p":
        a = np.abs(a) - 0.5
    t = dispatch.from_numpy(a)
    y1, y2 = getattr(ops, op)(t).numpy(), getattr(t, op)().numpy()
    assert y1.dtype == dtype and y1.tobytes() == y2.tobytes()
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(a.astype(np.longdouble))
    assert _ulps(y1, ref, dtype).max() <= BOUND[op]


@pytest.mark.parametrize("op", OPS)
def test_strided_and_broadcast_inputs_give_the_contiguous_bits(op):
    a = np.random.default_rng(12).uniform(-0.9, 3, (64, 33)).astype(np.float32)
    t = dispatch.from_numpy(a)
    want = getattr(ops, op)(t).numpy()
    assert getattr(ops, op)(t.transpose(0, 1)).numpy().tobytes() == np.ascontiguousarray(want.T).tobytes()
    assert getattr(ops, op)(t[:, ::2]).numpy().tobytes() == \
        np.ascontiguousarray(want[:, ::2]).tobytes()


@pytest.mark.parametrize("op", OPS)
def test_float16_computes_in_float32_and_rounds_once(op):
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    if op == "log1p":
        x = x[~(x < -1)]  # NaN for those, checked below
    y = getattr(ops, op)(dispatch.from_numpy(x)).numpy()
    assert y.dtype == np.float16
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(x.astype(np.longdouble))
    # float32 within 2.5 ulp, rounded once to float16: at most one float16 ulp off,
    # and the same as NumPy's own float16 loop (which also goes through float32).
    assert _ulps(y, ref, np.float16).max() <= 1.0
    with np.errstate(all="ignore"):
        npy = getattr(np, op)(x)
    assert np.mean((y == npy) | (np.isnan(y) & np.isnan(npy))) > 0.999


@pytest.mark.parametrize("op", OPS)
def test_integer_and_bool_inputs_give_float32(op):
    for data in ([0, 1, 2, 3], [True, False]):
        t = dispatch.tensor(data)
        y = getattr(ops, op)(t)
        assert y.dtype == dispatch.float32
        with np.errstate(all="ignore"):
            want = getattr(np, op)(np.array(data, dtype=np.float32))
        assert _ulps(y.numpy(), want.astype(np.longdouble), np.float32).max() <= BOUND[op] + 0.5


@pytest.mark.parametrize("op", OPS)
def test_special_values_are_numpys(op):
    a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 1e-300, -1e-300, 800.0])
    y = getattr(ops, op)(dispatch.from_numpy(a)).numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a)
    assert np.array_equal(np.isnan(y), np.isnan(want))
    ok = ~np.isnan(want)
    assert (y[ok] == want[ok]).all() and (np.signbit(y[ok]) == np.signbit(want[ok])).all()


@pytest.mark.parametrize("op", OPS)
def test_the_operator_comes_from_the_table(op):
    assert getattr(ops, op).__doc__
    assert op in iterator.LOOPS and op in kernels.LOOPS
    assert kernels.has(op, "float32") and kernels.has(op, "float64")
    assert not kernels.has(op, "int32")
