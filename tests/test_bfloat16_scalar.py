"""bfloat16 times or over a Python number: the operand widened, the number
in float32, the float32 operation rounded once to bfloat16 (torch's rule),
whether the number is a bfloat16 value (then the dtype's own loop runs,
Note [Narrow floats with an exact scalar] in
sources/dispatcher/operators_elementwise.c) or not (the engine's float32
loop); in place too, and at lengths past the loops' vector widths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatch as d

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def to_bf16_bits(f32: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, rounded to nearest even (NaN kept quiet)."""
    b = np.asarray(f32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(f32, dtype=np.float32))
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), r)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bf16_tensor(bits: np.ndarray):
    return d.tensor(from_bf16_bits(bits)).to(d.bfloat16)  # exact: the values are bfloat16's


def bits_of(t) -> np.ndarray:
    return to_bf16_bits(t.to(d.float32).numpy())  # widening is exact, so is this


def model(op: str, bits: np.ndarray, s: float) -> np.ndarray:
    x, s32 = from_bf16_bits(bits), np.float32(s)
    with np.errstate(all="ignore"):
        return to_bf16_bits({"mul": x * s32, "div": x / s32, "rdiv": s32 / x}[op])


_FINITE = st.floats(width=32, allow_nan=False, allow_infinity=False)
# numbers that are bfloat16 values (the dtype's own loop) and numbers that are not
_EXACT = _FINITE.map(lambda v: float(from_bf16_bits(to_bf16_bits(np.float32(v)))[()]))
_SCALAR = st.one_of(_EXACT, _FINITE, st.sampled_from([0.5, 2.0, 3.0, -1.25, 0.1, 1e-40, 0.0]))


@SETTINGS
@given(st.lists(_FINITE, min_size=1, max_size=300), _SCALAR,
       st.sampled_from(["mul", "div", "rdiv"]))
def test_bfloat16_with_python_scalar_rounds_once(values, s, op):
    bits = to_bf16_bits(np.array(values, dtype=np.float32))
    t = bf16_tensor(bits)
    got = {"mul": lambda: t * s, "div": lambda: t / s, "rdiv": lambda: s / t}[op]()
    assert got.dtype is d.bfloat16
    np.testing.assert_array_equal(bits_of(got), model(op, bits, s))


@SETTINGS
@given(st.lists(_FINITE, min_size=1, max_size=300), _SCALAR, st.sampled_from(["mul", "div"]))
def test_bfloat16_in_place_with_python_scalar_rounds_once(values, s, op):
    bits = to_bf16_bits(np.array(values, dtype=np.float32))
    t = bf16_tensor(bits)
    getattr(t, op + "_")(s)
    np.testing.assert_array_equal(bits_of(t), model(op, bits, s))


@pytest.mark.parametrize("s", [0.5, 3.0, 0.1])
def test_bfloat16_scalar_on_a_broadcast_and_strided_view(s):
    rng = np.random.default_rng(2)
    bits = to_bf16_bits(rng.standard_normal((64, 130)).astype(np.float32))
    t = bf16_tensor(bits)[:, ::2]
    np.testing.assert_array_equal(bits_of(t * s), model("mul", bits[:, ::2], s))
    np.testing.assert_array_equal(bits_of(t / s), model("div", bits[:, ::2], s))
