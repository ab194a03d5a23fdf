"""Reductions of views that step over every other element (x[:, ::2],
x[1::2], stepped 3-D views), read in place: the SUM kernels load every other
element as they sum (Note [Sums of every other element] in
sources/kernels/sum.dispatch.c), the integer kernels fold it in lanes (Note
[Every other integer] in sources/kernels/int_reduce.dispatch.c), and a view
no dim of which steps by one element is summed a range of its tree at a
time (Note [Gathered reductions] in sources/iterator/reduce_plan.c). Each
gives the bits of the same reduction of the view's contiguous copy, for
rows shorter and longer than a leaf and a gather, at 1 and 2 threads; and
no load reads past the view's last element, even where that element ends
its memory (a guard page after it), on every target. Products over the rows
of every other column read it in place too (Note [Product columns of every
other element] in sources/kernels/prod.dispatch.c).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import bits
from _targets import DISABLE, forced_env, runnable
from test_gathered_reductions import assert_as_its_copy

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _base(dtype: str, shape: tuple, seed: int):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 3  # sums round
    return dispatch.from_numpy(a).to(getattr(dispatch, dtype))


def _views(dtype: str):
    """(name, view): every other column of short, leaf-crossing and
    gather-crossing rows, odd starts, 1-D runs, stepped 3-D views."""
    short = _base(dtype, (7, 2 * 13 + 1), 1)
    wide = _base(dtype, (5, 2 * 1500 + 1), 2)  # rows past the float32 leaf (1024)
    long_rows = _base(dtype, (3, 2 * 20000 + 1), 3)  # past a gather of 32 KiB of float64
    flat = _base(dtype, (2 * 300001 + 1,), 4)
    cube = _base(dtype, (6, 40, 2 * 700 + 1), 5)
    return [("short rows", short[:, ::2]), ("odd start", short[:, 1::2]),
            ("wide rows", wide[:, ::2]), ("long rows", long_rows[:, 1::2]),
            ("1-D", flat[::2]), ("1-D odd start", flat[1:200001:2]),
            ("stepped 3-D", cube[::2, 1:, ::2]), ("every other of 3-D", cube[:, :, ::2])]


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_other_element_sums_to_its_contiguous_copys_bits(threads, dtype):
    for n in (1, 2):
        threads(n)
        for name, view in _views(dtype):
            assert_as_its_copy(view, ("sum", "mean"), f"{dtype} {name} {n}t")


def _with_specials(view, seed: int, kind: str):
    """The view with zeros of both signs and infinities tied at the extremes,
    or a NaN here and there (kind), written through its own elements."""
    rng = np.random.default_rng(seed)
    a = view.contiguous().to(dispatch.float64).numpy().copy()
    flat = a.reshape(-1)
    if kind == "zeros":  # every value a signed zero or -1: max ties among zeros
        flat[:] = rng.choice([0.0, -0.0, -1.0], flat.size)
    elif kind == "infinities":
        flat[rng.random(flat.size) < 0.01] = np.inf
        flat[rng.random(flat.size) < 0.01] = -np.inf
    else:  # NaNs, far apart: the first one answers
        flat[rng.integers(0, flat.size, 3)] = np.nan
    view.copy_(dispatch.from_numpy(a).to(view.dtype))
    return view


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_other_float_extremes_are_its_contiguous_copys_bits(threads, dtype):
    """max and min read every other element in place (Note [Extremes of every
    other element] in sources/kernels/sum.dispatch.c): the copy's bits, which
    zero of a tie and which NaN included, over every dim set."""
    for n in (1, 2):
        threads(n)
        for seed, (name, view) in enumerate(_views(dtype)):
            assert_as_its_copy(view, ("amax", "amin"), f"{dtype} {name} {n}t")
            for kind in ("zeros", "infinities", "nans"):
                v = _with_specials(view, seed, kind)
                assert_as_its_copy(v, ("amax", "amin"), f"{dtype} {name} {kind} {n}t")
                dense = v.contiguous().numpy()
                if dense.size and kind != "nans":  # NumPy's values (its zeros' sign aside)
                    assert dispatch.amax(v).item() == dense.max(), (name, kind)
                    assert dispatch.amin(v).item() == dense.min(), (name, kind)


INTEGERS = ["bool", "int32", "int64", "uint8", "int16"]


def _ints(dtype: str, shape: tuple, seed: int):
    rng = np.random.default_rng(seed)
    if dtype == "bool":  # mostly one value, so that max/min read far before they settle
        return dispatch.from_numpy(rng.random(shape) < 0.001)
    info = np.iinfo(dtype)
    return dispatch.from_numpy(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))


@pytest.mark.parametrize("dtype", INTEGERS)
def test_every_other_integer_reduces_to_its_contiguous_copys_values(threads, dtype):
    views = [("rows", _ints(dtype, (9, 2 * 3000 + 1), 1)[:, ::2]),
             ("odd start", _ints(dtype, (40, 2 * 77), 2)[:, 1::2]),
             ("1-D", _ints(dtype, (2 * 200001 + 1,), 3)[::2]),
             ("stepped 3-D", _ints(dtype, (4, 30, 2 * 500 + 1), 4)[::2, 1:, ::2])]
    ops = ["amax", "amin"] + ([] if dtype == "bool" else ["sum"])
    for n in (1, 2):
        threads(n)
        for name, view in views:
            dense = view.contiguous()
            for op in ops:
                for dim in [None] + list(range(view.dim())):
                    f = getattr(dispatch, op)
                    got, want = (f(view), f(dense)) if dim is None else (f(view, dim), f(dense, dim))
                    assert got.dtype == want.dtype, (op, dim)
                    assert np.array_equal(got.numpy(), want.numpy()), f"{op}({dim}) {dtype} {name} {n}t"
    if dtype == "bool":  # all False, all True, one True at the end: max and min read to the end
        for a in (np.zeros(2 * 9001 + 1, bool), np.ones(2 * 9001 + 1, bool)):
            for last in (False, True):
                a[-1] = last
                v = dispatch.from_numpy(a)[::2]
                assert dispatch.amax(v).item() == a[::2].max()
                assert dispatch.amin(v).item() == a[::2].min()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_other_column_products_are_its_contiguous_copys_bits(threads, dtype):
    """prod over the rows of x[:, ::2] reads the columns in place (Note
    [Product columns of every other element] in sources/kernels/prod.dispatch.c):
    the copy's bits, NaN, infinities and signed zeros included, for columns
    past a fold block of rows (4096) and past the kernel's narrow form (128
    columns), at 1 and 2 threads."""
    rng = np.random.default_rng(11)

    def near_one(shape, specials=False):
        a = rng.uniform(0.999, 1.001, shape) * rng.choice([1.0, -1.0], shape, p=[0.9, 0.1])
        if specials:
            flat = a.reshape(-1)
            flat[rng.integers(0, flat.size, 8)] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], 8)
        return dispatch.from_numpy(a).to(getattr(dispatch, dtype))

    views = [("short", near_one((7, 2 * 13 + 1), True)[:, ::2]),
             ("odd start", near_one((33, 2 * 70), True)[:, 1::2]),
             ("past a block", near_one((4096 + 300, 2 * 9 + 1))[:, ::2]),
             ("wide", near_one((64, 2 * 700 + 1), True)[:, ::2]),
             ("3-D", near_one((5, 6, 2 * 40 + 1), True)[:, :, ::2])]
    for n in (1, 2):
        threads(n)
        for name, v in views:
            dense = v.contiguous()
            for dim in range(v.dim() - 1):
                got, want = dispatch.prod(v, dim), dispatch.prod(dense, dim)
                assert got.shape == want.shape, name
                assert np.array_equal(bits(got), bits(want)), f"prod({dim}) {dtype} {name} {n}t"


def test_every_other_element_sums_as_numpy_does_within_rounding():
    a = np.random.default_rng(7).standard_normal((64, 4001))
    v = dispatch.from_numpy(a)[:, ::2]
    np.testing.assert_allclose(dispatch.sum(v).item(), a[:, ::2].sum(), rtol=1e-12)
    np.testing.assert_allclose(dispatch.sum(v, 1).numpy(), a[:, ::2].sum(1), rtol=1e-12)


# A view whose last element is the last of its memory, a PROT_NONE page after
# it: a load of a vector past that element faults (SIGSEGV), in the child.
_GUARDED = r"""
import ctypes, mmap, sys
import numpy as np
import dispatch as d
page = mmap.PAGESIZE
buf = mmap.mmap(-1, 2 * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
libc = ctypes.CDLL(None, use_errno=True)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
assert libc.mprotect(ctypes.c_void_p(addr + page), page, 0) == 0
for dtype in ("float16", "float32", "float64", "int32", "int64", "bool"):
    size = np.dtype(dtype).itemsize
    n = page // size - 1  # odd: [::2] ends on the page's last element
    a = np.frombuffer(buf, dtype, count=n, offset=page - n * size)
    a[:] = (np.arange(n) % 7) if dtype != "bool" else False
    flat = d.from_numpy(a)[::2]
    rows = d.from_numpy(a[-(31 * 15):]).reshape(15, 31)[:, ::2]  # ends on the last too
    calls = (d.amax, d.amin) if dtype == "bool" else (d.sum, d.amax, d.amin) + \
        ((d.prod,) if dtype.startswith("float") else ())
    for v in (flat, rows, flat[-37:], flat[-8:]):
        dense = v.contiguous()
        for f in calls:
            for got, want in ((f(v), f(dense)), (f(v, -1), f(dense, -1)), (f(v, 0), f(dense, 0))):
                assert np.array_equal(got.numpy(), want.numpy()), (dtype, f, v.shape)
print("ok")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through libc: Linux")
@pytest.mark.parametrize("target", list(DISABLE))
def test_no_load_reads_past_a_views_last_element(target):
    if not runnable(target):
        pytest.skip(f"this CPU cannot run {target}")
    # cwd outside the checkout: `python -c` puts cwd first on sys.path, and
    # from the repository root that is the source dispatch/, not the build.
    r = subprocess.run([sys.executable, "-c", _GUARDED], capture_output=True, text=True,
                       timeout=120, env=forced_env(target), check=False,
                       cwd=tempfile.gettempdir())
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])
