"""Accuracy of the SIMD kernels chosen for this CPU (dispatch.kernels).

exp/log/expm1/log1p/tanh: within the ulp bounds documented in Note [exp/log
algorithms and their bounds] and Note [expm1, log1p and tanh]
(sources/kernels/exp_log.dispatch.c), against a reference in
np.longdouble (x87 80-bit: 11 more bits than float64) and spot-checked with
mpmath; special values exactly. + - * / sqrt: correctly rounded, so equal to
NumPy's bits. maximum/minimum: NaN-propagating, ties to the second operand.
sum: within the documented pairwise bound. tests/test_kernels_targets.py runs
this module once per dispatched target.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dispatch import kernels

FLOATS = [np.float32, np.float64]
# Documented bounds (ulp of the correctly rounded result).
ULP_BOUND = {"exp": 1.5, "log": 1.0, "expm1": 1.5, "log1p": 1.0, "tanh": 2.5}
# float32 tanh has its own algorithm and bound (Note [tanh float32]).
DTYPE_BOUND = {("tanh", np.float32): 1.5}


def bound(op: str, dtype) -> float:
    return DTYPE_BOUND.get((op, dtype), ULP_BOUND[op])


def ulp_error(y: np.ndarray, ref: np.ndarray, dtype) -> np.ndarray:
    """|y - ref| in ulps of dtype at ref (ref in longdouble); 0 where both are the same inf/NaN."""
    fi = np.finfo(dtype)
    ref = ref.astype(np.longdouble)
    mag = np.maximum(np.abs(ref), np.longdouble(fi.smallest_normal))
    ulp = np.exp2(np.floor(np.log2(mag)) - fi.nmant)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(y.astype(np.longdouble) - ref) / ulp
    same_special = (np.isnan(y) & np.isnan(ref)) | (np.isinf(y) & (y.astype(np.longdouble) == ref))
    err[same_special] = 0
    # A finite reference beyond the largest finite value rounds to inf.
    over = np.isinf(y) & np.isfinite(ref) & (np.abs(ref) > np.longdouble(fi.max))
    err[over] = 0
    return err


def run1(op: str, x: np.ndarray, **kw) -> np.ndarray:
    out = np.empty_like(x)
    kernels.run(op, out, x, **kw)
    return out


def exp_inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(1)
    hi = 89.0 if dtype == np.float32 else 710.0
    lo = -104.0 if dtype == np.float32 else -746.0
    parts = [rng.uniform(lo, hi, 400_000), rng.uniform(-1, 1, 100_000),
             rng.standard_normal(50_000) * 1e-6,
             np.linspace(lo, hi, 100_000)]
    return np.concatenate(parts).astype(dtype)


def log_inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(2)
    if dtype == np.float32:
        bits = rng.integers(1, 0x7F800000, 400_000, dtype=np.int64).astype(np.uint32)
        x = bits.view(np.float32)
    else:
        x = rng.integers(1, 0x7FF0000000000000, 400_000, dtype=np.int64).view(np.float64)
    near_one = rng.uniform(0.7, 1.45, 200_000).astype(dtype)
    return np.concatenate([x, near_one]).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_is_within_its_ulp_bound(dtype):
    x = exp_inputs(dtype)
    err = ulp_error(run1("exp", x), np.exp(x.astype(np.longdouble)), dtype)
    assert err.max() <= ULP_BOUND["exp"], x[err.argmax()]


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_is_within_its_ulp_bound(dtype):
    x = log_inputs(dtype)
    err = ulp_error(run1("log", x), np.log(x.astype(np.longdouble)), dtype)
    assert err.max() <= ULP_BOUND["log"], x[err.argmax()]


@pytest.mark.parametrize("op", ["exp", "log"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_log_agree_with_mpmath(op, dtype):
    rng = np.random.default_rng(3)
    if op == "exp":
        x = rng.uniform(-80 if dtype == np.float32 else -700, 80 if dtype == np.float32 else 700,
                        300).astype(dtype)
    else:
        x = np.exp2(rng.uniform(-120, 120, 300)).astype(dtype)
    y = run1(op, x)
    with mpmath.workprec(120):
        ref = [getattr(mpmath, op)(mpmath.mpf(float(v))) for v in x]
        ref_ld = np.array([np.longdouble(mpmath.nstr(r, 30)) for r in ref])
    assert ulp_error(y, ref_ld, dtype).max() <= ULP_BOUND[op]


def _specials(dtype):
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_special_values(dtype):
    y = run1("exp", _specials(dtype))
    assert y[:2].tolist() == [1.0, 1.0]
    assert y[2] == np.inf and y[3] == 0.0 and np.isnan(y[4])


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_overflow_and_underflow_thresholds(dtype):
    fi = np.finfo(dtype)
    big = np.log(np.longdouble(fi.max))               # last finite result below it
    tiny = np.log(np.longdouble(fi.smallest_subnormal) / 2)  # results round to 0 below it
    x = np.array([np.nextafter(dtype(big), dtype(0)), np.nextafter(dtype(big), dtype(np.inf)),
                  np.nextafter(dtype(tiny), dtype(0)), np.nextafter(dtype(tiny), dtype(-np.inf)),
                  dtype(1e30), dtype(-1e30)], dtype=dtype)
    y = run1("exp", x)
    assert np.isfinite(y[0]) and y[1] == np.inf
    assert y[2] == fi.smallest_subnormal and y[3] == 0.0
    assert y[4] == np.inf and y[5] == 0.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_subnormal_results_round_correctly_enough(dtype):
    fi = np.finfo(dtype)
    lo = float(np.log(np.longdouble(fi.smallest_subnormal)))
    hi = float(np.log(np.longdouble(fi.smallest_normal)))
    x = np.linspace(lo, hi, 20_001).astype(dtype)
    y = run1("exp", x)
    assert (y[:-1] < fi.smallest_normal).all()  # the range is the subnormal results
    assert ulp_error(y, np.exp(x.astype(np.longdouble)), dtype).max() <= ULP_BOUND["exp"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_special_values(dtype):
    y = run1("log", np.concatenate([_specials(dtype), np.array([-1.0, 1.0], dtype=dtype)]))
    assert y[0] == -np.inf and y[1] == -np.inf
    assert y[2] == np.inf and np.isnan(y[3]) and np.isnan(y[4])
    assert np.isnan(y[5]) and y[6] == 0.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_of_subnormals(dtype):
    fi = np.finfo(dtype)
    x = np.array([fi.smallest_subnormal, fi.smallest_subnormal * 3, fi.smallest_normal / 2,
                  np.nextafter(fi.smallest_normal, dtype(0)), fi.smallest_normal, fi.max],
                 dtype=dtype)
    err = ulp_error(run1("log", x), np.log(x.astype(np.longdouble)), dtype)
    assert err.max() <= ULP_BOUND["log"]


def expm1_log1p_tanh_inputs(op: str, dtype) -> np.ndarray:
    """Every binade (random bits), the ranges where the reductions switch
    branch, and for log1p the approach to -1."""
    rng = np.random.default_rng(5)
    bits = 32 if dtype == np.float32 else 64
    itype = np.uint32 if bits == 32 else np.uint64
    x = rng.integers(0, 2**bits - 1, 300_000, dtype=itype, endpoint=True).view(dtype)
    x = x[np.isfinite(x)]
    u = rng.uniform(-1, 1, 200_000)
    parts = [x, u, u * 1e-4, rng.uniform(-45, 45, 200_000),
             np.linspace(-0.75, 0.75, 50_001)]  # n = -1, 0, 1 of expm1's reduction
    if op == "log1p":
        parts += [rng.uniform(-1, 0, 100_000), -1 + np.exp2(-rng.uniform(1, bits - 9, 50_000))]
    return np.concatenate([np.asarray(p, dtype=dtype) for p in parts])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["expm1", "log1p", "tanh"])
def test_expm1_log1p_tanh_are_within_their_ulp_bound(op, dtype):
    x = expm1_log1p_tanh_inputs(op, dtype)
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(x.astype(np.longdouble))
    err = ulp_error(run1(op, x), ref, dtype)
    assert err.max() <= bound(op, dtype), (x[err.argmax()], err.max())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["expm1", "log1p", "tanh"])
def test_expm1_log1p_tanh_agree_with_mpmath(op, dtype):
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.uniform(-1, 1, 150), np.exp2(rng.uniform(-60, 5, 150))])
    x = x.astype(dtype)
    y = run1(op, x)
    f = {"expm1": mpmath.expm1, "log1p": mpmath.log1p, "tanh": mpmath.tanh}[op]
    with mpmath.workprec(120):
        ref = np.array([np.longdouble(mpmath.nstr(f(mpmath.mpf(float(v))), 30)) for v in x])
    assert ulp_error(y, ref, dtype).max() <= bound(op, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["expm1", "log1p", "tanh"])
def test_expm1_log1p_tanh_special_values_are_numpys(op, dtype):
    fi = np.finfo(dtype)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.smallest_subnormal,
                  -fi.smallest_subnormal, fi.smallest_normal, -1.0, -2.0, 1e-30, -1e-30,
                  fi.max, -fi.max, 100.0, -100.0, 1000.0], dtype=dtype)
    y = run1(op, x)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(x)
    special = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1) | (np.abs(x) < 1e-20)
    assert np.array_equal(np.isnan(y), np.isnan(want))
    s = special & ~np.isnan(want)
    assert (y[s] == want[s]).all() and (np.signbit(y[s]) == np.signbit(want[s])).all(), (x, y)
    # A NaN comes back quiet, its sign kept.
    assert np.signbit(y[5]) == np.signbit(x[5])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["expm1", "log1p", "tanh"])
def test_expm1_log1p_tanh_of_tiny_inputs_are_the_input(op, dtype):
    fi = np.finfo(dtype)
    x = np.array([fi.smallest_subnormal * k for k in (1, 3, 1000)] + [fi.smallest_normal],
                 dtype=dtype)
    x = np.concatenate([x, -x])
    assert run1(op, x).tobytes() == x.tobytes()


def test_expm1_log1p_tanh_leave_the_floating_point_mode_as_they_found_it():
    x = np.array([1e-40, 0.5, -3.0], dtype=np.float32)  # subnormal first
    for op in ("expm1", "log1p", "tanh"):
        run1(op, x)
    assert float(np.float32(1e-40) * np.float32(1.0)) != 0.0  # no FTZ/DAZ left behind


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_is_bit_identical_to_numpy(op, dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(10_007) * 10.0 ** rng.integers(-30, 30, 10_007)).astype(dtype)
    b = (rng.standard_normal(10_007) * 10.0 ** rng.integers(-30, 30, 10_007)).astype(dtype)
    a[:5] = [0.0, -0.0, np.inf, np.nan, 1.0]
    b[:5] = [-0.0, 0.0, np.inf, 1.0, 0.0]
    out = np.empty_like(a)
    kernels.run(op, out, a, b)
    with np.errstate(all="ignore"):
        ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](a, b)
    assert out.tobytes() == ref.tobytes() or np.array_equal(out, ref, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_with_alpha_is_a_plus_alpha_times_b(dtype):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 1000)).astype(dtype)
    out = np.empty_like(a)
    kernels.run("add", out, a, b, ctx=0.3)
    np.testing.assert_array_equal(out, a + dtype(0.3) * b)
    kernels.run("sub", out, a, b, ctx=0.3)
    np.testing.assert_array_equal(out, a - dtype(0.3) * b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sqrt_is_correctly_rounded(dtype):
    rng = np.random.default_rng(6)
    x = np.abs(rng.standard_normal(100_003) * 10.0 ** rng.integers(-30, 30, 100_003)).astype(dtype)
    x[:4] = [0.0, -0.0, np.inf, -1.0]
    y = run1("sqrt", x)
    with np.errstate(invalid="ignore"):
        ref = np.sqrt(x)
    assert np.array_equal(y, ref, equal_nan=True)
    assert math.copysign(1.0, y[1]) == -1.0


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan_and_tie_to_the_second(op, dtype):
    nan = np.nan
    a = np.array([1.0, 3.0, nan, 2.0, nan, 0.0, -0.0] * 5, dtype=dtype)
    b = np.array([2.0, 1.0, 1.0, nan, nan, -0.0, 0.0] * 5, dtype=dtype)
    out = np.empty_like(a)
    kernels.run(op, out, a, b)
    f = {"maximum": np.maximum, "minimum": np.minimum}[op]
    assert np.array_equal(out[:5], f(a, b)[:5], equal_nan=True)
    assert np.signbit(out[5::7]).tolist() == [True] * 5    # max(0, -0): the second, -0
    assert np.signbit(out[6::7]).tolist() == [False] * 5   # max(-0, 0): the second, +0


@pytest.mark.parametrize("dtype", FLOATS)
def test_addcmul_is_self_plus_value_times_t1_times_t2(dtype):
    rng = np.random.default_rng(7)
    a, b, c = rng.standard_normal((3, 4099)).astype(dtype)
    out = np.empty_like(a)
    kernels.run("addcmul", out, a, b, c, ctx=0.7)
    np.testing.assert_array_equal(out, a + (dtype(0.7) * b) * c)


def _sum_bound(x: np.ndarray) -> float:
    """Note [Sum order independent of the vector width]: h u / (1 - h u) * sum|x|."""
    n = x.size
    u = np.finfo(x.dtype).eps / 2
    rows = 32 if x.dtype == np.float32 else 16
    leaf = rows * 16
    h = 16 + math.log2(rows) + max(0, math.ceil(math.log2(max(1, n) / leaf)))
    return h * u / (1 - h * u) * float(np.abs(x.astype(np.float64)).sum())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [0, 1, 31, 513, 100_000, 1_000_003])
def test_sum_is_within_the_pairwise_bound(dtype, n):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(n) + 0.1).astype(dtype)
    exact = math.fsum(x.astype(np.float64).tolist())
    assert abs(float(kernels.sum(x)) - exact) <= _sum_bound(x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_of_negative_zeros_is_negative_zero(dtype):
    s = kernels.sum(np.full(100, -0.0, dtype=dtype))
    assert s == 0.0 and math.copysign(1.0, s) == -1.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_propagates_inf_and_nan(dtype):
    x = np.ones(5000, dtype=dtype)
    x[4321] = np.inf
    assert kernels.sum(x) == np.inf
    x[17] = np.nan
    assert math.isnan(kernels.sum(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_exp_of_subnormal_inputs_is_one(dtype):
    fi = np.finfo(dtype)
    x = np.array([fi.smallest_subnormal, -fi.smallest_subnormal, fi.smallest_normal / 3], dtype)
    assert run1("exp", x).tolist() == [1.0, 1.0, 1.0]


def test_exp_leaves_the_floating_point_mode_as_it_found_it():
    """exp runs with flush-to-zero internally; afterwards subnormals work again."""
    run1("exp", np.full(1000, -100.0, np.float32))
    tiny = np.array([1e-38], np.float32) * np.float32(1e-3)
    assert tiny[0] != 0.0


def _float16_inputs(n: int = 50_003):
    rng = np.random.default_rng(16)
    with np.errstate(over="ignore"):
        a = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-26, 17, n)).astype(np.float16)
        b = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-26, 17, n)).astype(np.float16)
    a[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 6e-8, 1.0]
    b[:8] = [-0.0, 0.0, np.inf, np.inf, 1.0, 65504, -6e-8, np.nan]
    return a, b


def _same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal bits, with any NaN equal to any NaN (payloads are not specified)."""
    both_nan = np.isnan(x) & np.isnan(y)
    return bool(((x.view(np.uint16) == y.view(np.uint16)) | both_nan).all())


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
def test_float16_is_float_arithmetic_rounded_once(op):
    """Note [float16 on every target]: NumPy's float16 ufuncs compute in float
    and round once; every variant must give those bits (the AVX512_SPR one
    with native float16 instructions)."""
    a, b = _float16_inputs()
    ins = (np.abs(a),) if op == "sqrt" else (a, b)
    out = np.empty_like(a)
    kernels.run(op, out, *ins)
    np_op = {"sub": np.subtract, "mul": np.multiply, "div": np.divide}.get(op) or getattr(np, op)
    with np.errstate(all="ignore"):
        assert _same_bits(out, np_op(*ins))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_float16_maximum_minimum_follow_the_float32_kernels(op):
    """NaN propagates; on equal values (+0 vs -0) the second operand wins,
    as in the float32 kernels (NumPy returns the first there)."""
    a, b = _float16_inputs()
    out = np.empty_like(a)
    kernels.run(op, out, a, b)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = np.empty_like(a32)
    kernels.run(op, want, a32, b32)
    assert _same_bits(out, want.astype(np.float16))


def test_float16_add_with_alpha_rounds_once():
    a, b = _float16_inputs()
    out = np.empty_like(a)
    kernels.run("add", out, a, b, ctx=-0.3)
    alpha = np.float32(np.float16(-0.3))
    with np.errstate(all="ignore"):
        want = (a.astype(np.float32) + alpha * b.astype(np.float32)).astype(np.float16)
    assert _same_bits(out, want)


def test_float16_tensor_ops_use_the_kernels():
    """dispatch.Tensor float16 arithmetic goes through the registered loop."""
    import dispatch

    a, b = _float16_inputs(1000)
    got = (dispatch.from_numpy(a) * dispatch.from_numpy(b)).numpy()
    with np.errstate(all="ignore"):
        assert _same_bits(got, a * b)
    assert kernels.has("mul", "float16")
