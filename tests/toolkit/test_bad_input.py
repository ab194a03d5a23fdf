"""Issue 49, the toolkit's part: FIFOs where it reads (a dispatchable source on
every route, DISPATCHGEN_TRACE, an entry of DISPATCHGEN_CACHE_DIR) used to
block forever; a null byte in a DispatchExtension's name or path was a
traceback; odd module names were accepted; CMake's odd arguments (an old
DISPATCHGEN_PYTHON, a second dispatchgen_add_sources on one target) were a
traceback or a dozen errors. Each is one line naming the cause."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"
DISPATCHGEN = TOOLKIT / "dispatchgen"
CMAKE_DIR = TOOLKIT / "dispatchkit" / "cmake"
TIMEOUT = 60  # a blocked open would hang here: the timeout fails the test

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def _env(tmp: Path, **extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(TOOLKIT), "DISPATCHGEN_CACHE_DIR": str(tmp / "cache"),
            **extra}


def _dispatchgen(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DISPATCHGEN), *args], cwd=tmp, capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env(tmp, **env))


def _one_line(r: subprocess.CompletedProcess, *words: str) -> str:
    assert r.returncode != 0, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = [line for line in r.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "add.dispatch.c").write_text("/*@targets baseline avx2 */\nint f(void);\n")
    os.mkfifo(tmp_path / "f.dispatch.c")
    return tmp_path


# -- FIFOs --------------------------------------------------------------------

@needs_gcc
def test_a_fifo_dispatch_source_is_refused_by_dispatchgen_meson(project):
    r = _dispatchgen(project, "meson", "--name", "x", "--outdir", "o", "--cc", "gcc",
                     "--sources", "main.c", "--dispatch", "f.dispatch.c")
    assert _one_line(r, "f.dispatch.c", "FIFO").startswith("dispatchgen: error: ")


@needs_gcc
def test_a_fifo_is_refused_by_meson_sources_and_targets(project):
    r = _dispatchgen(project, "configure", "--outdir", "cfg", "--cc", "gcc")
    assert r.returncode == 0, r.stderr
    r = _dispatchgen(project, "meson-sources", "f.dispatch.c", "--config",
                     "cfg/dispatch_config.json", "--outdir", "o")
    _one_line(r, "f.dispatch.c", "FIFO")
    r = _dispatchgen(project, "targets", "f.dispatch.c", "--cc", "gcc")
    _one_line(r, "f.dispatch.c", "FIFO")
    os.mkfifo(project / "groups.ini")
    r = _dispatchgen(project, "targets", "add.dispatch.c", "--cc", "gcc", "--groups", "groups.ini")
    _one_line(r, "groups.ini", "FIFO")


@needs_gcc
def test_a_character_device_is_refused_at_once(project):
    r = _dispatchgen(project, "targets", "/dev/zero", "--cc", "gcc")
    _one_line(r, "/dev/zero", "character device")


def test_dispatchgen_trace_naming_a_fifo_is_refused(project):
    r = _dispatchgen(project, "report", DISPATCHGEN_TRACE=str(project / "f.dispatch.c"))
    _one_line(r, "DISPATCHGEN_TRACE", "f.dispatch.c", "FIFO")


@needs_gcc
def test_a_fifo_in_the_probe_cache_is_never_opened(project):
    """A bad cache entry costs only speed (as a directory there does,
    test_hostile_input.py): the FIFO is not opened, and the new cache
    replaces it."""
    assert _dispatchgen(project, "report", "--cc", "gcc").returncode == 0
    (entry,) = (project / "cache").glob("probe-*.json")
    entry.unlink()
    os.mkfifo(entry)
    r = _dispatchgen(project, "report", "--cc", "gcc")
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert entry.is_file() and entry.read_text().startswith("{")


# -- the setuptools route: FIFOs and null bytes ---------------------------------

SETUP = """
from setuptools import setup
from dispatchkit.setuptools_ext import DispatchExtension, build_ext
setup(name="m", ext_modules=[DispatchExtension({name!r}, sources=["main.c"],
      dispatch=[{dispatch!r}])], cmdclass={{"build_ext": build_ext}})
"""


def _setuptools(project: Path, name: str, dispatch: str) -> subprocess.CompletedProcess:
    pytest.importorskip("setuptools")
    (project / "setup.py").write_text(SETUP.format(name=name, dispatch=dispatch))
    return subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-temp", "bt",
                           "--build-lib", "bl"], cwd=project, capture_output=True, text=True,
                          timeout=TIMEOUT, env=_env(project))


@needs_gcc
@pytest.mark.parametrize("name,dispatch,words", [
    ("m", "f.dispatch.c", ["f.dispatch.c", "FIFO"]),
    ("m", "add.dispatch.c\0", ["--dispatch", "null byte"]),
    ("m\0", "add.dispatch.c", ["--module", "null byte"]),
])
def test_the_setuptools_route_refuses_in_one_line(project, name, dispatch, words):
    line = _one_line(_setuptools(project, name, dispatch), *words)
    assert line.startswith("error: dispatchgen: "), line


# -- module names ---------------------------------------------------------------

@pytest.mark.parametrize("module", ["a..b", ".a", "a.", "a.1b"])
def test_dispatchgen_meson_refuses_a_module_name_that_is_not_dotted_identifiers(project, module):
    r = _dispatchgen(project, "meson", "--module", module, "--outdir", "o", "--cc", sys.executable)
    _one_line(r, f"--module {module!r}", "dotted")


# -- CMake ------------------------------------------------------------------------

def _cmake(project: Path, body: str, *defines: str) -> subprocess.CompletedProcess:
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.17)\nproject(t LANGUAGES C)\n"
        f'find_package(dispatchgen REQUIRED PATHS "{CMAKE_DIR}" NO_DEFAULT_PATH)\n'
        "add_executable(t main.c)\n" + body)
    return subprocess.run(["cmake", "-S", str(project), "-B", str(project / "build"),
                           f"-DDISPATCHGEN_PYTHON={sys.executable}", *defines],
                          capture_output=True, text=True, timeout=TIMEOUT * 2, env=_env(project))


def _one_cmake_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("CMake Error") == 1, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


@needs_cmake
@needs_gcc
@pytest.mark.parametrize("module", ["a..b", ".a"])
def test_cmake_refuses_an_odd_module_name(project, module):
    r = _cmake(project, f"dispatchgen_add_sources(t MODULE {module} SOURCES main.c)\n")
    _one_cmake_error(r, f"--module '{module}'")


@needs_cmake
@needs_gcc
@pytest.mark.parametrize("how", ["plain", "alias"])
def test_cmake_refuses_a_second_call_on_one_target(project, how):
    second = "t" if how == "plain" else "t_alias"
    r = _cmake(project, "add_executable(t_alias ALIAS t)\n"
               "dispatchgen_add_sources(t NAME t DISPATCH add.dispatch.c)\n"
               f"dispatchgen_add_sources({second} NAME t DISPATCH add.dispatch.c)\n")
    _one_cmake_error(r, f"dispatchgen_add_sources({second})", "once per target")


@needs_cmake
def test_cmake_refuses_an_imported_target(project):
    r = _cmake(project, "add_library(imp STATIC IMPORTED)\n"
               "dispatchgen_add_sources(imp NAME t DISPATCH add.dispatch.c)\n")
    _one_cmake_error(r, "IMPORTED")


@needs_cmake
@needs_gcc
def test_cmake_passes_a_compiler_whose_path_has_a_space(project):
    """cl.exe lives under "Program Files": the path reached dispatchgen split
    at the space, and the probe ran a compiler named "Program"."""
    folder = project / "Program Files" / "bin"
    folder.mkdir(parents=True)
    (folder / "cc").symlink_to(shutil.which("gcc"))
    r = _cmake(project, "dispatchgen_add_sources(t NAME t DISPATCH add.dispatch.c)\n",
               f"-DCMAKE_C_COMPILER={folder / 'cc'}")
    assert r.returncode == 0, r.stderr
    assert "Program Files/bin/cc" in (project / "build" / "CMakeCache.txt").read_text()


def _old_pythons(tmp: Path):
    """Real old interpreters where pyenv has them, and a fake one, as a broken
    PATH would give, that reports 2.7 and fails on anything else."""
    versions = Path.home() / ".pyenv" / "versions"  # pyenv's shims refuse unselected ones
    found = [str(p) for p in sorted(versions.glob("*/bin/python"))
             if p.parent.parent.name.startswith(("2.", "3.6", "3.7", "3.8"))]
    fake = tmp / "old-python"
    fake.write_text("#!/bin/sh\n"
                    "[ \"$1\" = -c ] && case \"$2\" in *version_info*) echo 2.7; exit 0;; esac\n"
                    "echo 'Traceback (most recent call last):' >&2; exit 1\n")
    fake.chmod(0o755)
    return found + [str(fake)]


@needs_cmake
def test_cmake_refuses_an_old_dispatchgen_python(project):
    for python in _old_pythons(project):
        shutil.rmtree(project / "build", ignore_errors=True)
        r = _cmake(project, "dispatchgen_add_sources(t NAME t SOURCES main.c)\n",
                   f"-DDISPATCHGEN_PYTHON={python}")
        _one_cmake_error(r, "needs Python >= 3.9", python)


@pytest.mark.parametrize("script", [DISPATCHGEN, TOOLKIT / "dispatchkit" / "__main__.py"])
def test_the_launchers_refuse_an_old_python_in_one_line(tmp_path, script):
    olds = [p for p in _old_pythons(tmp_path) if "pyenv" in p]
    if not olds:
        pytest.skip("no Python older than 3.9 here")
    for python in olds:
        r = subprocess.run([python, str(script), "report"], capture_output=True, text=True,
                           timeout=TIMEOUT)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.splitlines() == [r.stderr.strip()], r.stderr
        assert "needs Python >= 3.9" in r.stderr, r.stderr
