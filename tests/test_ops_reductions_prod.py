"""prod, the reduction added through the reduction kernel table (docs/contributing.md,
"Adding a reduction"): against NumPy for every dtype, over all dims and each
dim, keepdim or not, on every layout; the same bits for any thread count and
layout (Note [Product order] in sources/kernels/prod.dispatch.c); integers
wrap in int64 as NumPy's int64 product does."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dispatch
from dispatch import kernels, ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bits import assert_same_bits  # noqa: E402
from _kernel_sources import own_targets  # noqa: E402
from _targets import forced_env, runnable  # noqa: E402


def _layouts(a: np.ndarray) -> dict:
    """a as a contiguous, a transposed and a stepped dispatch tensor."""
    out = {"contiguous": dispatch.from_numpy(np.ascontiguousarray(a))}
    if a.ndim >= 2:
        out["transposed"] = dispatch.from_numpy(np.ascontiguousarray(a.T)).permute(
            *reversed(range(a.ndim)))
        wide = np.repeat(a, 2, axis=-1)  # wide[..., ::2] is a
        out["stepped"] = dispatch.from_numpy(wide)[..., ::2]
    return out


def _near_one(shape, dtype, seed=3) -> np.ndarray:
    """Values whose long products stay finite and far from 0."""
    rng = np.random.default_rng(seed)
    return (1 + rng.uniform(-0.01, 0.01, shape)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7,), (33, 17), (4, 5, 129)])
def test_prod_matches_numpy_over_every_dim_and_layout(dtype, shape):
    a = _near_one(shape, dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for name, t in _layouts(a).items():
        got = t.prod()
        assert got.dtype == getattr(dispatch, dtype)
        np.testing.assert_allclose(got.numpy(), np.prod(a.astype(np.float64)), rtol=rtol,
                                   err_msg=name)
        for d in range(a.ndim):
            for keep in (False, True):
                got = ops.prod(t, d, keep).numpy()
                want = np.prod(a.astype(np.float64), axis=d, keepdims=keep)
                assert got.shape == want.shape, (name, d, keep)
                np.testing.assert_allclose(got, want, rtol=rtol, err_msg=f"{name} dim {d}")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64"])
def test_integer_prod_is_int64_and_wraps_as_numpy(dtype):
    rng = np.random.default_rng(5)
    hi = 2 if dtype == "bool" else 50
    a = rng.integers(0 if dtype in ("bool", "uint8") else -hi, hi, (6, 40)).astype(dtype)
    for name, t in _layouts(a).items():
        got = t.prod()
        assert got.dtype == dispatch.int64
        assert int(got.numpy()) == int(np.prod(a.astype(np.int64))), name  # wraps alike
        for d in (0, 1):
            assert ops.prod(t, d).numpy().tolist() == np.prod(a.astype(np.int64), axis=d).tolist()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integer_prod_wraps_as_numpy_on_every_thread_count_and_layout(threads, dtype):
    """Large enough for the integer kernels' lanes, column blocks and the
    threads' split (Note [Threaded integer reductions]); factors of 3 and -1
    make the int64 products wrap many times over."""
    rng = np.random.default_rng(7)
    lo = 0 if dtype in ("bool", "uint8") else -1
    a = rng.choice(np.array([lo, 1, 1, 3, 1], dtype=np.int64), (300, 700)).astype(dtype)
    if dtype == "bool":
        a = np.ones((300, 700), bool)
        a[17, 5] = a[200, 600] = False
    wide = a.astype(np.int64)
    with np.errstate(over="ignore"):
        want = [np.prod(wide), np.prod(wide, axis=0), np.prod(wide, axis=1)]
    for n in (1, 2, 3):
        threads(n)
        for name, t in _layouts(a).items():
            assert int(t.prod().numpy()) == int(want[0]), (n, name)
            for d in (0, 1):
                got = ops.prod(t, d)
                assert got.dtype == dispatch.int64
                assert got.numpy().tolist() == want[d + 1].tolist(), (n, name, d)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_prod_is_the_float32_product_rounded_once(dtype):
    a32 = _near_one((9, 70), "float32")
    t = dispatch.from_numpy(a32).to(getattr(dispatch, dtype))
    wide = t.to(dispatch.float32)  # the narrow values, exactly, in float32
    for got, want in [(t.prod(), wide.prod()), (ops.prod(t, 1), ops.prod(wide, 1)),
                      (ops.prod(t, 0, True), ops.prod(wide, 0, True))]:
        assert got.dtype == getattr(dispatch, dtype)
        assert_same_bits(got, want.to(getattr(dispatch, dtype)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_prod_over_blocks_and_threads_is_the_float32_product(threads, dtype):
    """Past a fold block (Note [Fold blocks]: 4096 elements), on the narrow
    column kernel (prod(dim=0)) and the rows' blocks, at 1-3 threads."""
    a32 = _near_one((300, 700), "float32", seed=8)
    t = dispatch.from_numpy(a32).to(getattr(dispatch, dtype))
    wide = t.to(dispatch.float32)
    for n in (1, 2, 3):
        threads(n)
        for got, want in [(t.prod(), wide.prod()), (ops.prod(t, 0), ops.prod(wide, 0)),
                          (ops.prod(t, 1), ops.prod(wide, 1)),
                          (t[:, ::2].prod(), wide[:, ::2].prod())]:
            assert_same_bits(got, want.to(getattr(dispatch, dtype)))


def test_prod_of_nothing_is_one_and_dtype_casts_first():
    assert float(dispatch.from_numpy(np.zeros((0,), np.float32)).prod().numpy()) == 1.0
    assert ops.prod(dispatch.from_numpy(np.zeros((3, 0))), 1).numpy().tolist() == [1, 1, 1]
    t = dispatch.from_numpy(np.array([300.0, 2.0]))
    assert int(t.prod(dtype=dispatch.int8).numpy()) == int(np.int8(44) * np.int8(2))


def test_prod_propagates_nan_and_inf():
    a = np.ones(100, np.float32)
    a[37] = np.inf
    assert float(dispatch.from_numpy(a).prod().numpy()) == np.inf
    a[61] = np.nan
    assert np.isnan(float(dispatch.from_numpy(a).prod().numpy()))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prod_is_the_same_bits_for_any_thread_count_and_layout(threads, dtype):
    a = _near_one((300, 700), dtype, seed=11)
    threads(1)
    ref = [t.prod() for t in _layouts(a).values()]
    ref += [ops.prod(t, d) for t in _layouts(a).values() for d in (0, 1)]
    for n in (2, 3):
        threads(n)
        got = [t.prod() for t in _layouts(a).values()]
        got += [ops.prod(t, d) for t in _layouts(a).values() for d in (0, 1)]
        for g, r in zip(got, ref):
            assert_same_bits(g, r)
    for g in ref[1:3]:  # every layout: the bits of the contiguous one
        assert_same_bits(g, ref[0])


def test_prod_kernels_come_from_the_table_and_agree_on_every_target(tmp_path):
    """Each SIMD target of prod.dispatch.c the CPU runs gives the same bits
    (a child per target, the features above it disabled)."""
    assert kernels.chosen("prod")
    code = ("import numpy as np, dispatch, dispatch.kernels, sys\n"
            "a = (1 + np.random.default_rng(2).uniform(-0.01, 0.01, 100003)).astype(np.float32)\n"
            "t32, t64 = dispatch.from_numpy(a), dispatch.from_numpy(a.astype(np.float64))\n"
            "sys.stdout.write(dispatch.kernels.chosen('prod') + ' ' + t32.prod().numpy().tobytes()"
            ".hex() + t64.prod().numpy().tobytes().hex())\n")
    seen = {}
    for target in own_targets("prod"):
        if not runnable(target):
            continue
        r = subprocess.run([sys.executable, "-c", code], env=forced_env(target),
                           capture_output=True, text=True, cwd=tmp_path, check=True)
        chosen, bits = r.stdout.split()
        seen[chosen] = bits
    assert len(seen) >= 2 and len(set(seen.values())) == 1, seen
