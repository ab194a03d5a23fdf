"""argmax, argmin, max(dim) and min(dim) of contiguous runs, found in one
pass (Note [One-pass first extremes] in sources/kernels/argext.dispatch.c):
against NumPy's first index for float32, float64 and every integer dtype,
with the extreme tied across the kernel's 8 KB blocks and across the parts
one output's run splits into between threads (128 KB), a NaN
planted anywhere, the reduced dims merged into one run (the last two of a
3-D tensor) or broadcast (an expand()ed dim), at 1, 2 and 3 threads.
Values come back re-read from the index found: the first NaN's own bits,
the first zero's sign."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "int32", "int64"]
PART_BYTES = 131072  # ARG_PART_BYTES in sources/iterator/reduce_indices.c


def _part(dtype: str) -> int:
    return PART_BYTES // np.dtype(dtype).itemsize


def _first(a: np.ndarray, is_min: bool, axis=None) -> np.ndarray:
    """NumPy's argmax/argmin: the first extreme, a NaN's first index."""
    return np.argmin(a, axis) if is_min else np.argmax(a, axis)


def _values(dtype: str, n: int, rng) -> np.ndarray:
    """Few distinct values (every extreme tied many times over)."""
    a = rng.integers(-3, 4, n)
    return a.astype(dtype)


def _planted(dtype: str, n: int, rng) -> list:
    """Runs whose extreme ties sit at the edges of blocks and parts."""
    out, PART = [], _part(dtype)
    info = np.iinfo(dtype) if dtype[0] in "iu" else None
    top = info.max if info else np.inf
    for at in (0, n - 1, PART - 1, PART, 2 * PART + 7, 8192 // np.dtype(dtype).itemsize):
        if at >= n:
            continue
        a = _values(dtype, n, rng)
        a[at] = top
        a[min(n - 1, at + PART)] = top  # a tie in a later part
        out.append(a)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_one_output_split_between_threads_answers_the_first(threads, dtype, nthreads):
    threads(nthreads)
    rng = np.random.default_rng(7)
    PART = _part(dtype)  # four parts or more split at 2 threads
    for n in (1, 31, 4095, PART, PART + 1, 3 * PART + 5, 5 * PART + 3):
        for a in [_values(dtype, n, rng)] + _planted(dtype, n, rng):
            t = dispatch.from_numpy(a)
            for is_min in (False, True):
                want = _first(a, is_min)
                got = (t.argmin() if is_min else t.argmax()).item()
                assert got == want, (dtype, n, is_min, got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_the_first_nan_wins_wherever_it_is(threads, dtype, nthreads):
    threads(nthreads)
    rng = np.random.default_rng(11)
    PART = _part(dtype)
    n = 5 * PART + 77
    for at in (0, 5, 8191, 2047, PART - 1, PART, 2 * PART + 3, n - 1):
        a = _values(dtype, n, rng)
        a[at] = np.nan
        a[min(n - 1, at + 1000)] = np.nan
        a[rng.integers(0, n)] = np.inf
        t = dispatch.from_numpy(a)
        for is_min in (False, True):
            got = (t.argmin() if is_min else t.argmax()).item()
            assert got == at, (dtype, at, is_min, got)
        v, i = dispatch.max(t.reshape(1, n), 1)
        assert i.tolist() == [at] and np.isnan(v.numpy()[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_merged_dims_and_broadcasts_match_numpy(threads, dtype):
    rng = np.random.default_rng(3)
    for nthreads in (1, 2):
        threads(nthreads)
        a = _values(dtype, 6 * 33 * 129, rng).reshape(6, 33, 129)
        t = dispatch.from_numpy(a)
        for is_min in (False, True):
            f = dispatch.argmin if is_min else dispatch.argmax
            assert f(t, 2).numpy().tolist() == _first(a, is_min, 2).tolist()
            # the last two dims: one run of 33 * 129 per output
            want = _first(a.reshape(6, -1), is_min, 1)
            got = dispatch.min(t.reshape(6, -1), 1) if is_min else dispatch.max(t.reshape(6, -1), 1)
            assert got.indices.numpy().tolist() == want.tolist()
            assert got.values.numpy().tolist() == a.reshape(6, -1)[np.arange(6), want].tolist()
        # a broadcast reduced dim: index 0 there, the run's index beside it
        row = a[0, 0]
        b = dispatch.from_numpy(row[None, :]).expand(5, 129)
        assert b.argmax().item() == _first(row, False)
        assert b.argmin().item() == _first(row, True)


def test_max_dim_rereads_the_first_zero_and_its_sign(threads):
    for nthreads in (1, 2):
        threads(nthreads)
        PART = _part("float32")
        n = 5 * PART + 10
        for first in (-0.0, 0.0):
            a = np.full(n, -1.0, np.float32)
            a[PART + 3] = first
            a[PART + 9] = -first
            a[2 * PART + 1] = -first
            v, i = dispatch.max(dispatch.from_numpy(a).reshape(1, n), 1)
            assert i.tolist() == [PART + 3]
            assert np.signbit(v.numpy()[0]) == np.signbit(first)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_the_ends_of_the_range_from_every_lane_of_the_fold(dtype):
    # A block's lanes (256 bytes of them) fold to one extreme as vectors
    # (ARG_FOLD_INT): the dtype's own max and min, planted in each lane in
    # turn among values of the whole range, must come back as NumPy's first
    # index, signed and unsigned compares alike.
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    lanes = 256 // np.dtype(dtype).itemsize
    n = 2 * lanes + 5  # two rows of lanes and a tail
    for at in range(lanes + 1):
        a = rng.integers(int(info.min) + 1, int(info.max), n, dtype=dtype, endpoint=False)
        a[at] = info.max
        a[(at * 7 + 3) % n] = info.min
        a[n - 1 - at % 3] = info.max  # a later tie
        t = dispatch.from_numpy(a)
        assert t.argmax().item() == np.argmax(a), (at, a[at])
        assert t.argmin().item() == np.argmin(a), at
        m = a.reshape(1, n)
        assert dispatch.argmax(dispatch.from_numpy(m), 1).numpy().tolist() == [np.argmax(a)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_columns_in_one_pass_match_numpy(threads, dtype):
    """max/min/argmax/argmin over dim 0 of a row-major matrix (Note [Column
    first extremes] in argext.dispatch.c): each column's first extreme,
    with ties down the columns, a NaN planted in some columns, -0.0 and 0.0
    tied, shapes around the kernel's 512-column block and split between
    threads, and a strided view (its rows further apart)."""
    rng = np.random.default_rng(5)
    for nthreads in (1, 2):
        threads(nthreads)
        for rows, cols in ((2, 3), (8, 512), (3, 513), (37, 1100), (300, 64)):
            a = _values(dtype, rows * cols, rng).reshape(rows, cols)
            if dtype.startswith("float"):
                a[rng.integers(0, rows, 9), rng.integers(0, cols, 9)] = np.nan
                a[0, : cols // 2] = -0.0
                a[rows - 1, : cols // 2] = 0.0
            wide = np.zeros((rows, cols + 5), dtype)
            wide[:, :cols] = a
            for t in (dispatch.from_numpy(a), dispatch.from_numpy(wide)[:, :cols]):
                for is_min in (False, True):
                    want = _first(a, is_min, 0)
                    f = dispatch.argmin if is_min else dispatch.argmax
                    assert f(t, 0).numpy().tolist() == want.tolist(), (dtype, rows, cols)
                    got = dispatch.min(t, 0) if is_min else dispatch.max(t, 0)
                    assert got.indices.numpy().tolist() == want.tolist()
                    # the values are the elements found, bit for bit (the first zero's sign)
                    assert got.values.numpy().tobytes() == a[want, np.arange(cols)].tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_rows_of_every_length_across_groups_and_their_last_part(dtype):
    # AVX-512 runs these dtypes four vectors a group (Note [First extremes in
    # groups]): the last group is loaded in part, past the row's end, filled
    # with the row's first element. Every length up to five groups, the
    # extreme (tied) in each vector of a group, infinities and zeros of both
    # signs, and a NaN in the last elements: NumPy's first index, the value
    # re-read from it with its sign.
    rng = np.random.default_rng(5)
    is_float = dtype.startswith("float")
    for n in range(1, 5 * 64 + 3):
        rows = [_values(dtype, n, rng) for _ in range(3)]
        top = np.inf if is_float else np.iinfo(dtype).max
        for r, at in zip(rows, (n - 1, n // 2, 0)):
            r[at] = top
            r[(at + 17) % n] = top  # a tie after it (or before, wrapped)
        if is_float:
            z = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf], dtype), n)
            rows.append(z)
            nan = _values(dtype, n, rng)
            nan[n - 1 - rng.integers(0, min(n, 3))] = np.nan
            rows.append(nan)
        a = np.stack(rows)
        t = dispatch.from_numpy(a)
        for is_min in (False, True):
            want = _first(a, is_min, 1)
            got = dispatch.min(t, 1) if is_min else dispatch.max(t, 1)
            assert got.indices.numpy().tolist() == want.tolist(), (dtype, n, is_min)
            v = got.values.numpy()
            assert v.tobytes() == a[np.arange(len(a)), want].tobytes(), (dtype, n, is_min)
            f = dispatch.argmin if is_min else dispatch.argmax
            assert f(t, 1).numpy().tolist() == want.tolist()
