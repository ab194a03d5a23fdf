"""log and log1p take a shorter path for vectors of ordinary inputs.

Note [log's common case] in sources/kernels/exp_log.dispatch.c: a vector
whose lanes are all positive normal numbers (log; above -1 and finite for
log1p) skips the special-value selections. The other lanes of a vector
holding a zero, a negative number, an infinity, a NaN or a subnormal take the
full path, and must come out with the same bits as when their vector took the
short one; the special lane must get its special value.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatch

N = 100  # several vectors of every width (16 float32 lanes on AVX-512) and a tail


def _ordinary(op: str, dtype) -> np.ndarray:
    rng = np.random.default_rng(5)
    lo = -0.9 if op == "log1p" else 1e-3
    return rng.uniform(lo, 50.0, N).astype(dtype)


def _run(op: str, a: np.ndarray) -> np.ndarray:
    return getattr(dispatch, op)(dispatch.from_numpy(a.copy())).numpy()


SPECIAL = {
    "log": [0.0, -0.0, -1.5, np.inf, -np.inf, np.nan, "subnormal"],
    "log1p": [-1.0, -2.0, np.inf, -np.inf, np.nan, 0.0, "subnormal"],
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["log", "log1p"])
def test_a_special_lane_leaves_its_neighbours_bits_alone(op, dtype):
    base = _ordinary(op, dtype)
    want = _run(op, base)
    for special in SPECIAL[op]:
        value = np.finfo(dtype).smallest_subnormal * 3 if special == "subnormal" else special
        for at in (0, 5, 17, N - 1):  # first lane, inside a vector, a later vector, the tail
            a = base.copy()
            a[at] = value
            got = _run(op, a)
            others = np.arange(N) != at
            assert got[others].tobytes() == want[others].tobytes(), (special, at)
            with np.errstate(divide="ignore", invalid="ignore"):
                exact = getattr(np, op)(a[at:at + 1].astype(np.float64))[0]
            if np.isnan(exact):
                assert np.isnan(got[at]), (special, at)
            elif np.isinf(exact) or exact == 0:
                assert got[at] == exact and np.signbit(got[at]) == np.signbit(exact), \
                    (special, at, got[at])
            else:  # a subnormal input: finite, within the documented ulp of float64's
                assert np.isclose(got[at], exact, rtol=2 * np.finfo(dtype).eps, atol=0), (special, at)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_of_the_ends_of_the_normal_range(dtype):
    fi = np.finfo(dtype)
    edges = np.array([fi.smallest_normal, np.nextafter(fi.smallest_normal, 0, dtype=dtype),
                      fi.max, 1.0, np.nextafter(dtype(1), 2, dtype=dtype)] * 8, dtype=dtype)
    got = dispatch.log(dispatch.from_numpy(edges)).numpy()
    exact = np.log(edges.astype(np.longdouble))
    assert np.all(np.abs(got - exact) <= np.abs(exact) * fi.eps), got
