"""Reductions of NaN, infinities and signed zeros, bit for bit (issue 27):
sum, mean, max, min, amax, amin, argmax, argmin with the special values at
every class of position the kernels treat apart (the first element, a
vector boundary, the second of two streams, a thread's part, the tail),
over contiguous, transposed and stepped layouts, at 1, 2 and 3 threads,
against a NumPy model of the documented rules:

- a sum or mean that is NaN is the positive quiet NaN, and never -0.0
  (Note [The NaN and the zero of a sum] in sources/iterator/reduce_float.c);
- max/min answer with the first element equal to the extreme: the first
  NaN with its own bits, the first of -0.0 and +0.0 (Note [Which zero,
  which NaN] in sources/kernels/sum.dispatch.c); argmax/argmin its index.

The finite values are small integers, so every summation order gives the
same exact value and only the rules above decide the bits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bits import assert_same_bits, bits  # noqa: E402
from _kernel_sources import own_targets  # noqa: E402
from _targets import NEEDS, forced_env, runnable  # noqa: E402

# Quiet NaNs of both signs and with a payload, per dtype (as unsigned bits).
NANS = {"float16": [0x7E00, 0xFE00, 0x7E15],
        "float32": [0x7FC00000, 0xFFC00000, 0x7FC01234],
        "float64": [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000001234]}
UINT = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def _nan(dtype: str, k: int):
    return np.array([NANS[dtype][k]], UINT[dtype]).view(dtype)[0]


def _positions(n: int) -> list:
    """Flat positions of each class: the ends, vector and leaf boundaries,
    the two halves read as two streams, the odd tail, thread parts."""
    cand = {0, 1, 15, 16, 63, 64, 65, n // 3, n // 2 - 1, n // 2, n // 2 + 1, 2 * n // 3,
            n - 65, n - 2, n - 1}
    return sorted(p for p in cand if 0 <= p < n)


def _case(dtype: str, n: int, seed: int, kind: str) -> np.ndarray:
    """n values: integers in [-2, 2], with specials of `kind` at a few
    positions of distinct classes; 'zeros': signed zeros only; 'top-zero':
    integers <= 0 whose zeros have random signs (max is a zero)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, n).astype(dtype)
    if kind in ("zeros", "top-zero"):
        a = np.zeros(n, dtype) if kind == "zeros" else np.minimum(a, 0)
        zeros = a == 0
        a[zeros] = np.where(rng.random(int(zeros.sum())) < 0.5, -0.0, 0.0)
        pos = _positions(n)  # the first zero at a position of each class in turn
        first = pos[seed % len(pos)]
        a[:first] = np.where(a[:first] == 0, -1, a[:first]) if kind == "top-zero" else a[:first]
        return a
    pos = rng.choice(_positions(n), size=3, replace=False)
    for k, p in enumerate(pos):
        if kind == "nan":
            a[p] = _nan(dtype, int(rng.integers(0, 3)))
        elif kind == "inf":
            a[p] = [np.inf, -np.inf][k % 2]
        elif kind == "nan-inf":
            a[p] = [np.inf, _nan(dtype, int(rng.integers(0, 3))), -np.inf][k % 3]
    return a


# The model: rules over the reduced elements in row-major order ---------------------

def _quiet_nan(dtype):
    return np.array(np.nan, dtype)


def _model_rows(op: str, v: np.ndarray) -> np.ndarray:
    """The expected result of op over the last axis of v, in order."""
    dt = v.dtype
    isnan = np.isnan(v)
    if op in ("sum", "mean"):
        nan = isnan.any(-1) | (np.isposinf(v).any(-1) & np.isneginf(v).any(-1))
        with np.errstate(invalid="ignore"):
            s = v.astype(np.float64).sum(-1)  # exact: small integers, infinities
        if op == "mean":  # float16 means in float32 and rounds once
            acc = np.float64 if dt == np.float64 else np.float32
            s = s.astype(acc) / acc(v.shape[-1])
        return np.where(nan, _quiet_nan(dt), (s + 0.0).astype(dt))  # never -0.0
    is_max = op in ("max", "amax", "argmax")
    filled = np.where(isnan, -np.inf if is_max else np.inf, v)
    ext = filled.max(-1) if is_max else filled.min(-1)
    first_ext = (filled == ext[..., None]).argmax(-1)
    i = np.where(isnan.any(-1), isnan.argmax(-1), first_ext)
    if op.startswith("arg"):
        return i.astype(np.int64)
    return np.take_along_axis(v, i[..., None], -1)[..., 0]


def _model(op: str, a: np.ndarray, dim):
    if dim is None:
        return _model_rows(op, a.reshape(-1))
    return _model_rows(op, np.moveaxis(a, dim, -1))


def _layouts(a: np.ndarray) -> dict:
    """(NumPy view, dispatch tensor over the same logical values) per layout."""
    out = {"contiguous": dispatch.from_numpy(np.ascontiguousarray(a))}
    t = dispatch.from_numpy(np.ascontiguousarray(a.T))
    out["transposed"] = t.permute(1, 0)
    wide = np.empty((a.shape[0], 2 * a.shape[1]), a.dtype)
    wide[:, ::2] = a
    wide[:, 1::2] = _nan(a.dtype.name, 1) if a.dtype.kind == "f" else 0  # never read
    out["stepped"] = dispatch.from_numpy(wide)[:, ::2]
    return out


OPS = ["sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin"]


def _call(op: str, t, dim):
    if dim is None:
        return getattr(dispatch, op)(t)
    if op in ("max", "min"):
        return getattr(dispatch, op)(t, dim).values
    return getattr(dispatch, op)(t, dim)


# shapes: small (one call), wide rows (two streams, the vector passes), and
# large enough (>= 2 * 32768 elements) for the threads to split the work
SHAPES = [(5, 67), (3, 1031), (300, 300)]


def check_all(dtype: str, kind: str, set_threads, thread_counts=(1, 2, 3)) -> None:
    """Every op, dim, layout and thread count of the cases of (dtype, kind)
    against the model; raises AssertionError naming the first difference."""
    for shape in SHAPES:
        for seed in range(2):
            a = _case(dtype, shape[0] * shape[1], seed, kind).reshape(shape)
            if kind == "top-zero" and seed == 1:
                a = -a  # min's turn to end on a zero
            views = _layouts(a)
            for dim in (None, 0, 1):
                want = {op: _model(op, a, dim) for op in OPS}
                for nthreads in thread_counts:
                    set_threads(nthreads)
                    for layout, t in views.items():
                        for op in OPS:
                            what = f"{op}(dim={dim}) {layout} {shape} seed {seed} {nthreads}t"
                            assert_same_bits(_call(op, t, dim), want[op], what)


KINDS = ["nan", "inf", "nan-inf", "zeros", "top-zero"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kind", KINDS)
def test_reductions_of_special_values_follow_the_rules_bit_for_bit(threads, dtype, kind):
    check_all(dtype, kind, threads)


# Each SIMD target of the reduction kernels (sum.dispatch.c's @targets) forced in
# a fresh interpreter: the fast vector passes and their fix-ups differ by
# target, the rules do not.
CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import dispatch, test_ops_reductions_special as m
assert dispatch.probe_target() == sys.argv[2], dispatch.probe_target()
for dtype in ("float32", "float64", "float16"):
    for kind in m.KINDS:
        m.check_all(dtype, kind, dispatch.set_num_threads, (1, 3))
print("ok")
"""


@pytest.mark.parametrize("target", own_targets("sum"))
def test_the_rules_hold_on_every_simd_target(target, tmp_path):
    if not runnable(target):
        pytest.skip(f"this CPU has no {NEEDS[target]}")
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).resolve().parent),
                          target], env=forced_env(target), capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_a_nan_sum_is_the_same_bits_at_every_thread_count_and_layout(threads, dtype):
    """issue 27's case: a NaN and the two infinities far apart in 400,000
    elements; 1 thread gave -NaN, 2 threads +NaN."""
    a = np.ones(400_000, dtype)
    a[374_256] = np.nan
    a[386_115], a[386_118] = np.inf, -np.inf
    got = set()
    for n in (1, 2, 3, 4):
        threads(n)
        for t in (dispatch.from_numpy(a), dispatch.from_numpy(np.stack([a, a]))[0],
                  dispatch.from_numpy(a.reshape(400, 1000).T.copy()).permute(1, 0)):
            got.add(int(bits(dispatch.sum(t))))
            got.add(int(bits(dispatch.mean(t))))
    assert got == {NANS[dtype][0]}


def test_max_min_of_alternating_zeros_is_the_first_on_every_layout(threads):
    """issue 27's case: zeros, every other one -0.0, n = 64: contiguous and
    strided views gave different signs. The first element answers."""
    for first in (0.0, -0.0):
        z = np.zeros(64, np.float32)
        z[0::2] = first
        z[1::2] = -first
        wide = np.repeat(z, 2)
        for n in (1, 2):
            threads(n)
            for t in (dispatch.from_numpy(z), dispatch.from_numpy(wide)[::2]):
                for op in ("max", "min", "amax", "amin"):
                    assert_same_bits(getattr(dispatch, op)(t), z[:1].reshape(()), op)


def test_the_model_agrees_with_torch_where_torch_has_one_rule():
    """torch's max(x, dim) values are the element at the first index: the
    same first NaN and first zero; its sum never ends in -0.0 and a sum
    holding only +NaN inputs is +NaN."""
    torch = pytest.importorskip("torch")
    for kind in ("nan", "zeros", "top-zero"):
        for dtype in ("float32", "float64"):
            a = _case(dtype, 5 * 67, 0, kind).reshape(5, 67)
            tt = torch.from_numpy(a)
            assert_same_bits(torch.max(tt, 1).values, _model("max", a, 1), f"torch max {kind}")
            assert_same_bits(torch.min(tt, 0).values, _model("min", a, 0), f"torch min {kind}")
            assert_same_bits(torch.argmax(tt, 1), _model("argmax", a, 1), f"torch argmax {kind}")
    z = torch.tensor([-0.0, -0.0])
    assert_same_bits(torch.sum(z), _model("sum", z.numpy(), None), "torch sum of -0.0")
    assert_same_bits(torch.sum(torch.tensor([1.0, float("nan")])),
                     _model("sum", np.array([1.0, np.nan], np.float32), None), "torch nan sum")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_extremes_from_any_start_in_a_line(dtype):
    """float16/bfloat16 max and min fold from a line boundary, the elements
    before it first: a run starting at any of a line's 32 halves (and one of
    zeros of both signs, or with a NaN) answers as at a boundary, the first
    zero or the first NaN."""
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(7000).astype(np.float32)  # runs past 4096: a head
    for start in range(40):  # the extremes among the first elements, before a boundary
        a = vals.copy()
        a[start + 1], a[start + 2] = 50.0, -50.0
        v = dispatch.from_numpy(a).to(getattr(dispatch, dtype))[start:start + 6000]
        assert dispatch.amax(v).item() == 50.0 and dispatch.amin(v).item() == -50.0, start
        rest = dispatch.from_numpy(vals).to(getattr(dispatch, dtype))[start:start + 6000]
        want = rest.to(dispatch.float32).numpy()
        assert dispatch.amax(rest).item() == want.max(), start
        assert dispatch.amin(rest).item() == want.min(), start
    for start in (0, 1, 7, 31):  # zeros: the first answers; a NaN: it answers
        z = np.zeros(6000, np.float32)
        z[start + 3::2] = -0.0
        zt = dispatch.from_numpy(z).to(getattr(dispatch, dtype))[start:]
        for op in ("amax", "amin"):
            assert np.signbit(getattr(dispatch, op)(zt).to(dispatch.float32).item()) == \
                np.signbit(z[start]), (op, start)
        n = np.ones(6000, np.float32)
        n[start + 100] = np.nan
        nt = dispatch.from_numpy(n).to(getattr(dispatch, dtype))[start:]
        assert np.isnan(dispatch.amax(nt).to(dispatch.float32).item()), start
