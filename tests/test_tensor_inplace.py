"""In-place arithmetic (a += b, ops.add_ ...): written into self's storage
through the elementwise engine, with PyTorch's casting rule and NumPy's
answer when the operands overlap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatch
from dispatch import ops


def test_views_see_the_update():
    a = dispatch.tensor([1.0, 2.0, 3.0, 4.0])
    view = a[1:3]
    before = a.data_ptr()
    a += 10
    assert a.data_ptr() == before
    assert view.tolist() == [12.0, 13.0] and a.tolist() == [11.0, 12.0, 13.0, 14.0]


@pytest.mark.parametrize("name,np_op", [("add_", np.add), ("sub_", np.subtract),
                                         ("mul_", np.multiply), ("div_", np.divide)])
def test_each_op_matches_numpy_with_broadcasting(name, np_op):
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    y = np.array([2.0, -1.0, 0.5, 4.0], np.float32)
    t = dispatch.from_numpy(x.copy())
    r = getattr(ops, name)(t, dispatch.from_numpy(y))
    assert r.data_ptr() == t.data_ptr()
    assert t.numpy().tobytes() == np_op(x, y).tobytes()


def test_alpha():
    t = dispatch.tensor([1.0, 2.0])
    ops.add_(t, dispatch.tensor([1.0, 1.0]), alpha=3)
    ops.sub_(t, dispatch.tensor([1.0, 1.0]), alpha=0.5)
    assert t.tolist() == [3.5, 4.5]


def test_promotion_computes_wide_and_casts_back_like_pytorch():
    i = dispatch.tensor([1, 2, 3], dtype=dispatch.int32)
    i += dispatch.tensor([10, 20, 30], dtype=dispatch.int64)  # int64 result fits int32 self
    assert i.dtype is dispatch.int32 and i.tolist() == [11, 22, 33]
    f = dispatch.tensor([1.0, 2.0], dtype=dispatch.float16)
    f *= dispatch.tensor([3.0, 0.5], dtype=dispatch.float64)
    assert f.dtype is dispatch.float16 and f.tolist() == [3.0, 1.0]


@pytest.mark.parametrize("stmt", ["i += 1.5", "i /= 2", "b += i"])
def test_a_result_of_a_higher_category_is_refused(stmt):
    i = dispatch.tensor([1, 2])  # noqa: F841 - used by stmt
    b = dispatch.tensor([True, False])  # noqa: F841
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        exec(stmt)


def test_self_is_not_broadcast():
    t = dispatch.ones(3)
    with pytest.raises(ValueError, match=r"output with shape \[3\] doesn't match the "
                                         r"broadcast shape \[2, 3\]"):
        t += dispatch.ones(2, 3)
    meta = dispatch.empty(3, device="meta")
    with pytest.raises(RuntimeError, match="self cannot be broadcast in place"):
        ops.add_(meta, dispatch.empty(2, 3, device="meta"))


def test_a_broadcast_self_is_rejected():
    t = dispatch.ones(1, 3).expand(2, 3)
    with pytest.raises(ValueError, match="overlaps itself"):
        t += dispatch.ones(2, 3)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 300), shift=st.integers(1, 5), forward=st.booleans())
def test_overlapping_operands_give_numpys_answer(n, shift, forward):
    """x[s:] += x[:-s] and x[:-s] += x[s:] read every input before it is
    overwritten, as NumPy's ufuncs do (Note [Overlapping out=])."""
    shift = min(shift, n - 1)
    x = np.arange(n, dtype=np.float64) * 1.5
    t = dispatch.from_numpy(x.copy())
    if forward:
        x[shift:] += x[:-shift]
        t[shift:] += t[:-shift]
    else:
        x[:-shift] += x[shift:]
        t[:-shift] += t[shift:]
    assert t.numpy().tobytes() == x.tobytes()


def test_unsupported_operand_type():
    t = dispatch.ones(2)
    with pytest.raises(TypeError):
        t += "x"
