"""float16 <-> float32 casts on every x86 target this CPU runs, in a fresh
interpreter each (tests/_targets.py): half_arith's casts stand where its
target has F16C, cast_loops' vector casts elsewhere (kernels_chooser.c), and
each gives NumPy's values: every one of the 65536 float16 bit patterns
widened, and float32 edges and random bits narrowed (NaNs compared as NaNs:
an x86 conversion may quiet a signalling one)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _targets import DISABLE, forced_env, runnable  # noqa: E402

pytest.importorskip("numpy")

CHILD = r"""
import json
import numpy as np
import dispatch as d
h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
edges = np.array([0.0, -0.0, 1.0, 65504.0, 65519.99, 65520.0, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25,
                  2.0**-14, 2.0**-15, np.inf, -np.inf, np.nan, 1e-40, 3e38], np.float32)
bits = np.random.default_rng(0).integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
f = np.concatenate([edges, bits.view(np.float32)])
def bad(got, want):
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got.view(np.uint8).reshape(len(got), -1) == want.view(np.uint8).reshape(len(want), -1)).all(1)
    return np.flatnonzero(~(same | both_nan))[:5].tolist()
with np.errstate(over="ignore"):
    want16 = f.astype(np.float16)
got32 = np.asarray(d.from_numpy(h).to(d.float32))
got16 = np.asarray(d.from_numpy(f).to(d.float16))
print(json.dumps({"target": d.probe_target(), "widen": bad(got32, h.astype(np.float32)),
                  "narrow": bad(got16, want16)}))
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 targets")
@pytest.mark.parametrize("target", ["FMA3__AVX2", "SSE42", "baseline"])
def test_float16_casts_match_numpy_on_every_target(target, tmp_path):
    if not runnable(target):
        pytest.skip(f"this CPU cannot run {target}")
    assert target in DISABLE
    p = subprocess.run([sys.executable, "-c", CHILD], env=forced_env(target), cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["target"] == target, r  # the child ran the target it was restricted to
    assert r["widen"] == [] and r["narrow"] == [], r
