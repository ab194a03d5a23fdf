"""Tensor's operator methods (dispatch._fastpath.OperatorMethod, Note
[Operator methods]): t.<name>(...) is dispatch.ops.<name>(t, ...) through the
packet dispatch.ops holds at call time, binds like a function, and leaks no
references."""

from __future__ import annotations

import copy
import inspect
import pickle
import pydoc
import subprocess
import sys

import pytest

import dispatch
from dispatch import _fastpath, ops

T = dispatch.Tensor


@pytest.fixture
def x():
    return dispatch.tensor([[1.0, -2.0], [3.0, 4.0]])


def test_a_method_call_is_the_operator_call(x):
    y = dispatch.tensor([[0.5, 0.5], [1.0, 1.0]])
    for got, want in ((x.sum(0), ops.sum(x, 0)), (x.sum(), ops.sum(x)),
                      (x.sum(dim=1, keepdim=True), ops.sum(x, dim=1, keepdim=True)),
                      (x.add(y, alpha=2), ops.add(x, y, alpha=2)), (x.add(y), ops.add(x, y)),
                      (x.sum(0, out=None), ops.sum(x, 0))):
        assert type(got) is T and got.tolist() == want.tolist()
    r = x.max(0)  # the named results of the operator
    assert type(r).__name__ == "max" and r.values.tolist() == [3.0, 4.0] and r.indices.tolist() == [1, 1]


def test_out_and_in_place_methods_return_the_argument_object(x):
    out = dispatch.empty(2)
    assert x.sum(0, out=out) is out and out.tolist() == [4.0, 2.0]
    assert x.add_(1) is x and x.tolist() == [[2.0, -1.0], [4.0, 5.0]]


def test_a_method_binds_like_a_function(x):
    assert isinstance(vars(T)["sum"], _fastpath.OperatorMethod)
    assert T.sum is vars(T)["sum"]
    assert T.sum(x, 0).tolist() == [4.0, 2.0]  # unbound, self given
    assert T.sum(self=x, dim=0).tolist() == [4.0, 2.0]  # self by keyword, as def f(self, ...)
    bound = x.sum
    assert bound.__self__ is x and bound.__func__ is T.sum and bound(1).tolist() == [-1.0, 7.0]
    assert (T.sum.__name__, T.sum.__qualname__, T.sum.__module__) == ("sum", "sum", "dispatch.ops")
    assert bound.__name__ == "sum" and bound.__doc__ == "dispatch.ops.sum(self, ...)"


def test_self_missing_or_given_twice_is_the_python_method_error(x):
    with pytest.raises(TypeError, match=r"^sum\(\) missing 1 required positional argument: 'self'$"):
        T.sum()
    with pytest.raises(TypeError, match=r"^sum\(\) missing 1 required positional argument: 'self'$"):
        T.sum(dim=0)
    with pytest.raises(TypeError, match=r"^sum\(\) got multiple values for argument 'self'$"):
        x.sum(self=x)


def test_errors_of_a_method_name_the_operator(x):
    with pytest.raises(TypeError, match=r"^sum\(\) received an invalid combination of arguments "
                                        r"- got \(Tensor, str\)"):
        x.sum("0")
    with pytest.raises(TypeError, match=r"^add\(\) received an invalid combination of arguments "
                                        r"- got \(Tensor, Tensor, bad=int\)"):
        x.add(x, bad=1)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x.add(dispatch.ones(3))


def test_help_inspect_copy_and_pickle_see_a_method(x):
    assert str(inspect.signature(T.sum)) == "(self, *args, **kwargs)"
    assert str(inspect.signature(x.sum)) == "(*args, **kwargs)"
    assert "dispatch.ops.sum(self, ...)" in pydoc.render_doc(x.sum)
    assert "dispatch.ops.sum(self, ...)" in pydoc.render_doc(T)
    # a function is copied as itself and pickled by name: so is this
    assert copy.copy(T.sum) is T.sum and copy.deepcopy(T.sum) is T.sum
    assert pickle.loads(pickle.dumps(T.sum)) is T.sum


def test_a_method_leaks_no_references(x):
    y, dim, bad = dispatch.ones(2, 2), [0], "0"
    before = [sys.getrefcount(o) for o in (x, y, dim, bad, ops.sum, ops.add)]
    for _ in range(10000):
        x.sum(dim)
        x.add(y, alpha=2)
        T.add(x, y)
        T.sum(self=x, dim=dim)
        bound = x.sum
        bound(dim, keepdim=True)
        with pytest.raises(TypeError):
            x.sum(bad)
        with pytest.raises(TypeError):
            x.sum(self=y)
    del bound
    assert [sys.getrefcount(o) for o in (x, y, dim, bad, ops.sum, ops.add)] == before


def test_a_method_calls_the_packet_dispatch_ops_holds_now(tmp_path):
    """library.define replaces the packet (ops._invalidate): the method of the
    same name runs the new overload at once. In a child process: the new
    overload of sum must not reach other tests."""
    code = r"""
import dispatch
from dispatch import library, ops
a, b = dispatch.ones(2), dispatch.tensor([5.0, 6.0])
old = ops.sum
try:
    a.sum(a, b)
    raise SystemExit("bound before the overload exists")
except TypeError as e:
    assert str(e).startswith("sum() received an invalid combination"), e
library.define("sum.method_test(Tensor self, Tensor other, Tensor third) -> Tensor")
library.impl("sum.method_test", "CPU")(lambda self, other, third: third * 2)
assert a.sum(a, b).tolist() == [10.0, 12.0] and dispatch.Tensor.sum(a, a, b).tolist() == [10.0, 12.0]
assert ops.sum is not old and len(ops.sum.overloads) == len(old.overloads) + 1
assert a.sum().item() == 2.0  # the table's overloads still first
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr + r.stdout


# Issue 49: dispatch.ops.<op> bound to a method made the C descriptor call
# itself with no limit (a segfault); it meets Python's recursion limit now.
@pytest.mark.parametrize("binding", [
    "d.ops.sum = d.Tensor.sum",
    "d.ops.sum = d.Tensor.mean; d.ops.mean = d.Tensor.sum",  # each other's methods
])
@pytest.mark.parametrize("call", ["d.ones((3,)).sum()", "d.Tensor.sum(self=d.ones((3,)))"])
def test_an_operator_bound_to_a_method_is_a_recursion_error(binding, call):
    code = f"import dispatch as d; {binding}; {call}"
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr[-500:])
    assert r.stderr.rstrip().splitlines()[-1].startswith("RecursionError: maximum recursion"), \
        r.stderr[-500:]
