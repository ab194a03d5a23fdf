"""Outputs larger than a core's share of the cache (Note [Stores past the
caches] in sources/kernels/line_head.h): from 16 MiB written in a call on
(a fill on AMD's Zen 3 and Zen 4: 64 MiB), fill_, copy_ (contiguous, of a
row or a column into a matrix, of a 0-d tensor), clone and a cast between
integers of one width write in streaming stores, on whole lines, the partial lines
at a run's ends in plain ones. Every element gets its bits and nothing
outside the output is written, at 1 and 2 threads (each of the two threads'
halves is past either threshold too), on runs and rows that start and end
off a line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import assert_same_bits  # noqa: E402

# 129 MiB and a ragged tail: two threads' halves each write past 64 MiB
BYTES = 129 << 20
VALUES = {"uint8": 0xA7, "int16": -12345, "float32": -1.5, "int64": -(1 << 40) - 3,
          "float16": 0.333, "bool": True}
# a row of a matrix: past DK_STREAM_RUN_MIN bytes for every dtype, and not a
# whole number of vectors
COLUMNS = 4096 + 3


def random_bits(dt: np.dtype, shape, seed: int) -> np.ndarray:
    """Elements of every bit pattern (NaNs among the floats), bool's 0 and 1."""
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    count = int(np.prod(shape)) * dt.itemsize
    return rng.integers(0, 256, count, dtype=np.uint8).view(dt).reshape(shape)


def zero_rows(dt: np.dtype, columns: int = COLUMNS) -> np.ndarray:
    """A matrix of `columns` and an odd number of rows, BYTES or more, plus a
    sentinel row above and below."""
    rows = (BYTES // (columns * dt.itemsize) + 1) | 1
    return np.zeros((rows + 2, columns), dt)


@pytest.mark.parametrize("how", ["fill_", "copy_"])
@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("name", list(VALUES))
def test_a_fill_past_the_caches_writes_every_element_and_nothing_else(name, count, how,
                                                                       threads):
    threads(count)
    dt = np.dtype(name)
    n = BYTES // dt.itemsize + 77
    base = np.zeros(n + 2, dt)  # one sentinel each side
    ours = dispatch.from_numpy(base)  # shares base's memory
    view = ours[1:-1]  # starts one element past base's start: off a vector boundary
    value = VALUES[name]
    if how == "fill_":
        view.fill_(value)
    else:
        view.copy_(dispatch.tensor(value, dtype=getattr(dispatch, name)))
    want = np.broadcast_to(np.array(value, dt), (n,))  # the value's bits, as NumPy rounds it
    assert_same_bits(base[1:-1], want, "the run")
    assert base[0] == 0 and base[-1] == 0, "a byte outside the run was written"


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("name", list(VALUES))
def test_a_copy_past_the_caches_moves_every_byte_and_nothing_else(name, count, threads):
    threads(count)
    dt = np.dtype(name)
    n = BYTES // dt.itemsize + 77
    src = random_bits(dt, n + 1, seed=1)[1:]  # the source off a vector boundary too
    base = np.zeros(n + 2, dt)
    dispatch.from_numpy(base)[1:-1].copy_(dispatch.from_numpy(src))
    assert_same_bits(base[1:-1], src, "the copy")
    assert base[0] == 0 and base[-1] == 0, "a byte outside the run was written"
    clone = dispatch.from_numpy(src).clone()
    assert_same_bits(clone.numpy(), src, "the clone")


# 1003 columns: at 1 thread a row copied into every row is a block doubled to
# 4 KiB and more, then copied span by span, the last span short (odd rows)
@pytest.mark.parametrize("layout", ["row", "column", "short row"])
@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("name", list(VALUES))
def test_a_broadcast_copy_past_the_caches_writes_every_row(name, count, layout, threads):
    """copy_ of a row into every row (a block repeated, or the walk's rows at
    2 threads) and of a column (each row a fill)."""
    threads(count)
    dt = np.dtype(name)
    columns = 1003 if layout == "short row" else COLUMNS
    base = zero_rows(dt, columns)
    rows = base.shape[0] - 2
    shape = (rows, 1) if layout == "column" else (1, columns)
    src = random_bits(dt, shape, seed=2)
    dispatch.from_numpy(base)[1:-1].copy_(dispatch.from_numpy(src))
    assert_same_bits(base[1:-1], np.broadcast_to(src, (rows, columns)), "the rows")
    assert not base[0].any() and not base[-1].any(), "a sentinel row was written"


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("name", list(VALUES))
def test_a_fill_of_rows_with_gaps_past_the_caches_leaves_the_gaps(name, count, threads):
    """x[:, 2:-3].fill_(v): the 2-D loop's rows, each a run off a vector
    boundary, the columns between them untouched."""
    threads(count)
    dt = np.dtype(name)
    base = zero_rows(dt)
    dispatch.from_numpy(base)[:, 2:-3].fill_(VALUES[name])
    want = np.zeros_like(base)
    want[:, 2:-3] = np.array(VALUES[name], dt)
    assert_same_bits(base, want, "the rows and gaps")


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("pair", [("int8", "uint8"), ("uint8", "int8"), ("bool", "uint8"),
                                  ("bool", "int8")])
def test_a_cast_of_one_width_past_the_caches_keeps_the_bits(pair, count, threads):
    """Integers of one byte (and bool into them) cast by the copy's stores."""
    threads(count)
    a, b = (np.dtype(x) for x in pair)
    n = BYTES // a.itemsize + 77
    src = random_bits(a, n + 1, seed=3)[1:]
    got = dispatch.from_numpy(src).to(getattr(dispatch, b.name)).numpy()
    assert got.dtype == b
    assert_same_bits(got, src.astype(b), "the cast")
