"""out= forms of the operators (Note [out=] in sources/dispatcher/operators_shared.c):
the .out overloads of operators.toml write into the given tensor with
PyTorch's rules and return that very object."""

import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import dispatch
from dispatch import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import assert_same_bits  # noqa: E402
from _load import load_file  # noqa: E402

A = [[0.5, 1.25, 2.0], [3.5, 0.75, 1.5]]
B = [[2.0, 0.5, 1.0], [0.25, 4.0, 1.5]]
ROW = [1.5, 0.5, 2.5]


def _bits(t):
    """The exact values (float bits) of a tensor, for bit-for-bit comparison."""
    flat = t.reshape(-1).tolist() if t.ndim else [t.item()]
    if t.dtype in (dispatch.float32, dispatch.float16, dispatch.bfloat16):
        return [struct.pack("<f", v) for v in flat]
    if t.dtype == dispatch.float64:
        return [struct.pack("<d", v) for v in flat]
    return flat


def _a():
    return dispatch.tensor(A)


def _b():
    return dispatch.tensor(B)


# (name, args, kwargs): every elementwise .out overload and the reductions'
CASES = [
    ("add", lambda: (_a(), _b()), {}),
    ("add", lambda: (_a(), dispatch.tensor(ROW)), {"alpha": 3}),
    ("sub", lambda: (_a(), _b()), {"alpha": 0.5}),
    ("mul", lambda: (_a(), 0.1), {}),
    ("div", lambda: (_a(), _b()), {}),
    ("maximum", lambda: (_a(), _b()), {}),
    ("minimum", lambda: (_a(), dispatch.tensor(ROW)), {}),
    ("eq", lambda: (_a(), _b()), {}),
    ("ne", lambda: (_a(), _b()), {}),
    ("lt", lambda: (_a(), _b()), {}),
    ("le", lambda: (_a(), 1.5), {}),
    ("gt", lambda: (_a(), _b()), {}),
    ("ge", lambda: (_a(), _b()), {}),
    ("neg", lambda: (_a(),), {}),
    ("abs", lambda: (_a(),), {}),
    ("sqrt", lambda: (_a(),), {}),
    ("exp", lambda: (_a(),), {}),
    ("log", lambda: (_a(),), {}),
    ("expm1", lambda: (_a(),), {}),
    ("log1p", lambda: (_a(),), {}),
    ("tanh", lambda: (_a(),), {}),
    ("addcmul", lambda: (_a(), _b(), dispatch.tensor(ROW)), {"value": 0.5}),
    ("where", lambda: (_a() > 1.0, _a(), _b()), {}),
    ("sum", lambda: (_a(),), {}),
    ("sum", lambda: (_a(), 1), {}),
    ("sum", lambda: (_a(), [0], True), {}),
    ("mean", lambda: (_a(),), {}),
    ("mean", lambda: (_a(), 0), {}),
    ("max", lambda: (_a(), [1]), {}),
    ("min", lambda: (_a(), [0, 1]), {}),
]
IDS = [f"{n}-{i}" for i, (n, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("route", ["dispatch", "ops"])
@pytest.mark.parametrize("name,args,kwargs", CASES, ids=IDS)
def test_out_form_equals_functional_result_bits_and_returns_out(route, name, args, kwargs):
    fn = getattr(dispatch if route == "dispatch" else dispatch.ops, name)
    want = fn(*args(), **kwargs)
    out = dispatch.zeros(want.shape, dtype=want.dtype)
    got = fn(*args(), **kwargs, out=out)
    assert got is out
    assert out.dtype == want.dtype and out.shape == want.shape
    assert _bits(out) == _bits(want)


@pytest.mark.parametrize("route", ["dispatch", "ops"])
@pytest.mark.parametrize("name,args,kwargs", CASES, ids=IDS)
def test_out_none_is_the_functional_call(route, name, args, kwargs):
    """torch treats out=None as no out= at all (issue 27: it was refused as
    'an invalid combination of arguments')."""
    fn = getattr(dispatch if route == "dispatch" else dispatch.ops, name)
    want = fn(*args(), **kwargs)
    got = fn(*args(), **kwargs, out=None)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert _bits(got) == _bits(want)


def test_out_none_on_methods_and_overloads_without_out():
    x = _a()
    assert _bits(x.sum(1, out=None)) == _bits(x.sum(1))
    assert _bits(x.exp(out=None)) == _bits(x.exp())
    v, i = dispatch.max(x, 1, out=None)  # max.dim has no .out overload here
    assert _bits(v) == _bits(dispatch.max(x, 1).values) and i.tolist() == [2, 0]
    assert _bits(dispatch.amax(x, out=None)) == _bits(dispatch.amax(x))
    with pytest.raises(TypeError, match="invalid combination"):  # the .out overload itself
        dispatch.ops.add.out(x, x, out=None)


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=IDS)
def test_out_form_into_a_transposed_view_and_a_sliced_view(name, args, kwargs):
    fn = getattr(dispatch.ops, name)
    want = fn(*args(), **kwargs)
    if want.ndim == 2:
        base = dispatch.zeros((want.shape[1], want.shape[0]), dtype=want.dtype)
        view = base.T  # not contiguous
    else:
        base = dispatch.zeros((max(want.numel(), 1) * 2,), dtype=want.dtype)
        view = base[::2] if want.ndim == 1 else base[0]
    assert fn(*args(), **kwargs, out=view) is view
    assert _bits(view) == _bits(want)
    if want.ndim == 1:  # the skipped elements untouched
        assert base[1::2].tolist() == [0] * want.numel() or base.dtype == dispatch.bool


def test_functional_calls_keep_their_fast_paths_not_the_out_overloads():
    for name in ("add", "mul", "lt", "exp", "neg", "sum"):
        p = dispatch.ops.__getattr__(name)
        first = p.overloads[0]
        assert ".out" not in first.name and "_out" not in first.name
        fast = p._fast2_at if name in ("add", "mul", "lt") else p._fast1_at
        assert fast == first._at
    r = dispatch.ops.add(_a(), _b())
    assert r.tolist() == [[2.5, 1.75, 3.0], [3.75, 4.75, 3.0]]


def test_out_overloads_are_in_the_schema_table_with_torchs_schemas():
    schemas = {o.name: o.schema for o in dispatch.ops.add.overloads}
    assert "Tensor(a!) out" in schemas["add.out"] and "alpha=1" in schemas["add.out"]
    names = {o.name for o in dispatch.ops.sum.overloads}
    assert {"sum.out", "sum.IntList_out"} <= names
    assert dispatch.ops.exp.out(_a(), out=dispatch.zeros((2, 3))).shape == (2, 3)


# dtypes ------------------------------------------------------------------------------------

def test_float_result_into_integer_out_raises_cant_be_cast():
    out = dispatch.zeros((2, 3), dtype=dispatch.int64)
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired "
                                           "output type int64"):
        dispatch.add(_a(), _b(), out=out)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dispatch.exp(dispatch.tensor([1, 2]), out=dispatch.zeros(2, dtype=dispatch.int32))
    assert out.tolist() == [[0, 0, 0], [0, 0, 0]]


def test_integer_result_into_bool_out_raises():
    with pytest.raises(RuntimeError, match="result type int64 can't be cast to the desired "
                                           "output type bool"):
        dispatch.add(dispatch.tensor([1, 2]), dispatch.tensor([3, 4]),
                     out=dispatch.zeros(2, dtype=dispatch.bool))


def test_result_into_a_wider_or_float_out_is_cast_on_the_write():
    a, b = dispatch.tensor([1, 2, 3], dtype=dispatch.int32), dispatch.tensor([4, 5, 6])
    out = dispatch.zeros(3, dtype=dispatch.float64)
    assert dispatch.mul(a, b, out=out) is out and out.tolist() == [4.0, 10.0, 18.0]
    f32 = dispatch.tensor([0.1, 0.2], dtype=dispatch.float32)
    out64 = dispatch.zeros(2, dtype=dispatch.float64)
    dispatch.exp(f32, out=out64)  # computed in float32, widened
    assert out64.tolist() == dispatch.exp(f32).to(dispatch.float64).tolist()
    # integers into float: exp computes in float32 as without out
    dispatch.exp(dispatch.tensor([1, 2]), out=out64)
    assert out64.tolist() == dispatch.exp(dispatch.tensor([1, 2])).to(dispatch.float64).tolist()


# The out= fuzz (issue 27): every operator with an .out overload, every input
# dtype, the other operand a tensor, a Python float or int, or a 0-dim
# tensor, into every out dtype the result may be cast to; out= must give the
# functional result cast to out's dtype, bit for bit (NaN payload and sign,
# the zeros' sign). It gave the float32 result, unrounded, for bfloat16
# mul/div by a scalar and for float16/bfloat16 addcmul.
_DTYPES = [getattr(dispatch, n) for n in dispatch._tables.DTYPE_NAMES]
_FLOATS = (dispatch.float16, dispatch.bfloat16, dispatch.float32, dispatch.float64)
_CATEGORY = {dt: 0 if dt == dispatch.bool else 2 if dt in _FLOATS else 1 for dt in _DTYPES}
_F_VALUES = [[1.1, 2.3, -0.0, 5.0, float("nan")], [0.1, -7.7, 1e-3, float("inf"), 70000.0]]
_I_VALUES = [[1, 2, 0, 5, 7], [3, 9, 4, 6, 8]]


def _operand(dtype, row):
    if dtype == dispatch.bool:
        rows = (_I_VALUES[row], _I_VALUES[1 - row])
        return dispatch.tensor([[v % 2 == 1 for v in r] for r in rows])
    values = _F_VALUES if dtype in _FLOATS else _I_VALUES
    data = [values[row], [v * 0.5 if isinstance(v, float) else v for v in values[1 - row]]]
    return dispatch.tensor(data, dtype=dispatch.float64).to(dtype)


_OTHERS = {"tensor": lambda dt: _operand(dt, 1), "float": lambda dt: 3.0,
           "int": lambda dt: 3, "0-dim": lambda dt: dispatch.tensor(3.0, dtype=dispatch.float64)}
_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"]
_UNARY = ["neg", "abs", "sqrt", "exp", "log", "expm1", "log1p", "tanh"]


def _calls(name, dtype):
    """(label, args, kwargs) of one operator for one input dtype."""
    x = _operand(dtype, 0)
    if name in _BINARY:
        others = _OTHERS if name not in ("maximum", "minimum") else {"tensor": _OTHERS["tensor"]}
        for label, other in others.items():
            yield label, (x, other(dtype)), {}
            if label in ("float", "0-dim") and name in ("mul", "div"):
                yield label + " on the left", (other(dtype), x), {}
    elif name in _UNARY:
        yield "", (x,), {}
    elif name == "addcmul":
        yield "tensors", (x, x, _operand(dtype, 1)), {}
        yield "value", (x, x, _operand(dtype, 1)), {"value": 3 if _CATEGORY[dtype] < 2 else 0.1}
    elif name == "where":
        yield "tensors", (x > _operand(dtype, 1), x, _operand(dtype, 1)), {}
        yield "float", (x > _operand(dtype, 1), x, 2.5), {}


@pytest.mark.parametrize("name", _BINARY + _UNARY + ["addcmul", "where"])
def test_out_into_every_castable_dtype_is_the_functional_result_cast(name):
    fn = getattr(dispatch.ops, name)
    checked = 0
    for dtype in _DTYPES:
        for label, args, kwargs in _calls(name, dtype):
            try:
                want = fn(*args, **kwargs)
            except (TypeError, RuntimeError, ValueError) as e:  # not defined for these dtypes
                with pytest.raises(type(e)):
                    fn(*args, **kwargs, out=dispatch.zeros(2, 5, dtype=dtype))
                continue
            for out_dtype in _DTYPES:
                what = f"{name}({dtype}, {label}, out={out_dtype})"
                out = dispatch.zeros(*want.shape, dtype=out_dtype)
                if _CATEGORY[out_dtype] < _CATEGORY[want.dtype]:
                    with pytest.raises(RuntimeError, match="can't be cast"):
                        fn(*args, **kwargs, out=out)
                    continue
                assert fn(*args, **kwargs, out=out) is out, what
                assert_same_bits(out, want.to(out_dtype), what)
                checked += 1
    assert checked >= 40


@pytest.mark.parametrize("name,dims", [("sum", ()), ("sum", ([1],)), ("mean", ([0],)),
                                       ("mean", ()), ("max", ([1],)), ("min", ([0, 1],)),
                                       ("amax", ([1],)), ("amin", ())])
def test_reduction_out_of_every_dtype_is_the_functional_result(name, dims):
    """A reduction's out= takes out's dtype as its dtype= (sum, mean) or
    wants the input's (max, min): then the bits of that functional call."""
    fn = getattr(dispatch.ops, name)
    for dtype in _DTYPES:
        x = _operand(dtype, 0)
        for out_dtype in _DTYPES:
            what = f"{name}({dtype}, {dims}, out={out_dtype})"
            takes_dtype = name in ("sum", "mean")
            try:
                want = fn(x, *dims, dtype=out_dtype) if takes_dtype else fn(x, *dims)
            except (TypeError, RuntimeError) as e:
                with pytest.raises(type(e)):
                    fn(x, *dims, out=dispatch.zeros(1, dtype=out_dtype))
                continue
            out = dispatch.zeros(*want.shape, dtype=out_dtype)
            if not takes_dtype and out_dtype != dtype:
                with pytest.raises(RuntimeError, match="Expected the dtype"):
                    fn(x, *dims, out=out)
                continue
            assert fn(x, *dims, out=out) is out, what
            assert_same_bits(out, want, what)


def test_bfloat16_by_a_scalar_and_half_addcmul_into_float32_out_round_first():
    """issue 27's cases: torch gives these bits too."""
    x = dispatch.tensor([1.0, 2.0, 5.0], dtype=dispatch.bfloat16)
    o = dispatch.zeros(3)
    dispatch.div(x, 3.0, out=o)
    assert o.tolist() == [0.333984375, 0.66796875, 1.6640625]
    h = dispatch.tensor([1.1, 2.3], dtype=dispatch.float16)
    o = dispatch.zeros(2)
    dispatch.ops.addcmul(h, h, h, out=o)
    assert o.tolist() == [2.30859375, 7.59375]


@pytest.mark.parametrize("dtype", [dispatch.bool, dispatch.uint8, dispatch.int32,
                                   dispatch.float32])
def test_comparison_into_a_bool_or_any_out_dtype(dtype):
    out = dispatch.zeros((2, 3), dtype=dtype)
    assert dispatch.lt(_a(), _b(), out=out) is out
    want = (_a() < _b()).tolist()
    assert out.tolist() == [[type(out.tolist()[0][0])(v) for v in r] for r in want]


def test_float16_times_scalar_into_float32_out_keeps_the_float16_rounding():
    h = dispatch.tensor([6.0], dtype=dispatch.float16)
    out = dispatch.zeros(1, dtype=dispatch.float32)
    dispatch.mul(h, 0.1, out=out)
    assert out.tolist() == (h * 0.1).to(dispatch.float32).tolist()
    out16 = dispatch.zeros(1, dtype=dispatch.float16)
    assert dispatch.mul(h, 0.1, out=out16) is out16 and _bits(out16) == _bits(h * 0.1)


def test_sum_out_takes_outs_dtype_as_pytorch():
    x = dispatch.tensor([[1, 2], [3, 4]], dtype=dispatch.int32)
    out = dispatch.zeros(2, dtype=dispatch.int32)  # torch: dtype = out's
    assert dispatch.sum(x, 1, out=out) is out and out.tolist() == [3, 7]
    f = dispatch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=dispatch.float32)
    o64 = dispatch.zeros(2, dtype=dispatch.float64)
    dispatch.sum(f, 0, out=o64)
    assert o64.tolist() == dispatch.sum(f, 0, dtype=dispatch.float64).tolist()
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float32"):
        dispatch.sum(f, 0, dtype=dispatch.float32, out=o64)
    with pytest.raises(TypeError, match="mean"):
        dispatch.mean(f, 0, out=dispatch.zeros(2, dtype=dispatch.int64))


def test_max_out_wants_the_inputs_dtype():
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match"):
        dispatch.max(_a(), [1], out=dispatch.zeros(2, dtype=dispatch.float64))


# shapes ------------------------------------------------------------------------------------

def test_out_of_another_shape_raises_naming_both_shapes():
    with pytest.raises(RuntimeError, match=r"out has shape \[3\] but the result has shape "
                                           r"\[2, 3\]"):
        dispatch.add(_a(), _b(), out=dispatch.zeros(3))
    with pytest.raises(RuntimeError, match=r"out has shape \[2, 3\] but the result has shape "
                                           r"\[2\]"):
        dispatch.sum(_a(), 1, out=dispatch.zeros((2, 3)))


def test_empty_out_is_not_resized_but_refused():
    # torch resizes an out with no elements; the core has no resize: an error
    with pytest.raises(RuntimeError, match=r"out has shape \[0\]"):
        dispatch.exp(_a(), out=dispatch.zeros(0))


def test_out_with_internal_overlap_expanded_raises():
    out = dispatch.zeros(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        dispatch.add(dispatch.tensor(ROW), 1.0, out=out)


# devices -----------------------------------------------------------------------------------

def test_out_on_another_device_than_the_inputs_raises():
    with pytest.raises(RuntimeError, match="Expected out tensor to have device cpu, but got "
                                           "meta instead"):
        dispatch.add(_a(), _b(), out=dispatch.empty((2, 3), device="meta"))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device cpu"):
        dispatch.sum(_a(), 1, out=dispatch.empty(2, device="meta"))


def test_meta_out_of_meta_inputs_checks_shape_only():
    m = dispatch.empty((2, 3), device="meta")
    out = dispatch.empty((2, 3), device="meta")
    assert dispatch.add(m, m, out=out) is out
    with pytest.raises(RuntimeError, match="out has shape"):
        dispatch.add(m, m, out=dispatch.empty(3, device="meta"))


def test_cuda_out_with_cpu_inputs_raises(fake_cuda):
    g = dispatch.zeros((2, 3)).to("cuda")
    # the dispatcher's own check of the call's devices, before the kernel
    with pytest.raises(RuntimeError, match="at least two devices, cuda and cpu.*argument 'out' "
                                           "is on cuda"):
        dispatch.add(_a(), _b(), out=g)


# aliasing ----------------------------------------------------------------------------------

def test_out_exactly_aliasing_an_input_works_like_in_place():
    a = _a()
    assert dispatch.add(a, _b(), out=a) is a
    assert a.tolist() == (_a() + _b()).tolist()
    x = dispatch.tensor([0.5, 1.0, 2.0])
    assert dispatch.exp(x, out=x) is x and x.tolist() == dispatch.exp(
        dispatch.tensor([0.5, 1.0, 2.0])).tolist()


def test_out_partially_overlapping_an_input_is_refused_as_torch():
    x = dispatch.tensor([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory"):
        dispatch.add(x[:-1], 1.0, out=x[1:])
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        y = dispatch.tensor(A)
        dispatch.sum(y, 0, out=y[0])


def test_out_interleaved_with_an_input_without_common_elements_works():
    # the ranges cross but no element is shared (PyTorch: too hard to tell, runs)
    x = dispatch.tensor([1.0, 10.0, 2.0, 20.0, 3.0, 30.0])
    dispatch.add(x[::2], 0.5, out=x[1::2])
    assert x.tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]


def test_out_transposed_view_of_its_input_is_refused():
    # both dense, the same memory, other strides: a partial overlap to PyTorch
    x = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="some elements"):
        dispatch.neg(x, out=x.T)


def test_a_number_as_out_is_refused():
    with pytest.raises(TypeError, match="argument 'out' must be a Tensor"):
        dispatch.add(dispatch.tensor(2.0), 1.0, out=3.0)
    with pytest.raises(TypeError, match="argument 'out' must be a Tensor"):
        dispatch.sum(dispatch.tensor(ROW), out=0)


def test_read_only_out_is_refused():
    np = pytest.importorskip("numpy")
    arr = np.zeros(3, dtype=np.float32)
    arr.flags.writeable = False
    ro = dispatch.from_numpy(arr)
    with pytest.raises(ValueError, match="read-only"):
        dispatch.add(dispatch.tensor(ROW), 1.0, out=ro)


def test_in_place_method_returns_self_object():
    a = _a()
    assert a.add_(1) is a and a.mul_(_b()) is a and a.sub_(_b(), alpha=2) is a
    assert a.add_(1, alpha=2) is a and a.fill_(0.5) is a


# CUDA: the out overloads are registered at the CUDA key with the elementwise kernels; the
# device loop itself is not run without a GPU (the host half is, with a fake device loop).

_CASES = r'''
a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
def add_out():
    o = g([[0.0] * 3] * 2)
    r = dispatch.add(g(a), g(a), out=o)
    return [r is o, o.cpu().tolist()]
case("add_out", add_out)
def exp_out_t():
    o = g([[0.0] * 2] * 3).T
    dispatch.exp(g(a), out=o)
    return [o.cpu().tolist(), dispatch.exp(g(a)).cpu().tolist()]
case("exp_out_t", exp_out_t)
case("lt_out_int", lambda: dispatch.lt(g(a), 2.5, out=g([[0] * 3] * 2, dispatch.int32)
                                       ).cpu().tolist())
case("out_cpu", lambda: dispatch.add(g(a), g(a), out=dispatch.zeros((2, 3))))
case("out_shape", lambda: dispatch.add(g(a), g(a), out=g([0.0])))
case("out_cast", lambda: dispatch.add(g(a), g(a), out=g([[0] * 3] * 2, dispatch.int64)))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def fake_device_out(tmp_path_factory, fake_cuda_child_env):
    if cuda.is_available():
        pytest.skip("a GPU is present: the real device loops are registered")
    path = Path(__file__).with_name("test_cuda_ops.py")
    mod = load_file(path, "_cuda_ops_for_out")
    prelude = mod._FAKE_DEVICE.split("a = [[1.0, 2.0, 3.0]")[0]
    tmp = tmp_path_factory.mktemp("fake_device_out")
    proc = subprocess.run([sys.executable, "-c", prelude + _CASES], capture_output=True,
                          text=True, cwd=tmp, timeout=300, env=fake_cuda_child_env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_cuda_out_forms_run_the_device_loop_into_out(fake_device_out):
    c = fake_device_out["add_out"]
    assert "error" not in c, c
    assert len(c["calls"]) == 1 and c["calls"][0]["loop"] == "add"
    assert c["value"] == [True, [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]]
    t = fake_device_out["exp_out_t"]
    assert "error" not in t, t
    assert t["value"][0] == t["value"][1]
    assert abs(t["value"][0][1][2] - math.exp(6.0)) < 1e-3
    assert fake_device_out["lt_out_int"]["value"] == [[1, 1, 0], [0, 0, 0]]


def test_cuda_out_errors_before_any_device_loop(fake_device_out):
    for name, msg in [("out_cpu", "argument 'out' on cpu"),
                      ("out_shape", "out has shape [1] but the result has shape [2, 3]"),
                      ("out_cast", "result type float32 can't be cast")]:
        c = fake_device_out[name]
        assert msg in c.get("error", ""), c
        assert c["calls"] == []


# reductions written straight into out (the float32/float64 CPU loop) ---------------------

@pytest.mark.parametrize("dtype", [dispatch.float32, dispatch.float64])
@pytest.mark.parametrize("op,kw", [("sum", {"dim": 1}), ("sum", {"dim": 0, "keepdim": True}),
                                   ("mean", {"dim": [0, 1]}), ("amax", {"dim": [1]}),
                                   ("amin", {"dim": [0]}), ("sum", {"dim": None})])
def test_reduction_into_a_strided_view_writes_only_its_elements(op, kw, dtype):
    import numpy as np
    x = dispatch.from_numpy(np.arange(60, dtype=dispatch.float64.name if dtype == dispatch.float64
                                      else "float32").reshape(6, 10) * 0.37 - 4.0)
    want = getattr(dispatch, op)(x, **kw)
    big = dispatch.full((2 * max(want.numel(), 1) + 3,), 123.5, dtype=dtype)
    out = big[1:1 + 2 * want.numel():2].reshape(want.shape) if want.ndim else big[1]
    assert getattr(dispatch, op)(x, **kw, out=out) is out
    assert _bits(out) == _bits(want)
    left = [v for i, v in enumerate(big.tolist()) if not (i % 2 == 1 and i < 1 + 2 * want.numel())]
    assert left == [123.5] * len(left)


def test_reduction_out_overlapping_its_input_exactly_reads_before_it_writes():
    x = dispatch.tensor([[1.5, -2.0, 3.25]])
    want = x.sum(0, keepdim=True).tolist()
    assert dispatch.sum(x, 0, keepdim=True, out=x) is x and x.tolist() == want


def test_reduction_out_with_dtype_and_float16_still_go_through_a_copy():
    f = dispatch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=dispatch.float16)
    o = dispatch.zeros(2, dtype=dispatch.float16)
    assert dispatch.sum(f, 1, out=o) is o and _bits(o) == _bits(f.sum(1))
    g = dispatch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=dispatch.float64)
    o32 = dispatch.zeros(2, dtype=dispatch.float32)
    assert dispatch.sum(g, 1, dtype=dispatch.float32, out=o32) is o32
    assert _bits(o32) == _bits(g.sum(1, dtype=dispatch.float32))


def test_help_says_what_an_out_form_needs_without_pointing_into_the_sources():
    """help(dispatch.add) documents add.out for a user: what out must be, and
    that it is returned; no docstring sends the user to a Note in the C code."""
    from dispatch._ops_generated import OPERATORS
    outs = 0
    for name, (overloads, doc) in OPERATORS.items():
        assert "Note [" not in doc, name
        for full in overloads:
            if full.endswith("out"):
                outs += 1
                line = next(ln for ln in doc.splitlines() if full in ln.split(": ", 1)[0])
                assert "written into out, which is returned" in line, (full, doc)
    assert outs >= 30
    assert "add.out: add written into out" in dispatch.add.__doc__
