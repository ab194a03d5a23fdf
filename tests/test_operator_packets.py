"""Issue 44, the call's own cost: dispatch.ops.<name>(...) and t.<name>(...)
run in C from the call to the result (Note [Operator packets] in
dispatch/_fastpath_packet.c): no Python frame, for positional and keyword
calls alike, with the packet's rules kept (out=None dropped, keywords bound
by the one binder, the TypeError worded by the packet)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dispatch
from dispatch import ops

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _frames import python_calls  # noqa: E402


def _python_calls(fn) -> list[str]:
    return python_calls(fn, __file__)


@pytest.fixture
def x():
    return dispatch.arange(12, dtype=dispatch.float32).view(3, 4)


CALLS = {
    "ops.add(x, x)": lambda x: ops.add(x, x),
    "ops.add(x, 2.0)": lambda x: ops.add(x, 2.0),
    "ops.add(x, x, alpha=2)": lambda x: ops.add(x, x, alpha=2),
    "ops.add(x, x, out=None)": lambda x: ops.add(x, x, out=None),
    "ops.addcmul(x, x, x, value=0.5)": lambda x: ops.addcmul(x, x, x, value=0.5),
    "ops.neg(x)": lambda x: ops.neg(x),
    "ops.sum(x, 1)": lambda x: ops.sum(x, 1),
    "x.sum(dim=1)": lambda x: x.sum(dim=1),
    "x.amax(1)": lambda x: x.amax(1),
    "x.fill_(1)": lambda x: x.fill_(1),
    "ops.where(x > 3, x, 0.0)": lambda x: ops.where(x > 3, x, 0.0),
}


@pytest.mark.parametrize("name", CALLS)
def test_an_operator_call_runs_no_python_frame(x, name):
    call = CALLS[name]
    call(x)  # packets and methods made, caches warm
    assert _python_calls(lambda: call(x)) == [], name


def test_keyword_calls_give_the_positional_calls_values(x):
    assert ops.add(x, x, alpha=2).tolist() == ops.add(x, ops.mul(x, 2)).tolist()
    assert ops.add(x, x, out=None).tolist() == ops.add(x, x).tolist()
    assert ops.add(x, x, alpha=3, out=None).tolist() == ops.add(x, x, alpha=3).tolist()
    assert ops.addcmul(x, x, x, value=0.5).tolist() == ops.add(x, ops.mul(x, x), alpha=0.5).tolist()
    assert x.sum(dim=1).tolist() == x.sum(1).tolist() == [6.0, 22.0, 38.0]
    assert ops.sum(self=x).tolist() == ops.sum.default(self=x).tolist() == 66.0
    assert ops.add.Tensor(self=x, other=x).tolist() == ops.add(x, x).tolist()
    # a keyword made at run time is not interned: it binds by equality
    alpha = "".join(["al", "pha"])
    assert ops.add(x, x, **{alpha: 2}).tolist() == ops.add(x, x, alpha=2).tolist()


def test_out_keeps_its_tensor(x):
    out = dispatch.empty(3, 4)
    r = ops.add(x, x, out=out)
    assert r is out and out.tolist() == ops.mul(x, 2).tolist()


@pytest.mark.parametrize("call", [
    lambda x: ops.add(x, x, beta=2),             # names no argument
    lambda x: ops.add(x, x, self=x),             # given twice
    lambda x: ops.add(x, x, alpha=1, a=1, b=2, c=3, d=4, e=5),  # more keywords than arguments
    lambda x: ops.add(x, "x"),                   # fits no overload
    lambda x: ops.sum(x, dim="0"),
])
def test_a_call_no_overload_takes_is_the_packets_type_error(x, call):
    with pytest.raises(TypeError, match=r"received an invalid combination of arguments - got"):
        call(x)


def test_a_subclass_with_its_own_call_keeps_it(x):
    class Counting(ops.OpOverloadPacket):
        calls = 0

        def __call__(self, *args, **kwargs):
            type(self).calls += 1
            return super().__call__(*args, **kwargs)

    p = Counting("add", ops.add.overloads)
    assert p(x, x).tolist() == ops.add(x, x).tolist()
    assert p(x, x, alpha=2).tolist() == ops.add(x, x, alpha=2).tolist()
    assert Counting.calls == 2


def test_a_packet_not_set_up_says_so():
    p = ops.OpOverloadPacket.__new__(ops.OpOverloadPacket)
    with pytest.raises(RuntimeError, match="before it was set up"):
        p(dispatch.ones(1))
