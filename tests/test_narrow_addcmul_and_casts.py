"""Issue 44, item 4: the faster paths of addcmul of a narrow float and of the
casts into a narrow float keep the reference's bits.

- addcmul of float16 / bfloat16 runs the dtype's own loop (operands widened
  by vector chunks) when value is exact in the dtype, else the float32 loop
  over converted operands: either way self + (value * t1) * t2 in float32
  (value in float32), rounded once, in every layout;
- int32, float32 and float64 -> float16 / bfloat16 round once, to nearest
  even, from the exact value (no double rounding through float).
Checked against NumPy float32 arithmetic and an exact Python rounding.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dispatch as d

NARROW = ["float16", "bfloat16"]
FORMATS = {"float16": (11, -14, 65504.0), "bfloat16": (8, -126, 3.3895313892515355e38)}


def round_once(x: Fraction, dtype: str) -> float:
    """x rounded to the nearest value of dtype, ties to even; inf past the top."""
    digits, emin, top = FORMATS[dtype]
    if x == 0:
        return 0.0
    sign, a = (-1, -x) if x < 0 else (1, x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - (digits - 1))
    q, r = divmod(a, ulp)
    if r > ulp / 2 or (r == ulp / 2 and q % 2):
        q += 1
    etop = int(np.frexp(top)[1]) - 1
    if a >= Fraction(top) + Fraction(2) ** (etop - digits):  # the top's half ulp or more
        return sign * float("inf")
    return sign * float(q * ulp)


def bf16_from_f32(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 (as float32 values): to nearest even on the bits."""
    x = np.asarray(x, dtype=np.float32)
    shape, x = x.shape, x.reshape(-1)
    b = x.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    nan = np.isnan(x)
    r[nan] = ((b[nan] >> 16) | 0x40) << 16
    return r.astype(np.uint32).view(np.float32).reshape(shape)


def narrow_of_f32(x: np.ndarray, dtype: str) -> np.ndarray:
    return x.astype(np.float16).astype(np.float32) if dtype == "float16" else bf16_from_f32(x)


def values(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    """float32 values exact in dtype, with some of each format's edges."""
    rng = np.random.default_rng(seed)
    v = (rng.standard_normal(shape) * 4).astype(np.float32)
    flat = v.reshape(-1)
    flat[:6] = [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan][: flat.size]
    return narrow_of_f32(v, dtype)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    both_nan = np.isnan(got) & np.isnan(want)
    eq = (got == want) & (np.signbit(got) == np.signbit(want))
    return bool(np.all(eq | both_nan))


LAYOUTS = ["contig", "strided", "bcast_col", "bcast_row", "scalar_tensor"]


def operands(dtype: str, layout: str):
    shapes = {"contig": [(37, 70)] * 3, "strided": [(37, 140)] * 3,
              "bcast_col": [(37, 70), (37, 70), (37, 1)], "bcast_row": [(37, 70), (1, 70), (37, 70)],
              "scalar_tensor": [(37, 70), (37, 70), ()]}[layout]
    arrs = [values(dtype, s, k) for k, s in enumerate(shapes)]
    ts = [d.from_numpy(np.ascontiguousarray(a)).to(getattr(d, dtype)) for a in arrs]
    if layout == "strided":
        arrs = [a[:, ::2] for a in arrs]
        ts = [t[:, ::2] for t in ts]
    return arrs, ts


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("value", [1, 0.5, -2, 0.1, 3.0e-3])
def test_addcmul_is_the_float32_expression_rounded_once(dtype, layout, value):
    arrs, ts = operands(dtype, layout)
    got = d.ops.addcmul(*ts, value=value)
    assert got.dtype is getattr(d, dtype)
    a, b, c = arrs
    with np.errstate(all="ignore"):
        want32 = a + (np.float32(value) * b) * c
    want = narrow_of_f32(want32.astype(np.float32), dtype)
    assert same(got.to(d.float32).numpy(), want)


@pytest.mark.parametrize("dtype", NARROW)
def test_addcmul_with_an_operand_of_another_dtype_and_out(dtype):
    arrs, ts = operands(dtype, "contig")
    ints = (np.arange(37 * 70) % 256 - 128).astype(np.int8).reshape(37, 70)  # every int8
    with np.errstate(all="ignore"):
        want = narrow_of_f32(arrs[0] + (np.float32(1) * ints.astype(np.float32)) * arrs[2], dtype)
    got = d.ops.addcmul(ts[0], d.from_numpy(ints), ts[2])
    assert got.dtype is getattr(d, dtype)
    assert same(got.to(d.float32).numpy(), want)
    out = d.empty(37, 70, dtype=getattr(d, dtype))
    d.ops.addcmul(ts[0], d.from_numpy(ints), ts[2], out=out)
    assert same(out.to(d.float32).numpy(), want)


def _int32_edges() -> np.ndarray:
    rng = np.random.default_rng(7)
    near_ties = []
    for e in range(9, 31):  # just either side of bfloat16 ties (m: 8 significant bits)
        for m in (0x80, 0x81, 0xAA, 0xFF):
            tie = (2 * m + 1) << (e - 9)
            near_ties += [tie - 1, tie, tie + 1]
    for e in range(12, 16):  # and of float16's (11 bits)
        for m in (0x400, 0x401, 0x7FF):
            tie = (2 * m + 1) << (e - 12)
            near_ties += [tie - 1, tie, tie + 1]
    v = np.concatenate([rng.integers(-2**31, 2**31, 3000), np.array(near_ties),
                        -np.array(near_ties), [2**31 - 1, -2**31, 65504, 65519, 65520, 65536]])
    return v[(v >= -2**31) & (v < 2**31)].astype(np.int32)


@pytest.mark.parametrize("dtype", NARROW)
def test_int32_to_narrow_rounds_once(dtype):
    src = _int32_edges()
    got = d.from_numpy(src).to(getattr(d, dtype)).to(d.float64).numpy()
    want = np.array([round_once(Fraction(int(i)), dtype) for i in src])
    assert same(got, want)
    # strided, the same values
    wide = np.repeat(src, 2)
    got_s = d.from_numpy(wide)[::2].to(getattr(d, dtype)).to(d.float64).numpy()
    assert same(got_s, want)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("src_dtype", ["float32", "float64"])
def test_float_to_narrow_rounds_once(dtype, src_dtype):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(3000) * np.exp2(rng.integers(-30, 30, 3000))
    # just above a tie by less than float32 keeps (a double rounding would go down)
    digits = FORMATS[dtype][0]
    x = np.concatenate([x, [1 + 2.0**-digits + 2.0**-30, -(1 + 2.0**-digits + 2.0**-30),
                            1 + 2.0**-digits, 3 * 2.0**-digits, 1e300, -1e300, 1e-300,
                            np.inf, -np.inf, np.nan, 0.0, -0.0, 65520.0, 65519.99,
                            # float16's least denormal: its half (a tie, to 0) and just
                            # above it by a bit only float64 holds; float32 denormals
                            2.0**-25, 2.0**-25 * (1 + 2.0**-40), -2.0**-25 * (1 + 2.0**-40),
                            2.0**-24 * 1.5, 1.5 * 2.0**-130, -1.5 * 2.0**-130,
                            (1 + 2.0**-40) * 2.0**-133, 3.4028235677973366e38,
                            # bfloat16's least denormal's half (a tie) and just above
                            # it by a bit that float32's denormals drop but float64's
                            # low 29 mantissa bits do not hold
                            2.0**-134, 2.0**-134 * (1 + 2.0**-20),
                            -2.0**-134 * (1 + 2.0**-20), 2.0**-130 * (3 + 2.0**-18)]])
    with np.errstate(over="ignore"):  # 1e300 -> float32 inf
        x = x.astype(src_dtype)
    got = d.from_numpy(x).to(getattr(d, dtype)).to(d.float64).numpy()
    want = np.array([float("nan") if np.isnan(v) else
                     float(v) if np.isinf(v) else
                     np.copysign(round_once(Fraction(float(v)), dtype), v) if v == 0 else
                     round_once(Fraction(float(v)), dtype) for v in x])
    assert same(got, want)
