"""Property tests: every operator against NumPy as the oracle, over random
shapes, dtypes and strided views (sliced, transposed, broadcast). Result
dtypes follow PyTorch's promotion, spelled out independently in promote()."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatch as d

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
FLOATS = {"float16", "float32", "float64"}
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def category(name):
    return 0 if name == "bool" else 2 if name in FLOATS else 1


def promote(a, b):
    """PyTorch's promote_types: the higher category wins outright; NumPy within one."""
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    return np.promote_types(a, b).name


def result_type(*operands):
    """PyTorch's result type: 0-dim operands count only when of a higher category."""
    def fold(names):
        out = None
        for n in names:
            out = n if out is None else promote(out, n)
        return out
    dim = fold(x.dtype.name for x in operands if x.ndim)
    zero = fold(x.dtype.name for x in operands if not x.ndim)
    if dim is None or zero is None:
        return dim or zero
    return promote(dim, zero) if category(zero) > category(dim) else dim


@st.composite
def arrays(draw, dtype=None, shape=None):
    dtype = dtype or draw(st.sampled_from(DTYPES))
    shape = shape if shape is not None else draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        values = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype in FLOATS:
        values = draw(st.lists(st.floats(-100, 100, width=16), min_size=n, max_size=n))
    else:
        info = np.iinfo(dtype)
        values = draw(st.lists(st.integers(max(info.min, -100), min(info.max, 100)),
                               min_size=n, max_size=n))
    return np.array(values, dtype=dtype).reshape(shape)


@st.composite
def strided(draw, dtype=None, shape=None):
    """A (NumPy view, tensor view) pair of the same data: plain, transposed or sliced."""
    a = draw(arrays(dtype, shape))
    t = d.from_numpy(a)
    how = draw(st.sampled_from(["plain", "T", "slice"]))
    if how == "T":
        return a.T, t.T
    if how == "slice" and a.ndim:
        step = draw(st.integers(1, 2))
        return a[::step], t[::step]
    return a, t


def check(actual, expected, dtype):
    assert actual.dtype.name == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape
    got = actual.numpy()
    if dtype in FLOATS:
        tol = 2e-3 if dtype == "float16" else 1e-5
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected.astype(dtype))


BINARY = {
    "add": np.add, "mul": np.multiply, "sub": np.subtract,
    "maximum": np.maximum, "minimum": np.minimum,
}


@SETTINGS
@given(st.sampled_from(sorted(BINARY)), strided(), strided(), st.booleans())
def test_binary_ops_match_numpy(name, x, y, broadcast):
    (a, ta), (b, tb) = x, y
    if broadcast and a.ndim:  # pair a with a broadcastable slice of itself instead
        b, tb = a[..., :1], ta[..., :1]
    elif not _broadcastable(a, b):
        b, tb = a, ta
    res = result_type(a, b)
    if name == "sub" and "bool" in (res, a.dtype.name, b.dtype.name):
        with pytest.raises(TypeError, match="Subtraction, the `-` operator, with"):
            d.ops.sub(ta, tb)  # refused, as torch does
        return
    with np.errstate(all="ignore"):
        expected = BINARY[name](a.astype(res), b.astype(res))
    if res == "bool" and name == "add":
        expected = np.logical_or(a, b)
    check(getattr(d.ops, name)(ta, tb), expected, res)


@SETTINGS
@given(strided(), strided())
def test_division_matches_numpy(x, y):
    (a, ta), (b, tb) = x, y
    res = result_type(a, b)
    res = res if res in FLOATS else "float32"
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        with pytest.raises(ValueError, match="cannot be broadcast"):
            ta / tb
        return
    with np.errstate(all="ignore"):
        expected = a.astype(res) / b.astype(res)
    check(ta / tb, expected, res)


@SETTINGS
@given(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]), strided(), strided())
def test_comparisons_match_numpy(name, x, y):
    (a, ta), (b, tb) = x, y
    b, tb = (b, tb) if _broadcastable(a, b) else (a, ta)
    res = result_type(a, b)
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal}[name]
    check(getattr(d.ops, name)(ta, tb), fn(a.astype(res), b.astype(res)), "bool")


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


@SETTINGS
@given(st.sampled_from(["neg", "abs", "sqrt", "exp", "log"]), strided())
def test_unary_ops_match_numpy(name, x):
    a, ta = x
    dt = a.dtype.name
    if name in ("neg", "abs") and dt == "bool":
        with pytest.raises(TypeError, match="Negation|abs"):
            getattr(d.ops, name)(ta)  # refused, as torch does
        return
    res = dt if name in ("neg", "abs") or dt in FLOATS else "float32"
    fn = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log}[name]
    with np.errstate(all="ignore"):
        expected = fn(a.astype(res))
    check(getattr(d.ops, name)(ta), expected, res)


@SETTINGS
@given(strided(dtype="float32"), strided(dtype="float32"), st.floats(-3, 3, width=32))
def test_addcmul_matches_numpy(x, y, value):
    (a, ta), (b, tb) = x, y
    b, tb = (b, tb) if _broadcastable(a, b) else (a, ta)
    check(d.ops.addcmul(ta, tb, tb, value=value), a + np.float32(value) * b * b, "float32")


@SETTINGS
@given(strided(dtype="bool"), strided())
def test_where_matches_numpy(c, x):
    (cond, tc), (a, ta) = c, x
    a, ta = (a, ta) if _broadcastable(cond, a) else (cond, tc)
    expected = np.where(cond, a, np.zeros((), dtype=a.dtype))
    check(d.ops.where(tc, ta, d.tensor(0, dtype=ta.dtype)), expected, a.dtype.name)


@SETTINGS
@given(st.sampled_from(["sum", "mean", "max", "min"]), strided(), st.data())
def test_reductions_match_numpy(name, x, data):
    a, ta = x
    dt = a.dtype.name
    if name == "mean" and dt not in FLOATS:
        return
    dims = data.draw(st.none() | st.lists(st.integers(0, max(a.ndim - 1, 0)), min_size=1,
                                           max_size=max(a.ndim, 1), unique=True))
    keepdim = data.draw(st.booleans())
    if dims is None or a.ndim == 0:
        got = getattr(d.ops, name)(ta)
        axis, keepdim = None, False
    else:
        got = getattr(d.ops, name)(ta, dims, keepdim)
        axis = tuple(dims)
    res = "int64" if name == "sum" and dt not in FLOATS else dt
    src = a.astype(np.float64) if dt in FLOATS else a.astype(np.int64)
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[name]
    check(got, np.asarray(fn(src, axis=axis, keepdims=keepdim)), res)


@SETTINGS
@given(st.sampled_from(["int32", "int64", "float32", "float64"]), st.integers(0, 8), st.data())
def test_dot_matches_numpy(dt, n, data):
    a, ta = data.draw(strided(dtype=dt, shape=[n]))
    b, tb = data.draw(strided(dtype=dt, shape=[n]))
    if a.shape != b.shape:
        return
    check(d.ops.dot(ta, tb), np.asarray(np.dot(a.astype(np.float64), b.astype(np.float64))
                                        if dt in FLOATS else np.dot(a, b)), dt)


@SETTINGS
@given(strided(), st.sampled_from(DTYPES))
def test_cast_and_copy_match_numpy(x, to):
    a, ta = x
    check(d.ops.cast(ta, getattr(d, to)), a.astype(to), to)
    out = d.empty(*a.shape, dtype=getattr(d, to))
    out.copy_(ta)
    check(out, a.astype(to), to)


@SETTINGS
@given(strided(), st.integers(-5, 5))
def test_fill_writes_every_element_of_a_view(x, value):
    a, ta = x
    base = a.base if a.base is not None else a
    ta.fill_(value)
    expected = np.full(a.shape, value).astype(a.dtype)
    np.testing.assert_array_equal(a, expected)  # through the shared memory
    assert base is not None


# float16 <-> float32 casts (SIMD loops in half_arith.dispatch.c) ------------------------------

@pytest.mark.parametrize("step", [1, 3])
def test_every_float16_widens_to_numpys_float32_bits(step):
    """Every bit pattern: subnormals exact, signaling NaNs kept signaling (as
    NumPy, unlike vcvtph2ps), contiguous (8/16 lanes) and strided."""
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)[::step]
    got = d.from_numpy(np.ascontiguousarray(h) if step == 1 else h).to(d.float32)
    np.testing.assert_array_equal(got.numpy().view(np.uint32), h.astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("step", [1, 3])
def test_float32_narrows_to_float16_rounding_once_to_nearest_even(step):
    rng = np.random.default_rng(4)
    f = np.concatenate([
        rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32),
        np.arange(0x477fd000, 0x47802000, dtype=np.uint32),   # 65504's ties and overflow
        np.arange(0x33000000, 0x38800000, 31, dtype=np.uint32),  # float16 subnormals
    ]).view(np.float32)[::step]
    got = d.from_numpy(f).to(d.float16).numpy()
    finite = np.isfinite(f)
    with np.errstate(over="ignore"):
        want = f[finite].astype(np.float16)
    np.testing.assert_array_equal(got[finite].view(np.uint16), want.view(np.uint16))
    nan = np.isnan(f)  # quiet NaN, same sign, the top 9 payload bits (NumPy's may differ)
    g = got[nan].view(np.uint16)
    fb = f[nan].view(np.uint32)
    np.testing.assert_array_equal(g, ((fb >> 16) & 0x8000) | 0x7e00 | ((fb >> 13) & 0x1ff))
