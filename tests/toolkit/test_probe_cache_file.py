"""The probe cache file as an input (issue 45): a link is neither read nor
replaced, a file over CACHE_LIMIT or corrupt is ignored with one warning
line, and the file is replaced atomically (see Note [Probe cache file] in
dispatchkit/probe.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dispatchkit import probe as probe_mod
from dispatchkit.probe import Probe

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

MARK = {"__PLANTED__": "1"}  # a macros answer no compiler gives


def cache_file(folder: Path) -> Path:
    path = Probe(["gcc"], [], folder)._cache_path
    assert path is not None
    return path


def warnings(err: str):
    lines = err.splitlines()
    assert all(line.startswith("dispatchgen: warning: ") for line in lines), err
    assert "Traceback" not in err
    return lines


def test_a_cache_that_is_a_link_is_not_read_and_not_replaced(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"macros ": MARK}))
    path = cache_file(tmp_path / "cache")
    path.parent.mkdir()
    path.symlink_to(elsewhere)
    capsys.readouterr()
    probe = Probe(["gcc"], [], path.parent)
    assert "__x86_64__" in probe.macros() or "__GNUC__" in probe.macros()  # asked, not read
    probe.save()
    (line,) = warnings(capsys.readouterr().err)
    assert str(path) in line and "symbolic link" in line
    assert path.is_symlink() and json.loads(elsewhere.read_text()) == {"macros ": MARK}


def test_a_cache_over_the_limit_is_ignored_with_one_warning_and_rewritten(tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setattr(probe_mod, "CACHE_LIMIT", 1 << 20)
    path = cache_file(tmp_path)
    path.write_text(json.dumps({"macros ": MARK, "compile x": "a" * (1 << 20)}))
    capsys.readouterr()
    probe = Probe(["gcc"], [], tmp_path)
    assert probe.macros() != MARK
    probe.save()
    (line,) = warnings(capsys.readouterr().err)
    assert str(path) in line and "over the limit of 1 MiB" in line
    assert path.stat().st_size < 1 << 20 and json.loads(path.read_text())["macros "] != MARK


@pytest.mark.parametrize("text", ['{"macros ": {"__PLANTED__": "1"}, "compile ', "{not json",
                                  "[1, 2]", "\xff\xfe", "[" * 100_000],
                         ids=["truncated", "bad-json", "a-list", "not-utf8", "deep"])
def test_a_corrupt_cache_is_absent_with_exactly_one_warning(tmp_path, capsys, text):
    path = cache_file(tmp_path)
    path.write_text(text, encoding="latin-1")
    capsys.readouterr()
    probe = Probe(["gcc"], [], tmp_path)
    assert probe.macros() != MARK
    probe.save()
    (line,) = warnings(capsys.readouterr().err)
    assert str(path) in line and "corrupt" in line
    assert isinstance(json.loads(path.read_text()), dict)


def test_entries_of_the_wrong_type_are_one_warning_and_asked_again(tmp_path, capsys):
    path = cache_file(tmp_path)
    path.write_text(json.dumps({"macros ": {"__x86_64__": 1}, "compile a": 42,
                                "union b": ["x"], "other": "y"}))
    capsys.readouterr()
    probe = Probe(["gcc"], [], tmp_path)
    assert all(isinstance(v, str) for v in probe.macros().values())
    probe.save()
    (line,) = warnings(capsys.readouterr().err)
    assert str(path) in line and "4 entries of the wrong type" in line
    assert set(json.loads(path.read_text())) == {"macros "}


def test_the_cli_warns_in_one_line_and_succeeds(cli, tmp_path):
    path = cache_file(tmp_path)
    path.write_text('{"truncated')
    proc = cli(["report", "--cc", "gcc", "--cflags", "", "--cache-dir", str(tmp_path)],
               timeout=300)
    assert proc.returncode == 0, proc.stderr
    (line,) = warnings(proc.stderr)
    assert str(path) in line and "corrupt" in line


def test_a_run_killed_while_writing_leaves_the_old_cache_and_no_temporary(tmp_path,
                                                                           monkeypatch):
    probe = Probe(["gcc"], [], tmp_path)
    probe.macros()
    probe.save()
    path = cache_file(tmp_path)
    before = path.read_bytes()

    def killed(obj, fh, **kwargs):
        fh.write('{"macros ": {')  # part of the new cache is written, then the kill
        raise KeyboardInterrupt

    again = Probe(["gcc"], [], tmp_path)
    again._cache["macros -DX"] = {}
    again._dirty = True
    monkeypatch.setattr(probe_mod.json, "dump", killed)
    with pytest.raises(KeyboardInterrupt):
        again.save()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [path.name]
