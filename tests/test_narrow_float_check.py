"""The float recipe's yardsticks (tools/dtype_recipe.py float): the pure-Python
reference of a narrow float format (tools/narrow_float_ref.py) and the check
built on it (tools/narrow_float_check.py), both proven here on the runtime's
own float16 and bfloat16 before they judge a float8_e4m3fn built from the
recipe (tests/test_dtype_recipe.py): the reference gives the C conversions'
bits, and the check holds for the two narrow floats that ship."""

from __future__ import annotations

import math
import random
import struct
import sys
from pathlib import Path

import pytest

import dispatch
from dispatch._core import lib

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import narrow_float_check  # noqa: E402
from narrow_float_ref import FORMATS, Format  # noqa: E402

E4M3FN = Format(4, 3, "FN")


def _doubles(fmt: Format, n: int, seed: int) -> list[float]:
    """Random doubles of every kind, values of the format's range, and ties
    between neighbours with doubles just off them."""
    rng = random.Random(seed)
    out = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(n)]
    span = (1 - fmt.bias - fmt.m - 3, fmt.bias + 3)
    out += [math.ldexp(rng.random() + 0.5, rng.randint(*span)) * rng.choice((1, -1))
            for _ in range(n)]
    for _ in range(n):
        b = rng.randrange(fmt.max_bits)
        tie = (fmt.decode(b) + fmt.decode(b + 1)) / 2
        out += [tie, tie * (1 + 2.0**-40), tie * (1 - 2.0**-40)]
    return out + [fmt.max, 2 * fmt.max, math.inf, -math.inf, math.nan, 0.0, -0.0, 5e-324]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_the_reference_gives_the_runtimes_bits_of_float16_and_bfloat16(name):
    (e, m, nans), _ = FORMATS[name]
    fmt, num = Format(e, m, nans), getattr(dispatch, name).num
    for b in range(1 << 16):
        want, got = fmt.decode(b), lib.dispatch_narrow_bits_to_double(num, b)
        assert (math.isnan(want) and math.isnan(got)) or \
            (want == got and math.copysign(1, want) == math.copysign(1, got)), (hex(b), got, want)
    for x in _doubles(fmt, 4000, 1):
        assert fmt.encode(x) == lib.dispatch_narrow_bits_from_double(num, x), x


def test_the_reference_knows_float8_e4m3fn():
    """The OCP 8-bit E4M3 format: bias 7, no inf, the NaN S.1111.111, largest 448."""
    f = E4M3FN
    assert (f.max, f.max_bits, f.nan, f.itemsize) == (448.0, 0x7E, 0x7F, 1)
    assert [f.decode(b) for b in (0x01, 0x07, 0x08, 0x38, 0x78, 0xB8, 0x80)] == \
        [2.0**-9, 7 * 2.0**-9, 2.0**-6, 1.0, 256.0, -1.0, -0.0]
    assert math.copysign(1, f.decode(0x80)) == -1
    assert math.isnan(f.decode(0x7F)) and math.isnan(f.decode(0xFF))
    assert math.copysign(1, f.decode(0xFF)) == -1
    cases = [(448.0, 0x7E), (449.0, 0x7E), (464.0, 0x7E),  # 464 ties to 448 (even), not 480
             (464.0000001, 0x7F), (480.0, 0x7F), (1e300, 0x7F), (math.inf, 0x7F),
             (-math.inf, 0xFF), (-500.0, 0xFF), (math.nan, 0x7F), (-math.nan, 0xFF),
             (-0.0, 0x80), (0.0, 0x00), (5e-324, 0x00),
             (2.0**-10, 0x00), (2.0**-10 * (1 + 2.0**-30), 0x01), (3 * 2.0**-10, 0x02),  # ties
             (1.0625, 0x38), (1.1875, 0x3A), (1.0625 + 2.0**-40, 0x39), (17.0, 0x58),
             (-(2.0**-6) * 0.9, 0x87)]
    for x, want in cases:
        assert f.encode(x) == want, (x, hex(f.encode(x)), hex(want))
    for b in range(256):  # every value reads back to its bits
        if not f.is_nan(b):
            assert f.encode(f.decode(b)) == b, hex(b)


def test_the_reference_refuses_a_format_it_cannot_be():
    for bad in ((4, 3, "fnuz"), (9, 3, "IEEE"), (4, 0, "FN")):
        with pytest.raises(ValueError, match="not a narrow float format"):
            Format(*bad)
    with pytest.raises(ValueError, match="more than 8 bits"):
        E4M3FN.decode(0x100)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_the_check_holds_for_the_narrow_floats_that_ship(name, capsys):
    assert narrow_float_check.main([name]) == 0
    out = capsys.readouterr().out
    for step in ("facts", "widening", "rounding", "casts", "binary_ops", "reductions",
                 "promotion", "printing", "dlpack"):
        assert f"{name}: {step}: ok" in out, out
    assert f"{name}: every check holds" in out
