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


def _slab_views(dtype: str):
    """Views with no unit-stride dim whose dense copies are several of the
    copy's slabs (Note [Gathered reductions by slabs]: 512 KiB), the last one
    partial: (name, view, dims) with the dims to reduce, outermost kept."""
    k = 8 // _itemsize(dtype)  # the same slab count for every dtype
    m = _tensor(dtype, (2500 * k, 460), 3)[:, ::2]  # rows of 230
    c = _tensor(dtype, (23 * k, 60, 300), 4)[:, :, ::2]
    u = _tensor(dtype, (1, 1300 * k, 500), 5)[:, :, ::2]  # a unit dim before the kept one
    return [("every other column", m, [1, [1]]), ("3-D", c, [2, [1, 2]]),
            ("a unit dim first", u, [2, [0, 2]])]


def _itemsize(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_a_gathered_view_copied_by_slabs_keeps_its_contiguous_copys_bits(threads, dtype):
    """Reduced over inner dims, a large gathered view is copied and reduced a
    slab of its outermost dim at a time: every value (and max/min's index,
    argmax's) is the view's contiguous copy's, with keepdim or not, at 1 and
    2 threads, slab boundaries included."""
    for n in (1, 2):
        threads(n)
        for name, view, dims in _slab_views(dtype):
            dense = view.contiguous()
            assert view.numel() * _itemsize(dtype) > 2 * 512 * 1024
            for dim in dims:
                for keepdim in (False, True):
                    what = f"{dtype} {name} dim={dim} keepdim={keepdim} {n}t"
                    calls = [("amax", lambda t: dispatch.amax(t, dim, keepdim)),
                             ("prod", lambda t: dispatch.prod(t, dim, keepdim)
                              if isinstance(dim, int) else None),
                             ("sum", lambda t: dispatch.sum(t, dim, keepdim))]
                    if isinstance(dim, int):
                        calls += [("max", lambda t: dispatch.max(t, dim, keepdim)),
                                  ("argmin", lambda t: dispatch.argmin(t, dim, keepdim))]
                    for op, call in calls:
                        got, want = call(view), call(dense)
                        if got is None:
                            continue
                        pairs = zip(got, want) if isinstance(got, tuple) else [(got, want)]
                        for g, w in pairs:
                            assert g.shape == w.shape and g.dtype == w.dtype, f"{op} {what}"
                            assert np.array_equal(bits(g), bits(w)), f"{op} {what}"


def _zeros_and_nans(dtype: str, shape: tuple, seed: int, nans: bool):
    """Small values, many of them zeros of both signs (max/min answer with
    the first zero met), and with nans a few NaNs of other payloads and signs
    (the first NaN met), spread over the whole array."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, shape).astype(np.float32)
    a[rng.random(shape) < 0.3] = -0.0
    if nans:
        flat = a.reshape(-1)
        where = rng.choice(flat.size, 12, replace=False)
        payloads = np.array([0x7FC00001, 0xFFC00002, 0x7FC40000, 0xFFE00000], np.uint32)
        flat.view(np.uint32)[where] = payloads[np.arange(12) % 4]
    t = dispatch.from_numpy(a)
    return t if dtype == "float32" else t.to(getattr(dispatch, dtype))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "float16",
                                   "bfloat16", "float32", "float64"])
def test_a_gathered_view_reduced_over_its_outer_dim_by_slabs_keeps_the_copys_bits(threads,
                                                                                  dtype):
    """Reduced over its outermost dim, a large gathered view's exact
    reductions (integer sums, products, max and min; float max and min) are
    copied and reduced a slab at a time and joined: the contiguous copy's
    values, the first NaN and the first zero of max/min included, at 1 and
    2 threads. Float sums and means over one outer dim are cut along the
    column kernels' tree, the parts added in its order; other float sums and
    products take the whole copy: the same bits."""
    k = 8 // _itemsize(dtype)
    shapes = [((2500 * k, 460), (slice(None), slice(None, None, 2)), [None, 0]),
              ((23 * k, 60, 300), (slice(None), slice(None), slice(None, None, 2)),
               [None, 0, [0, 1]]),
              ((1, 1300 * k, 500), (slice(None), slice(None), slice(None, None, 2)),
               [None, 1, [0, 1]]),
              ((50 * k, 20, 300), (slice(None), slice(None), slice(None, None, 2)), [0])]
    floats = dtype.startswith(("float", "bfloat"))
    for n in (1, 2):
        threads(n)
        for i, (shape, index, dims) in enumerate(shapes):
            bases = [_tensor(dtype, shape, 7 + i) if dtype != "float64" else  # sums that round
                     dispatch.from_numpy(np.random.default_rng(7 + i).standard_normal(shape))]
            if floats:
                bases += [_zeros_and_nans(dtype, shape, 7 + i, nans) for nans in (False, True)]
            for base in bases:
                view = base[index]
                dense = view.contiguous()
                for dim in dims:
                    ops = (["amax", "amin", "sum"] + (["mean"] if floats else []) +
                           (["prod"] if not isinstance(dim, list) else []))
                    for op in ops:
                        for keepdim in (False, True):
                            if dim is None:
                                call = lambda t: getattr(dispatch, op)(t)  # noqa: E731
                            else:
                                call = lambda t: getattr(dispatch, op)(t, dim, keepdim)  # noqa: E731
                            got, want = call(view), call(dense)
                            what = f"{op}({dim}, keepdim={keepdim}) {dtype} {shape} {n}t"
                            assert got.shape == want.shape and got.dtype == want.dtype, what
                            assert np.array_equal(bits(got), bits(want)), what


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_indices_over_a_gathered_views_outer_dim_are_joined_by_slabs(threads, dtype):
    """max/min with indices and argmax/argmin over a large gathered view's
    outermost dim (and over all of it) are copied and reduced a slab at a
    time, each slab's indices counted from its first row, and joined by the
    first-NaN, first-of-equal-extremes rule: the contiguous copy's values
    and indices, ties across slabs (few distinct values) and the first NaN
    and zero included, at 1 and 2 threads."""
    k = 8 // _itemsize(dtype)
    shapes = [((2500 * k, 460), (slice(None), slice(None, None, 2)), [None, 0]),
              ((23 * k, 60, 300), (slice(None), slice(None), slice(None, None, 2)), [None, 0]),
              ((1, 1300 * k, 500), (slice(None), slice(None), slice(None, None, 2)), [None, 1])]
    floats = dtype.startswith(("float", "bfloat"))
    for n in (1, 2):
        threads(n)
        for i, (shape, index, dims) in enumerate(shapes):
            bases = [_tensor(dtype, shape, 11 + i)]
            if floats:
                bases += [_zeros_and_nans(dtype, shape, 11 + i, nans) for nans in (False, True)]
            for base in bases:
                view = base[index]
                dense = view.contiguous()
                assert view.numel() * _itemsize(dtype) > 2 * 512 * 1024
                for dim in dims:
                    for op in ("max", "min") + (("argmax", "argmin") if dtype != "bool" else ()):
                        f = getattr(dispatch, op)  # (bool has no argmax, as torch's)
                        for keepdim in ((False,) if dim is None else (False, True)):
                            if dim is None:
                                got, want = f(view), f(dense)
                            else:
                                got, want = f(view, dim, keepdim), f(dense, dim, keepdim)
                            what = f"{op}({dim}, keepdim={keepdim}) {dtype} {shape} {n}t"
                            pairs = zip(got, want) if isinstance(got, tuple) else [(got, want)]
                            for g, w in pairs:
                                assert g.shape == w.shape and g.dtype == w.dtype, what
                                assert np.array_equal(bits(g), bits(w)), what
