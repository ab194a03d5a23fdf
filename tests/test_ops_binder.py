"""Issue 13, one binder and no cycle: the schema binding rules live once, in C
(Note [Binding in C] in dispatch/_fastpath_binder.c), and dispatch.ops calls it for
every packet and overload; the runtime's messages print shapes one way,
torch's ("[2, 3]"); dispatch._tensor never imports dispatch.ops (the operator
side installs Tensor's methods)."""

from __future__ import annotations

import ast
import collections
import enum
import gc
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dispatch
from dispatch import ops

ROOT = pathlib.Path(__file__).resolve().parents[1]


# One binder ---------------------------------------------------------------------------------

def test_the_binding_rules_live_once_in_c():
    """No Python binder is left beside the C one, nor a switch between them."""
    for name in ("_bind", "_convert", "_would_bind", "_C_BINDING", "_NoMatch", "_wrap_number"):
        assert not hasattr(ops, name), name
    assert not hasattr(ops.OpOverload, "_bind") and not hasattr(ops.OpOverload, "_run")
    assert not hasattr(dispatch._fastpath, "FALLBACK")  # C never hands a call back to Python


def test_numbers_for_tensor_arguments_are_wrapped_by_the_binder():
    t = dispatch.tensor([1.0, 2.0])
    assert ops.add(t, 2).tolist() == [3.0, 4.0]
    assert ops.add(t, True).tolist() == [2.0, 3.0]
    assert ops.mul(2.5, t).tolist() == [2.5, 5.0]
    assert ops.add.Tensor(t, 1, alpha=2).tolist() == [3.0, 4.0]
    assert ops.add(dispatch.tensor([1, 2]), 3).dtype == dispatch.int64
    assert ops.where(dispatch.tensor([True, False]), 1.5, t).tolist() == [1.5, 2.0]


def test_wrapped_numbers_are_released_on_success_no_match_and_error():
    t = dispatch.tensor([1.0, 2.0])
    cond = dispatch.tensor([True, False])
    gc.collect()
    before = dispatch.live_tensors()
    for _ in range(50):
        ops.add(t, 2)
        with pytest.raises(TypeError, match="invalid combination"):
            ops.where(cond, 1.0, "x")  # 1.0 was wrapped, then "x" fits nothing
        with pytest.raises(OverflowError):
            ops.where(cond, 1.0, 2**70)
        with pytest.raises(ValueError):
            ops.add(dispatch.ones(3), 2, alpha=1) + dispatch.ones(2)
    gc.collect()
    assert dispatch.live_tensors() == before


def test_an_int_beyond_int64_raises_overflow_at_the_first_overload_it_fits():
    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    for call in (lambda: ops.add(t, 2**70), lambda: ops.add(t, t, alpha=-2**64),
                 lambda: ops.sum(t, 2**63), lambda: ops.sum(t, [0, 2**70]),
                 lambda: ops.fill_(t, 2**64), lambda: t.max(2**70)):
        with pytest.raises(OverflowError, match="int too big to convert"):
            call()


def test_the_int_beyond_int64_is_named_in_the_message():
    t = dispatch.tensor([1.0, 2.0])
    with pytest.raises(OverflowError, match=r"18446744073709551616 is outside int64's range"):
        ops.add(t, 2**64)
    with pytest.raises(OverflowError, match=r"-1180591620717411303424 is outside int64"):
        ops.sum(t, [0, -2**70])


def test_a_dim_list_longer_than_the_dims_names_the_argument():
    t = dispatch.ones(2, 3)
    with pytest.raises(TypeError, match="argument 'dim': at most 16 values"):
        ops.sum(t, tuple(range(17)))
    with pytest.raises(TypeError, match="argument 'dim': at most 16 values"):
        t.sum(dim=list(range(17)))


def test_numpy_scalars_bind_as_python_numbers():
    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ops.add(t, np.float32(0.5)).tolist() == [[1.5, 2.5], [3.5, 4.5]]
    assert ops.sum(t, np.int64(0)).tolist() == [4.0, 6.0]
    assert ops.sum(t, [np.int32(1)], keepdim=np.bool_(True)).tolist() == [[3.0], [7.0]]
    assert ops.add(t, t, alpha=np.int8(2)).tolist() == [[3.0, 6.0], [9.0, 12.0]]
    with pytest.raises(OverflowError, match="int too big to convert"):
        ops.add(t, np.uint64(2**63))
    with pytest.raises(TypeError, match="invalid combination"):
        ops.sum(t, np.array([0]))  # an array is no int


def test_subclasses_of_int_and_of_sequences_bind():
    class Axis(enum.IntEnum):
        rows = 0

    Dims = collections.namedtuple("Dims", "a b")

    class DimList(list):
        pass

    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ops.sum(t, Axis.rows).tolist() == [4.0, 6.0]
    assert ops.sum(t, Dims(0, 1)).item() == 10.0
    assert ops.sum(t, DimList([1])).tolist() == [3.0, 7.0]


def test_a_dim_list_mutated_while_its_items_convert_does_not_crash():
    items: list = []

    class Evil(int):
        def __int__(self):  # runs while the binder converts the list
            items.clear()
            return 0

    items.extend([Evil(0), Evil(0), Evil(0)])
    gc.collect()
    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="appears multiple times"):
        ops.sum(t, items)  # the values read before the list was emptied: [0, 0, 0]


def test_operators_defined_from_python_bind_every_kind():
    """library.define'd schemas go through the same binder, and their Python
    kernels get the bound values through the boxed convention."""
    from dispatch import library

    library.define("bindertest(Tensor self, float x, int n=2, bool flag=False, "
                   "int[] dims=[], *, Scalar s=1, ScalarType? dtype=None) -> Tensor")
    seen = []

    @library.impl("bindertest", "CPU")
    def kernel(self, x, n, flag, dims, s, dtype):
        seen.append((x, n, flag, dims, s, dtype))
        return self

    t = dispatch.ones(1)
    assert ops.bindertest(t, 1) is not None
    ops.bindertest(t, 0.5, np.int64(3), True, 4, s=2.5, dtype=dispatch.float64)
    ops.bindertest(t, x=np.float32(0.25), dims=(0, 1), s=True)
    assert seen == [(1.0, 2, False, [], 1, None), (0.5, 3, True, [4], 2.5, dispatch.float64.num),
                    (0.25, 2, False, [0, 1], True, None)]
    assert type(seen[0][0]) is float and type(seen[2][4]) is bool
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        ops.bindertest(t, 10**400)
    for bad in ((t, True), (t, 1.0, 2.0), (t, 1.0, 2, 1)):
        with pytest.raises(TypeError, match="invalid combination"):
            ops.bindertest(*bad)  # a bool for float; a float for int; an int for bool
    with pytest.raises(TypeError, match="invalid combination"):
        ops.bindertest(t, 1.0, 2, False, [], 1)  # s is keyword-only


def test_no_overload_and_one_overload_keep_their_messages():
    t = dispatch.ones(2)
    with pytest.raises(TypeError, match=r"sum\(\) received an invalid combination of arguments - "
                                        r"got \(Tensor, str\), but expected one of:\n \* sum\("):
        ops.sum(t, "x")
    with pytest.raises(TypeError, match=r"^add\.Tensor\(\) received an invalid combination of "
                                        r"arguments; expected add\.Tensor\(Tensor self"):
        ops.add.Tensor(t, "x")


def test_the_shortcuts_are_chosen_by_the_binder():
    """call1/call2 go to the overload the binder resolves to, so they cannot
    disagree with it; keyword calls are bound by the binder itself (Note
    [Operator packets])."""
    t = dispatch.ones(2, 2)
    for name in ("sum", "max", "add", "neg", "where", "dot"):
        p = getattr(ops, name)
        for n, at in ((1, p._fast1_at), (2, p._fast2_at)):
            i = dispatch._fastpath.resolve(p._plans, (t,) * n, None)
            want = p.overloads[i]._at if i >= 0 and p.overloads[i]._one_tensor else None
            assert at == want, (name, n)
    assert ops.addcmul(t, t, t, value=0.5).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert ops.max(t, dim=0)[0].tolist() == [1.0, 1.0]
    assert ops.sum(t, dim=0).tolist() == [2.0, 2.0]


def test_an_operator_returning_a_number_is_not_given_a_tensor_shortcut():
    """call1/call2/call_scalar return one Tensor; an overload returning an int
    or a float runs through bind_call (it used to fail with "does not return
    one Tensor")."""
    from dispatch import library

    library.define("binder_retint(Tensor self, Tensor other, *, Scalar s=1) -> int")
    library.impl("binder_retint", "CPU")(lambda self, other, s: 7)
    library.define("binder_retfloat(Tensor self) -> float")
    library.impl("binder_retfloat", "CPU")(lambda self: 0.5)
    t = dispatch.ones(2)
    assert ops.binder_retint(t, t) == 7 and ops.binder_retint(t, t, s=2.0) == 7
    assert ops.binder_retfloat(t) == 0.5 and type(ops.binder_retfloat(t)) is float


# One shape formatter ------------------------------------------------------------------------

def test_shapes_print_one_way_in_the_core_and_the_iterator():
    """torch's convention, "[2, 3]", whichever layer made the message."""
    with pytest.raises(ValueError, match=r"negative dimension -3 in shape \[2, -3\]"):
        dispatch.empty(2, -3)  # sources/core/tensor.c
    t = dispatch.ones(3)
    with pytest.raises(ValueError, match=r"output with shape \[3\] doesn't match the "
                                         r"broadcast shape \[2, 3\]"):
        t += dispatch.ones(2, 3)  # sources/iterator/iterator.c
    with pytest.raises(ValueError, match=r"shapes \[2, 3\] and \[4\] cannot be broadcast"):
        dispatch.ones(2, 3) + dispatch.ones(4)


def test_a_shape_too_long_for_the_message_is_cut_with_an_ellipsis():
    with pytest.raises(ValueError) as e:
        dispatch.empty(*([10**18] * 16))
    msg = str(e.value)
    assert msg.startswith("shape [1000000000000000000, ") and "...] is too large" not in msg
    assert "... is too large: the number of elements overflows int64" in msg


# No cycle -----------------------------------------------------------------------------------

def _imports_of(path: pathlib.Path) -> list:
    """Every module an import statement anywhere in path names (functions included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out += [base] if node.module else []
            out += [f"{base}.{a.name}" if node.module else f"{base}{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
                node.func, "id", None)) in ("import_module", "__import__"):
            out += [a.value for a in node.args if isinstance(a, ast.Constant)]
    return out


def test_tensor_module_never_imports_ops():
    names = _imports_of(ROOT / "dispatch" / "_tensor.py")
    assert names, "the parser found no import at all"
    bad = [n for n in names if n.split(".")[-1] == "ops" or ".ops." in n or n.endswith(".ops")
           or n in (".ops", "dispatch.ops")]
    assert not bad, bad
    assert ".ops" not in [n for n in names if n.startswith(".")]


def test_ops_is_not_imported_while_tensor_runs_nor_by_its_methods(tmp_path):
    """Run time too: dispatch.ops starts only after dispatch._tensor finished,
    and no code of dispatch._tensor asks for it (in-place operators and
    methods included)."""
    code = r"""
import builtins, importlib.abc, sys
asked = []
real_import = builtins.__import__

def spy(name, globals=None, locals=None, fromlist=(), level=0):
    if globals and globals.get("__name__") == "dispatch._tensor" and (
            "ops" in (fromlist or ()) or name.split(".")[-1] == "ops"):
        asked.append((name, fromlist, level))
    return real_import(name, globals, locals, fromlist, level)

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dispatch.ops":
            t = sys.modules.get("dispatch._tensor")
            assert t is not None and not getattr(t.__spec__, "_initializing", False), \
                "dispatch.ops imported while dispatch._tensor runs"
        return None

builtins.__import__ = spy
sys.meta_path.insert(0, Watch())
import dispatch
t = dispatch.ones(2, 2)
t += 1; t -= 1; t *= 2; t /= 2
assert t.sum().item() == 4.0 and t.add(t, alpha=2).tolist() == [[3.0, 3.0], [3.0, 3.0]]
assert t.max(0)[0].tolist() == [1.0, 1.0]
assert not asked, asked
assert "sum" in vars(dispatch.Tensor) and dispatch.Tensor.sum.__module__ == "dispatch.ops"
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_methods_are_the_table_operators_taking_tensor_self():
    """dispatch.ops installs t.<name> for each operator of the table whose
    overloads all take `Tensor self` first (torch's method variants)."""
    from dispatch._ops_generated import OPERATORS

    want = {n for n in OPERATORS
            if all(o.args and o.args[0].name == "self" and o.args[0].kind == 0
                   for o in getattr(ops, n).overloads)}
    assert set(ops._METHODS) == want
    assert "where" not in want and {"sum", "add_", "max", "cast", "dot"} <= want
    for n in want:
        assert vars(dispatch.Tensor)[n].__doc__ == f"dispatch.ops.{n}(self, ...)"


def test_operators_are_functions_of_the_package_too():
    import dispatch
    a = dispatch.tensor([0.5, 1.0])
    assert dispatch.exp is dispatch.ops.exp and dispatch.tanh is dispatch.ops.tanh
    assert dispatch.exp(a).tolist() == dispatch.ops.exp(a).tolist()
    assert "tanh" in dir(dispatch) and "sum" not in dispatch.__all__
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        dispatch.no_such_op
