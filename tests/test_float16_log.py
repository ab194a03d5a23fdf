"""Note [float16 log] (sources/kernels/exp_log.dispatch.c): float16's log,
computed for float16's 11 bits (no division), is within 1 ulp of the
correctly rounded log for every one of the 65536 float16 values, exact
where the result is (log(1) = 0), with the special values of log: -inf at
either zero, NaN below zero and for a NaN, inf at inf. On every SIMD target
this CPU runs (a fresh interpreter each), contiguous and strided."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch

CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import test_float16_log as m
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
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(h.astype(np.float64)).astype(np.float16)
    wide = np.zeros(2 * h.size, np.float16)
    wide[::2] = h
    for t in (dispatch.from_numpy(h), dispatch.from_numpy(wide)[::2]):
        got = dispatch.log(t).numpy()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), np.flatnonzero(np.isnan(got) != nan)[:5]
        assert np.array_equal(got[~nan & np.isinf(want)], want[~nan & np.isinf(want)])
        finite = ~nan & ~np.isinf(want)
        d = _ulps(got[finite], want[finite])
        assert d.max() <= 1, (h[finite][d > 1][:5], got[finite][d > 1][:5])
    assert dispatch.log(dispatch.from_numpy(np.array([1.0], np.float16))).numpy()[0] == 0.0


def test_every_float16_is_within_one_ulp():
    check_every_float16()


TARGET_DISABLE = {"AVX512_SKX": "AVX512_SPR", "FMA3__AVX2": "AVX512F", "SSE42": "AVX",
                  "baseline": "SSE41"}


@pytest.mark.parametrize("target", TARGET_DISABLE)
def test_every_float16_on_every_simd_target(target, tmp_path):
    needs = {"AVX512_SKX": "AVX512_SKX", "FMA3__AVX2": "AVX2", "SSE42": "SSE42",
             "baseline": "SSE2"}[target]
    if not dispatch.__cpu_features__.get(needs, False):
        pytest.skip(f"this CPU has no {needs}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    env["DISPATCH_DISABLE_CPU_FEATURES"] = TARGET_DISABLE[target]
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).resolve().parent)],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
