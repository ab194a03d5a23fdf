"""Refusals of inputs at scale (issue 45): one line naming the input and the
limit, no traceback, exit status non-zero, nothing written outside the
output folder, and in time proportional to reading the input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dispatchkit.inputs import INPUT_LIMIT

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(TOOLKIT), "DISPATCHGEN_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, str(TOOLKIT / "dispatchgen"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def _tree(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if "cache" not in p.relative_to(folder).parts)


def _refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("dispatchgen: error: ")
    for word in words:
        assert word in line, line
    assert len(line) < 600, line
    return line


@pytest.fixture(scope="module")
def configured(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    work = tmp_path_factory.mktemp("scale")
    assert _run(work, "configure", "--cc", "gcc", "--outdir", "build").returncode == 0
    return work


def test_a_variants_file_over_the_input_limit_is_refused_naming_it(configured):
    big = configured / "big.ini"
    with open(big, "w") as fh:
        fh.write("[library]\nname = m\n[avx2]\nsources = ")
        fh.truncate(INPUT_LIMIT + 10)  # a hole: no disk used
    before = _tree(configured)
    proc = _run(configured, "meson-variants", "big.ini", "--config",
                "build/dispatch_config.json", "--outdir", "out")
    _refused(proc, "big.ini", f"{INPUT_LIMIT >> 20} MiB")
    assert _tree(configured) == before
    big.unlink()


def test_60000_bare_operators_in_an_option_are_one_line(configured):
    before = _tree(configured)
    proc = _run(configured, "configure", "--cc", "gcc", "--outdir", "out2",
                "--cpu-dispatch", "+ " * 60_000)  # one argument: at most 128 KiB
    _refused(proc, "cpu-dispatch", "operator without a feature name")
    assert _tree(configured) == before


def test_200000_missing_sources_are_one_line_naming_the_first(configured):
    (configured / "v.ini").write_text("[library]\nname = m\n[avx2]\nsources = "
                                      + " ".join(f"f{i}.c" for i in range(200_000))
                                      + "\nsum = s\n")
    before = _tree(configured)
    proc = _run(configured, "meson-variants", "v.ini", "--config",
                "build/dispatch_config.json", "--outdir", "out")
    _refused(proc, "v.ini:4", "'f0.c'", "does not exist")
    assert _tree(configured) == before


def test_a_config_naming_a_feature_twice_is_refused_in_one_line(configured):
    """A configuration's feature lists are read by every later step, per
    source; configure writes each feature once, so a list that repeats one
    (a million times here) is refused when read, not paid for per source."""
    import json
    data = json.loads((configured / "build" / "dispatch_config.json").read_text())
    data["baseline"] = data["baseline"] + [data["baseline"][0]] * 1_000_000
    bad = configured / "bad_config.json"
    bad.write_text(json.dumps(data))
    (configured / "k.c").write_text("/*@targets baseline avx2 */\n")
    before = _tree(configured)
    proc = _run(configured, "meson-sources", "k.c", "--config", "bad_config.json",
                "--outdir", "out")
    _refused(proc, "bad_config.json", f"'baseline' names '{data['baseline'][0]}' twice")
    assert _tree(configured) == before
