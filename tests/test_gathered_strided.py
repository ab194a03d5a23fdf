"""Note [Gathered strided inputs] (sources/iterator/iterator.c): sqrt and the
exp/log family copy a strided input (and a strided output) through chunk
buffers and run their contiguous vector loop there. The results are the
bits of the contiguous run, for every floating dtype, for views stepped
and transposed, written to a fresh tensor, to a strided out= and in
place, across chunk boundaries, at 1 and 2 threads."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import assert_same_bits  # noqa: E402

OPS = ["sqrt", "exp", "log", "expm1", "log1p", "tanh"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def _base(dtype: str, n: int) -> "dispatch.Tensor":
    rng = np.random.default_rng(5)
    x = rng.uniform(0.01, 4.0, n).astype(np.float32)
    x[::97] = np.nan
    x[5], x[6], x[7], x[8], x[9] = np.inf, 0.0, -0.0, 1e-30, 88.0
    return dispatch.from_numpy(x).to(getattr(dispatch, dtype))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_views_give_the_contiguous_bits(threads, op, dtype):
    f = getattr(dispatch, op)
    n = 3 * 1024 * 2 + 37  # past the chunk (1024) several times, odd tail
    base = _base(dtype, 2 * n)
    views = {
        "stepped": base[::2],
        "every third": base[1::3],
        "transposed": base[: 6 * 1021].reshape(6, 1021).permute(1, 0),
    }
    for nthreads in (1, 2):
        threads(nthreads)
        for name, v in views.items():
            want = f(v.contiguous())
            got = f(v)
            assert_same_bits(got, want, f"{op} {dtype} {name} {nthreads}t")


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_out_and_in_place_give_the_contiguous_bits(threads, dtype):
    n = 5000
    for nthreads in (1, 2):
        threads(nthreads)
        for op in OPS:
            f = getattr(dispatch, op)
            src = _base(dtype, 2 * n)[::2]
            want = f(src.contiguous())
            # a strided out=
            out_base = dispatch.zeros(3 * n, dtype=getattr(dispatch, dtype))
            out = out_base[::3]
            f(src, out=out)
            assert_same_bits(out, want, f"{op} {dtype} out= {nthreads}t")
            # in place on a strided view (out= its own input)
            x = _base(dtype, 2 * n)
            f(x[::2], out=x[::2])
            assert_same_bits(x[::2], want, f"{op} {dtype} in place {nthreads}t")
            assert_same_bits(x[1::2], _base(dtype, 2 * n)[1::2], "untouched")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_other_element_read_by_the_loop_gives_the_contiguous_bits(threads, op, dtype):
    """Note [Every other element in the loop]: x[::2] into a new tensor is
    read by the loop itself, two loads a vector; each length up to past two
    AVX-512 vectors and a view ending on its storage's last element (the
    loads stop a vector early; the sanitizer job sees a read past it)."""
    f = getattr(dispatch, op)
    for nthreads in (1, 2):
        threads(nthreads)
        for n in [*range(1, 70), 1023, 1024, 1025, 4099]:
            v = _base(dtype, 2 * n + 9)[-(2 * n - 1):][::2]  # ends on storage's last element
            assert_same_bits(f(v), f(v.contiguous()), f"{op} {dtype} n={n} {nthreads}t")
    rows = _base(dtype, 64 * 130).reshape(64, 130)[:, ::2]  # rows of 65: the 2-D loop
    assert_same_bits(f(rows), f(rows.contiguous()), f"{op} {dtype} rows")
