"""Issue 44, the call's own cost: dispatch.empty(), t.to(dtype), t.clone()
and t.contiguous() run their common case in C with no Python frame (Note
[New tensors in C] in dispatch/_fastpath_factories.c); every other case goes
to the Python code, which keeps its values and its words."""

from __future__ import annotations

import sys
from pathlib import Path
import inspect

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _frames import python_calls  # noqa: E402


def _python_calls(fn) -> list[str]:
    return python_calls(fn, __file__)


@pytest.fixture
def x():
    return dispatch.arange(24, dtype=dispatch.int32).view(4, 6)


COMMON = {
    "x.to(float64)": lambda x: x.to(dispatch.float64),
    "x.to(uint8)": lambda x: x.to(dispatch.uint8),
    "x.clone()": lambda x: x.clone(),
    "x.contiguous()": lambda x: x.contiguous(),
    "x[:, ::2].contiguous()": None,
    "empty(4, 6)": lambda x: dispatch.empty(4, 6),
    "empty((4, 6), dtype=int8)": lambda x: dispatch.empty((4, 6), dtype=dispatch.int8),
    "empty([3], dtype=None, device=None)": lambda x: dispatch.empty([3], dtype=None, device=None),
    "empty()": lambda x: dispatch.empty(),
    "zeros(4, 6)": lambda x: dispatch.zeros(4, 6),
    "ones((4, 6), dtype=int8)": lambda x: dispatch.ones((4, 6), dtype=dispatch.int8),
    "zeros(8, 4096)": lambda x: dispatch.zeros(8, 4096),  # DISPATCH_ITER_GRAIN elements
}


@pytest.mark.parametrize("name", COMMON)
def test_the_common_case_runs_no_python_frame(x, name):
    if name == "x[:, ::2].contiguous()":
        v = x[:, ::2]
        call = lambda x: v.contiguous()  # noqa: E731
    else:
        call = COMMON[name]
    call(x)
    assert _python_calls(lambda: call(x)) == [], name


def test_values_and_identity(x):
    assert x.to(dispatch.float64).tolist() == [[float(v) for v in r] for r in x.tolist()]
    assert x.to(dispatch.float64).dtype == dispatch.float64
    assert x.to(dispatch.int32) is x and x.contiguous() is x  # self, as torch's
    c = x.clone()
    assert c is not x and c.tolist() == x.tolist()
    c.fill_(0)
    assert x.tolist()[1][1] == 7  # the clone has its own storage
    v = x[:, ::2]
    cv = v.contiguous()
    assert cv is not v and cv.is_contiguous() and cv.tolist() == v.tolist()
    assert cv.storage_offset() == 0
    # the Python path gives the same bits
    assert x.to("float64").numpy().tobytes() == x.to(dispatch.float64).numpy().tobytes()
    assert x.to(dtype=dispatch.int8).tolist() == x.to(dispatch.int8).tolist()
    assert x.to(np.int16).dtype == dispatch.int16


def test_empty_shapes_and_dtypes():
    assert dispatch.empty(2, 3).shape == dispatch.empty((2, 3)).shape == (2, 3)
    assert dispatch.empty([2, 3]).dtype == dispatch.float32
    assert dispatch.empty(0).shape == (0,) and dispatch.empty().shape == ()
    assert dispatch.empty(2, dtype=dispatch.bfloat16).dtype == dispatch.bfloat16
    # the Python path: NumPy integers, a dtype by name, a device
    assert dispatch.empty(np.int64(2), 3).shape == (2, 3)
    assert dispatch.empty(2, dtype="int32").dtype == dispatch.int32
    assert dispatch.empty(2, device="meta").device == "meta"
    assert dispatch.empty(2, device="cpu").device == "cpu"


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 5), (8, 4096), (8, 4097), (2, 0, 3)])
def test_zeros_and_ones_of_every_dtype(dtype, shape):
    """zeros/ones fill in C up to DISPATCH_ITER_GRAIN elements (8 * 4096) and
    through fill_ past it: the same values either way, every dtype."""
    dt = getattr(dispatch, dtype)
    for make, value in ((dispatch.zeros, 0), (dispatch.ones, 1)):
        t = make(*shape, dtype=dt)
        assert t.shape == shape and t.dtype == dt and t.device == "cpu"
        got = t.to(dispatch.float64).numpy()
        assert got.shape == shape and (got == value).all(), (make.__name__, dtype, shape)
        assert not np.signbit(got).any()  # +0.0, never -0.0
    assert dispatch.zeros(list(shape), dtype=dt).shape == shape
    assert dispatch.ones(*shape).dtype == dispatch.float32


def test_zeros_and_ones_beyond_the_c_path():
    assert dispatch.zeros(np.int64(2), 3).shape == (2, 3)
    assert dispatch.ones(2, dtype="int16").tolist() == [1, 1]
    assert dispatch.zeros(2, device="meta").device == "meta"
    assert dispatch.ones(3, device="cpu").tolist() == [1.0] * 3
    assert dispatch.zeros(1 << 16, dtype=dispatch.int8).sum().item() == 0
    assert inspect.signature(dispatch.zeros) == inspect.signature(dispatch.empty)


@pytest.mark.parametrize("make", ["zeros", "ones"])
@pytest.mark.parametrize("args, kwargs, error, words", [
    ((-1,), {}, ValueError, r"negative dimension -1"),
    ((2.0,), {}, TypeError, r"must hold integers, got float"),
    ((2, 1 << 62), {}, ValueError, r"number of elements overflows"),
    ((2,), {"foo": 1}, TypeError, r"^{make}\(\) got an unexpected keyword"),
    ((2,), {"dtype": 3.5}, TypeError, r"3.5"),
])
def test_zeros_and_ones_errors_keep_their_words(make, args, kwargs, error, words):
    with pytest.raises(error, match=words.format(make=make)):
        getattr(dispatch, make)(*args, **kwargs)


@pytest.mark.parametrize("call, error, words", [
    (lambda: dispatch.empty(-1), ValueError, r"negative dimension -1"),
    (lambda: dispatch.empty(2 ** 70), ValueError, r"does not fit in int64"),
    (lambda: dispatch.empty(2.0), TypeError, r"must hold integers, got float"),
    (lambda: dispatch.empty(*[1] * 17), ValueError, r"at most 16 dims, got 17"),
    (lambda: dispatch.empty(2, foo=1), TypeError, r"^empty\(\) got an unexpected keyword"),
    (lambda: dispatch.empty(2, dtype=3.5), TypeError, r"3.5"),
    (lambda: dispatch.empty(2 ** 40, 2 ** 40), ValueError, r"number of elements overflows"),
    (lambda: dispatch.ones(2).to(), TypeError, r"^Tensor\.to\(\) missing 1 required"),
    (lambda: dispatch.ones(2).to(dispatch.int8, dispatch.int8), TypeError, r"^Tensor\.to\(\)"),
    (lambda: dispatch.ones(2).clone(1), TypeError, r"clone\(\) takes no arguments"),
])
def test_errors_keep_their_words(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_signatures():
    assert str(inspect.signature(dispatch.empty)) == "(*size, dtype=None, device=None)"
    assert str(inspect.signature(dispatch.Tensor.to)) == "(self, /, dtype)"
    assert dispatch.Tensor.clone.__doc__ and dispatch.Tensor.to.__doc__


def test_a_subclass_keeps_the_methods():
    class Mine(dispatch.Tensor):
        pass

    t = dispatch.ones(3).to(dispatch.float64)
    m = Mine.__new__(Mine)
    m._p = dispatch._tensor._cptr(t)
    dispatch._core.lib.dispatch_tensor_incref(m._p)
    assert m.to(dispatch.int8).tolist() == [1, 1, 1] and m.clone().tolist() == [1.0] * 3
    assert m.to(dispatch.float64) is m
