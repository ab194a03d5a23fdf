"""tools/bench/bench_matrix.py as a user runs it, on a tiny size: with NumPy
only (torch is not installed in CI; --peers keeps it out where it is) and
with neither. Checks what it writes, not how fast anything is: every
operator of the table has rows, the summary's numbers are the rows' own,
named rows keep their reason, and the heat map is well-formed SVG with one
cell per measured (operator, dtype)."""

from __future__ import annotations

import importlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import dispatch
from dispatch import _dtypes

BENCH = Path(__file__).resolve().parents[1] / "tools" / "bench" / "bench_matrix.py"
SVG = "{http://www.w3.org/2000/svg}"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    tmp_path.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, str(BENCH), "--sizes", "4K", "--threads", "1",
                           "--rounds", "1", "--turn-ms", "0.05", "--out", "m", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)


def _cell(r: dict) -> tuple:
    return (f"to {r['to']}" if r["op"] == "cast" else r["op"], r["dtype"])


def _svg_cells(path: Path) -> tuple[list, list]:
    root = ET.parse(path).getroot()  # raises on malformed XML
    assert root.tag == SVG + "svg"
    groups = list(root.iter(SVG + "g"))
    measured = [(g.get("data-op"), g.get("data-dtype")) for g in groups if g.get("class") == "cell"]
    named = [(g.get("data-op"), g.get("data-dtype")) for g in groups if g.get("class") == "none"]
    return measured, named


@pytest.fixture(scope="module")
def numpy_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("numpy_only")
    p = _run(tmp, "--peers", "numpy")
    assert p.returncode == 0, p.stderr
    return tmp, p


def test_every_operator_and_dtype_of_the_table_has_rows(numpy_run):
    tmp, p = numpy_run
    rows = json.loads((tmp / "m-rows.json").read_text())["rows"]
    assert {r["op"] for r in rows} == set(dispatch.ops.OPERATORS)
    dtypes = set(_dtypes.__all__) - {"dtype"}  # a new dtype shows up by itself
    assert dtypes >= {"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                      "bfloat16", "float32", "float64"}
    assert {r["dtype"] for r in rows} == dtypes
    casts = {(r["dtype"], r["to"]) for r in rows if r["op"] == "cast"}
    assert len(casts) == len(dtypes) * (len(dtypes) - 1)  # every ordered pair of two dtypes
    assert {r["layout"] for r in rows if r["op"] == "add"} == {
        "contig", "strided", "bcast_col", "bcast_row", "scalar"}
    assert {r["layout"] for r in rows if r["op"] == "sum"} == {
        "all", "dim0", "dim1", "all_strided", "dim0_strided", "dim1_strided"}
    # NumPy has no bfloat16: those rows are named with the reason, not dropped
    bf = [r for r in rows if r["dtype"] == "bfloat16" and r["op"] == "add"]
    assert bf and all(r["numpy_note"] == "LookupError: NumPy has no bfloat16" for r in bf)
    assert all("ours_s" in r for r in bf)
    assert "compared with: numpy" in p.stdout


def test_the_summary_is_computed_from_the_rows(numpy_run):
    tmp, _ = numpy_run
    rows = json.loads((tmp / "m-rows.json").read_text())["rows"]
    summary = json.loads((tmp / "m-summary.json").read_text())
    (group,) = summary["groups"]
    assert set(group["vs"]) == {"numpy"}
    s = group["vs"]["numpy"]
    ratios = [r["ours/numpy"] for r in rows if "ours/numpy" in r]
    assert all(math.isclose(r["ours/numpy"], r["ours_s"] / r["numpy_s"]) for r in rows
               if "ours/numpy" in r)
    assert s["rows"] == len(ratios) > 1000
    assert s["le1"] == sum(x <= 1.0 for x in ratios)
    assert math.isclose(s["geomean"], math.exp(sum(map(math.log, ratios)) / len(ratios)))
    assert s["worst"] == max(ratios)
    assert [v for _, v in s["worst_rows"]] == sorted(ratios, reverse=True)[:20]
    casts = [r["ours/numpy"] for r in rows if r["op"] == "cast" and "ours/numpy" in r]
    assert s["categories"]["casts (.to)"]["rows"] == len(casts)
    assert s["categories"]["casts (.to)"]["le1"] == sum(x <= 1.0 for x in casts)
    text = (tmp / "m-summary.txt").read_text()
    assert f"ours/numpy: {len(ratios)} rows timed on both sides, {s['le1']} <= 1.0" in text
    # every row one side did not run is listed under its library and reason
    named = sum(len(v) for v in group["named"].values())
    assert named == sum(f"{lib}_note" in r for r in rows for lib in ("ours", "torch", "numpy"))


def test_the_heat_map_has_one_cell_per_measured_operator_and_dtype(numpy_run):
    tmp, _ = numpy_run
    rows = json.loads((tmp / "m-rows.json").read_text())["rows"]
    measured, named = _svg_cells(tmp / "m-1t-4K.svg")
    want = {_cell(r) for r in rows if "ours/numpy" in r}
    assert len(measured) == len(set(measured)) == len(want)
    assert set(measured) == want
    assert ("add", "bfloat16") in named  # no ratio (NumPy has none): grey, with its reason
    assert not set(named) & want


def test_without_torch_or_numpy_it_times_ours_alone(tmp_path):
    p = _run(tmp_path, "--peers", "none", "--ops", "add", "sum", "cast")
    assert p.returncode == 0, p.stderr
    assert "compared with: nothing (neither torch nor NumPy): our times alone" in p.stdout
    rows = json.loads((tmp_path / "m-rows.json").read_text())["rows"]
    assert {r["op"] for r in rows} == {"add", "sum", "cast"}
    assert not any("ours/" in k for r in rows for k in r)
    measured, _ = _svg_cells(tmp_path / "m-1t-4K.svg")
    assert set(measured) == {_cell(r) for r in rows if "ours_s" in r}
    assert len(measured) == len(set(measured))


def test_an_unknown_operator_is_one_line_and_a_nonzero_exit(tmp_path):
    p = _run(tmp_path, "--peers", "none", "--ops", "nosuch")
    assert p.returncode == 2
    assert "no operator named nosuch" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout


@pytest.mark.skipif(platform.machine() != "x86_64", reason="--as-cpu names x86-64 levels")
def test_as_cpu_runs_every_library_at_that_level_and_says_so(tmp_path):
    p = _run(tmp_path, "--peers", "numpy", "--ops", "add", "cast", "--as-cpu", "avx2")
    level = _bench_module("matrix_cpu_level")
    if not set(level.LEVELS["avx2"].flags) <= level.cpu_flags():
        assert p.returncode == 2 and "this CPU lacks" in p.stderr, p.stderr
        return
    assert p.returncode == 0, p.stderr
    meta = json.loads((tmp_path / "m-rows.json").read_text())["meta"]
    assert "AVX512" not in meta["dispatch_target"]
    assert meta["as_cpu"]["seen"] == {"ours": meta["dispatch_target"], "numpy": "X86_V4 off"}
    assert meta["as_cpu"]["not_at_level"] == []
    assert ("as an avx2 CPU (--as-cpu): ours " + meta["dispatch_target"]) in p.stdout


def test_as_cpu_refuses_a_level_it_does_not_know(tmp_path):
    p = _run(tmp_path, "--peers", "none", "--as-cpu", "avx10")
    assert p.returncode == 2
    assert "invalid choice: 'avx10'" in p.stderr and "Traceback" not in p.stderr


def _bench_module(name: str):
    """One of the bench's own modules, beside the script."""
    sys.path.insert(0, str(BENCH.parent))
    return importlib.import_module(name)


def _rules():
    return _bench_module("matrix_rules")


def test_each_rule_is_written_where_it_says():
    rules = _rules()
    root = BENCH.parents[2]
    assert rules.RULES
    for rule in rules.RULES:
        text = " ".join((root / rule.doc).read_text().split())
        assert rule.phrase in text, (rule.name, rule.doc)
        assert rule.peers and set(rule.peers) <= {"torch", "numpy"}


def test_rules_cover_their_rows_and_no_others():
    rules = _rules()
    row = dict(op="dot", dtype="float32", layout="contig", to="")
    assert rules.rule_for(row, "torch").name == "float64 products"
    assert rules.rule_for(row, "numpy").name == "float64 products"
    assert rules.rule_for({**row, "dtype": "float64"}, "torch") is None  # same products as torch
    assert rules.rule_for({**row, "op": "prod", "layout": "dim0", "dtype": "bfloat16"},
                          "torch").name == "float64 products"
    assert rules.rule_for({**row, "op": "sum"}, "torch") is None
    cast = dict(op="cast", dtype="float64", layout="contig", to="float16")
    assert rules.rule_for(cast, "torch").name == "rounded once"
    assert rules.rule_for(cast, "numpy") is None  # NumPy rounds once too
    assert rules.rule_for({**cast, "to": "float32"}, "torch") is None
    assert rules.rule_for({**cast, "dtype": "float32"}, "torch") is None  # float32 is exact
    sqrt_row = dict(op="sqrt", dtype="float64", layout="strided", to="")
    assert rules.rule_for(sqrt_row, "torch").name == "correctly rounded sqrt"
    float32 = {**sqrt_row, "dtype": "float32"}
    assert rules.rule_for(float32, "torch").name == "correctly rounded sqrt"
    assert rules.rule_for(sqrt_row, "numpy") is None  # NumPy's sqrt is correctly rounded too
    assert rules.rule_for({**sqrt_row, "dtype": "float16"}, "torch") is None
    assert rules.rule_for({**sqrt_row, "op": "exp"}, "torch") is None


def test_a_level_rule_covers_its_rows_only_at_that_level():
    rules = _rules()
    widen = dict(op="cast", dtype="float16", layout="contig", to="float32")
    narrow = {**widen, "dtype": "float32", "to": "float16"}
    for row in (widen, narrow):
        for level in ("sse4.2", "avx2"):
            assert rules.rule_for(row, "torch", level).name == "torch above the level"
        assert rules.rule_for(row, "torch") is None  # on this CPU's own level torch is at it
        assert rules.rule_for(row, "numpy", "sse4.2") is None
    assert rules.rule_for({**widen, "to": "float64"}, "torch", "sse4.2") is None
    assert rules.rule_for({**widen, "dtype": "bfloat16"}, "torch", "sse4.2") is None


def test_rows_under_a_rule_are_tagged_counted_and_listed(numpy_run):
    rules = _rules()
    tmp, _ = numpy_run
    rows = json.loads((tmp / "m-rows.json").read_text())["rows"]
    s = json.loads((tmp / "m-summary.json").read_text())["groups"][0]["vs"]["numpy"]
    tagged = [r for r in rows if "numpy_rule" in r]
    assert tagged and all(rules.rule_for(r, "numpy").name == r["numpy_rule"] for r in tagged)
    assert all("ours/numpy" in r for r in tagged)
    assert not any(rules.rule_for(r, "numpy") for r in rows
                   if "numpy_rule" not in r and "ours/numpy" in r)
    # a rule hides nothing: its rows stay in the counts, and above 1.0 they are listed again
    assert s["rows"] == sum("ours/numpy" in r for r in rows)
    listed = {lab for lab, _, _ in s["rule_rows"]}
    assert listed == {f"{r['op']} {r['dtype']} {r['layout']}" for r in tagged
                      if r["ours/numpy"] > 1.0}
    far = [r for r in rows if r.get("ours/numpy", 0) > 1.25]
    assert s["above_far"] == len(far)
    assert s["above_far_by_rule"] == sum("numpy_rule" in r for r in far)
    text = (tmp / "m-summary.txt").read_text()
    assert f"above 1.25x: {len(far)} rows, {s['above_far_by_rule']} of them under a" in text
    if listed:
        assert "rule 'float64 products' (docs/semantics.md):" in text


def test_processes_keeps_each_rows_best_time_of_fresh_processes(tmp_path):
    p = _run(tmp_path, "--peers", "numpy", "--ops", "add", "--processes", "2")
    assert p.returncode == 0, p.stderr
    assert "process 1 of 2" in p.stdout and "process 2 of 2" in p.stdout
    data = json.loads((tmp_path / "m-rows.json").read_text())
    rows, meta = data["rows"], data["meta"]
    assert meta["processes"] == 2 and "--processes 2" in meta["command"]
    assert {r["op"] for r in rows} == {"add"}
    keys = [(r["dtype"], r["layout"]) for r in rows]
    single = _run(tmp_path / "one", "--peers", "none", "--ops", "add")
    assert single.returncode == 0, single.stderr
    one = json.loads((tmp_path / "one" / "m-rows.json").read_text())["rows"]
    assert len(keys) == len(set(keys)) == len(one)  # one row each, as one process writes
    for r in rows:
        if "numpy_s" in r:
            assert r["ours/numpy"] == r["ours_s"] / r["numpy_s"]
    assert "in each of 2 processes" in (tmp_path / "m-summary.txt").read_text()
    assert not list(tmp_path.glob("p[0-9]*")), "the processes' own files stay out of the way"


def test_merging_processes_takes_each_librarys_best_and_recomputes_the_ratio():
    bench = _bench_module("bench_matrix")
    row = {"size": "4K", "threads": 1, "op": "add", "form": "binary", "dtype": "float32",
           "layout": "contig", "to": None}
    runs = [[dict(row, ours_s=3.0, numpy_s=2.0, **{"ours/numpy": 1.5})],
            [dict(row, ours_s=1.0, numpy_s=4.0, **{"ours/numpy": 0.25})],
            [dict(row, ours_s=2.0, numpy_s=5.0, **{"ours/numpy": 0.4})]]
    (merged,) = bench.merge_processes(runs, None)
    assert merged["ours_s"] == 1.0 and merged["numpy_s"] == 2.0
    assert merged["ours/numpy"] == 0.5
    assert bench.child_argv(["--quick", "--processes", "3", "--out", "x/y", "--ops", "add"],
                            "t/p0") == ["--quick", "--ops", "add", "--out", "t/p0"]


def test_before_compares_two_builds_in_alternating_processes(tmp_path):
    """--before DIR: a copy of the installed package stands in for the other
    build; each side imports its own, and the comparison covers every row."""
    old = tmp_path / "old"
    shutil.copytree(Path(dispatch.__file__).resolve().parent, old / "dispatch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    p = _run(tmp_path / "run", "--peers", "numpy", "--ops", "neg", "--processes", "2",
             "--before", str(old))
    seen = subprocess.run([sys.executable, "-c", "import dispatch; print(dispatch.__file__)"],
                          env={**os.environ, "PYTHONPATH": str(old)}, cwd=tmp_path,
                          capture_output=True, text=True, check=True).stdout.strip()
    if Path(seen).resolve().parent != (old / "dispatch").resolve():
        # An editable install (the sanitizer job's) is found before PYTHONPATH:
        # no other build can stand before it, and the bench must say so.
        assert p.returncode == 2, p.stdout + p.stderr
        assert "an editable install of dispatch" in p.stderr
        pytest.skip("dispatch is an editable install here: its import hook comes before "
                    "PYTHONPATH (the refusal was checked)")
    assert p.returncode == 0, p.stderr
    order = [ln.split(": ", 1)[1] for ln in p.stdout.splitlines()
             if ln.startswith("bench_matrix: ") and ", process " in ln]
    assert order == ["before, process 1 of 2", "after, process 1 of 2",
                     "before, process 2 of 2", "after, process 2 of 2"]
    run = tmp_path / "run"
    metas = {side: json.loads((run / f"m-{side}-rows.json").read_text())["meta"]
             for side in ("before", "after")}
    assert metas["before"]["dispatch_path"] == str((old / "dispatch").resolve())
    assert metas["after"]["dispatch_path"] == str(Path(dispatch.__file__).resolve().parent)
    rows = json.loads((run / "m-after-rows.json").read_text())["rows"]
    timed = [r for r in rows if r.get("ours_s")]
    change = json.loads((run / "m-change.json").read_text())
    assert change["ours"]["rows"] == len(timed) > 0
    assert change["numpy"]["rows"] == len([r for r in timed if r.get("numpy_s")])
    text = (run / "m-change.txt").read_text()
    assert f"ours   {len(timed):5d} rows" in text and "this run's noise" in text
    assert text in p.stdout


def test_before_refuses_a_folder_without_a_dispatch_package(tmp_path):
    p = _run(tmp_path, "--ops", "neg", "--before", str(tmp_path))
    assert p.returncode == 2
    assert "--before:" in p.stderr and "holds no dispatch package" in p.stderr


def test_before_after_ratios_counts_and_the_rows_that_moved():
    ba = _bench_module("matrix_before_after")
    row = {"size": "4K", "threads": 1, "op": "add", "form": "binary", "layout": "contig",
           "to": None}
    before = [dict(row, dtype=d, ours_s=t, numpy_s=1.0)
              for d, t in (("int8", 2.0), ("int16", 1.0), ("int32", 1.0))]
    after = [dict(row, dtype=d, ours_s=t, numpy_s=1.0)
             for d, t in (("int8", 1.0), ("int16", 1.05), ("int32", 2.0))]
    c = ba.compare(before, after)
    assert c["ours"]["rows"] == 3 and c["ours"]["faster"] == 1 and c["ours"]["slower"] == 1
    assert math.isclose(c["ours"]["geomean"], 1.05 ** (1 / 3))
    assert c["numpy"]["geomean"] == 1.0 and "torch" not in c
    assert [m["row"] for m in c["ours"]["most_faster"]] == ["add int8 contig (1t, 4K)"]
    assert [m["row"] for m in c["ours"]["most_slower"]] == ["add int32 contig (1t, 4K)"]
    text = ba.text(c, "/tmp/old", 3)
    assert "add int8 contig (1t, 4K) 2000000.0 -> 1000000.0 us" in text


# --device cuda (issue 48, item 3) ----------------------------------------------------------

def test_on_cuda_each_turn_ends_with_its_librarys_synchronize_before_the_clock_is_read():
    """A device's calls only queue work: best_of_turns calls each library's
    synchronize after its calls and before reading the clock, so the work
    the sync waits for is in the time."""
    bench = _bench_module("bench_matrix")
    import time

    queued, log = [], []

    def call():  # queues 2 ms of "device" work, returns at once
        queued.append(0.002)

    def sync():
        time.sleep(sum(queued))
        queued.clear()
        log.append("sync")

    best = bench.best_of_turns({"ours": call, "cpu": lambda: None}, rounds=3, turn_s=0.004,
                               settle=False, syncs={"ours": sync})
    assert best["ours"] >= 0.002  # the queued work is in each call's time
    assert best["cpu"] < 0.001
    assert len(log) == 2 + 2 * 3  # the reps estimate's two, then the untimed and timed calls' per turn
    assert not queued


def test_each_turn_times_its_library_warm_not_the_cache_the_last_turn_left():
    """A library's first call after another's finds its inputs evicted (at
    1M elements a turn is 2-3 calls, the first from memory): each turn starts
    with an untimed call, at 1 thread too, so a turn times the steady state."""
    bench = _bench_module("bench_matrix")
    import time

    last = [None]

    def lib(name):
        def call():  # 20 ms the first call after another library's, 0.1 ms warm
            time.sleep(0.02 if last[0] != name else 0.0001)
            last[0] = name
        return call

    best = bench.best_of_turns({"ours": lib("ours"), "other": lib("other")}, rounds=3,
                               turn_s=0.002, settle=False)
    assert best["ours"] < 0.001 and best["other"] < 0.001, best  # cold in the turn: 1.5 ms


def test_device_cuda_refuses_the_cpu_level_and_without_a_gpu_says_why(tmp_path):
    p = _run(tmp_path, "--device", "cuda", "--as-cpu", "avx2")
    assert p.returncode == 2 and "--as-cpu" in p.stderr and "--device cuda" in p.stderr
    if dispatch.cuda.is_available():
        pytest.skip("a GPU is present: the refusal without one is not reachable")
    p = _run(tmp_path, "--device", "cuda")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no CUDA device: " + dispatch.cuda.unavailable_reason() in p.stderr
    assert not (tmp_path / "m-rows.json").exists()


def test_ours_on_cuda_makes_the_rows_values_on_the_device_and_syncs_it(fake_cuda):
    np = pytest.importorskip("numpy")
    cases = _bench_module("matrix_cases")
    calls = []
    fake_cuda.setattr(dispatch.cuda, "synchronize", lambda: calls.append("sync"))
    vals = cases.Values(np, 4096)
    row = {"op": "add", "form": "binary", "dtype": "float16", "layout": "strided"}
    host, _ = cases.make_inputs(cases.Ours(dispatch, np), vals, row)
    dev, scalar = cases.make_inputs(cases.Ours(dispatch, np, "cuda"), vals, row)
    assert scalar is None and len(dev) == len(host) == 2
    for h, g in zip(host, dev):
        assert str(g.device).startswith("cuda") and str(h.device) == "cpu"
        assert g.shape == h.shape and g.stride() == h.stride() and g.dtype == h.dtype
        assert g.cpu().tolist() == h.tolist()
    del dev, g  # freed while the fake allocator is registered
    cases.Ours(dispatch, np, "cuda").synchronize()
    cases.Ours(dispatch, np).synchronize()  # the CPU's: nothing to wait for
    assert calls == ["sync"]


def test_cuda_rows_take_no_cpu_rule_and_the_summary_names_the_gpu():
    bench, report = _bench_module("bench_matrix"), _bench_module("matrix_report")
    row = dict(op="dot", form="binary_1d", dtype="float32", layout="contig", to="", size="4K",
               threads=1, ours_s=2.0, torch_s=1.0)
    assert bench.add_ratios(dict(row), None)["torch_rule"] == "float64 products"
    on_gpu = bench.add_ratios(dict(row, device="cuda"), None)
    assert "torch_rule" not in on_gpu and on_gpu["ours/torch"] == 2.0
    meta = {"machine": {"cpu": "x", "cpus": 16}, "peers": ["torch"], "torch": "2.13.0",
            "numpy": None, "dispatch_target": "AVX2", "rounds": 3, "turn_ms": 2.0,
            "threads": [1], "sizes": ["4K"],
            "command": "python tools/bench/bench_matrix.py --device cuda", "device": "cuda",
            "gpu": "NVIDIA H200"}
    text = report.summary_text(report.summarize([on_gpu], meta))
    assert "--device cuda" in text and "NVIDIA H200" in text
