"""The SIMD loops give the same bits whatever the memory layout: every tail
length, unaligned pointers, strided and broadcast (stride 0) operands,
in-place output. The oracle is the contiguous result itself (for + - * /
sqrt also NumPy, which is correctly rounded too).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from dispatch import kernels

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _aligned import aligned  # noqa: E402

FLOATS = [np.float32, np.float64]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
UNARY = ["sqrt", "exp", "log"]


def data(n: int, dtype, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).uniform(0.5, 4.0, n)).astype(dtype)


def apply(op: str, out, *xs):
    kernels.run(op, out, *xs)
    return out


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BINARY + UNARY)
def test_every_length_and_offset_matches_elementwise_reference(op, dtype):
    nin = 2 if op in BINARY else 1
    a_all, b_all = data(200, dtype, 1), data(200, dtype, 2)
    ref_full = apply(op, np.empty(200, dtype), *([a_all, b_all][:nin]))
    for n in list(range(70)) + [127, 128, 129, 200]:
        for off in (0, 1, 3):
            a, b, out = aligned(n, dtype, off), aligned(n, dtype, off + 1), aligned(n, dtype, off)
            a[:] = a_all[:n]
            b[:] = b_all[:n]
            apply(op, out, *([a, b][:nin]))
            assert out.tobytes() == ref_full[:n].tobytes(), (n, off)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BINARY + UNARY)
def test_strided_operands_give_the_contiguous_bits(op, dtype):
    nin = 2 if op in BINARY else 1
    n = 1000
    a, b = data(3 * n, dtype, 3)[::3], data(2 * n, dtype, 4)[::-2]
    out = np.zeros(2 * n, dtype)[::2]
    apply(op, out, *([a, b][:nin]))
    ref = apply(op, np.empty(n, dtype), *([np.ascontiguousarray(a), np.ascontiguousarray(b)][:nin]))
    assert out.tobytes() == ref.tobytes() or np.array_equal(out, ref)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("which", [0, 1])
def test_scalar_broadcast_operand_gives_the_full_array_bits(op, dtype, which):
    n = 1037
    x = data(n, dtype, 5)
    s = np.broadcast_to(np.array(2.5, dtype=dtype), (n,))
    args = [s, x] if which == 0 else [x, s]
    out = apply(op, np.empty(n, dtype), *args)
    full = [np.full(n, 2.5, dtype), x] if which == 0 else [x, np.full(n, 2.5, dtype)]
    assert out.tobytes() == apply(op, np.empty(n, dtype), *full).tobytes()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "exp"])
def test_in_place_output(op, dtype):
    x = data(1001, dtype, 6)
    ref = apply(op, np.empty_like(x), *([x, x] if op == "add" else [x]))
    apply(op, x, *([x, x] if op == "add" else [x]))
    assert x.tobytes() == ref.tobytes()


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_does_not_depend_on_the_stride(dtype):
    x = np.random.default_rng(7).standard_normal(30_001).astype(dtype)
    strided = np.zeros(3 * x.size, dtype)[::3]
    strided[:] = x
    assert kernels.sum(strided) == kernels.sum(x)
    reversed_copy = np.ascontiguousarray(x[::-1])[::-1]
    assert kernels.sum(reversed_copy) == kernels.sum(x)


def test_wrong_dtype_is_rejected_with_the_accepted_ones():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.run("add", x, x, x)


def test_mixed_dtypes_are_rejected():
    with pytest.raises(TypeError, match="one dtype"):
        kernels.run("add", np.zeros(4, np.float32), np.zeros(4, np.float64), np.zeros(4, np.float32))


def test_unknown_op_names_the_known_ones():
    with pytest.raises(ValueError, match="known: add, sub"):
        kernels.run("cosh", np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_unknown_source_names_the_known_ones():
    with pytest.raises(ValueError, match="known: ") as e:
        kernels.chosen("fft")
    assert str(e.value).split("known: ")[1].split(", ") == list(kernels.SOURCES)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("leaves", [15, 16, 17, 31, 63, 64, 65, 129, 300])
@pytest.mark.parametrize("extra", [0, 1, 333])
def test_sum_of_leaves_read_in_pairs_does_not_depend_on_the_stride(dtype, leaves, extra):
    """A contiguous range of up to 64 leaves reads them two at a time (Note
    [Two streams] in sources/kernels/sum.dispatch.c); a strided copy reads
    one leaf at a time. Around the block's edges, odd leaf counts and a
    partial last leaf, the two must give the same bits."""
    leaf = 1024 if dtype == np.float32 else 512
    x = np.random.default_rng(leaves * 7 + extra).standard_normal(leaves * leaf + extra).astype(dtype)
    x[5] = 1e7  # cancellation makes any change of order visible
    x[-1] = -1e7
    strided = np.zeros(2 * x.size, dtype)[::2]
    strided[:] = x
    assert kernels.sum(x) == kernels.sum(strided)
