"""tools/bench/bench_line_starts.py: each row timed on arrays at every start
in a 64-byte line, ours beside NumPy's same operation on the same memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "tools" / "bench" / "bench_line_starts.py"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), "--n", "4096", "--procs", "1",
                           "--calls", "2", "--repeats", "2", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)


def test_every_row_is_timed_at_every_start_for_both_libraries(tmp_path):
    p = _run(tmp_path, "--ops", "add_", "lt", "neg", "--dtypes", "bool", "int8",
             "--json", "rows.json")
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    got = {(r["row"], r["start"]) for r in rows}
    want_rows = {"add_ bool contig", "add_ bool scalar", "lt bool contig", "lt bool scalar",
                 "add_ int8 contig", "add_ int8 scalar", "lt int8 contig", "lt int8 scalar",
                 "neg int8"}  # no negation of bools (as torch)
    assert got == {(r, s) for r in want_rows for s in (0, 16, 32, 48)}
    assert all(r["ours_s"] > 0 and r["numpy_s"] > 0 for r in rows)
    for row in want_rows:  # one printed line each, eight times and two spreads
        line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith(row + " "))
        assert len(line.split()) == len(row.split()) + 10, line


def test_an_unknown_operator_or_dtype_or_a_variant_without_a_build_is_refused(tmp_path):
    p = _run(tmp_path, "--ops", "nosuch")
    assert p.returncode == 2 and "nosuch" in p.stderr
    p = _run(tmp_path, "--dtypes", "bfloat16")
    assert p.returncode == 2 and "bfloat16" in p.stderr
    p = _run(tmp_path, "--variant", f"old={tmp_path}")
    assert p.returncode == 2 and "has no dispatch/ package" in p.stderr


def test_the_2d_layouts_run_a_matrix_by_a_column_and_by_a_row(tmp_path):
    p = _run(tmp_path, "--ops", "mul_", "lt", "--dtypes", "int16", "--layouts", "col", "row",
             "--json", "rows.json")
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    want_rows = {"mul_ int16 col", "mul_ int16 row", "lt int16 col", "lt int16 row"}
    assert {(r["row"], r["start"]) for r in rows} == {(r, s) for r in want_rows
                                                      for s in (0, 16, 32, 48)}
    assert all(r["ours_s"] > 0 and r["numpy_s"] > 0 for r in rows)
    p = _run(tmp_path, "--layouts", "col", "--n", "1000")
    assert p.returncode == 2 and "multiple of 512" in p.stderr


def test_torch_beside_ours_and_a_row_it_refuses_shown_as_such(tmp_path):
    pytest.importorskip("torch")
    p = _run(tmp_path, "--peer", "torch", "--ops", "add_", "maximum", "--dtypes", "int8",
             "--layouts", "scalar", "col", "--json", "rows.json")
    assert p.returncode == 0, p.stderr
    rows = {(r["row"], r["start"]): r for r in json.loads((tmp_path / "rows.json").read_text())}
    assert len(rows) == 16 and all(r["ours_s"] > 0 for r in rows.values())
    assert all(r["torch_s"] > 0 for (row, _), r in rows.items() if row != "maximum int8 scalar")
    # torch.maximum takes no Python number: its cells are None and printed as "-"
    assert all(rows[("maximum int8 scalar", s)]["torch_s"] is None for s in (0, 16, 32, 48))
    line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith("maximum int8 scalar"))
    assert line.split()[-2:] == ["-", "-"] and "torch at 0/16/32/48" in p.stdout
