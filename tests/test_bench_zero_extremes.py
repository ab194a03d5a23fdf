"""tools/bench/bench_zero_extremes.py: amax/amin of data whose extreme is a
zero, ours beside torch's on the same memory, builds in alternating processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "tools" / "bench" / "bench_zero_extremes.py"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), "--procs", "1", "--calls", "1",
                           "--repeats", "1", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)


def test_every_kind_op_and_dim_is_timed_for_both_libraries(tmp_path):
    pytest.importorskip("torch")
    p = _run(tmp_path, "--dtype", "float64", "--json", "rows.json")
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    want = {f"{op} {kind} {dim}" for op in ("amin", "amax")
            for kind in ("uniform", "ints0-99", "ints1-100", "relu") for dim in ("all", 0, 1)}
    assert {r["row"] for r in rows} == want
    assert all(r["ours_s"] > 0 and r["torch_s"] > 0 for r in rows)
    for kind in ("uniform", "ints0-99", "ints1-100", "relu"):  # six cells a line
        line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith(kind + " "))
        assert len(line.split()) == 1 + 12, line


def test_a_variant_without_a_build_is_refused(tmp_path):
    p = _run(tmp_path, "--variant", f"old={tmp_path}")
    assert p.returncode == 2 and "has no dispatch/ package" in p.stderr
