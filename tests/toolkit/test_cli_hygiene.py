"""The console scripts under hostile use (issue 27, items 2, 3 and 7): a path
that would forge meson's lines, an empty or foreign --vendor destination, and
output that cannot be written are each one line and a non-zero status, never
a traceback, and nothing of the user's is overwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"
DISPATCHGEN = TOOLKIT / "dispatchgen"


def _env(tmp: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(TOOLKIT), "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}


def _config(tmp: Path) -> Path:
    subprocess.run([sys.executable, str(DISPATCHGEN), "configure", "--outdir", str(tmp / "cfg")],
                   check=True, capture_output=True, env=_env(tmp))
    return tmp / "cfg" / "dispatch_config.json"


def _one_line_error(r: subprocess.CompletedProcess, prog: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("bad", ["x\nvariant\tm_evil\tAVX2\t-DEVIL=1\tevil.c\n.ini", "a\tb.ini"])
def test_a_variants_file_name_cannot_forge_meson_lines(tmp_path, bad):
    ini = tmp_path / bad
    ini.write_text("[library]\nname = m\n[baseline]\nsources = a.c\nf = f_a\n")
    r = subprocess.run([sys.executable, str(DISPATCHGEN), "meson-variants", str(ini),
                        "--config", str(_config(tmp_path)), "--outdir", str(tmp_path)],
                       capture_output=True, text=True, env=_env(tmp_path))
    line = _one_line_error(r, "dispatchgen")
    assert "unusable variants file path" in line and r.stdout == ""


def test_a_variant_source_name_cannot_forge_meson_lines(tmp_path):
    ini = tmp_path / "lib.variants.ini"
    ini.write_text("[library]\nname = m\n[baseline]\nsources = a.c\x1bb.c\nf = f_a\n")
    r = subprocess.run([sys.executable, str(DISPATCHGEN), "meson-variants", str(ini),
                        "--config", str(_config(tmp_path)), "--outdir", str(tmp_path)],
                       capture_output=True, text=True, env=_env(tmp_path))
    assert "must be printable text" in _one_line_error(r, "dispatchgen")


def _vendor(tmp: Path, dest: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchkit.dispatch_config", "--vendor", dest],
                          capture_output=True, text=True, cwd=tmp, env=_env(tmp))


def test_vendor_refuses_an_empty_destination(tmp_path):
    (tmp_path / "meson.build").write_text("project('mine')\n")
    line = _one_line_error(_vendor(tmp_path, ""), "dispatch-config")
    assert "needs a directory" in line
    assert [p.name for p in tmp_path.iterdir()] == ["meson.build"]
    assert (tmp_path / "meson.build").read_text() == "project('mine')\n"


def test_vendor_never_writes_into_a_directory_it_did_not_make(tmp_path):
    (tmp_path / "meson.build").write_text("project('mine')\n")
    line = _one_line_error(_vendor(tmp_path, "."), "dispatch-config")
    assert "did not write" in line
    assert (tmp_path / "meson.build").read_text() == "project('mine')\n"
    assert not (tmp_path / "dispatchkit").exists()


def test_vendor_refuses_a_subprojects_directory(tmp_path):
    line = _one_line_error(_vendor(tmp_path, "subprojects/dispatchgen"), "dispatch-config")
    assert "subprojects/" in line and not (tmp_path / "subprojects").exists()


def test_vendor_again_replaces_its_own_copy(tmp_path):
    r = _vendor(tmp_path, "tools/dispatchgen")
    assert r.returncode == 0, r.stderr
    stale = tmp_path / "tools" / "dispatchgen" / "dispatchkit" / "stale.py"
    stale.write_text("")
    r = _vendor(tmp_path, "tools/dispatchgen")
    assert r.returncode == 0, r.stderr
    assert not stale.exists()
    launcher = tmp_path / "tools" / "dispatchgen" / "dispatchgen"
    assert os.access(launcher, os.X_OK)
    assert launcher.read_text() == DISPATCHGEN.read_text()  # the checkout's launcher is it


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("cmd", [
    ["-m", "dispatchkit.dispatch_config", "--cflags"],
    [str(DISPATCHGEN), "report", "--no-cache"],
])
def test_output_that_cannot_be_written_is_one_line(tmp_path, cmd):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, *cmd], stdout=full, stderr=subprocess.PIPE, text=True,
                           env=_env(tmp_path))
    prog = "dispatch-config" if "dispatch_config" in cmd[1] else "dispatchgen"
    assert "cannot write the output" in _one_line_error(r, prog)


def test_a_closed_stdout_is_one_line(tmp_path):
    src = tmp_path / "a.dispatch.c"
    src.write_text("/*@targets baseline */\n")
    cfg = _config(tmp_path)
    r = subprocess.run(f'exec >&-; "{sys.executable}" "{DISPATCHGEN}" meson-sources "{src}" '
                       f'--config "{cfg}" --outdir "{tmp_path}"', shell=True,
                       stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    assert "standard output is closed" in _one_line_error(r, "dispatchgen")


@pytest.mark.parametrize("cflags", ["-DNDEBUG", "-DNDEBUG -O2", "--sysroot=/", ""])
def test_cflags_value_may_start_with_a_dash(tmp_path, cflags):
    """meson.build files pass `'--cflags', ' '.join(get_option('c_args'))`:
    c_args such as -DNDEBUG must be taken as the value, not as an option."""
    r = subprocess.run([sys.executable, str(DISPATCHGEN), "configure", "--outdir", str(tmp_path / "o"),
                        "--cflags", cflags, "--cpu-baseline", "none", "--cpu-dispatch", "none"],
                       capture_output=True, text=True, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    config = json.loads((tmp_path / "o" / "dispatch_config.json").read_text())
    assert config["cflags"] == cflags.split()
