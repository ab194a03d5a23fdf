"""tools/bench/bench_interop.py: NumPy interop calls (from_numpy, .numpy(),
np.asarray, tensor()) beside torch's, builds in alternating processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "tools" / "bench" / "bench_interop.py"
ROWS = {"from_numpy contiguous", "from_numpy every other column", "from_numpy 4 int64",
        "numpy()", "np.asarray", "tensor() of 4 int64"}


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), "--procs", "1", "--calls", "2",
                           "--repeats", "1", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)


def test_every_row_is_timed_for_both_libraries(tmp_path):
    pytest.importorskip("torch")
    p = _run(tmp_path, "--json", "rows.json")
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert {r["row"] for r in rows} == ROWS
    assert all(r["ours_s"] > 0 and r["torch_s"] > 0 for r in rows)
    for row in ROWS:  # the row's name, ours, torch's
        line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith(row + " "))
        assert len(line[len("  ") + 32:].split()) == 2, line


def test_a_variant_without_a_build_is_refused(tmp_path):
    p = _run(tmp_path, "--variant", f"old={tmp_path}")
    assert p.returncode == 2 and "has no dispatch/ package" in p.stderr
