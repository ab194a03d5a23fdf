"""Names that differ only in case are one file on Windows and macOS (issue 45):
the toolkit refuses them as one path on every system, so a build that works
on Linux does not overwrite one output with another elsewhere."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dispatchkit import generate
from dispatchkit.errors import DispatchError


def test_two_outputs_that_differ_only_in_case_are_refused_naming_both(tmp_path):
    with pytest.raises(DispatchError, match=r"Add\.dispatch\.c and add\.dispatch\.c would both "
                       r"generate add\.dispatch\.h .*and Add\.dispatch\.h: names that differ "
                       r"only in case"):
        generate.check_outputs([(tmp_path / "Add.dispatch.h", "Add.dispatch.c"),
                                (tmp_path / "add.dispatch.h", "add.dispatch.c")])


def test_an_output_that_differs_from_an_input_only_in_case_is_refused(tmp_path):
    with pytest.raises(DispatchError, match=r"which is the variants file M\.h itself"):
        generate.check_outputs([(tmp_path / "m.h", "[library] name = m")],
                               [(tmp_path / "M.h", "the variants file M.h")])


def test_outputs_of_distinct_names_pass(tmp_path):
    generate.check_outputs([(tmp_path / "a.h", "a.c"), (tmp_path / "b.h", "b.c")])


def test_each_output_folder_is_resolved_once(tmp_path, monkeypatch):
    """Resolving every output's folder again cost the folder's depth per file."""
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(generate.os.path, "realpath", lambda p: calls.append(p) or real(p))
    generate.check_outputs([(tmp_path / f"k{i}.h", f"k{i}.c") for i in range(1000)])
    assert len(calls) == 1


# -- two runs into one --outdir (issue 45) ------------------------------------------------

def _run_sources(cli, config, cwd, src):
    return cli(["meson-sources", src, "--config", str(config), "--outdir", "out"], cwd=cwd)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_a_second_run_into_one_outdir_refuses_the_first_runs_header(cli, tmp_path):
    config = tmp_path / "build" / "dispatch_config.json"
    assert cli(["configure", "--cc", "gcc", "--outdir", str(config.parent)]).returncode == 0
    (tmp_path / "sub").mkdir()
    for src in ("k.dispatch.c", "sub/k.dispatch.c"):
        (tmp_path / src).write_text("/*@targets AVX2 SSE41 */\n")
    first = _run_sources(cli, config, tmp_path, "k.dispatch.c")
    assert first.returncode == 0, first.stderr
    header = (tmp_path / "out" / "k.dispatch.h").read_bytes()
    again = _run_sources(cli, config, tmp_path, "k.dispatch.c")  # a rerun: its own files
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "out" / "k.dispatch.h").read_bytes() == header
    second = _run_sources(cli, config, tmp_path, "sub/k.dispatch.c")
    assert second.returncode != 0
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
    assert "sub/k.dispatch.c would generate k.dispatch.h" in lines[0]
    assert "an earlier run generated for k.dispatch.c" in lines[0]
    assert (tmp_path / "out" / "k.dispatch.h").read_bytes() == header


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_the_outputs_record_is_the_same_bytes_in_any_clone(cli, tmp_path):
    """The record names an absolute input relative to its folder: like every
    generated file it must not hold the clone's path (tests/test_build_cache.py)."""
    config = tmp_path / "build" / "dispatch_config.json"
    assert cli(["configure", "--cc", "gcc", "--outdir", str(config.parent)]).returncode == 0
    records = []
    for clone in ("one", "two/elsewhere"):
        root = tmp_path / clone
        (root / "src").mkdir(parents=True)
        (root / "src" / "k.dispatch.c").write_text("/*@targets AVX2 SSE41 */\n")
        r = cli(["meson-sources", str(root / "src" / "k.dispatch.c"), "--config", str(config),
                 "--outdir", str(root / "out")], cwd=root)
        assert r.returncode == 0, r.stderr
        records.append((root / "out" / ".dispatchgen-outputs.json").read_bytes())
    assert records[0] == records[1] and str(tmp_path).encode() not in records[0], records


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_a_record_with_absolute_origins_names_the_same_input(cli, tmp_path):
    """A folder written by an earlier toolkit records the input's absolute path:
    rerunning the same input there regenerates its files, it is not refused."""
    config = tmp_path / "build" / "dispatch_config.json"
    assert cli(["configure", "--cc", "gcc", "--outdir", str(config.parent)]).returncode == 0
    src = tmp_path / "src" / "k.dispatch.c"
    src.parent.mkdir()
    src.write_text("/*@targets AVX2 SSE41 */\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".dispatchgen-outputs.json").write_text(
        '{"k.dispatch.h": "%s"}\n' % src)  # what the earlier toolkit wrote
    r = cli(["meson-sources", str(src), "--config", str(config), "--outdir", str(out)],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert str(tmp_path) not in (out / ".dispatchgen-outputs.json").read_text()
