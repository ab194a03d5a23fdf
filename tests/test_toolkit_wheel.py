"""The toolkit as its own product, as a user adopts it (issue 25).

Its wheel (tools/dispatchgen) is pure (`py3-none-any`), requires nothing at
run time and installs on the oldest and the newest CPython this machine has
(>= 3.9, its promise). Each downstream example of tests/examples that is a
Python extension (pyext: C and C++ dispatchable sources; varext: per-ISA
files in a variants file, one of them `.S`, chosen by a Meson option) is
built from a fresh directory by `pip install` WITH build isolation, from a
wheelhouse that holds only the toolkit's wheel (meson-python and the rest come
from the index, as for any user), on both interpreters; its build log has no
WARNING and no DEPRECATION; each is imported and its chosen targets checked
natively and under qemu Nehalem and Haswell, and a build whose baseline the
CPU lacks is an ImportError there, never SIGILL.
"""

from __future__ import annotations

import email
import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests" / "examples"
QEMU = shutil.which("qemu-x86_64")
IS_X86_64 = os.uname().machine == "x86_64"
TOOLKIT_FLOOR = (3, 9)


def _version(python: str) -> tuple:
    r = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                       capture_output=True, text=True)
    return tuple(map(int, r.stdout.split())) if r.returncode == 0 else ()


def _interpreters() -> list:
    """The oldest and the newest CPython >= 3.9 found (pyenv's, PATH's), by version."""
    found = {}
    candidates = [sys.executable, *glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3")),
                  *filter(None, (shutil.which(f"python3.{m}") for m in range(9, 20)))]
    for python in candidates:
        v = _version(python)
        if v >= TOOLKIT_FLOOR and v not in found:
            found[v] = python
    versions = sorted(found)
    return [found[v] for v in dict.fromkeys([versions[0], versions[-1]])] if versions else []


PYTHONS = _interpreters()


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"
    return r


def _env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISPATCH_", "PYEXT_", "VAREXT_", "PKG_CONFIG_PATH", "PYTHONPATH",
                                "PIP_NO_BUILD_ISOLATION"))}
    env["DISPATCHGEN_CACHE_DIR"] = str(tmp / "probe-cache")
    env.update(extra)
    return env


# ---- the wheel itself --------------------------------------------------------------------------

def _metadata(wheel: Path) -> email.message.Message:
    z = zipfile.ZipFile(wheel)
    name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    return email.message_from_bytes(z.read(name))


def test_the_toolkit_wheel_is_pure_and_requires_nothing(toolkit_wheel):
    assert toolkit_wheel.name == "dispatchgen-0.1.0-py3-none-any.whl"
    z = zipfile.ZipFile(toolkit_wheel)
    wheel_meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Root-Is-Purelib: true" in wheel_meta and "Tag: py3-none-any" in wheel_meta
    meta = _metadata(toolkit_wheel)
    assert meta["Name"] == "dispatchgen"
    assert meta["Requires-Python"] == ">=3.9"
    assert meta.get_all("Requires-Dist") is None  # nothing at run time: not cffi, not numpy
    assert not [n for n in z.namelist() if n.endswith((".so", ".pyd", ".dylib"))]


def test_the_toolkit_name_is_not_the_index_dispatch_project():
    """`dispatch` on the public index is someone else's project; the toolkit is
    `dispatchgen`, the runtime `dispatch-tensor`, and neither build asks for
    `dispatch` (pip would install that project instead)."""
    import tomllib
    for pyproject in (REPO / "pyproject.toml", REPO / "tools" / "dispatchgen" / "pyproject.toml",
                      *EXAMPLES.glob("*/pyproject.toml"), *EXAMPLES.glob("*/builders/*.toml")):
        data = tomllib.loads(pyproject.read_text())
        wanted = [*data["build-system"]["requires"], *data["project"].get("dependencies", [])]
        names = {re.split(r"[<>=!~\[; @]", w, maxsplit=1)[0].lower() for w in wanted}
        assert "dispatch" not in names, pyproject
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"] == "dispatch-tensor"


@pytest.mark.skipif(not PYTHONS, reason="no CPython >= 3.9 found")
@pytest.mark.parametrize("python", PYTHONS, ids=lambda p: "py%d.%d" % _version(p))
def test_the_toolkit_wheel_installs_and_runs_on_the_oldest_and_newest_python(
        python, toolkit_wheel, tmp_path):
    _run([python, "-m", "venv", tmp_path / "venv"])
    bindir = tmp_path / "venv" / "bin"
    _run([bindir / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", toolkit_wheel])
    assert _run([bindir / "dispatch-config", "--version"]).stdout.strip() == "0.1.0"
    r = _run([bindir / "dispatchgen", "report", "--cpu-baseline", "sse42", "--json",
              "--cache-dir", tmp_path / "cache"])
    assert '"SSE42"' in r.stdout
    pkgconfig = Path(_run([bindir / "dispatch-config", "--pkgconfigdir"]).stdout.strip())
    assert (pkgconfig / "dispatchgen.pc").is_file()
    # the module runs as `python -m dispatchkit` too
    assert "usage: dispatchgen" in _run([bindir / "python", "-m", "dispatchkit", "--help"]).stdout


# ---- every example, built as a user builds it --------------------------------------------------

BUILD_SLOW = pytest.mark.skipif(not IS_X86_64, reason="the examples' targets are x86's")


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory, toolkit_wheel) -> Path:
    house = tmp_path_factory.mktemp("wheelhouse")
    shutil.copy2(toolkit_wheel, house)
    assert [p.name for p in house.iterdir()] == [toolkit_wheel.name]
    return house


def _isolated_install(python: str, example: str, tmp: Path, wheelhouse: Path, *setup_args):
    """A fresh venv and a fresh copy of the example; `pip install` with build
    isolation and the wheelhouse; returns (venv python, build log)."""
    _run([python, "-m", "venv", tmp / "venv"])
    vpy = tmp / "venv" / "bin" / "python"
    src = tmp / example
    shutil.copytree(EXAMPLES / example, src, ignore=shutil.ignore_patterns("build*", "tools"))
    r = _run([vpy, "-m", "pip", "install", "-v", "--find-links", wheelhouse,
              *(f"--config-settings=setup-args={a}" for a in setup_args), src], env=_env(tmp), cwd=tmp)
    return vpy, r.stdout + r.stderr


@pytest.fixture(scope="module")
def builds(tmp_path_factory, wheelhouse) -> dict:
    """(example, python) -> (venv python, log), built lazily, once each."""
    done: dict = {}

    def get(example: str, python: str, *setup_args: str):
        key = (example, python, setup_args)
        if key not in done:
            tmp = tmp_path_factory.mktemp(f"{example}-py{'.'.join(map(str, _version(python)))}")
            done[key] = (*_isolated_install(python, example, tmp, wheelhouse, *setup_args), tmp)
        return done[key]
    return get


def _expected(example: str, cpu: set) -> dict:
    skx = {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= cpu
    avx2 = {"avx2", "fma", "f16c"} <= cpu
    if example == "pyext":
        best = ("AVX512_SKX", "AVX512_SKX") if skx else ("FMA3__AVX2", "AVX2") if avx2 \
            else ("SSE42", "SSE42") if "sse4_2" in cpu else ("baseline", "baseline")
        return {"scale": best[1], "sum": best[0]}
    best = "AVX512_SKX" if skx else "AVX2" if avx2 else "SSE41" if "sse4_1" in cpu else "baseline"
    return {"varext.impl": best, "varext.xor": best}


# What the emulated CPUs have, as the kernel would list it.
NEHALEM = {"sse4_1", "sse4_2", "popcnt"}
HASWELL = NEHALEM | {"avx", "f16c", "fma", "avx2"}

REPORT = {
    "pyext": "import pyext; print(sorted(pyext.__cpu_targets__.items()), pyext.sum([1, 2, 3.5]))",
    "varext": "import varext; print(sorted(varext.__cpu_targets__.items()), "
              "varext.xor(bytes(range(70)), bytes(70)) == bytes(range(70)))",
}
CHECK = {"pyext": "6.5", "varext": "True"}


def _import(vpy: Path, tmp: Path, example: str, qemu_cpu: str | None = None):
    cmd = [vpy, "-c", REPORT[example]]
    if qemu_cpu:
        cmd = [QEMU, "-cpu", qemu_cpu, *cmd]
    env = _env(tmp)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=tmp)


@BUILD_SLOW
@pytest.mark.skipif(not PYTHONS, reason="no CPython >= 3.9 found")
@pytest.mark.parametrize("python", PYTHONS, ids=lambda p: "py%d.%d" % _version(p))
@pytest.mark.parametrize("example", ["pyext", "varext"])
def test_each_example_builds_isolated_from_the_wheelhouse_without_warnings(
        example, python, builds):
    vpy, log, tmp = builds(example, python)
    assert "Program dispatchgen found: YES" in log
    bad = [line for line in log.splitlines() if "WARNING" in line or "DEPRECATION" in line]
    # pip's own notices about unreachable extra index locations are not the build's
    bad = [line for line in bad if "is ignored: it is neither a file nor a directory" not in line]
    assert not bad, "\n".join(bad)
    r = _import(vpy, tmp, example)
    assert r.returncode == 0, r.stderr
    cpu = set(Path("/proc/cpuinfo").read_text().split())
    assert r.stdout.strip() == f"{sorted(_expected(example, cpu).items())} {CHECK[example]}"


@BUILD_SLOW
@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
@pytest.mark.skipif(not PYTHONS, reason="no CPython >= 3.9 found")
@pytest.mark.parametrize("example", ["pyext", "varext"])
@pytest.mark.parametrize("cpu,flags", [("Nehalem", NEHALEM), ("Haswell", HASWELL)])
def test_each_example_chooses_per_emulated_cpu(example, cpu, flags, builds):
    vpy, _, tmp = builds(example, PYTHONS[-1])
    r = _import(vpy, tmp, example, qemu_cpu=cpu)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{sorted(_expected(example, flags).items())} {CHECK[example]}"


@BUILD_SLOW
@pytest.mark.skipif(not PYTHONS, reason="no CPython >= 3.9 found")
def test_the_asm_option_chooses_the_variant_files_and_asm_globals_stay_hidden(builds, tmp_path):
    vpy, _, tmp = builds("varext", PYTHONS[0])
    cpu = set(Path("/proc/cpuinfo").read_text().split())
    so = _run([vpy, "-c", "import varext._varext as m; print(m.__file__)"], cwd=tmp).stdout.strip()
    exported = _run(["nm", "-D", "--defined-only", so]).stdout.split()
    assert exported[-1] == "PyInit__varext" and len(exported) == 3, exported  # addr, T, name
    # the .S file's plain .globl symbols are in the module, not exported
    symbols = _run(["nm", so]).stdout
    assert " varext_xor_avx2" in symbols and "varext_avx2_built_for" in symbols
    if {"avx2", "fma", "f16c"} <= cpu and not {"avx512bw", "avx512vl"} <= cpu:
        impl = _run([vpy, "-c", "import varext; print(varext.impl())"], cwd=tmp).stdout.strip()
        assert impl == "avx2-asm"
        vpy_c, log, tmp_c = builds("varext", PYTHONS[0], "-Dasm=false")
        impl = _run([vpy_c, "-c", "import varext; print(varext.impl())"], cwd=tmp_c).stdout.strip()
        assert impl == "avx2-c"
        assert "varext_avx2_built_for" not in _run(["nm", _run(
            [vpy_c, "-c", "import varext._varext as m; print(m.__file__)"],
            cwd=tmp_c).stdout.strip()]).stdout


@BUILD_SLOW
@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
@pytest.mark.skipif(not PYTHONS, reason="no CPython >= 3.9 found")
def test_a_too_high_baseline_is_an_import_error_under_qemu_never_sigill(builds):
    vpy, _, tmp = builds("varext", PYTHONS[-1], "-Dcpu-baseline=avx2")
    env = _env(tmp)
    env.pop("LD_PRELOAD", None)
    r = subprocess.run([QEMU, "-cpu", "Nehalem", str(vpy), "-c", "import varext"],
                       capture_output=True, text=True, env=env, cwd=tmp)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not -4 (SIGILL)
    assert r.stderr.strip().splitlines()[-1].startswith(
        "ImportError: varext cannot be imported: this CPU lacks AVX F16C AVX2,"), r.stderr
    r = subprocess.run([QEMU, "-cpu", "Haswell", str(vpy), "-c",
                        "import varext; print(varext.__cpu_baseline__[-1])"],
                       capture_output=True, text=True, env=env, cwd=tmp)
    assert r.returncode == 0 and r.stdout.strip() == "AVX2", r.stderr


# ---- what a user reads -------------------------------------------------------------------------

def _toolkit_lines(meson_build: str) -> list:
    """The code lines a client writes for the toolkit: from finding it to the
    module that links what it listed (comments and blank lines aside)."""
    lines = [ln for ln in meson_build.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    first = next(i for i, ln in enumerate(lines) if "find_program('dispatchgen'" in ln)
    last = next(i for i, ln in enumerate(lines) if ln.startswith("py.extension_module("))
    return lines[first:last + 1]


@pytest.mark.parametrize("example", ["pyext", "varext"])
def test_a_client_needs_at_most_15_lines_for_the_toolkit(example):
    lines = _toolkit_lines((EXAMPLES / example / "meson.build").read_text())
    assert len(lines) <= 15, "\n".join(lines)
    text = "\n".join(lines)
    assert "check: true" not in text  # errors surface as their own line (the assert)
    assert "assert(dk.returncode() == 0, dk.stderr().strip())" in text


def test_the_manual_shows_the_whole_client_as_the_example_has_it():
    readme = (REPO / "docs" / "toolkit.md").read_text()
    for name, fence in (("pyproject.toml", "toml"), ("meson.build", "meson")):
        text = (EXAMPLES / "pyext" / name).read_text()
        assert f"```{fence}\n{text}```" in readme, name
