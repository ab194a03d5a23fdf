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
    dims = [None] + list(range(ndim)) + ([[0, 2]] if ndim == 3 else [])
    for dim in dims:
        if op == "mean" and dim is None:
            yield "mean()", lambda t: dispatch.mean(t)
        elif dim is None:
            yield f"{op}()", lambda t, op=op: getattr(dispatch, op)(t)
        elif op == "prod" and isinstance(dim, list):
            continue  # prod takes one dim
        else:
            yield f"{op}({dim})", lambda t, op=op, dim=dim: getattr(dispatch, op)(t, dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_gathered_view_reduces_to_its_contiguous_copys_bits(threads, dtype):
    for n in (1, 2):
        threads(n)
        for name, view in _views(dtype):
            dense = view.contiguous()
            assert all(s != 1 for s, k in zip(view.stride(), view.shape) if k > 1)
            for op in OPS:
                if op == "mean" and dtype in DTYPES[:6]:
                    continue  # mean of an integer tensor: an error, as torch's
                for what, call in _calls(op, view.dim()):
                    got, want = call(view), call(dense)
                    assert got.dtype == want.dtype and got.shape == want.shape, what
                    assert np.array_equal(bits(got), bits(want)), f"{what} {dtype} {name} {n}t"


# A view whose elements overlap (as_strided, no unit-stride dim): 2**26
# int32 over 128 KiB of storage, 256 MiB if it were copied dense. It is
# reduced in place: the process's peak resident memory stays where it was.
# (A float32 one is not: reduce_float gathers reduced dims that no one
# stride steps into a buffer of their own, before this change and after.)
_OVERLAP_NOT_COPIED = """
import numpy as np
import dispatch as d
base = np.random.default_rng(5).integers(-1000, 1000, 2**15).astype(np.int32)
shape, step = (2**13, 2**13), (2, 2)
t = d.from_numpy(base).as_strided(shape, step)
v = np.lib.stride_tricks.as_strided(base, shape, (8, 8))
START()
got = (d.amax(t).item(), d.amin(t, 1).numpy(), int(d.argmax(t).item()))
grew = GREW()
assert got[0] == v.max() and np.array_equal(got[1], v.min(1)) and got[2] == int(np.argmax(v))
print(grew)
"""


@LINUX_ONLY
def test_an_overlapping_view_is_reduced_in_place_not_copied():
    assert_grows_under(_OVERLAP_NOT_COPIED, 64 * 1024)
