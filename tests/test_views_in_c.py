"""Issue 44, the call's own cost: t.shape, t.ndim, t.view(...),
t.reshape(...) and t[index] for ints and slices run in C with no Python
frame (Note [Views in C] in dispatch/_fastpath_views.c). Every index the C
path takes gives the Python path's view (sizes, strides, offset, values),
every other one goes to the Python path, and errors keep their words."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatch
from dispatch import _tensor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _frames import python_calls  # noqa: E402


def _python_calls(fn) -> list[str]:
    return python_calls(fn, __file__)


X = dispatch.arange(4 * 5 * 6, dtype=dispatch.int32).view(4, 5, 6)
A = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)

FAST = {
    "x.shape": lambda: X.shape,
    "x.ndim": lambda: X.ndim,
    "x.view(-1)": lambda: X.view(-1),
    "x.view((20, 6))": lambda: X.view((20, 6)),
    "x.reshape(6, 20)": lambda: X.reshape(6, 20),
    "x[1]": lambda: X[1],
    "x[-1, 2]": lambda: X[-1, 2],
    "x[1:3]": lambda: X[1:3],
    "x[:, ::2, 1]": lambda: X[:, ::2, 1],
    "x[1:, :-1, 2:5:2]": lambda: X[1:, :-1, 2:5:2],
    "x.transpose(0, 2)": lambda: X.transpose(0, 2),
    "x.permute(2, 0, 1)": lambda: X.permute(2, 0, 1),
    "x.permute((1, 2, 0))": lambda: X.permute((1, 2, 0)),
    "x.T": lambda: X.T,
    "x.unsqueeze(-1)": lambda: X.unsqueeze(-1),
    "x[:1].expand(3, 5, 6)": lambda: X[:1].expand(3, 5, 6),
    "x[:1].expand((-1, 5, 6))": lambda: X[:1].expand((-1, 5, 6)),
}

# Each view method the C base runs, with the Python function it falls back to.
METHODS = {"transpose": _tensor._transpose, "permute": _tensor._permute,
           "expand": _tensor._expand, "unsqueeze": _tensor._unsqueeze}
CALLS = [("transpose", (0, 2)), ("transpose", (-1, 0)), ("transpose", (1, 1)),
         ("transpose", (0, 3)), ("transpose", (0,)), ("transpose", (0, 1, 2)),
         ("transpose", (0.5, 1)), ("transpose", (1 << 70, 0)), ("transpose", (np.int64(2), 0)),
         ("permute", (2, 0, 1)), ("permute", ((2, 0, 1),)), ("permute", ([1, 0, 2],)),
         ("permute", (0, 1)), ("permute", (0, 0, 1)), ("permute", (0, 1, 5)),
         ("permute", (0, 1.0, 2)), ("permute", (np.int32(1), 0, 2)), ("permute", ()),
         ("expand", (2, 4, 5, 6)), ("expand", (-1, -1, -1)), ("expand", ((4, 5, 6),)),
         ("expand", (4, 5, 7)), ("expand", (5, 6)), ("expand", (-1, 5, 6, 1)),
         ("unsqueeze", (0,)), ("unsqueeze", (3,)), ("unsqueeze", (-4,)), ("unsqueeze", (4,)),
         ("unsqueeze", (-5,)), ("unsqueeze", ()), ("unsqueeze", ("1",)), ("unsqueeze", (np.int8(1),))]


@pytest.mark.parametrize("name, args", CALLS, ids=[f"{n}{a}" for n, a in CALLS])
def test_view_methods_match_the_python_path(name, args):
    """The C base's transpose/permute/expand/unsqueeze give the Python
    path's view, or the same error with the same words."""
    try:
        want = METHODS[name](X, *args)
    except Exception as e:  # noqa: BLE001 - the same kind and words, below
        with pytest.raises(type(e)) as got:
            getattr(X, name)(*args)
        assert str(got.value) == str(e)
        return
    _same_view(getattr(X, name)(*args), want)


def test_t_and_keywords():
    _same_view(X.T, _tensor._T(X))
    _same_view(X.T.T, X)
    _same_view(X[0].T, X[0].transpose(0, 1))
    _same_view(X.transpose(dim0=0, dim1=2), X.transpose(0, 2))
    _same_view(X.transpose(0, dim1=2), X.transpose(0, 2))
    _same_view(X.unsqueeze(dim=1), X.unsqueeze(1))
    assert X.T.tolist() == A.T.tolist()
    assert X[:1].expand(3, 5, 6).tolist() == np.broadcast_to(A[:1], (3, 5, 6)).tolist()
    with pytest.raises(TypeError, match=r"^Tensor\.transpose\(\) got an unexpected keyword"):
        X.transpose(0, dim2=1)



@pytest.mark.parametrize("name", FAST)
def test_the_common_case_runs_no_python_frame(name):
    FAST[name]()
    assert _python_calls(FAST[name]) == [], name


def _same_view(got, want):
    assert got.shape == want.shape
    assert got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset()
    assert got.tolist() == want.tolist()


_bound = st.one_of(st.none(), st.integers(-8, 8), st.sampled_from([2 ** 63, -2 ** 63 - 5, 2 ** 70]))
_item = st.one_of(st.integers(-5, 5),
                  st.builds(slice, _bound, _bound, st.one_of(st.none(), st.integers(1, 4),
                                                               st.just(2 ** 64))))


@settings(max_examples=300, deadline=None)
@given(st.one_of(_item, st.lists(_item, min_size=0, max_size=4).map(tuple)))
def test_indices_match_the_python_path(index):
    """Ints and slices (bounds beyond int64 clamp, as the Python path's do):
    the C view equals the Python path's, or both raise the same error."""
    try:
        want = _tensor._getitem(X, index)
    except Exception as e:  # noqa: BLE001 - the same kind and words, below
        with pytest.raises(type(e)) as got:
            X[index]
        assert str(got.value) == str(e)
        return
    _same_view(X[index], want)
    if not any(isinstance(i, slice) and (abs(i.start or 0) > 8 or abs(i.stop or 0) > 8)
               for i in (index if isinstance(index, tuple) else (index,))):
        assert X[index].tolist() == A[index].tolist()


@pytest.mark.parametrize("index", [
    None, Ellipsis, (None, 1), (Ellipsis, 2), (1, Ellipsis, None), (), np.int64(2),
    (np.int32(1), slice(None, None, 2)), slice(np.int64(1), None),
])
def test_what_the_c_path_leaves_goes_to_python(index):
    _same_view(X[index], _tensor._getitem(X, index))
    assert X[index].tolist() == A[index].tolist()


@pytest.mark.parametrize("index, error, words", [
    (9, IndexError, r"out of bounds"),
    ((1, 2, 3, 4), IndexError, r"too many indices for tensor of dimension 3"),
    (2 ** 70, IndexError, r"is out of bounds"),
    (True, TypeError, r"only integers, slices"),
    (1.5, TypeError, r"only integers, slices"),
    (slice(None, None, 0), ValueError, r"step must be positive, got 0"),
    (slice(None, None, -1), ValueError, r"step must be positive, got -1"),
])
def test_errors_keep_their_words(index, error, words):
    with pytest.raises(Exception) as want:
        _tensor._getitem(X, index)
    with pytest.raises(error, match=words) as got:
        X[index]
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_view_and_reshape_match_the_python_path():
    for shape in ((-1,), (20, 6), ((20, 6),), ([2, 60],), (2, -1, 3), (np.int64(120),)):
        _same_view(X.view(*shape), _tensor._view(X, *shape))
        _same_view(X.reshape(*shape), _tensor._reshape(X, *shape))
    t = X[:, ::2]  # not viewable as one dim: view fails, reshape copies
    with pytest.raises(RuntimeError) as got:
        t.view(-1)
    with pytest.raises(RuntimeError) as want:
        _tensor._view(t, -1)
    assert str(got.value) == str(want.value)
    assert t.reshape(-1).tolist() == A[:, ::2].reshape(-1).tolist()
    for bad, error in (((2.0, 60), TypeError), ((2 ** 70,), ValueError), ((7, -1), ValueError),
                       ((1,) * 17, ValueError)):
        with pytest.raises(error):
            X.view(*bad)
    assert X.shape == (4, 5, 6) and X.ndim == 3 and dispatch.tensor(3.0).shape == ()


def test_setitem_writes_through_the_c_view():
    t = dispatch.zeros(3, 4)
    t[1] = 5.0
    t[:, 2] = dispatch.ones(3)
    t[0, 1:3] = 7.0
    assert t.tolist() == [[0, 7, 7, 0], [5, 5, 1, 5], [0, 0, 1, 0]]
