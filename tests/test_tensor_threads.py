"""Tensor operators run on the elementwise engine: dispatch.set_num_threads()
splits them across threads above the grain size, and results are the same
bits for any thread count (elementwise ops and reductions alike)."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch

N = 3 * 32768 + 17  # above the grain (32768), with a ragged tail


@pytest.fixture
def threads():
    before = dispatch.get_num_threads()
    yield dispatch.set_num_threads
    dispatch.set_num_threads(before)


def _run_all(a, b, c):
    t = [dispatch.from_numpy(v) for v in (a, b, c)]
    return [
        (t[0] + t[1]).numpy(), (t[0] * t[1]).numpy(), dispatch.ops.exp(t[0]).numpy(),
        dispatch.ops.addcmul(t[0], t[1], t[2], value=0.5).numpy(),
        t[0].sum().numpy(), t[0][: 3 * 32768].reshape(3, -1).sum(1).numpy(),
        t[0].mean().numpy(), t[0].max().numpy(),
        (t[0] < t[1]).numpy(),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(threads, dtype):
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(N).astype(dtype) for _ in range(3))
    threads(1)
    one = _run_all(a, b, c)
    threads(2)
    assert dispatch.get_num_threads() == 2
    two = _run_all(a, b, c)
    for x, y in zip(one, two):
        assert x.tobytes() == y.tobytes()


def test_thread_count_is_validated():
    with pytest.raises(ValueError, match="0"):
        dispatch.set_num_threads(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tensor_sum_is_pairwise_accurate(dtype):
    """The float sum of a tensor is the SIMD pairwise sum: its error grows
    like log2(n) ulps, where a naive running sum in the same precision
    drifts like n."""
    x = np.random.default_rng(2).uniform(0, 1, 1 << 20).astype(dtype)
    got = float(dispatch.from_numpy(x).sum().numpy())
    exact = float(np.sum(x.astype(np.longdouble)))
    eps = np.finfo(dtype).eps
    assert abs(got - exact) <= 20 * np.log2(x.size) * eps * exact
