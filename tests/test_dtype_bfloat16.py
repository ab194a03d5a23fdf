"""bfloat16: one line of the dtype list, its loops via float, and its interop.

Everything is checked bit for bit against an independent Python reference:
round to nearest even on the float32 bits (struct), a double rounded once
(exact arithmetic on its frexp), NaN kept NaN with the quiet bit set.
"""

from __future__ import annotations

import array
import math
import random
import struct

import numpy as np
import pytest

import dispatch as d
from dispatch._core import ffi, lib


# The reference ----------------------------------------------------------------------

def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def ref_from_f32_bits(b: int) -> int:
    """float32 bits -> bfloat16 bits: to nearest even; NaN quiet, sign kept."""
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return (b >> 16) | 0x40
    upper, lower = b >> 16, b & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1  # a carry into the exponent is right, up to inf
    return upper


def ref_from_double(x: float) -> int:
    """A double rounded once to bfloat16 (no float32 step), exactly."""
    if math.isnan(x):
        return ref_from_f32_bits(f32_bits(x))
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    ax = abs(x)
    if ax == 0:
        return sign
    if math.isinf(ax):
        return sign | 0x7F80
    _, e = math.frexp(ax)  # ax = m * 2**e, 0.5 <= m < 1
    ulp_exp = max(e - 8, -133)  # 8 significant bits; subnormal ulp 2**-133
    q = round(math.ldexp(ax, -ulp_exp))  # exact scaling; round() ties to even
    v = math.ldexp(q, ulp_exp)
    if v >= 2.0**128:
        return sign | 0x7F80
    return sign | (f32_bits(v) >> 16)


def bf16_value(b: int) -> float:
    return bits_f32(b << 16)


def bits_of(t: d.Tensor) -> list[int]:
    t = t.contiguous()
    return list(array.array("H", bytes(ffi.buffer(t._p.data, t.numel() * 2))))


def from_bits(bits) -> d.Tensor:
    t = d.empty(len(bits), dtype=d.bfloat16)
    ffi.memmove(t._p.data, array.array("H", bits).tobytes(), 2 * len(bits))
    return t


def rounded(values) -> list[int]:
    return [ref_from_double(v) for v in values]


def same_bits(got: list[int], want: list[int]) -> bool:
    """Bits equal, NaNs compared as 'a NaN'."""
    for g, w in zip(got, want, strict=True):
        if (w & 0x7FFF) > 0x7F80:
            if not (g & 0x7FFF) > 0x7F80:
                return False
        elif g != w:
            return False
    return True


ALL = list(range(0x10000))
NAN_BITS = [b for b in ALL if (b & 0x7FFF) > 0x7F80]


# The dtype --------------------------------------------------------------------------

def test_bfloat16_is_a_two_byte_float_dtype_appended_to_the_list():
    bf = d.bfloat16
    assert bf.name == "bfloat16" and bf.itemsize == 2 and bf.is_floating_point
    assert bf.num == lib.DISPATCH_NUM_DTYPES - 1  # appended: no other id moved
    assert d.float64.num == bf.num - 1 and d.bool.num == 0
    assert repr(bf) == "dispatch.bfloat16" and "bfloat16" in d.__all__
    assert d.tensor([1.0], dtype="bfloat16").dtype is bf


# Conversions ------------------------------------------------------------------------

def test_every_bfloat16_widens_to_float32_exactly():
    wide = from_bits(ALL).to(d.float32)
    got = list(array.array("I", bytes(ffi.buffer(wide._p.data, 4 * len(ALL)))))
    assert got == [b << 16 for b in ALL]
    assert [lib.dispatch_bfloat16_bits_to_float(b) == bf16_value(b)
            for b in ALL if b not in NAN_BITS] == [True] * (len(ALL) - len(NAN_BITS))


def test_every_bfloat16_survives_a_round_trip_and_nans_come_back_quiet():
    t = from_bits(ALL)
    for back in (t.to(d.float32).to(d.bfloat16), t.to(d.float64).to(d.bfloat16), t.clone()):
        got = bits_of(back)
        for b, g in zip(ALL, got):
            if b in NAN_BITS and back is not None and g != b:
                assert g == b | 0x40, (hex(b), hex(g))  # same sign and payload, quiet
            else:
                assert g == b or g == b | 0x40


def test_copy_moves_bits_unchanged_even_signaling_nans():
    t = from_bits(ALL)
    assert bits_of(t.clone()) == ALL
    assert bits_of(from_bits(ALL[::-1])[::2]) == ALL[::-1][::2]  # strided copy


def _random_f32_bits(n: int, rng: random.Random) -> list[int]:
    out = [rng.getrandbits(32) for _ in range(n)]
    # ties: exactly half an ulp below the cut, odd and even upper halves
    out += [(rng.getrandbits(16) << 16) | 0x8000 for _ in range(n // 4)]
    out += [(rng.getrandbits(16) << 16) | 0x7FFF for _ in range(n // 8)]
    out += [(rng.getrandbits(16) << 16) | 0x8001 for _ in range(n // 8)]
    out += [0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F800000, 0xFF800000,
            0x00000000, 0x80000000, 0x00000001, 0x00008000, 0x00018000, 0x7F800001,
            0xFF800001, 0x7FA00000, 0xFFC00000, 0x7FFFFFFF]
    return out


def test_float32_to_bfloat16_rounds_to_nearest_even_bit_exact():
    bits = _random_f32_bits(200_000, random.Random(13))
    src = d.from_numpy(np.array(bits, np.uint32).view(np.float32))
    got = bits_of(src.to(d.bfloat16))
    want = [ref_from_f32_bits(b) for b in bits]
    assert got == want
    assert same_bits([lib.dispatch_bfloat16_bits_from_float(bits_f32(b)) for b in bits[:2000]],
                     want[:2000])  # (Python floats may not carry a signaling NaN's bits)


def test_float64_to_bfloat16_rounds_once_not_through_float32():
    rng = random.Random(7)
    xs = [math.ldexp(1.0 + rng.random(), rng.randint(-140, 128)) * rng.choice((1, -1))
          for _ in range(50_000)]
    # just above or below a tie: rounding to float32 first would land on the
    # tie and then round to even, the wrong way
    for _ in range(20_000):
        b = rng.getrandbits(15) & 0x7F7F
        tie = bf16_value(b) + (bf16_value(b + 1) - bf16_value(b)) / 2
        if math.isfinite(tie) and tie != 0:
            xs += [tie * (1 + 2.0**-40), tie * (1 - 2.0**-40), tie]
    xs += [1.0 + 2.0**-8 + 2.0**-40, 3.3895313892515355e38, 3.3961775292304266e38, 1e300, -1e300,
           2.0**-133, 2.0**-134, 2.0**-134 * (1 + 2.0**-30), 1e-300, -0.0, math.inf, -math.inf]
    got = bits_of(d.tensor(xs, dtype=d.float64).to(d.bfloat16))
    assert got == rounded(xs)
    assert bits_of(d.tensor(xs, dtype=d.bfloat16)) == rounded(xs)  # tensor() of Python floats
    assert lib.dispatch_bfloat16_bits_from_double(1.0 + 2.0**-8 + 2.0**-40) == 0x3F81


def test_nan_payloads_stay_nan_and_become_quiet_keeping_the_sign():
    cases = {0x7F800001: 0x7FC0, 0xFF800001: 0xFFC0, 0x7FA00000: 0x7FE0, 0xFFC00000: 0xFFC0,
             0x7F810000: 0x7FC1}
    src = d.from_numpy(np.array(list(cases), np.uint32).view(np.float32))
    assert bits_of(src.to(d.bfloat16)) == list(cases.values())
    assert bits_of(d.tensor([math.nan, -math.nan], dtype=d.bfloat16))[0] & 0x7FC0 == 0x7FC0


def test_float64_nan_payloads_in_vector_runs():
    """A NaN among 16-element runs of float64 (the AVX-512 path): quiet, with
    its sign and the payload's leading 6 bits, beside ordinary values."""
    rng = np.random.default_rng(5)
    nan_bits = (rng.integers(1, 2**52, 40, dtype=np.uint64) | np.uint64(0x7FF0000000000000)
                | (rng.integers(0, 2, 40, dtype=np.uint64) << np.uint64(63)))
    x = rng.standard_normal(40 * 3)
    x[::3] = nan_bits.view(np.float64)
    got = bits_of(d.from_numpy(x).to(d.bfloat16))
    for b, g in zip(nan_bits.tolist(), got[::3]):
        assert g == ((b >> 48) & 0x8000) | 0x7FC0 | ((b >> 45) & 0x3F), (hex(b), hex(g))
    assert got[1::3] == bits_of(d.from_numpy(x[1::3].copy()).to(d.bfloat16))


def test_inf_overflow_and_signed_zero():
    xs = [math.inf, -math.inf, 3.4e38, -3.4e38, 0.0, -0.0, 1e-45]
    assert bits_of(d.tensor(xs, dtype=d.bfloat16)) == [0x7F80, 0xFF80, 0x7F80, 0xFF80, 0, 0x8000,
                                                       0]
    assert math.copysign(1.0, d.tensor(-0.0, dtype=d.bfloat16).item()) == -1.0


@pytest.mark.parametrize("other", ["bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_casts_to_and_from_every_dtype_go_through_float(other):
    vals = [0.0, 1.0, -2.5, 3.0, 100.0, 0.5, 7.0, -1.0]
    od = getattr(d, other)
    src = d.tensor(vals, dtype=d.bfloat16)
    there = src.to(od)
    expect = d.tensor(vals, dtype=d.float32).to(od)  # bfloat16-exact values
    assert there.tolist() == expect.tolist()
    back = there.to(d.bfloat16)
    assert back.dtype is d.bfloat16
    assert bits_of(back) == bits_of(expect.to(d.float64).to(d.bfloat16))
    # a value bfloat16 cannot hold: rounded once from the other dtype's value
    if od.is_floating_point or other in ("int16", "int32", "int64"):
        x = d.tensor([257, 1001, -32767], dtype=od)
        assert bits_of(x.to(d.bfloat16)) == rounded(x.to(d.float64).tolist())


def test_float_to_int_casts_of_bfloat16_as_float32_casts():
    t = d.tensor([1.75, -1.75, 300.0, -129.0], dtype=d.bfloat16)
    for od in (d.int8, d.uint8, d.int32, d.int64, d.bool):
        assert t.to(od).tolist() == t.to(d.float32).to(od).tolist()


# Operators: float32 then one rounding -------------------------------------------------

def _operands(n: int, seed: int, positive: bool = False) -> list[int]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b = rng.getrandbits(16)
        if (b & 0x7FFF) > 0x7F80 and rng.random() < 0.9:
            continue  # fewer NaNs
        if positive:
            b &= 0x7FFF
        out.append(b)
    return out + [0, 0x8000, 0x7F80, 0xFF80, 0x3F80, 0x7F7F, 0x0001]


def _check_op(fn, *ins):
    bf = [from_bits(b) for b in ins]
    got = bits_of(fn(*bf))
    want32 = fn(*[t.to(d.float32) for t in bf])  # the float32 op on the exact values
    assert same_bits(got, rounded(want32.tolist()))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_ops_are_float32_ops_rounded_once(name):
    n = 3000
    a, b = _operands(n, 1), _operands(n, 2)
    _check_op(getattr(d.ops, name), a, b)
    r = getattr(d.ops, name)(from_bits(a), from_bits(b))
    assert r.dtype is d.bfloat16


def test_add_with_alpha_and_addcmul_with_value_round_once():
    a, b, c = _operands(2000, 3), _operands(2000, 4), _operands(2000, 5)
    _check_op(lambda x, y: d.ops.add(x, y, alpha=3), a, b)
    _check_op(lambda x, y, z: d.ops.addcmul(x, y, z, value=0.5), a, b, c)
    # value stays float32 (not rounded to bfloat16 first), as PyTorch's
    x, y, z = (from_bits(v) for v in (a, b, c))
    got = bits_of(d.ops.addcmul(x, y, z, value=0.1))
    want = d.ops.addcmul(x.to(d.float32), y.to(d.float32), z.to(d.float32), value=0.1)
    assert same_bits(got, rounded(want.tolist()))


@pytest.mark.parametrize("name", ["neg", "abs", "sqrt", "exp", "log"])
def test_unary_ops_are_float32_ops_rounded_once(name):
    _check_op(getattr(d.ops, name), _operands(4000, 6, positive=name in ("sqrt", "log")))


def test_scalar_mul_and_div_keep_the_scalar_in_float32_like_pytorch():
    a = _operands(3000, 8)
    x = from_bits(a)
    for s in (0.1, 3.3, 1e-3):
        for got, want in ((x * s, x.to(d.float32) * s), (x / s, x.to(d.float32) / s),
                          (s * x, s * x.to(d.float32))):
            assert got.dtype is d.bfloat16
            assert same_bits(bits_of(got), rounded(want.tolist()))
    y = x.clone()
    y *= 0.1
    assert same_bits(bits_of(y), rounded((x.to(d.float32) * 0.1).tolist()))


def test_comparisons_where_and_fill():
    a, b = from_bits(_operands(2000, 9)), from_bits(_operands(2000, 10))
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        got = getattr(d.ops, op)(a, b)
        assert got.dtype is d.bool
        assert got.tolist() == getattr(d.ops, op)(a.to(d.float32), b.to(d.float32)).tolist()
    cond = a < b
    w = d.ops.where(cond, a, b)
    assert w.dtype is d.bfloat16
    assert bits_of(w) == [x if c else y for c, x, y in zip(cond.tolist(), bits_of(a), bits_of(b))]
    f = d.full((5,), 0.1, dtype=d.bfloat16)
    assert bits_of(f) == [ref_from_double(0.1)] * 5
    g = d.empty(4, dtype=d.bfloat16)
    g.fill_(1e30)
    assert bits_of(g) == [ref_from_double(1e30)] * 4


# Reductions: accumulated in float32 ------------------------------------------------

def test_sum_accumulates_in_float32_and_rounds_once():
    ones = d.ones(10_000, dtype=d.bfloat16)
    # in bfloat16 the running sum would stop at 256 (256 + 1 rounds back to 256)
    assert ones.sum().dtype is d.bfloat16
    assert ones.sum().item() == bf16_value(ref_from_double(10_000.0)) == 9984.0
    small = d.full((4096,), 0.01, dtype=d.bfloat16)
    exact = 4096 * bf16_value(ref_from_double(0.01))
    assert bits_of(small.sum().view(1)) == [ref_from_double(exact)]
    assert bits_of(small.mean().view(1)) == [ref_from_double(exact / 4096)]
    m = from_bits(_operands(3000, 11, positive=True)[:3000]).view(30, 100)
    m = d.ops.where(m < 1e30, m, d.zeros(1, dtype=d.bfloat16))  # finite rows
    assert same_bits(bits_of(m.sum(1)), rounded(m.to(d.float32).sum(1).tolist()))


def test_max_min_argmax_of_bfloat16():
    x = from_bits(_operands(1000, 12)[:1000])
    x = d.ops.where(x == x, x, d.zeros(1, dtype=d.bfloat16))  # no NaN: argmax is defined
    f = x.to(d.float32)
    assert x.max().item() == f.max().item() and x.max().dtype is d.bfloat16
    assert x.min().item() == f.min().item()
    assert x.argmax().item() == f.argmax().item()
    v, i = d.ops.max(x.view(10, 100), 1)
    fv, fi = d.ops.max(f.view(10, 100), 1)
    assert v.dtype is d.bfloat16 and v.tolist() == fv.tolist() and i.tolist() == fi.tolist()


# Python values ----------------------------------------------------------------------

def test_item_tolist_and_repr_go_through_float():
    t = d.tensor([0.1, 2.5, -3.0], dtype=d.bfloat16)
    assert t.tolist() == [bf16_value(ref_from_double(v)) for v in (0.1, 2.5, -3.0)]
    assert t[0].item() == 0.10009765625 and isinstance(t[0].item(), float)
    assert repr(t) == "tensor([ 0.10009766,  2.5       , -3.        ], dtype=dispatch.bfloat16)"
    assert repr(d.tensor(1.5, dtype=d.bfloat16)) == "tensor(1.5, dtype=dispatch.bfloat16)"
    assert float(d.tensor([2.0], dtype=d.bfloat16)) == 2.0


# NumPy: a documented choice (docs/semantics.md, "bfloat16") ------------------------------------

def test_numpy_export_of_bfloat16_raises_and_says_to_call_float():
    t = d.tensor([1.0, 2.0], dtype=d.bfloat16)
    with pytest.raises(TypeError, match=r"NumPy has no bfloat16.*\.to\(dispatch\.float32\)"):
        t.numpy()
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        t.__array_interface__  # never a wrong dtype
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        d.bfloat16.numpy
    assert t.to(d.float32).numpy().tolist() == [1.0, 2.0]


def test_numpy_data_becomes_bfloat16_only_through_a_cast():
    arr = np.array([0.1, 1e30, -2.0])
    t = d.tensor(arr, dtype=d.bfloat16)  # read as float64, rounded once
    assert bits_of(t) == rounded(arr.tolist())
    assert bits_of(d.from_numpy(arr).to(d.bfloat16)) == rounded(arr.tolist())
    with pytest.raises(TypeError, match="supported types are: bool, .*float64\\.$"):
        d.from_numpy(np.array([0x3F80], np.uint16))  # bits are not taken for bfloat16


# DLPack: kDLBfloat, 16 bits ---------------------------------------------------------

def test_dlpack_round_trip_with_dispatch_itself_shares_memory():
    t = from_bits(_operands(100, 13)[:100])
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    u = d.from_dlpack(t)
    assert u.dtype is d.bfloat16 and bits_of(u) == bits_of(t)
    assert int(ffi.cast("uintptr_t", u._p.data)) == int(ffi.cast("uintptr_t", t._p.data))
    u[0] = 1.0
    assert t[0].item() == 1.0


def test_dlpack_bfloat16_type_code_is_kdlbfloat_16_bits():
    class Fake:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)

    t = d.tensor([1.5], dtype=d.bfloat16)
    assert d.from_dlpack(Fake(t)).dtype is d.bfloat16
    with pytest.raises(TypeError, match="supported: bool, .*float64, bfloat16"):
        d.from_dlpack(np.zeros(1, np.complex64))


def test_dlpack_round_trip_with_torch_bfloat16():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.1, -2.5, 3e38], dtype=torch.bfloat16)
    t = d.from_dlpack(x)
    assert t.dtype is d.bfloat16 and t.tolist() == x.to(torch.float32).tolist()
    y = torch.from_dlpack(t)
    assert y.dtype == torch.bfloat16 and torch.equal(x, y)
