"""Fills larger than a core's share of the cache (Note [Fills past the caches]
in sources/kernels/line_head.h): from 16 MiB on, fill_ and copy_ of a 0-d
tensor of the same dtype write in streaming stores. Every element gets the
value's bits, nothing before or after the run is written, at 1 and 2 threads
(each of the two threads' halves is past the threshold too), on runs that
start and end off a vector boundary."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch

# 33 MiB and a ragged tail: two threads' halves are each past 16 MiB
BYTES = 33 << 20
VALUES = {"uint8": 0xA7, "int16": -12345, "float32": -1.5, "int64": -(1 << 40) - 3,
          "float16": 0.333, "bool": True}


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
    want = np.array([value], dt)  # the value's bits, as NumPy rounds it
    got = base[1:-1]
    bad = np.flatnonzero(got.view(np.uint8).reshape(n, dt.itemsize) !=
                         want.view(np.uint8)).size
    assert bad == 0, f"{bad} bytes differ from the value's"
    assert base[0] == 0 and base[-1] == 0, "a byte outside the run was written"
