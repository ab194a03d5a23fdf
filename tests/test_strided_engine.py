"""One strided engine (Note [One strided engine] in sources/core/strided.c) and
one reduction check (Note [One reduction check] in sources/iterator/reduce_check.c):
copy_, fill_, the integer reductions, the reductions' gathers and dot all walk
their operands through the same plan; NumPy is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatch
from dispatch import iterator
from dispatch._core import ffi, lib

ops = dispatch.ops


@pytest.fixture
def threads():
    """Restore the thread count after a test that changes it."""
    before = iterator.get_num_threads()
    yield
    iterator.set_num_threads(before)


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------- copy_ / fill_

@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 2, 1), (2, 0, 1)])
def test_copy_into_any_permuted_destination_matches_numpy(perm):
    src = rng().standard_normal((3, 4, 5)).astype(np.float32)
    base = np.zeros([(3, 4, 5)[p] for p in np.argsort(perm)], np.float64)
    dst = dispatch.from_numpy(base).permute(*np.argsort(np.argsort(perm)).tolist())
    # dst is a permuted (non-contiguous) view of shape (3, 4, 5)
    assert tuple(dst.shape) == (3, 4, 5)
    dst.copy_(dispatch.from_numpy(src.transpose(2, 0, 1).copy()).permute(1, 2, 0))
    np.testing.assert_array_equal(dst.numpy(), src.astype(np.float64))


def test_copy_of_a_broadcast_row_into_a_stepped_view_matches_numpy():
    base = np.zeros((6, 8), np.int32)
    view = dispatch.from_numpy(base)[::2, 1::3]
    row = np.arange(view.shape[1], dtype=np.int16)
    view.copy_(dispatch.from_numpy(row))
    want = np.zeros((6, 8), np.int32)
    want[::2, 1::3] = row
    np.testing.assert_array_equal(base, want)


def test_fill_of_a_transposed_stepped_view_touches_only_its_elements():
    base = np.zeros((5, 7), np.float64)
    dispatch.from_numpy(base)[1::2, ::3].transpose(0, 1).fill_(2.5)
    want = np.zeros((5, 7))
    want[1::2, ::3] = 2.5
    np.testing.assert_array_equal(base, want)


# ------------------------------------------------------ integer reductions

@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dims", [[0], [1], [2], [0, 2], [2, 0], [0, 1, 2]])
def test_integer_reduction_of_a_permuted_view_matches_numpy(dtype, op, dims):
    a = rng(1).integers(-100, 100, (4, 3, 5)).astype(dtype)
    t = dispatch.from_numpy(a.transpose(2, 0, 1).copy()).permute(1, 2, 0)  # a, strided
    got = getattr(ops, op)(t, dims).numpy()
    npop = {"sum": np.sum, "max": np.max, "min": np.min}[op]
    want = npop(a.astype(np.int64) if op == "sum" else a, axis=tuple(dims))
    np.testing.assert_array_equal(got, want)


def test_integer_sum_keepdim_wraps_like_numpy():
    a = np.full((3, 4), 2**62, np.int64)
    got = ops.sum(dispatch.from_numpy(a), [1], keepdim=True).numpy()
    np.testing.assert_array_equal(got, a.sum(axis=1, keepdims=True))


# ---------------------------------------------------------------- gathers

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_over_non_adjacent_dims_is_the_same_bits_for_any_thread_count(threads, dtype):
    a = rng(2).standard_normal((8, 300, 40)).astype(dtype)  # dims 0, 2: the gather path
    t = dispatch.from_numpy(a)
    got = {}
    for n in (1, 2, 3):
        dispatch.set_num_threads(n)
        got[n] = ops.sum(t, [0, 2]).numpy().tobytes()
    assert got[1] == got[2] == got[3]
    np.testing.assert_allclose(np.frombuffer(got[1], dtype), a.astype(np.float64).sum(axis=(0, 2)),
                               rtol=1e-4, atol=1e-3)


# -------------------------------------------------------------------- dot

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dot_of_stepped_views_is_the_same_bits_for_any_thread_count(threads, dtype):
    a = rng(3).standard_normal(200_001).astype(dtype)
    b = rng(4).standard_normal(400_002).astype(dtype)
    ta, tb = dispatch.from_numpy(a), dispatch.from_numpy(b)[::2]
    got = {}
    for n in (1, 2, 3):
        dispatch.set_num_threads(n)
        got[n] = ops.dot(ta, tb).numpy().tobytes()
    assert got[1] == got[2] == got[3]
    exact = np.dot(a.astype(np.float64), b[::2].astype(np.float64))
    np.testing.assert_allclose(float(np.frombuffer(got[1], dtype)[0]), exact,
                               rtol={np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-12}[dtype])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_dot_of_strided_views_wraps_like_numpy(dtype):
    info = np.iinfo(dtype)
    a = rng(5).integers(info.min, info.max, 1001, endpoint=True).astype(dtype)
    b = rng(6).integers(info.min, info.max, 2002, endpoint=True).astype(dtype)
    got = ops.dot(dispatch.from_numpy(a), dispatch.from_numpy(b)[::2]).item()
    assert got == np.dot(a, b[::2])


def test_dot_of_empty_vectors_is_zero():
    e = dispatch.from_numpy(np.zeros(0, np.float32))
    assert ops.dot(e, e).item() == 0.0
    ei = dispatch.from_numpy(np.zeros(0, np.int32))
    assert ops.dot(ei, ei).item() == 0


# ------------------------------------------------------- one reduction check

def _check(opname, op, shape, dims=None, mask=0, keepdim=False):
    shp = ffi.new("int64_t[]", list(shape) or [0])
    m = ffi.new("uint32_t *", mask)
    dl = ffi.new("int64_t[]", list(dims)) if dims is not None else ffi.NULL
    ond, oshape, count = ffi.new("int *"), ffi.new("int64_t[16]"), ffi.new("int64_t *")
    name = ffi.new("char[]", opname.encode()) if opname else ffi.NULL
    rc = lib.dispatch_iter_reduce_check(name, op, len(shape), shp, len(dims or ()), dl, m,
                                        int(keepdim), ond, oshape, count)
    if rc != 0:
        iterator._raise()
    return m[0], tuple(oshape[i] for i in range(ond[0])), count[0]


def test_reduction_check_gives_mask_shape_and_count_from_a_dim_list():
    assert _check("sum", 0, (2, 3, 4), dims=[-1, 0]) == (0b101, (3,), 8)
    assert _check("sum", 0, (2, 3, 4), dims=[1], keepdim=True) == (0b010, (2, 1, 4), 3)
    assert _check("sum", 0, (2, 3, 4), dims=[]) == (0b111, (), 24)  # [] is every dim
    assert _check(None, 0, (2, 3), mask=0b01) == (0b01, (3,), 2)
    assert _check("sum", 0, (), dims=[-1]) == (0, (), 1)  # a 0-dim tensor takes dim 0 / -1


def test_reduction_check_phrases_errors_for_the_operator_or_the_engine():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        _check("sum", 0, (2, 3), dims=[2])
    with pytest.raises(IndexError, match="dim 2 out of range for 2 dims"):
        _check(None, 0, (2, 3), dims=[2])
    with pytest.raises(ValueError, match="sum: dim 1 appears multiple times"):
        _check("sum", 0, (2, 3), dims=[1, -1])
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 1 to have non-zero"):
        _check("max", 2, (2, 0), dims=[1])
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        _check("max", 2, (2, 0), dims=[])
    with pytest.raises(ValueError, match="min of an empty set"):
        _check(None, 3, (2, 0), mask=0b10)
    with pytest.raises(IndexError, match="reduction dims out of range for 2 dims"):
        _check(None, 0, (2, 3), mask=0b100)
    with pytest.raises(ValueError, match="unknown reduction 7"):
        _check(None, 7, (2, 3), mask=1)


def test_operator_and_engine_agree_on_the_reduced_shape():
    a = rng(7).standard_normal((2, 3, 4))
    for dims, keep in (([1], False), ([0, 2], True), ([-1], True)):
        t = ops.sum(dispatch.from_numpy(a), dims, keepdim=keep).numpy()
        out = np.empty(t.shape)
        iterator.reduce("sum", a, out, dims=tuple(dims), keepdim=keep)
        np.testing.assert_array_equal(out, t)


def test_engine_reduce_of_a_0dim_array_takes_dim_0():
    out = np.zeros(())
    iterator.reduce("sum", np.full((), 3.0), out, dims=(0,))
    assert out == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_argmax_argmin_of_a_permuted_view_with_ties_match_numpy(dtype, dim):
    a = rng(8).integers(0, 3, (4, 5, 6)).astype(dtype)  # many ties: the first one wins
    if np.issubdtype(dtype, np.floating):
        a[1, 2, 3] = np.nan
    t = dispatch.from_numpy(a.transpose(1, 2, 0).copy()).permute(2, 0, 1)  # a, strided
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(ops, name)(t, dim).numpy(),
                                      getattr(np, name)(a, axis=dim))
    vals, idx = ops.max(t, dim)
    np.testing.assert_array_equal(idx.numpy(), np.argmax(a, axis=dim))
    np.testing.assert_array_equal(vals.numpy(), np.max(a, axis=dim))
