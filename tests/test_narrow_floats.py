"""The narrow floats' facts come from their format (Note [Narrow floats] in
sources/include/dispatch/dtype.h): which dtypes are narrow, their largest
finite values and their conversions by dtype, through the C entries Python
and the scalar checks use. The format algorithm itself is checked bit for bit
against float16's and bfloat16's own conversions and on float8_e4m3fn by
sources/core/test_narrow_float.c (meson test), and a whole new narrow float by
tools/dtype_recipe.py."""

import struct

import numpy as np
import pytest

import dispatch
from dispatch._core import lib
from dispatch._dtypes import _DTYPES

FLOATS = [d for d in _DTYPES if d.is_floating_point]


def test_a_dtype_is_narrow_exactly_when_it_is_a_float_narrower_than_float32():
    for d in _DTYPES:
        want = d.is_floating_point and d.itemsize < 4
        assert bool(lib.dispatch_dtype_is_narrow_float(d.num)) == want, d.name


def test_largest_finite_values():
    assert lib.dispatch_dtype_float_max(dispatch.float16.num) == float(np.finfo(np.float16).max)
    assert lib.dispatch_dtype_float_max(dispatch.float32.num) == float(np.finfo(np.float32).max)
    assert lib.dispatch_dtype_float_max(dispatch.float64.num) == float(np.finfo(np.float64).max)
    assert lib.dispatch_dtype_float_max(dispatch.bfloat16.num) == (2 - 2**-7) * 2.0**127
    for d in _DTYPES:
        if not d.is_floating_point:
            assert lib.dispatch_dtype_float_max(d.num) == 0.0, d.name


def test_float16_conversions_by_dtype_are_numpys_on_every_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32)
    want = bits.astype(np.uint16).view(np.float16).astype(np.float64)
    got = np.array([lib.dispatch_narrow_bits_to_double(dispatch.float16.num, int(b)) for b in bits])
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all() and (got[~nan] == want[~nan]).all()
    finite = want[np.isfinite(want)]
    back = [lib.dispatch_narrow_bits_from_double(dispatch.float16.num, float(x)) for x in finite]
    assert (np.array(back, np.uint16) == finite.astype(np.float16).view(np.uint16)).all()


def test_bfloat16_conversions_by_dtype_are_the_top_half_of_a_float32():
    for b in range(0, 1 << 16, 7):
        want = struct.unpack("<f", struct.pack("<I", b << 16))[0]
        got = lib.dispatch_narrow_bits_to_double(dispatch.bfloat16.num, b)
        assert got == want or (got != got and want != want), hex(b)
    # rounded once, ties to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7
    assert lib.dispatch_narrow_bits_from_double(dispatch.bfloat16.num, 1 + 2**-8) == 0x3F80
    assert lib.dispatch_narrow_bits_from_double(dispatch.bfloat16.num, 1 + 3 * 2**-8) == 0x3F82
    assert lib.dispatch_narrow_bits_from_double(dispatch.bfloat16.num, 1 + 2**-8 + 2**-30) == 0x3F81


@pytest.mark.parametrize("d", [d for d in FLOATS if d.itemsize < 4], ids=lambda d: d.name)
def test_a_scalar_beyond_a_narrow_floats_largest_value_is_refused(d):
    top = lib.dispatch_dtype_float_max(d.num)
    t = dispatch.zeros(3, dtype=d)
    assert t.fill_(top).tolist() == [top] * 3 == dispatch.full((3,), -top, dtype=d).neg().tolist()
    for bad in (top * 2, -top * 2):
        with pytest.raises(ValueError, match=f"{d.name} without overflow"):
            t.fill_(bad)
        with pytest.raises(ValueError, match=f"{d.name} without overflow"):
            dispatch.full((3,), bad, dtype=d)
    if top < 2**62:  # an int too (float16: 65504)
        with pytest.raises(ValueError, match="overflow"):
            t.fill_(int(top) * 2)


def test_other_dtypes_have_no_narrow_conversions():
    for d in (dispatch.float32, dispatch.int16, dispatch.bool):
        assert lib.dispatch_narrow_bits_from_double(d.num, 1.0) == 0
        assert lib.dispatch_narrow_bits_to_double(d.num, 0x3C00) == 0.0
