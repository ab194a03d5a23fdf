"""Reductions of views with no unit-stride dim (every other column, stepped
3-D views), which are copied dense before they are reduced (Note [Gathered
reductions] in sources/iterator/reduce_plan.c): the same bits as the
reduction of the view's contiguous copy, for every reduction, dtype and dim
set, at 1 and 2 threads, on values whose sums round (so that an order of
additions other than the documented one would show)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import bits
from _peak_memory import LINUX_ONLY, assert_grows_under

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
OPS = ["sum", "mean", "prod", "amax", "amin"]


def _tensor(dtype: str, shape: tuple, seed: int):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return dispatch.from_numpy(rng.random(shape) < 0.5)
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        a = rng.standard_normal(shape).astype(np.float32) * 3  # sums round
        a.reshape(-1)[::97] = 1.0 + 2.0**-7  # products near one keep their bits
        return dispatch.from_numpy(a).to(getattr(dispatch, dtype))
    return dispatch.from_numpy(rng.integers(-3, 4, shape).astype(dtype))


def _views(dtype: str):
    """(name, view) pairs whose views have no unit-stride dim."""
    m = _tensor(dtype, (70, 600), 1)
    c = _tensor(dtype, (6, 50, 90), 2)
    return [("every other column", m[:, ::2]), ("every third row and column", m[::3, 1::3]),
            ("stepped 3-D", c[::2, 1:, ::2])]


def _calls(op: str, ndim: int):
    dims = [None] + list(range(ndim)) + ([[0, 2], [1, 2]] if ndim == 3 else [])
    for dim in dims:
        if op == "mean" and dim is None:
            yield "mean()", lambda t: dispatch.mean(t)
        elif dim is None:
            yield f"{op}()", lambda t, op=op: getattr(dispatch, op)(t)
        elif op == "prod" and isinstance(dim, list):
            continue  # prod takes one dim
        else:
            yield f"{op}({dim})", lambda t, op=op, dim=dim: getattr(dispatch, op)(t, dim)


def assert_as_its_copy(view, ops, label: str) -> None:
    """Each reduction of ops over every dim set gives the view's contiguous
    copy's dtype, shape and bits."""
    dense = view.contiguous()
    for op in ops:
        for what, call in _calls(op, view.dim()):
            got, want = call(view), call(dense)
            assert got.dtype == want.dtype and got.shape == want.shape, what
            assert np.array_equal(bits(got), bits(want)), f"{what} {label}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_gathered_view_reduces_to_its_contiguous_copys_bits(threads, dtype):
    ops = [op for op in OPS if op != "mean" or dtype not in DTYPES[:6]]  # integer mean: an error
    for n in (1, 2):
        threads(n)
        for name, view in _views(dtype):
            assert all(s != 1 for s, k in zip(view.stride(), view.shape) if k > 1)
            assert_as_its_copy(view, ops, f"{dtype} {name} {n}t")


# A view whose elements overlap (as_strided, no unit-stride dim): 2**26
# elements over 128 KiB of storage, 256 MiB of int32 or float32 (512 MiB of
# float64) if it were copied dense. It is reduced in place, a bounded chunk
# at a time: the process's peak resident memory stays where it was. (float32
# and float64 gathered their reduced dims into a buffer of the view's size
# before the rows of reduce_narrow.c read them in place.)
_OVERLAP_NOT_COPIED = """
import numpy as np
import dispatch as d
DTYPE = %r
base = (np.random.default_rng(5).integers(-1000, 1000, 2**15) / 4).astype(DTYPE)
shape = (2**13, 2**13)
t = d.from_numpy(base).as_strided(shape, (2, 2))
v = np.lib.stride_tricks.as_strided(base, shape, (2 * base.itemsize,) * 2)
START()
got = (d.amax(t).item(), d.amin(t, 1).numpy(), int(d.argmax(t).item()), d.max(t).item())
if DTYPE != "int32":
    got += (d.sum(t).item(), d.mean(t).item())
grew = GREW()
assert got[0] == v.max() and np.array_equal(got[1], v.min(1)) and got[2] == int(np.argmax(v))
assert got[3] == v.max()
if DTYPE != "int32":  # within float32's rounding of 2**26 terms
    assert np.isclose(got[4], v.sum(dtype=np.float64), rtol=1e-5)
    assert np.isclose(got[5], v.mean(dtype=np.float64), rtol=1e-5)
print(grew)
"""


@LINUX_ONLY
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_an_overlapping_view_is_reduced_in_place_not_copied(dtype):
    assert_grows_under(_OVERLAP_NOT_COPIED % dtype, 64 * 1024)


def _special_values(dtype: str, n: int, seed: int, sign: int, first_zero: float) -> np.ndarray:
    """Values of one sign (so that max or min is a zero) whose first element
    is the zero `first_zero` and every other zero of the other sign, and NaNs
    of several payloads and signs: which zero and which NaN max/min answer
    with is the first met."""
    rng = np.random.default_rng(seed)
    a = (sign * rng.integers(0, 4, n)).astype(dtype)
    a[a == 0] = -first_zero
    a[0] = first_zero
    u = np.dtype("uint32" if dtype == "float32" else "uint64")
    nans = (np.array([0x7FC00001, 0xFFC00002, 0x7FC00003], "uint32") if dtype == "float32" else
            np.array([0x7FF8000000000001, 0xFFF8000000000002, 0x7FF8000000000003], "uint64"))
    idx = rng.choice(np.arange(1, n), 6, replace=False)
    a.view(u)[idx] = nans[np.arange(6) % 3].astype(u)
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_overlapping_views_extremes_are_its_dense_copys_bits(threads, dtype):
    """max/min of a float view read in place (its elements overlap, so it is
    not copied): the first NaN, else the first of equal extremes, as over
    its dense copy, for every dim, at 1 and 2 threads."""
    datas = []
    for sign in (1, -1):
        for first_zero in (0.0, -0.0):
            base = _special_values(dtype, 6000, 9, sign, first_zero)
            datas += [base, np.where(np.isnan(base), sign * 1.0, base).astype(dtype)]
    for data in datas:
        t = dispatch.from_numpy(data).as_strided((300, 2500), (3, 2))  # rows overlap
        dense = dispatch.from_numpy(np.ascontiguousarray(
            np.lib.stride_tricks.as_strided(data, (300, 2500), (3 * data.itemsize, 2 * data.itemsize))))
        for n in (1, 2):
            threads(n)
            for op in ("amax", "amin", "max", "min"):
                f = getattr(dispatch, op)
                for dim in (None, 0, 1):
                    got, want = (f(t), f(dense)) if dim is None else (f(t, dim), f(dense, dim))
                    if isinstance(got, tuple) or hasattr(got, "values"):
                        got, want = got[0], want[0]
                    assert np.array_equal(bits(got), bits(want)), f"{op}({dim}) {dtype} {n}t"
