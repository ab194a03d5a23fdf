"""A tensor with a number (issue 28, item 4): `t + 1.0`, `2 * t`, `t < 3` run
in the C slots of dispatch/_fastpath_tensor.c with no Python frame, as tensor with
tensor does, and give what the binder's path (dispatch.ops) gives: the same
values, dtypes and errors. Only an operand that is neither goes to Python:
the operand hook, where a NumPy array becomes a tensor."""

from __future__ import annotations

import math
import operator
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch
from dispatch import ops

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _frames import python_calls  # noqa: E402

ARITH = [operator.add, operator.sub, operator.mul, operator.truediv]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
BY_OPS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
          operator.truediv: "div", operator.eq: "eq", operator.ne: "ne", operator.lt: "lt",
          operator.le: "le", operator.gt: "gt", operator.ge: "ge"}
NUMBERS = [3, -2, 2.5, True, False, np.float32(1.5), np.int16(-4), np.bool_(True),
           np.float64(0.25), np.uint64(7)]
DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _python_calls(fn) -> list[str]:
    """The Python functions fn() enters, but this file's own (the lambdas)."""
    return python_calls(fn, __file__)


@pytest.mark.parametrize("op", ARITH + COMPARE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("v", NUMBERS, ids=repr)
def test_a_number_operand_runs_no_python_code(op, v):
    if op is operator.sub and isinstance(v, (bool, np.bool_)):
        pytest.skip("a bool subtrahend is an error, raised by Python code (_errors._raise)")
    t = dispatch.tensor([1.0, 2.0, 4.0])
    t + t  # a tensor made in Python reads its C address once, on first need (in Python)
    assert _python_calls(lambda: op(t, v)) == []
    assert _python_calls(lambda: op(v, t)) == []


def test_the_profile_sees_python_code():
    """The check above can fail: a Python operand hook is seen."""
    t = dispatch.tensor([1.0, 2.0])
    t + t
    a = np.ones(2, np.float32)
    assert len(_python_calls(lambda: t + a)) > 0


def _values(t):
    """Values as float64, NaN spelled out (so that equal results compare equal)."""
    return [("nan" if math.isnan(x) else x) for x in t.to(dispatch.float64).tolist()]


@pytest.mark.parametrize("op", ARITH + COMPARE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("v", [3, -2, 2.5, True, np.float32(1.5), np.int16(-4)], ids=repr)
def test_the_slot_gives_what_the_operator_gives(op, dtype, v):
    t = dispatch.tensor([0, 1, 2, 5], dtype=dtype)
    name = BY_OPS[op]
    if dtype == "bool" and op is operator.sub:
        with pytest.raises(TypeError):
            op(t, v)
        return
    try:
        want = getattr(ops, name)(t, v)
    except Exception as e:  # noqa: BLE001  (the slot must raise the same)
        with pytest.raises(type(e)):
            op(t, v)
        return
    got = op(t, v)
    assert got.dtype == want.dtype and _values(got) == _values(want)
    if op in (operator.add, operator.mul, operator.eq, operator.ne):  # commutative
        rev = op(v, t)
        assert rev.dtype == want.dtype and _values(rev) == _values(want)


def test_a_reversed_number_is_the_left_operand():
    t = dispatch.tensor([1.0, 2.0, 4.0])
    assert (1 - t).tolist() == [0.0, -1.0, -3.0]
    assert (8 / t).tolist() == [8.0, 4.0, 2.0]
    assert (2 < t).tolist() == [False, False, True]
    assert (np.float32(2) >= t).tolist() == [True, True, False]


def test_an_int_beyond_int64_is_named():
    t = dispatch.tensor([1, 2])
    for big in (2**63, -2**63 - 1, np.uint64(2**64 - 1)):
        with pytest.raises(OverflowError, match=r"int too big to convert: -?\d+ is outside "
                                                r"int64's range \[-2\*\*63, 2\*\*63 - 1\]"):
            t + big
        with pytest.raises(OverflowError, match="int too big to convert"):
            big * t


def test_other_operands_go_to_the_hook_or_are_refused():
    t = dispatch.tensor([1.0, 2.0])
    got = t + np.array([1.0, 1.0])  # a NumPy array: a tensor of its dtype (float64)
    assert isinstance(got, dispatch.Tensor) and got.dtype == dispatch.float64
    assert (np.array(2.0, np.float32) * t).tolist() == [2.0, 4.0]  # 0-d: a 0-dim tensor
    for other in ("a", None, [1.0, 2.0], object(), 1j):
        with pytest.raises(TypeError, match="unsupported operand|not supported|can.t multiply sequence"):
            t + other
        with pytest.raises(TypeError, match="unsupported operand|not supported|can.t multiply sequence"):
            other * t
    assert (t == "a") is False and (t != "a") is True  # (the identity fallback)
