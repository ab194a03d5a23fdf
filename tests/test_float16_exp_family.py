"""Note [float16 log] (sources/kernels/exp_log.dispatch.c): float16's log,
expm1, exp and tanh, computed for float16's 11 bits, are within 1 ulp of
the correctly rounded result for every one of the 65536 float16 values,
exact where the result is (log(1) = 0, exp(0) = 1, expm1 and tanh of
either zero that zero), with the special values: log -inf at either zero,
NaN below zero, inf at inf; expm1 -1 at -inf, exp 0 there, both inf where
they overflow; tanh +-1 at +-inf; NaN for a NaN. On every SIMD target this
CPU runs (a fresh interpreter each), contiguous, strided, and in runs
whose length is no multiple of a vector (the loops' tails)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernel_sources import own_targets  # noqa: E402
from _targets import NEEDS, forced_env, runnable  # noqa: E402

CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import test_float16_exp_family as m
m.check_every_float16()
print("ok")
"""


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The distance in float16 ulps, on a line that is monotonic in value."""
    def line(v):
        b = v.view(np.uint16).astype(np.int64)
        return np.where(b & 0x8000, -(b & 0x7FFF), b)
    return np.abs(line(got) - line(want))


def check_every_float16() -> None:
    for op in OPS:
        check_op(op)
    one = dispatch.from_numpy(np.array([1.0], np.float16))
    assert dispatch.log(one).numpy()[0] == 0.0
    zeros = dispatch.from_numpy(np.array([0.0, -0.0], np.float16))
    for op in ("expm1", "tanh"):
        assert getattr(dispatch, op)(zeros).numpy().view(np.uint16).tolist() == [0, 0x8000], op
    assert dispatch.exp(zeros).numpy().tolist() == [1.0, 1.0]
    infs = dispatch.from_numpy(np.array([np.inf, -np.inf], np.float16))
    assert dispatch.tanh(infs).numpy().tolist() == [1.0, -1.0]
    assert dispatch.exp(infs).numpy().tolist() == [np.inf, 0.0]


OPS = ("log", "expm1", "exp", "tanh")


def check_op(op: str) -> None:
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        want = getattr(np, op)(h.astype(np.float64)).astype(np.float16)
    wide = np.zeros(2 * h.size, np.float16)
    wide[::2] = h
    whole = getattr(dispatch, op)(dispatch.from_numpy(h)).numpy()
    # runs of 1..40 elements: every tail length of a vector of 8 or 16 lanes
    cuts = np.cumsum(np.arange(1, 41))
    runs = np.concatenate([getattr(dispatch, op)(dispatch.from_numpy(part)).numpy()
                           for part in np.split(h[:cuts[-1]], cuts[:-1])])
    assert np.array_equal(runs.view(np.uint16), whole[:cuts[-1]].view(np.uint16)), op
    for got in (whole, getattr(dispatch, op)(dispatch.from_numpy(wide)[::2]).numpy()):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), (op, np.flatnonzero(np.isnan(got) != nan)[:5])
        inf = ~nan & np.isinf(want)
        assert np.array_equal(got[inf], want[inf]), op
        finite = ~nan & ~inf
        d = _ulps(got[finite], want[finite])
        assert d.max() <= 1, (op, h[finite][d > 1][:5], got[finite][d > 1][:5])


def test_every_float16_log_expm1_exp_and_tanh_is_within_one_ulp():
    check_every_float16()


@pytest.mark.parametrize("target", own_targets("exp_log"))
def test_every_float16_on_every_simd_target(target, tmp_path):
    if not runnable(target):
        pytest.skip(f"this CPU has no {NEEDS[target]}")
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).resolve().parent)],
                         env=forced_env(target), capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
