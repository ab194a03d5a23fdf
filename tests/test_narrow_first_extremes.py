"""max/min with indices and argmax/argmin of the narrow floats (float16,
bfloat16) in their own bits (Note [max and min with indices]; the column
kernel of sources/kernels/argext.dispatch.c, the bit search of
sources/iterator/reduce_indices.c): the first NaN, with its own bits, wins;
of -0.0 and +0.0 the first; every path (columns in one pass, runs searched,
strided views copied dense first), at 1, 2 and 3 threads. The model is
NumPy's on float32 values (each narrow value is one exactly)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import bits

# float32 bits of quiet NaNs both narrow formats hold exactly (sign, payload)
NAN32 = [0x7FC00000, 0xFFC00000, 0x7FC10000, 0xFFE00000]


def _values(shape, seed: int, kind: str) -> np.ndarray:
    """float32 values every narrow format holds: small integers, then NaNs,
    infinities or signed zeros at random places."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(np.float32)
    flat = a.reshape(-1)
    n = flat.size
    if kind == "nan":
        where = rng.choice(n, size=max(1, n // 50), replace=False)
        flat[where] = np.array(rng.choice(NAN32, size=where.size), np.uint32).view(np.float32)
    elif kind == "inf":
        where = rng.choice(n, size=max(1, n // 50), replace=False)
        flat[where] = rng.choice([np.inf, -np.inf], size=where.size)
    elif kind == "zeros":  # max is a zero of either sign, min a zero too
        flat[:] = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    return a


def _narrow(a32: np.ndarray, dtype: str):
    """The tensor of a's values in dtype (each exact)."""
    if dtype == "float16":
        return dispatch.from_numpy(a32.astype(np.float16))
    return dispatch.from_numpy(a32).to(dispatch.bfloat16)


def _narrow_bits(a32: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float16":
        return a32.astype(np.float16).view(np.uint16)
    return (a32.view(np.uint32) >> 16).astype(np.uint16)


def _model(a32: np.ndarray, axis, is_max: bool) -> np.ndarray:
    """The first index of the extreme (NaN first) of the float32 values
    along axis, or over all of them in row-major order."""
    v = a32.reshape(1, -1) if axis is None else np.moveaxis(a32, axis, -1)
    isnan = np.isnan(v)
    filled = np.where(isnan, -np.inf if is_max else np.inf, v)
    ext = filled.max(-1) if is_max else filled.min(-1)
    first = (filled == ext[..., None]).argmax(-1)
    idx = np.where(isnan.any(-1), isnan.argmax(-1), first)
    return idx if axis is not None else idx[0]


def _layouts(a32: np.ndarray, dtype: str) -> dict:
    """The same logical values contiguous, transposed and every other column."""
    wide = np.zeros((a32.shape[0], 2 * a32.shape[1]), np.float32)
    wide[:, ::2] = a32
    wide[:, 1::2] = np.float32(np.nan)  # never read
    return {"contiguous": _narrow(a32, dtype),
            "transposed": _narrow(np.ascontiguousarray(a32.T), dtype).permute(1, 0),
            "stepped": _narrow(wide, dtype)[:, ::2]}


# (300, 300): columns in one pass (dim 0), runs searched (dim 1), and parts
# for the threads; (9, 1031): a wide row; the transposed and stepped views:
# copied dense first (Note [Strided first extremes] in reduce_plan.c)
SHAPES = [(300, 300), (9, 1031)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["nan", "inf", "zeros"])
def test_first_extremes_of_narrow_floats_match_the_model(threads, dtype, kind):
    for shape in SHAPES:
        for seed in range(2):
            a32 = _values(shape, seed, kind)
            want_bits = _narrow_bits(a32, dtype)
            for nthreads in (1, 2, 3):
                threads(nthreads)
                for layout, t in _layouts(a32, dtype).items():
                    for dim in (0, 1, None):
                        for name in ("max", "min"):
                            what = f"{name}(dim={dim}) {dtype} {kind} {layout} {shape} {nthreads}t"
                            idx = _model(a32, dim, name == "max")
                            arg = getattr(dispatch, "arg" + name)(t, dim)
                            assert np.array_equal(np.asarray(bits(arg)).view(np.int64), idx), what
                            if dim is None:
                                continue
                            res = getattr(dispatch, name)(t, dim)
                            assert np.array_equal(np.asarray(bits(res.indices)).view(np.int64),
                                                  idx), what
                            moved = np.moveaxis(want_bits, dim, -1)
                            want = np.take_along_axis(moved, idx[..., None], -1)[..., 0]
                            assert np.array_equal(bits(res.values), want), what
