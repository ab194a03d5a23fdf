"""The C base of dispatch.Tensor (dispatch/_fastpath_tensor.c): the operators run
in the type slots, and the object owns its runtime pointer. Every way in and
out: tensor/tensor, tensor/number both ways, comparisons, errors, hashing,
weak references, the cffi pointer made on demand, reference counts, and a
Python kernel reached from the slot."""

from __future__ import annotations

import gc
import operator
import threading
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatch
from dispatch import _fastpath, library

OPS = [operator.add, operator.sub, operator.mul, operator.truediv,
       operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_every_slot_matches_numpy(op):
    a = np.array([1.5, -2.0, 3.0, 0.0], np.float32)
    b = np.array([0.5, -2.0, 4.0, 1.0], np.float32)
    ta, tb = dispatch.from_numpy(a), dispatch.from_numpy(b)
    for got, want in ((op(ta, tb), op(a, b)), (op(ta, 2), op(a, np.float32(2))),
                      (op(3, tb), op(np.float32(3), b))):
        assert isinstance(got, dispatch.Tensor)
        assert got.numpy().tolist() == want.tolist()
        assert got.numpy().dtype == want.dtype


def test_results_are_tensors_with_a_working_cffi_pointer():
    r = dispatch.ones(2, 3) + dispatch.ones(3)
    assert type(r) is dispatch.Tensor and isinstance(r, _fastpath.TensorBase)
    assert r._p is r._p  # made once, kept
    assert r.shape == (2, 3) and r._p.numel == 6 and r.tolist() == [[2.0] * 3] * 2


def test_unsupported_operands_give_python_type_errors():
    t = dispatch.ones(2)
    with pytest.raises(TypeError, match="unsupported operand"):
        t + "x"
    with pytest.raises(TypeError, match="unsupported operand"):
        [1] * 0 - t  # list - Tensor
    assert (t == "x") is False  # == falls back to identity, as for any Python object


def test_runtime_errors_carry_their_message():
    with pytest.raises(ValueError, match=r"shapes \[2\] and \[3\] cannot be broadcast"):
        dispatch.ones(2) + dispatch.ones(3)
    with pytest.raises(TypeError, match="Subtraction, the `-` operator, with two bool"):
        dispatch.tensor([True]) - dispatch.tensor([False])


def test_hash_is_identity_and_weak_references_work():
    t = dispatch.ones(2)
    assert hash(t) == hash(t) and {t: 1}[t] == 1
    ref = weakref.ref(t)
    assert ref() is t
    del t
    gc.collect()
    assert ref() is None


def test_no_reference_is_leaked_or_freed_twice():
    gc.collect()
    before_t, before_s = dispatch.live_tensors(), dispatch.live_storages()
    a, b = dispatch.ones(4), dispatch.zeros(4)
    for _ in range(200):
        r = a * b + 1.0 - a
        _ = r._p.numel  # the pointer made on demand must not change ownership
        _ = (r < a).sum()
    del a, b, r, _
    gc.collect()
    assert dispatch.live_tensors() == before_t
    assert dispatch.live_storages() == before_s


def test_large_operands_release_the_gil_and_agree_across_threads():
    """Above 65536 elements the slot releases the GIL: threads run their
    additions concurrently and each gets its own right answer."""
    x = np.arange(1 << 18, dtype=np.float64)
    tx = dispatch.from_numpy(x)
    out = {}

    def work(k):
        out[k] = (tx + float(k)).numpy()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for k in range(4):
        assert np.array_equal(out[k], x + k)


def test_the_slot_goes_through_the_dispatcher():
    """Thread-local keys apply: the tracer sees the slot's call, and a
    Python-key kernel (active only where the key is included) runs from it."""
    a, b = dispatch.ones(2), dispatch.ones(2)
    with library.trace() as calls:
        a * b
        a < b
    assert calls == ["mul.Tensor", "lt.Tensor"]
    seen = []

    @library.impl("sub.Tensor", "Python")
    def spy(self, other, alpha=1):
        seen.append("sub")
        return dispatch.ops.sub(self, other, alpha=alpha)  # Python is excluded inside

    with library.include_keys("Python"):
        r = a - b
    assert seen == ["sub"] and r.tolist() == [0.0, 0.0]
    a - b  # without the key: no Python kernel
    assert seen == ["sub"]


def test_tensor_cannot_be_built_directly():
    with pytest.raises(TypeError, match="create tensors with"):
        dispatch.Tensor()


def test_init_is_once_only():
    with pytest.raises(RuntimeError, match="initialised once"):
        _fastpath.init(dispatch.Tensor, dispatch.dtype, (1,) * 7, (1,) * 10, (len,) * 10,
                       (len,) * 10, len, len, len)


def test_call1_call2_check_their_arguments():
    with pytest.raises(TypeError, match="expected 2 arguments"):
        _fastpath.call1(1)
    with pytest.raises(TypeError, match="expected Tensor arguments"):
        _fastpath.call2(1, dispatch.ones(1), 2.0)


def test_ops_and_methods_take_the_c_path_and_stay_correct():
    """ops.<name> is cached as a module attribute after first use (the
    module's own helpers still see the builtins sum/max), and Tensor methods
    are real methods."""
    from dispatch import ops

    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ops.sum(t).item() == 10.0 and "sum" in vars(ops)
    assert ops.sum(t, dim=0).tolist() == [4.0, 6.0]  # the binding path: builtins.sum/max
    assert ops.sum(t, 1, keepdim=True).tolist() == [[3.0], [7.0]]
    assert t.sum().item() == 10.0 and t.exp().shape == (2, 2)
    assert "sum" in vars(dispatch.Tensor)
    with pytest.raises(AttributeError, match="has no attribute 'nosuch'"):
        t.nosuch  # noqa: B018


def test_a_new_overload_replaces_the_cached_packet():
    """A built-in name's packet is cached in the module; library.define of a
    new overload drops it, so the next lookup sees the new overload."""
    from dispatch import library, ops

    t = dispatch.tensor([1.0, -2.0])
    assert ops.neg(t).tolist() == [-1.0, 2.0] and "neg" in vars(ops)
    library.define("neg.fastcache(Tensor self, Tensor other) -> Tensor")
    library.impl("neg.fastcache", "CPU")(lambda self, other: self - other)
    assert "neg" not in vars(ops)
    assert ops.neg(t, t).tolist() == [0.0, 0.0]
    assert ops.neg(t).tolist() == [-1.0, 2.0]  # the table's overload still binds first


# The binder against the rules (Note [Binding in C]) -----------------------------------------
# The binding rules live once, in C; here they are written out again from each
# overload's schema, as the test's own model: which overload a call binds to,
# or the error converting a value raises. Each call is made through the packet
# and through the overloads one by one, and all must agree with the model.
_TENSOR, _SCALAR, _INT, _FLOAT, _BOOL, _STR, _SCALARTYPE = (  # read from C, never retyped
    dispatch._core.lib.DISPATCH_TYPE_TENSOR, dispatch._core.lib.DISPATCH_TYPE_SCALAR,
    dispatch._core.lib.DISPATCH_TYPE_INT, dispatch._core.lib.DISPATCH_TYPE_FLOAT,
    dispatch._core.lib.DISPATCH_TYPE_BOOL, dispatch._core.lib.DISPATCH_TYPE_STR,
    dispatch._core.lib.DISPATCH_TYPE_SCALARTYPE)
_VALUES = st.sampled_from([
    None, True, False, 0, 1, -1, 2, 2**70, 0.5, -2.0, float("nan"), (0,), (1,), [0, 1], (0, 0),
    (), [True], (0.5,), np.int64(1), np.float32(0.5), np.bool_(True), "x", "dim",
    dispatch.float64, dispatch.int32,
])
_OPS = ["sum", "mean", "max", "min", "add", "sub", "mul", "addcmul", "where", "cast", "exp",
        "maximum", "dot", "fill_", "add_"]
_KEYS = ["dim", "keepdim", "dtype", "alpha", "value", "other", "self", "tensor1", "bogus"]


def _model_int(v):  # an int that is not a bool; NumPy's integers too
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _model_fits(a, v):
    """True or False: whether v fits argument a; or the exception converting it raises."""
    if v is None:
        return a.optional
    in_range = lambda x: -2**63 <= int(x) < 2**63  # noqa: E731
    if a.is_list:
        vs = (v,) if _model_int(v) else v if isinstance(v, (tuple, list)) else None
        if vs is None or not all(_model_int(x) for x in vs):
            return False
        return TypeError if len(vs) > 16 else all(map(in_range, vs)) or OverflowError
    number = isinstance(v, (int, float, np.integer, np.floating, np.bool_))
    if a.kind == _TENSOR and isinstance(v, dispatch.Tensor):
        return True
    if a.kind in (_TENSOR, _SCALAR):  # a number: bool, int (in int64) or float
        if not number:
            return False
        return in_range(v) or OverflowError if _model_int(v) else True
    if a.kind == _INT:
        return _model_int(v) and (in_range(v) or OverflowError)
    if a.kind == _FLOAT:
        return (_model_int(v) or isinstance(v, (float, np.floating))) and not isinstance(v, bool)
    if a.kind == _BOOL:
        return isinstance(v, (bool, np.bool_))
    return a.kind == _SCALARTYPE and isinstance(v, dispatch.dtype)


def _model_binds(o, args, kwargs):
    """True, False, or the exception binding (args, kwargs) to overload o raises."""
    names = [a.name for a in o.args]
    if len(args) > sum(not a.kwarg_only for a in o.args) or any(k not in names for k in kwargs):
        return False
    given = set()
    for i, v in [*enumerate(args), *((names.index(k), v) for k, v in kwargs.items())]:
        fits = False if i in given else _model_fits(o.args[i], v)
        if fits is not True:
            return fits
        given.add(i)
    return all(i in given or a.has_default for i, a in enumerate(o.args))


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the kind of failure is what we compare
        return ("raise", type(e).__name__)
    if isinstance(r, dispatch.Tensor):
        return ("tensor", r.dtype.name, r.shape, r.numpy().tobytes())
    return ("value", repr(r))


def _message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return str(e)
    return None


def _agrees_with_the_model(packet, fresh):
    """fresh() -> (args, kwargs), new tensors each time (some operators write)."""
    def call(f):
        args, kws = fresh()
        return _outcome(lambda: f(*args, **kws))

    # `self` is a keyword like any other: the packet's call is C's (Note
    # [Operator packets]), with no Python parameter of that name in the way
    for o in packet.overloads:
        args, kws = fresh()
        expect = _model_binds(o, args, kws)
        if expect is False:
            args, kws = fresh()
            assert "received an invalid combination of arguments; expected" in (
                _message(lambda: o(*args, **kws)) or ""), (o, args, kws)
            continue
        if expect is True:
            args, kws = fresh()
            assert "received an invalid combination" not in (
                _message(lambda: o(*args, **kws)) or ""), (o, args, kws)
            r = call(o)
            assert call(packet) == r, (o, fresh())
            return r
        assert call(o) == call(packet) == ("raise", expect.__name__), (o, fresh())
        return None
    args, kws = fresh()
    assert f"{packet.name}() received an invalid combination of arguments - got" in (
        _message(lambda: packet(*args, **kws)) or "")
    return None


@settings(max_examples=400, deadline=None)
@given(op=st.sampled_from(_OPS), ntensors=st.integers(0, 3),
       extra=st.lists(_VALUES, max_size=2),
       kw=st.dictionaries(st.sampled_from(_KEYS), st.one_of(_VALUES, st.just("T")), max_size=2))
def test_c_binding_agrees_with_the_binding_rules(op, ntensors, extra, kw):
    from dispatch import ops

    def fresh():
        ts = [dispatch.tensor([[1.0, -2.0], [3.0, 4.0]]),
              dispatch.tensor([[0.5, 2.0], [1.0, -1.0]]),
              dispatch.tensor([[True, False], [False, True]])][:ntensors]
        kws = {k: (dispatch.tensor([2.0, 1.0]) if v == "T" else v) for k, v in kw.items()}
        return ts + list(extra), kws

    _agrees_with_the_model(getattr(ops, op), fresh)


@settings(max_examples=200, deadline=None)
@given(op=st.sampled_from(["sum", "mean", "max", "min"]),
       dim=st.sampled_from([0, 1, -1, (0,), (0, 1), [1], (1, 0)]),
       keepdim=st.sampled_from([None, True, False]), as_kw=st.booleans(),
       dtype=st.sampled_from([None, dispatch.float64]))
def test_c_binding_agrees_on_reductions(op, dim, keepdim, as_kw, dtype):
    """The common, valid calls (the random ones above mostly fail to bind)."""
    from dispatch import ops

    x = dispatch.tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])
    args = (x,) if as_kw else (x, dim)
    kws = {"dim": dim} if as_kw else {}
    if keepdim is not None:
        kws["keepdim"] = keepdim
    if dtype is not None and op in ("sum", "mean"):
        kws["dtype"] = dtype
    c = _outcome(lambda: getattr(ops, op)(*args, **kws))
    assert c == _agrees_with_the_model(getattr(ops, op), lambda: (args, kws))
    if op in ("max", "min") and not isinstance(dim, (tuple, list)):
        # an int dim gives (values, indices), as torch.max(x, dim) (issue 16),
        # named as torch.return_types.max's
        assert c[0] == "value" and c[1].startswith(f"{op}(values=tensor("), c
    elif not isinstance(dim, (tuple, list)) or op in ("sum", "mean"):
        assert c[0] == "tensor", c
