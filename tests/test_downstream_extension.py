"""A downstream Python extension (tests/examples/pyext: meson-python, one C and
one C++ dispatchable source) built from a fresh directory by `pip install`,
both ways the toolkit is adopted (docs/toolkit.md, "A downstream extension"):

  (a) the toolkit installed in the build's environment: the toolkit's own
      wheel (tools/dispatchgen) installed in a fresh venv, its `dispatchgen`
      found on PATH as in an activated venv (pip's isolated builds from a
      wheelhouse: tests/test_toolkit_wheel.py);
  (b) the toolkit vendored into the project's tree with
      `dispatch-config --vendor tools/dispatchgen` (the toolkit alone), found
      there by find_program('dispatchgen', dirs: ...).

Each build is imported and its chosen targets checked natively and under
qemu Nehalem and Haswell; a build whose baseline (AVX2) the CPU lacks must
raise ImportError naming the package and the features, never SIGILL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _venvs import fresh_venv as _venv  # noqa: E402
from _venvs import run as _run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "pyext"
QEMU = shutil.which("qemu-x86_64")
IS_X86_64 = os.uname().machine == "x86_64"

pytestmark = pytest.mark.skipif(not IS_X86_64, reason="the example's targets are x86's")


def _env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISPATCH_", "PYEXT_", "PKG_CONFIG_PATH", "PYTHONPATH"))}
    env["DISPATCHGEN_CACHE_DIR"] = str(tmp / "probe-cache")
    env.update(extra)
    return env


def _fresh_example(tmp: Path, name: str) -> Path:
    src = tmp / name
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build*", "subprojects"))
    return src


def _activated(python: Path, env: dict) -> dict:
    """env as in the venv of ``python`` activated: its bin/ first on PATH."""
    return {**env, "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', os.defpath)}"}


def _vendor(src: Path, tmp: Path) -> None:
    _run([sys.executable, "-m", "dispatchkit.dispatch_config", "--vendor",
          src / "tools" / "dispatchgen"],
         env=_env(tmp, PYTHONPATH=str(REPO / "tools" / "dispatchgen")))


def _pip_install(python: Path, src: Path, env: dict, *setup_args: str) -> str:
    cmd = [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-v",
           *(f"-Csetup-args={a}" for a in setup_args), src]
    r = _run(cmd, env=env, cwd=src.parent)
    return r.stdout + r.stderr


@pytest.fixture(scope="module")
def route_a(tmp_path_factory, toolkit_wheel) -> dict:
    tmp = tmp_path_factory.mktemp("route-a")
    python = _venv(tmp / "venv")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          toolkit_wheel])
    pcdir = _run([tmp / "venv" / "bin" / "dispatch-config", "--pkgconfigdir"]).stdout.strip()
    log = _pip_install(python, _fresh_example(tmp, "pyext"), _activated(python, _env(tmp)))
    return {"python": python, "log": log, "tmp": tmp, "pcdir": pcdir}


@pytest.fixture(scope="module")
def route_b(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("route-b")
    python = _venv(tmp / "venv")
    src = _fresh_example(tmp, "pyext")
    _vendor(src, tmp)
    log = _pip_install(python, src, _env(tmp))
    return {"python": python, "log": log, "tmp": tmp, "src": src}


ROUTES = ["route_a", "route_b"]


def _py(build: dict, code: str, *, qemu_cpu: str | None = None, **env):
    cmd = [build["python"], "-c", code]
    if qemu_cpu:
        cmd = [QEMU, "-cpu", qemu_cpu, *cmd]
    e = _env(build["tmp"], **env)
    e.pop("LD_PRELOAD", None) if qemu_cpu else None
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          env=e, cwd=build["tmp"])


def _expected_native() -> dict:
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= flags:
        return {"sum": "AVX512_SKX", "scale": "AVX512_SKX"}
    if {"avx2", "fma"} <= flags:
        return {"sum": "FMA3__AVX2", "scale": "AVX2"}
    if "sse4_2" in flags:
        return {"sum": "SSE42", "scale": "SSE42"}
    return {"sum": "baseline", "scale": "baseline"}


REPORT = ("import pyext; print(sorted(pyext.targets().items()), "
          "sorted(pyext.__cpu_targets__.items()), pyext.sum([1, 2, 3.5]), "
          "pyext.scale([1, 2], 3))")


@pytest.mark.parametrize("route", ROUTES)
def test_example_builds_imports_and_runs_the_best_variant_natively(route, request):
    build = request.getfixturevalue(route)
    r = _py(build, REPORT)
    assert r.returncode == 0, r.stderr
    expected = sorted(_expected_native().items())
    assert r.stdout.split("\n")[0] == f"{expected} {expected} 6.5 [3.0, 6.0]"


def test_route_a_finds_the_installed_toolkit_on_path(route_a):
    bindir = route_a["python"].parent
    assert f"Program dispatchgen found: YES ({bindir / 'dispatchgen'})" in route_a["log"]


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed")
def test_the_installed_toolkit_answers_pkg_config(route_a):
    assert (Path(route_a["pcdir"]) / "dispatchgen.pc").is_file()
    env = {**os.environ, "PKG_CONFIG_PATH": route_a["pcdir"]}
    r = _run(["pkg-config", "--cflags", "dispatchgen"], env=env)
    include = r.stdout.split()[0]
    assert include.startswith("-I") and Path(include[2:], "dispatch", "cpu_dispatch.h").is_file()
    assert _run(["pkg-config", "--modversion", "dispatchgen"], env=env).stdout.strip() == "0.1.0"
    script = _run(["pkg-config", "--variable=dispatchgen", "dispatchgen"], env=env).stdout.strip()
    r = _run([route_a["python"], script, "--help"])
    assert "usage: dispatchgen" in r.stdout


def test_route_b_builds_from_the_vendored_toolkit(route_b):
    vendored = route_b["src"] / "tools" / "dispatchgen" / "dispatchgen"
    assert f"Program dispatchgen found: YES ({vendored})" in route_b["log"]


@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("cpu,expected", [
    ("Nehalem", {"sum": "SSE42", "scale": "SSE42"}),
    ("Haswell", {"sum": "FMA3__AVX2", "scale": "AVX2"}),
])
def test_example_chooses_per_emulated_cpu(route, cpu, expected, request):
    build = request.getfixturevalue(route)
    r = _py(build, REPORT, qemu_cpu=cpu)
    assert r.returncode == 0, r.stderr
    e = sorted(expected.items())
    assert r.stdout.split("\n")[0] == f"{e} {e} 6.5 [3.0, 6.0]"


@pytest.mark.parametrize("route", ROUTES)
def test_only_the_module_init_is_exported(route, request):
    build = request.getfixturevalue(route)
    so = _py(build, "import pyext._pyext as m; print(m.__file__)").stdout.strip()
    out = _run(["nm", "-D", "--defined-only", so]).stdout
    exported = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert exported == ["PyInit__pyext"], out


def test_each_package_reads_its_own_env_variables(route_a):
    r = _py(route_a, "import pyext; print(pyext.targets()['sum'])",
            PYEXT_DISABLE_CPU_FEATURES="AVX2 AVX512F")
    assert r.returncode == 0 and r.stdout.strip() == "SSE42", r.stderr
    # dispatch's own variables are not pyext's
    r = _py(route_a, "import pyext; print(pyext.targets()['sum'])",
            DISPATCH_DISABLE_CPU_FEATURES="AVX2 AVX512F SSE42")
    assert r.returncode == 0 and r.stdout.strip() == _expected_native()["sum"], r.stderr
    r = _py(route_a, "import pyext", PYEXT_DISABLE_CPU_FEATURES="AVX2",
            PYEXT_ENABLE_CPU_FEATURES="SSE42")
    assert r.returncode == 1 and "ImportError: pyext: PYEXT_DISABLE_CPU_FEATURES and " \
        "PYEXT_ENABLE_CPU_FEATURES are both set" in r.stderr, r.stderr
    r = _py(route_a, "import pyext", PYEXT_DISABLE_CPU_FEATURES="NOT_A_FEATURE")
    assert r.returncode == 1 and "RuntimeError: pyext: PYEXT_DISABLE_CPU_FEATURES names " \
        "'NOT_A_FEATURE'" in r.stderr, r.stderr


def test_each_package_has_its_own_cpu_report(route_b):
    r = _py(route_b, "import pyext as p; print(p.__cpu_baseline__); print(p.__cpu_dispatch__);"
                     "print(sorted(k for k, v in p.__cpu_features__.items() if v))")
    assert r.returncode == 0, r.stderr
    baseline, dispatched, have = (eval(line) for line in r.stdout.splitlines())
    assert baseline == ["SSE", "SSE2", "SSE3"]
    assert {"SSE42", "AVX2", "AVX512_SKX"} <= set(dispatched)
    assert set(baseline) <= set(have)


@pytest.fixture(scope="module")
def too_high_baseline(tmp_path_factory, toolkit_wheel) -> dict:
    """Route (a) built with an AVX2 baseline."""
    tmp = tmp_path_factory.mktemp("guard")
    python = _venv(tmp / "venv")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          toolkit_wheel])
    log = _pip_install(python, _fresh_example(tmp, "pyext"), _activated(python, _env(tmp)),
                       "-Dcpu-baseline=avx2")
    return {"python": python, "log": log, "tmp": tmp}


@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
def test_a_baseline_the_cpu_lacks_is_an_import_error_never_sigill(too_high_baseline):
    r = _py(too_high_baseline, "import pyext", qemu_cpu="Nehalem")
    assert r.returncode == 1, (r.returncode, r.stderr)  # not -4 (SIGILL)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: pyext cannot be imported: this CPU lacks AVX F16C AVX2,")
    # and where the CPU has it, the same build imports and reports its baseline
    r = _py(too_high_baseline, "import pyext; print(pyext.__cpu_baseline__[-1])", qemu_cpu="Haswell")
    assert r.returncode == 0 and r.stdout.strip() == "AVX2", r.stderr


def test_the_toolkit_wheel_holds_the_toolkit_alone(toolkit_wheel):
    names = zipfile.ZipFile(toolkit_wheel).namelist()
    assert not [n for n in names if n.startswith("dispatch/")]  # no tensor runtime
    assert not [n for n in names if "/tests/" in n or n.startswith("tests/")]
    for needed in ("dispatchkit/cli.py", "dispatchkit/lib/pkgconfig/dispatchgen.pc",
                   "dispatchkit/include/dispatch/cpu_dispatch.h",
                   "dispatchkit/cpu/cpu_module_guard.c", "dispatchkit/checks/cpu_avx2.c"):
        assert needed in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(toolkit_wheel).read(entry_points).decode().replace(" ", "")
    assert "dispatchgen=dispatchkit.cli:main" in text
    assert "dispatch-config=dispatchkit.dispatch_config:main" in text


def test_dispatch_config_and_dispatchgen_console_scripts(route_a):
    bindir = route_a["python"].parent
    assert _run([bindir / "dispatch-config", "--version"]).stdout.strip() == "0.1.0"
    cflags = _run([bindir / "dispatch-config", "--cflags"]).stdout.split()
    assert any(Path(f[2:], "dispatch", "cpu_module.h").is_file() for f in cflags)
    assert _run([bindir / "dispatch-config", "--libs"]).stdout.strip() == ""
    r = _run([bindir / "dispatchgen", "report", "--cpu-baseline", "sse42",
              "--cache-dir", route_a["tmp"] / "probe-cache"])
    assert "baseline:" in r.stdout and "SSE42" in r.stdout


def test_vendoring_copies_the_toolkit_alone(route_b):
    vendored = route_b["src"] / "tools" / "dispatchgen"
    files = {p.relative_to(vendored).as_posix() for p in vendored.rglob("*") if p.is_file()}
    assert "dispatchgen" in files and "dispatchkit/cli.py" in files
    assert "dispatchkit/cpu/cpu_module_guard.c" in files
    assert all(f.startswith("dispatchkit/") for f in files - {"dispatchgen", ".dispatchgen-vendored"})
    assert not [f for f in files if f.endswith(".pyc")]
    # exactly the toolkit's package (less byte code), nothing else of the repository
    toolkit = REPO / "tools" / "dispatchgen"
    package = {p.relative_to(toolkit).as_posix() for p in (toolkit / "dispatchkit").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert files - {"dispatchgen", ".dispatchgen-vendored"} == package


# ---- errors that point at the line, through `pip install` (issue 11, item 4) ----

def _pip_install_output(python: Path, src: Path, env: dict, *setup_args: str,
                        verbose: bool = False):
    """`pip install` as a user runs it (no -v unless asked): its return code and
    all it printed."""
    cmd = [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
           *(["-v"] if verbose else []), *(f"-Csetup-args={a}" for a in setup_args), src]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                       cwd=src.parent)
    return r.returncode, r.stdout + r.stderr


def _example_for(route: str, build: dict, tmp: Path) -> tuple:
    """A fresh copy of the example and the environment to build it by ``route``."""
    src = _fresh_example(tmp, "pyext")
    if route == "route_a":
        return src, _activated(build["python"], _env(tmp))
    _vendor(src, tmp)
    return src, _env(tmp)


@pytest.mark.parametrize("route", ROUTES)
def test_pip_install_of_a_bad_targets_token_shows_file_line_and_token_once(
        route, request, tmp_path):
    build = request.getfixturevalue(route)
    src, env = _example_for(route, build, tmp_path)
    source = src / "src" / "sum.dispatch.c"
    text = source.read_text()
    assert text.startswith("/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx */\n")
    source.write_text(text.replace("sse42 (avx2 fma3)", "sse42\n * (avx2 fma3) avx9000_bogus", 1))
    rc, out = _pip_install_output(build["python"], src, env)
    assert rc != 0
    assert "Traceback" not in out, out
    assert out.count("avx9000_bogus") == 1, out
    assert f"{source}:2: unknown target 'avx9000_bogus'" in out, out
    r = _py(build, "import pyext")  # the failed build installed nothing over the good one
    assert r.returncode == 0, r.stderr


FAKE_CC = """#!/bin/sh
# cc, but it rejects -mavx512fp16 (an older compiler): it cannot build AVX512_SPR
for arg in "$@"; do
    if [ "$arg" = -mavx512fp16 ]; then
        echo "cc: error: unrecognized command-line option '-mavx512fp16'" >&2
        exit 1
    fi
done
exec cc "$@"
"""


@pytest.fixture
def old_cc(tmp_path) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("needs cc")
    path = tmp_path / "bin" / "old-cc"
    path.parent.mkdir()
    path.write_text(FAKE_CC)
    path.chmod(0o755)
    return path


def test_pip_install_of_a_baseline_the_compiler_cannot_build_says_so_once(
        route_a, tmp_path, old_cc):
    src, env = _example_for("route_a", route_a, tmp_path)
    rc, out = _pip_install_output(route_a["python"], src, {**env, "CC": str(old_cc)},
                                  "-Dcpu-baseline=avx512_spr")
    assert rc != 0
    assert "Traceback" not in out, out
    # the single extension the compiler lacks, of the generation asked for
    assert out.count("AVX512FP16 cannot be in the baseline") == 1, out
    assert "-mavx512fp16" in out, out


def test_pip_install_notes_a_target_the_compiler_cannot_build_and_honours_disable_optimization(
        route_a, toolkit_wheel, tmp_path, old_cc):
    """A `@targets` token the compiler cannot build is skipped with file:line
    and the reason in pip's (verbose) output, once; `-Ddisable-optimization=true`
    builds each dispatchable source once, as baseline (the same install)."""
    src, env = _example_for("route_a", route_a, tmp_path)
    source = src / "src" / "sum.dispatch.c"
    source.write_text(source.read_text().replace(
        "sse42 (avx2 fma3) avx512_skx */", "sse42 (avx2 fma3) avx512_skx\n * avx512_spr */", 1))
    venv = _venv(tmp_path / "venv")  # its own venv: route_a's pyext stays as it is
    _run([venv, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          toolkit_wheel])
    env = _activated(venv, env)
    rc, out = _pip_install_output(venv, src, {**env, "CC": str(old_cc)},
                                  "-Ddisable-optimization=true", verbose=True)
    assert rc == 0, out
    assert "Traceback" not in out
    skipped = [ln for ln in out.splitlines() if "skipped AVX512_SPR" in ln]
    assert len(skipped) == 1, out
    assert f"{source}:2: skipped AVX512_SPR: AVX512_SPR:" in skipped[0]
    assert "-mavx512fp16" in skipped[0]
    assert f"{source}:1: skipped AVX512_SKX: disable-optimization is on" in out
    r = _py({"python": venv, "tmp": tmp_path}, REPORT)
    assert r.returncode == 0, r.stderr
    base = sorted({"sum": "baseline", "scale": "baseline"}.items())
    assert r.stdout.split("\n")[0] == f"{base} {base} 6.5 [3.0, 6.0]"
