"""copy_ of one value of another dtype (Note [One value cast once] in
sources/dispatcher/host_copy.c): from DISPATCH_ITER_GRAIN elements on the
value is cast once and filled. Every element must hold the bits the cast of
that value gives, the bits a copy_ below the grain (the cast loop, element by
element) gives, for every dtype pair, the float -> int rule's values among
them, at 1 and 2 threads, and nothing outside the destination is written."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dispatch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]
# Values each source dtype can hold, the float -> int rule's cases among them
VALUES = {
    "bool": [True],
    "uint8": [200],
    "int8": [-77],
    "int16": [-30000],
    "int32": [-(1 << 31) + 5],
    "int64": [3, -(1 << 40) - 1],
    "float16": [-2.5, 65504.0],
    "bfloat16": [3.0e38, -0.0078125],
    "float32": [1e10, -3.75, math.nan, -math.inf],
    "float64": [0.1, -1e300, math.nan, math.inf, 255.5],
}
BIG = (64, 1000)  # 64000 elements: past the grain (32768)


def _bits(t) -> bytes:
    """t's bytes; bfloat16 widened to float32 first (exact, one to one: NumPy
    has no bfloat16)."""
    if t.dtype == dispatch.bfloat16:
        t = t.to(dispatch.float32)
    return t.contiguous().numpy().tobytes()


# every pair of two dtypes (one dtype is a fill: test_fills_past_the_caches.py)
PAIRS = [(src, to) for src in DTYPES for to in DTYPES if src != to]


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize(("src", "to"), PAIRS)
def test_one_value_copied_past_the_grain_has_the_casts_bits(src, to, count, threads):
    threads(count)
    for value in VALUES[src]:
        one = dispatch.tensor(value, dtype=getattr(dispatch, src))
        small = dispatch.zeros(7, dtype=getattr(dispatch, to))
        small.copy_(one)  # below the grain: the cast loop on every element
        want = _bits(small[:1])
        base = dispatch.zeros(BIG[0] + 2, BIG[1], dtype=getattr(dispatch, to))
        base[1:-1].copy_(one)  # rows 1 to 64: the first and last row untouched
        got = _bits(base[1:-1])
        assert got == want * (BIG[0] * BIG[1]), (src, to, value)
        assert set(_bits(base[0]) + _bits(base[-1])) <= {0}, "a row outside dst was written"


def test_a_python_number_into_every_dtype_past_the_grain(threads):
    """x.copy_(number): the number is a 0-d int64 / float64 / bool tensor."""
    threads(1)
    for to in DTYPES:
        for number in (7, -1.5, True):
            x = dispatch.zeros(*BIG, dtype=getattr(dispatch, to))
            x.copy_(number)
            small = dispatch.zeros(3, dtype=getattr(dispatch, to))
            small.copy_(number)
            assert _bits(x) == _bits(small[:1]) * x.numel(), (to, number)
