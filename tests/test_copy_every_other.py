"""Note [Every other element by mask] (sources/kernels/gather_bits.h): a copy
between two views of every other element, a contiguous run copied or cast
into one (x[:, ::2].copy_(y)), and fill_ of one, move the even elements
under a byte mask (AVX-512) and leave the ones between untouched.
The bits are
NumPy's for every dtype, for runs shorter than a vector, a vector's length
and odd tails, into views whose gaps hold a sentinel that must survive, and
between overlapping views of one buffer (the input read before it is
overwritten), at 1 and 2 threads."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import bits  # noqa: E402

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
WIDTHS = [1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 517]


def _random(dtype: str, shape: tuple, seed: int) -> "dispatch.Tensor":
    x = np.random.default_rng(seed).uniform(-200.0, 200.0, shape).astype(np.float32)
    x.flat[::7] = 0.0
    return dispatch.from_numpy(x).to(getattr(dispatch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_other_column_copied_with_the_gaps_untouched(threads, dtype):
    for nthreads in (1, 2):
        threads(nthreads)
        for w in WIDTHS:
            src = _random(dtype, (5, 2 * w), 1)
            dst = _random(dtype, (5, 2 * w), 2)
            want = bits(dst).copy()
            want[:, ::2] = bits(src)[:, ::2]
            dst[:, ::2].copy_(src[:, ::2])
            got = bits(dst)
            assert np.array_equal(got, want), f"{dtype} width {w} {nthreads}t"


@pytest.mark.parametrize("dtype", DTYPES)
def test_contiguous_rows_copied_into_every_other_column(threads, dtype):
    for nthreads in (1, 2):
        threads(nthreads)
        for w in WIDTHS:
            src = _random(dtype, (5, w), 1)
            dst = _random(dtype, (5, 2 * w), 2)
            want = bits(dst).copy()
            want[:, ::2] = bits(src)
            dst[:, ::2].copy_(src)
            assert np.array_equal(bits(dst), want), f"{dtype} width {w} {nthreads}t"


# casts whose strided output is packed in chunks and spread back (the cast
# loops and float16's own float32 <-> float16 casts); the contiguous cast's
# bits are the reference
@pytest.mark.parametrize("src_dtype,dtype", [
    ("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"),
    ("float32", "int16"), ("float64", "float32"), ("int32", "int8"), ("float64", "float16"),
    ("int64", "uint8")])
def test_casts_into_every_other_column(src_dtype, dtype):
    for w in WIDTHS:
        src = _random(src_dtype, (5, w), 4)
        dst = _random(dtype, (5, 2 * w), 5)
        want = bits(dst).copy()
        want[:, ::2] = bits(src.to(getattr(dispatch, dtype)))
        dst[:, ::2].copy_(src)
        assert np.array_equal(bits(dst), want), f"{src_dtype} -> {dtype} width {w}"
        # and back, from every other column into a run: the contiguous cast's bits
        back = dst[:, ::2].to(getattr(dispatch, src_dtype))
        assert np.array_equal(bits(back), bits(dst[:, ::2].contiguous().to(
            getattr(dispatch, src_dtype))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_of_every_other_column_leaves_the_gaps(threads, dtype):
    value = {"bool": True, "float16": -2.5, "bfloat16": 1.5e30, "float32": 3.25,
             "float64": -1e300}.get(dtype, -7)
    for nthreads in (1, 2):
        threads(nthreads)
        for w in WIDTHS:
            dst = _random(dtype, (5, 2 * w), 3)
            want = bits(dst).copy()
            want[:, ::2] = bits(dispatch.full((5, w), value, dtype=getattr(dispatch, dtype)))
            dst[:, ::2].fill_(value)
            assert np.array_equal(bits(dst), want), f"{dtype} width {w} {nthreads}t"


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64"])
@pytest.mark.parametrize("shift", [1, 2, 3, -1, -2])
def test_overlapping_every_other_views_read_before_they_write(dtype, shift):
    n = 200
    base = np.arange(2 * n + 8).astype(dtype)
    z = dispatch.from_numpy(base.copy())
    lo, hi = (2 * shift, 0) if shift > 0 else (0, -2 * shift)
    z[lo:lo + 2 * n - 1:2].copy_(z[hi:hi + 2 * n - 1:2])
    want = base.copy()
    want[lo:lo + 2 * n - 1:2] = base[hi:hi + 2 * n - 1:2].copy()
    assert np.array(z).tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64"])
@pytest.mark.parametrize("shift", [0, 1, 3, 50, 199, -1, -7])
def test_a_run_overlapping_the_every_other_view_it_fills(dtype, shift):
    n, off = 200, 8
    base = np.arange(3 * n + 8).astype(dtype)
    z = dispatch.from_numpy(base.copy())
    z[off:off + 2 * n - 1:2].copy_(z[off + shift:off + shift + n])
    want = base.copy()
    want[off:off + 2 * n - 1:2] = base[off + shift:off + shift + n].copy()
    assert np.array(z).tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64"])
def test_every_other_views_past_the_caches(threads, dtype):
    """Calls whose stores walk 8 MiB or more ask for their lines ahead of the
    masked stores (Note [Masked accesses ask for their lines]): fill_, a copy
    between two such views and a run spread into one keep NumPy's bits and
    the gaps to the last element, whose asks reach past the buffer's end;
    2-D views (a tail a row) and 1-D ones, at 1 and 2 threads (17 MiB of
    stores a call: each thread's part walks 8.5 MiB, past the mark too)."""
    z = np.dtype(dtype).itemsize
    w = 513
    rows = (17 << 20) // (2 * w * z) + 1  # both threads' parts walk 8.5 MiB or more
    value = -7 if dtype.startswith("int") else -1.5
    for nthreads in (1, 2):
        threads(nthreads)
        for shape, view in (((rows, 2 * w), np.s_[:, ::2]),
                            ((rows * 2 * w + 1,), np.s_[::2])):
            cut = (rows, w) if len(shape) == 2 else ((shape[0] + 1) // 2,)
            dst, src, run = _random(dtype, shape, 6), _random(dtype, shape, 7), \
                _random(dtype, cut, 8)
            want = bits(dst).copy()
            dst[view].fill_(value)
            want[view] = bits(dispatch.full(cut, value, dtype=getattr(dispatch, dtype)))
            assert np.array_equal(bits(dst), want), f"fill {shape} {nthreads}t"
            dst[view].copy_(src[view])
            want[view] = bits(src)[view]
            assert np.array_equal(bits(dst), want), f"copy {shape} {nthreads}t"
            dst[view].copy_(run)
            want[view] = bits(run)
            assert np.array_equal(bits(dst), want), f"spread {shape} {nthreads}t"
