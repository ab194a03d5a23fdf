"""A pure-Python reference of a narrow binary float format (E exponent bits,
M stored mantissa bits, IEEE or finite-only "fn"), from its definition alone:
no NumPy, no ml_dtypes, nothing shared with the C conversions
(sources/include/dispatch/narrow_float.h), which it checks.

- decode: the bit fields read by the format's definition (sign, biased
  exponent, mantissa with its implicit bit; subnormals at the smallest
  exponent; IEEE's all-ones exponent is inf or a NaN, fn's one NaN per sign
  has every other bit set).
- encode: a double rounded once to the nearest finite value of the format,
  found by search among the decoded values and compared exactly (fractions),
  ties to the value whose bits are even. Past the largest finite value the
  next value of an unbounded exponent range (bits max + 1) takes part in the
  rounding: IEEE gives inf there, fn NaN, both with the sign kept, so 464
  (the tie between float8_e4m3fn's 448, even, and 480) rounds to 448 and
  anything above it to NaN. inf gives inf (IEEE) or NaN (fn); a NaN gives a
  quiet NaN of its sign (IEEE keeps the double's top payload bits, as
  narrow_float.h does).

Used by tools/narrow_float_check.py (the float recipe of tools/dtype_recipe.py)
and checked against the runtime's float16 and bfloat16 by
tests/test_dtype_recipe.py.
"""

from __future__ import annotations

import bisect
import math
import struct
from fractions import Fraction

__all__ = ["Format", "FORMATS"]


class Format:
    """One narrow float format: decode(bits) -> float, encode(double) -> bits."""

    def __init__(self, e: int, m: int, nans: str) -> None:
        if nans not in ("IEEE", "FN") or not (2 <= e <= 8 and 1 <= m <= 22):
            raise ValueError(f"not a narrow float format: E={e}, M={m}, NANS={nans!r}")
        self.e, self.m, self.nans = e, m, nans
        self.bias = (1 << (e - 1)) - 1
        self.nbits = 1 + e + m
        self.sign_bit = 1 << (e + m)
        # the positive finite values in order of their bits (= of their values)
        top = (1 << (e + m)) - (2 if nans == "FN" else (1 << m) + 1)
        self.max_bits = top
        self._values = [self.decode(b) for b in range(top + 1)]
        self.max = self._values[-1]
        # the value the next bits would have with an unbounded exponent range
        self._beyond = self.max + math.ldexp(1.0, self._exponent(top) - m)
        self.itemsize = (self.nbits + 7) // 8

    def _exponent(self, bits: int) -> int:
        """The unbiased exponent of the binade of (positive, finite) bits."""
        return max((bits >> self.m) & ((1 << self.e) - 1), 1) - self.bias

    def is_nan(self, bits: int) -> bool:
        mag = bits & (self.sign_bit - 1)
        if self.nans == "FN":
            return mag == self.sign_bit - 1
        return (mag >> self.m) == (1 << self.e) - 1 and mag & ((1 << self.m) - 1) != 0

    @property
    def nan(self) -> int:
        """The positive quiet NaN's bits."""
        return self.sign_bit - 1 if self.nans == "FN" else \
            (((1 << self.e) - 1) << self.m) | (1 << (self.m - 1))

    def decode(self, bits: int) -> float:
        """The value of bits (exact as a double)."""
        if not 0 <= bits < (1 << self.nbits):
            raise ValueError(f"{bits:#x} has more than {self.nbits} bits")
        sign = -1.0 if bits & self.sign_bit else 1.0
        exp = (bits >> self.m) & ((1 << self.e) - 1)
        frac = bits & ((1 << self.m) - 1)
        if self.is_nan(bits):
            return math.copysign(math.nan, sign)
        if exp == (1 << self.e) - 1 and self.nans == "IEEE":
            return sign * math.inf
        if exp == 0:  # zero or subnormal: frac ulps of the smallest exponent
            return sign * math.ldexp(frac, 1 - self.bias - self.m)
        return sign * math.ldexp((1 << self.m) + frac, exp - self.bias - self.m)

    def encode(self, x: float) -> int:
        """A double rounded once to the nearest, ties to even bits."""
        sign = self.sign_bit if math.copysign(1.0, x) < 0 else 0
        if math.isnan(x):
            if self.nans == "FN":
                return sign | self.nan
            payload = struct.unpack("<Q", struct.pack("<d", abs(x)))[0] & ((1 << 52) - 1)
            return sign | self.nan | (payload >> (52 - self.m))
        ax = abs(x)
        over = sign | (self.nan if self.nans == "FN" else ((1 << self.e) - 1) << self.m)
        if math.isinf(ax) or ax >= self._beyond:
            return over
        i = bisect.bisect_right(self._values, ax)  # values[i - 1] <= ax < values[i]
        lo = i - 1
        if self._values[lo] == ax:
            return sign | lo
        hi_value = self._values[i] if i < len(self._values) else self._beyond
        below = Fraction(ax) - Fraction(self._values[lo])
        above = Fraction(hi_value) - Fraction(ax)
        if below < above or (below == above and lo % 2 == 0):
            return sign | lo
        return over if i == len(self._values) else sign | i


# The formats of the runtime's narrow floats and of float8_e4m3fn (the float
# recipe's): (E, M, NANS) as DISPATCH_FORALL_NARROW_FLOATS writes them, and the
# DLPack type code of each (dlpack.h: kDLFloat, kDLBfloat, kDLFloat8_e4m3fn).
FORMATS = {
    "float16": ((5, 10, "IEEE"), 2),
    "bfloat16": ((8, 7, "IEEE"), 4),
    "float8_e4m3fn": ((4, 3, "FN"), 10),
}
