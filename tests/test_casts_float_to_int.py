"""Issue 35, item 7: the rule of float -> integer casts (Note [Float to
integer casts] in sources/core/cpu_loops_reference.c, docs/semantics.md "Float to
integer casts").

The result NumPy gives on x86-64 (PyTorch's too, but for float64 -> uint8
beyond int32's range): int32 truncates when that fits,
else INT32_MIN (NaN and +-inf too); int64 the same with INT64_MIN; int8,
uint8 and int16 wrap the int32 result; bool is x != 0. Checked bit for bit
against NumPy's astype on every path that converts: .to(), ops.cast, copy_
between strided views, sum/prod dtype= (with dim= and out=), the elementwise
engine's out of another dtype, fill_; for float16 and bfloat16 over every
value, for float32 and float64 over the values around each range's ends and
random bits. test_kernels_targets.py runs this file under every SIMD target
the machine has (the integer reductions after the cast are SIMD kernels).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatch as d
from dispatch import iterator

INTS = ["int8", "uint8", "int16", "int32", "int64"]
TARGETS = [*INTS, "bool"]
SOURCES = ["float16", "bfloat16", "float32", "float64"]


def _astype(a: np.ndarray, to: str) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(invalid="ignore", over="ignore"):
        warnings.simplefilter("ignore")  # NumPy warns on NaN/out-of-range casts
        return a.astype(to)


def _edges(dt) -> np.ndarray:
    """In dtype dt: each integer range's ends and their neighbours (the next
    float either way, +-0.5, +-1), +-0, 0.5, tiny values, subnormals, the
    largest finite values, infinities and NaNs of both signs."""
    bounds = [2.0 ** k for k in (7, 8, 15, 16, 31, 32, 53, 63, 64)]
    xs = []
    for b in bounds:
        for v in (b, -b, b - 1, -b - 1):
            for w in (v, v + 0.5, v - 0.5, v + 1, v - 1, v + 0.999, v - 0.999):
                xs.append(w)
    xs += [0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.0, -1.0, 1.5, -1.5, 2.5, 300.7, -300.7,
           1e10, -5e9, 1e19, -1e19, 1e30, -1e30, 1e300, -1e300, 5e-324, -5e-324, 1e-310,
           1e-40, 1e-45, 6e-8, 65504.0, -65504.0, 3.4e38, -3.4e38,
           float("inf"), float("-inf"), float("nan"), -float("nan")]
    with np.errstate(over="ignore"):
        a = np.array(xs, np.float64).astype(dt)
    info = np.finfo(dt)
    extra = [info.max, -info.max, info.smallest_subnormal, -info.smallest_subnormal,
             info.smallest_normal, -info.smallest_normal]
    a = np.concatenate([a, np.array(extra, dt)])
    finite = a[np.isfinite(a)]
    with np.errstate(over="ignore"):  # the next after the largest finite is inf
        up = np.nextafter(finite, np.array(np.inf, dt))
        down = np.nextafter(finite, np.array(-np.inf, dt))
    return np.concatenate([a, up, down])


def _values(src: str) -> np.ndarray:
    """The source values as NumPy holds them (bfloat16: its float32 values)."""
    if src == "float16":  # every half
        return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if src == "bfloat16":  # every bfloat16, as the float32 of its bits
        return (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    dt = np.dtype(src)
    rng = np.random.default_rng(35)
    ibits = np.uint32 if dt.itemsize == 4 else np.uint64
    rand_bits = rng.integers(0, np.iinfo(ibits).max, 50_000, dtype=ibits, endpoint=True)
    mags = np.ldexp(rng.uniform(-1, 1, 50_000), rng.integers(-5, 70, 50_000)).astype(dt)
    return np.concatenate([_edges(dt), rand_bits.view(dt), mags])


def _tensor(a: np.ndarray, src: str):
    """The dispatch tensor of src holding a's values (exactly)."""
    t = d.from_numpy(np.ascontiguousarray(a))
    return t.to(d.bfloat16) if src == "bfloat16" else t  # float32 -> bfloat16 is exact here


def _same(got: np.ndarray, want: np.ndarray, src_vals: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if got.tobytes() == want.tobytes():
        return
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))[:8]
    flat = src_vals.reshape(-1)
    rows = [f"{flat[i]!r}: got {got.reshape(-1)[i]}, NumPy {want.reshape(-1)[i]}"
            for i in bad if i < flat.size]
    pytest.fail(f"{what}: {len(bad)}+ differ: " + "; ".join(rows))


def test_the_rule_is_numpys_on_x86_64():
    """The rule as stated holds for NumPy on the values used here (a NumPy
    from another architecture would say so here, not in the tests below)."""
    vals = np.array([300.7, 1e10, -5e9, 3.0, np.nan, np.inf, -np.inf, -0.0, 2.0 ** 31,
                     -2.0 ** 31 - 1, -2.0 ** 31 - 0.5, 2.0 ** 63, -2.0 ** 63, -1.5])
    if _astype(np.array([1e10]), "int32")[0] != np.iinfo(np.int32).min:
        pytest.skip("this NumPy does not give x86's integer indefinite")
    assert _astype(vals, "int32").tolist() == [
        300, -2**31, -2**31, 3, -2**31, -2**31, -2**31, 0, -2**31, -2**31, -2**31, -2**31,
        -2**31, -1]
    assert _astype(vals, "int64").tolist() == [
        300, 10**10, -5 * 10**9, 3, -2**63, -2**63, -2**63, 0, 2**31, -2**31 - 1, -2**31,
        -2**63, -2**63, -1]
    assert _astype(vals, "int8").tolist() == [44, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1]
    assert _astype(vals, "uint8").tolist() == [44, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255]
    assert _astype(np.array([4294967297.0, 65537.5, -32769.0]), "int16").tolist() == [
        0, 1, 32767]


def test_the_issue_example():
    t = d.from_numpy(np.array([300.7, 1e10, -5e9, 3.0]))
    assert t.to(d.int32).tolist() == [300, -2**31, -2**31, 3]
    assert t.sum(dtype=d.int32).item() == 303  # 300 + 3 + 2 * INT32_MIN, wrapped in int32
    nan = d.from_numpy(np.array([np.nan, np.inf, -np.inf]))
    assert nan.to(d.int32).tolist() == [-2**31] * 3
    assert nan.to(d.int64).tolist() == [-2**63] * 3
    assert nan.to(d.int8).tolist() == [0] * 3
    assert nan.to(d.bool).tolist() == [True] * 3


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("src", SOURCES)
def test_to_and_cast_match_numpy(src, to):
    a = _values(src)
    t = _tensor(a, src)
    want = _astype(a, to)
    _same(t.to(getattr(d, to)).numpy(), want, a, f"{src}.to({to})")
    _same(d.ops.cast(t, getattr(d, to)).numpy(), want, a, f"cast({src}, {to})")


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("src", SOURCES)
def test_copy_between_strided_views_matches_numpy(src, to):
    a = _values(src)
    n = a.size - a.size % 6
    a2 = a[:n].reshape(-1, 6)
    t = _tensor(a2, src)
    # a transposed, stepped source into a stepped destination
    src_view = t.transpose(0, 1)[::2]  # (3, n/6)
    dst = d.zeros(src_view.shape[1], src_view.shape[0] * 2, dtype=getattr(d, to))
    dview = dst.transpose(0, 1)[::2]
    dview.copy_(src_view)
    want = _astype(a2.T[::2], to)
    _same(dview.numpy(), want, a2.T[::2], f"copy_ {src} -> {to}")
    assert not dst.transpose(0, 1)[1::2].numpy().any()  # the other rows untouched


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("to", INTS)
@pytest.mark.parametrize("src", SOURCES)
def test_reduction_dtype_casts_by_the_rule(src, to, op):
    """sum/prod(dtype=int): the input cast by the rule, then reduced (wrapping
    in the dtype, as NumPy's reduction with that dtype)."""
    a = _values(src)
    w = 7 if op == "sum" else 3  # odd rows: an even count of INT_MIN would sum to 0 either way
    a = a[: a.size - a.size % w].reshape(-1, w)
    t = _tensor(a, src)
    dt = getattr(d, to)
    np_op = getattr(np, op)
    cast = _astype(a, to)  # NumPy's sum(dtype=) casts the same way; wrapping arithmetic
    with np.errstate(over="ignore"):
        whole = np_op(cast, dtype=to)
        rows = np_op(cast, axis=1, dtype=to)
        cols = np_op(cast, axis=0, dtype=to)
    _same(np.asarray(getattr(t, op)(dtype=dt).numpy()), np.asarray(whole), a, f"{op} all")
    _same(getattr(t, op)(1, dtype=dt).numpy(), rows, a, f"{op} dim=1")
    _same(getattr(t, op)(0, dtype=dt).numpy(), cols, a, f"{op} dim=0")
    if op == "sum":  # prod has no out= overload
        out = d.empty(a.shape[0], dtype=dt)
        d.ops.sum(t, 1, False, dtype=dt, out=out)
        _same(out.numpy(), rows, a, f"{op} dim=1 out=")


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_engine_output_of_an_integer_dtype_is_cast_by_the_rule(src, to):
    """The elementwise engine computing in float and storing into an integer
    out (the cast of its output chunks)."""
    a = _values(src)
    out = np.empty(a.size, to)
    iterator.elementwise("add", out, a, np.zeros_like(a), dtype=src)
    with np.errstate(invalid="ignore", over="ignore"):
        _same(out, _astype(a + np.zeros_like(a), to), a, f"add {src} -> out {to}")


@pytest.mark.parametrize("to", INTS)
@pytest.mark.parametrize("value", [2.9, -2.9, 0.5, -0.5, -0.0, 127.9, -128.9])
def test_fill_with_a_float_truncates(value, to):
    info = np.iinfo(to)
    if not info.min <= value <= info.max:
        return
    t = d.zeros(5, dtype=getattr(d, to))
    t[1:4].fill_(value)
    _same(t.numpy(), np.array([0, *[_astype(np.array([value]), to)[0]] * 3, 0], to),
          np.array([value] * 5), f"fill_ {to} {value}")
