"""max(dim)/min(dim)/argmax/argmin of layouts no one-pass kernel reads
(Note [Strided first extremes] in sources/iterator/reduce_plan.c): every
other column, a stepped 3-D view, a transposed one, answered on a dense
copy in the input's dtype; the same answers as NumPy's for every dtype, at
1 and 2 threads, and no copy of a broadcast view."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peak_memory import LINUX_ONLY, assert_grows_under

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _views(a: np.ndarray):
    """(name, NumPy view, our view of the same elements) of a (6, 40, 34) array."""
    t = dispatch.from_numpy(a)
    return [("every other column", a[0, :, ::2], t[0, :, ::2]),
            ("stepped 3-D", a[::2, 1:, ::3], t[::2, 1:, ::3]),
            ("transposed 3-D", a.transpose(2, 0, 1), t.permute(2, 0, 1))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_views_answer_as_numpy(threads, dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, (6, 40, 34)).astype(dtype)  # ties: the first one answers
    for n in (1, 2):
        threads(n)
        for name, x, t in _views(a):
            what = f"{name} {dtype} {n}t"
            if dtype != "bool":  # argmax of bool: not implemented, as torch's
                assert int(dispatch.argmax(t).item()) == int(np.argmax(x)), what
                assert int(dispatch.argmin(t).item()) == int(np.argmin(x)), what
            for dim in range(x.ndim):
                v, i = dispatch.max(t, dim)
                np.testing.assert_array_equal(i.numpy(), np.argmax(x, dim), err_msg=what)
                np.testing.assert_array_equal(v.numpy(), np.max(x, dim), err_msg=what)
                v, i = dispatch.min(t, dim)
                np.testing.assert_array_equal(i.numpy(), np.argmin(x, dim), err_msg=what)
                np.testing.assert_array_equal(v.numpy(), np.min(x, dim), err_msg=what)


# A stepped view expanded 2**23 times: 512 MiB of float32 if it were copied
# dense. Its stride-0 dim is read once (Note [Broadcast reduced dims]), so the
# process's peak resident memory stays where it was.
_BROADCAST_NOT_COPIED = """
import numpy as np
import dispatch as d
base = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
e = d.from_numpy(base)[:, ::2][None].expand(2**23, 4, 4)
assert 0 in e.stride()
START()
got = (int(d.argmax(e).item()), int(d.argmin(e).item()))
grew = GREW()
want = (int(np.argmax(base[:, ::2])), int(np.argmin(base[:, ::2])))
assert got == want, (got, want)
print(grew)
"""


@LINUX_ONLY
def test_a_broadcast_view_is_searched_in_place_not_copied():
    assert_grows_under(_BROADCAST_NOT_COPIED, 64 * 1024)
