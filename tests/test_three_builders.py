"""One example, three builders (issue 36): tests/examples/pyext builds from the
same sources with Meson (meson-python), setuptools (dispatchkit.setuptools_ext)
and CMake (scikit-build-core and dispatchgen's CMake package), each by `pip
install` with build isolation from a wheelhouse holding only the toolkit's
wheel and that builder's own packages (`--no-index`), each given the CPU
baseline on pip's command line its own way. The three report the same
baseline, dispatch set and choices, natively and under qemu Nehalem and
Haswell, obey the same env variable, export only the module's init, and
refuse a CPU below the baseline with the same ImportError. A plain CMake
program (tests/examples/hello) builds with the CMake package too, its CPU
options from the environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _venvs import fresh_venv, run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests" / "examples"
QEMU = shutil.which("qemu-x86_64")

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64",
                                reason="the example's targets are x86's")

# builder -> (the pyproject.toml it builds with, pip's options asking for an SSE4.2 baseline)
BUILDERS = {
    "meson": ("pyproject.toml", ["--config-settings=setup-args=-Dcpu-baseline=sse42"]),
    "setuptools": ("builders/setuptools.toml",
                   ["--config-settings=--build-option=build_ext --cpu-baseline=sse42"]),
    "scikit-build": ("builders/scikit-build.toml",
                     ["--config-settings=cmake.define.DISPATCHGEN_CPU_BASELINE=sse42"]),
}
SSE42_BASELINE = ["SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42"]
REPORT = ("import pyext; print(sorted(pyext.__cpu_targets__.items()), pyext.__cpu_baseline__, "
          "len(pyext.__cpu_dispatch__), pyext.sum([1, 2, 3.5]), pyext.scale([1, 2], 3))")


def _env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISPATCH", "PYEXT_", "PKG_CONFIG_PATH", "PYTHONPATH", "PIP_",
                                "LD_PRELOAD", "CMAKE_", "SKBUILD_"))}
    env["DISPATCHGEN_CACHE_DIR"] = str(tmp / "probe-cache")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory, builders_wheelhouse):
    """builder -> (venv python, its folder), each built once, when first asked."""
    done = {}

    def get(builder: str):
        if builder not in done:
            tmp = tmp_path_factory.mktemp(f"pyext-{builder}")
            python = fresh_venv(tmp / "venv", system_site=False)
            src = tmp / "project"
            shutil.copytree(EXAMPLES / "pyext", src, ignore=shutil.ignore_patterns("build*"))
            pyproject, options = BUILDERS[builder]
            shutil.copy2(EXAMPLES / "pyext" / pyproject, src / "pyproject.toml")
            run([python, "-m", "pip", "install", "--no-index", "--find-links",
                 builders_wheelhouse, *options, src], env=_env(tmp), cwd=tmp)
            done[builder] = python, tmp
        return done[builder]
    return get


def _report(python: Path, tmp: Path, qemu_cpu: str = None, **env):
    cmd = [python, "-c", REPORT]
    if qemu_cpu:
        cmd = [QEMU, "-cpu", qemu_cpu, *cmd]
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=tmp,
                          env=_env(tmp, **env))


def _expected(cpu: set) -> str:
    if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= cpu:
        sum_target, scale_target = "AVX512_SKX", "AVX512_SKX"
    elif {"avx2", "fma", "f16c"} <= cpu:
        sum_target, scale_target = "FMA3__AVX2", "AVX2"
    else:  # SSE42 is in the baseline: the @targets' sse42 is not built
        sum_target = scale_target = "baseline"
    targets = sorted({"sum": sum_target, "scale": scale_target}.items())
    return f"{targets} {SSE42_BASELINE}"


NEHALEM = {"sse4_1", "sse4_2", "popcnt"}
HASWELL = NEHALEM | {"avx", "f16c", "fma", "avx2"}


@pytest.mark.parametrize("builder", list(BUILDERS))
def test_each_builder_builds_the_example_with_the_baseline_asked_for(builder, built):
    python, tmp = built(builder)
    r = _report(python, tmp)
    assert r.returncode == 0, r.stderr
    cpu = set(Path("/proc/cpuinfo").read_text().split())
    assert r.stdout.startswith(_expected(cpu)), r.stdout
    assert r.stdout.strip().endswith("6.5 [3.0, 6.0]"), r.stdout
    so = run([python, "-c", "import pyext._pyext as m; print(m.__file__)"], cwd=tmp).stdout.strip()
    exported = run(["nm", "-D", "--defined-only", so]).stdout.split()
    assert exported[-1] == "PyInit__pyext" and len(exported) == 3, exported  # addr, T, name


def test_the_three_builders_report_the_same(built):
    outputs = {builder: _report(*built(builder)).stdout for builder in BUILDERS}
    assert len(set(outputs.values())) == 1, outputs
    forced = {builder: _report(*built(builder), PYEXT_ENABLE_CPU_FEATURES="baseline").stdout
              for builder in BUILDERS}
    assert len(set(forced.values())) == 1, forced
    assert forced["meson"].startswith("[('scale', 'baseline'), ('sum', 'baseline')]"), forced


@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
@pytest.mark.parametrize("cpu,flags", [("Nehalem", NEHALEM), ("Haswell", HASWELL)])
def test_the_three_builders_choose_alike_per_emulated_cpu(cpu, flags, built):
    for builder in BUILDERS:
        r = _report(*built(builder), qemu_cpu=cpu)
        assert r.returncode == 0, (builder, r.stderr)
        assert r.stdout.startswith(_expected(flags)), (builder, r.stdout)


@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
def test_the_three_builders_refuse_a_cpu_below_the_baseline_alike(built):
    """Penryn has SSE4.1 but neither POPCNT nor SSE4.2."""
    errors = {}
    for builder in BUILDERS:
        python, tmp = built(builder)
        r = subprocess.run([QEMU, "-cpu", "Penryn", str(python), "-c", "import pyext"],
                           capture_output=True, text=True, cwd=tmp, env=_env(tmp))
        assert r.returncode == 1, (builder, r.returncode, r.stderr)  # not -4 (SIGILL)
        errors[builder] = r.stderr.strip().splitlines()[-1]
    assert len(set(errors.values())) == 1, errors
    assert errors["meson"].startswith(
        "ImportError: pyext cannot be imported: this CPU lacks POPCNT SSE42,"), errors


def _code_lines(path: Path) -> list:
    """The lines a client writes, comments and blank lines aside."""
    return [ln for ln in path.read_text().splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def test_each_route_needs_at_most_15_lines_of_client_build_code():
    """setup.py whole; CMakeLists.txt whole (project() and Python included)."""
    for name in ("setup.py", "CMakeLists.txt"):
        lines = _code_lines(EXAMPLES / "pyext" / name)
        assert len(lines) <= 15, "\n".join(lines)


@pytest.fixture(scope="module")
def tools_venv(tmp_path_factory, builders_wheelhouse) -> Path:
    """A venv with the toolkit's wheel, setuptools and CMake (from the
    wheelhouse), for the builds run by hand; its bin folder."""
    tmp = tmp_path_factory.mktemp("tools-venv")
    python = fresh_venv(tmp / "venv", system_site=False)
    run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", builders_wheelhouse,
         "dispatchgen", "setuptools", "cmake"])
    return python.parent


def test_setuptools_errors_name_the_file_and_line(tmp_path, tools_venv):
    """A bad @targets statement stops `setup.py build_ext` with the planner's line."""
    python = tools_venv / "python"
    src = tmp_path / "project"
    shutil.copytree(EXAMPLES / "pyext", src, ignore=shutil.ignore_patterns("build*"))
    text = (src / "src" / "sum.dispatch.c").read_text()
    (src / "src" / "sum.dispatch.c").write_text(text.replace("sse42", "avx9000", 1))
    r = subprocess.run([python, "setup.py", "build_ext"], capture_output=True, text=True,
                       cwd=src, env=_env(tmp_path))
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1].startswith(
        "error: dispatchgen: src/sum.dispatch.c:1: unknown target 'avx9000'"), r.stderr


def _varext_expected(cpu: set) -> str:
    best = "AVX512_SKX" if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= cpu \
        else "AVX2" if {"avx2", "fma", "f16c"} <= cpu else "SSE41" if "sse4_1" in cpu \
        else "baseline"
    return best, "avx2-asm" if best == "AVX2" else None


VAREXT_REPORT = ("import varext, varext._varext as m; print(sorted(set(varext.__cpu_targets__"
                 ".values())), varext.impl(), varext.xor(bytes(range(70)), bytes(70)) == "
                 "bytes(range(70)), m.__file__)")


@pytest.mark.parametrize("builder", ["setuptools", "cmake"])
def test_a_variants_file_with_assembly_builds_with_setuptools_and_cmake(builder, tmp_path,
                                                                          tools_venv):
    """tests/examples/varext (per-ISA files in a variants file, one of them .S,
    chosen by the asm option): `setup.py build_ext` and CMake build it as
    Meson does; the .S file's target name and globals stay inside the module."""
    src = tmp_path / "varext"
    shutil.copytree(EXAMPLES / "varext", src, ignore=shutil.ignore_patterns("build*"))
    env = _env(tmp_path)
    if builder == "setuptools":
        run([tools_venv / "python", "setup.py", "-q", "build_ext", "--inplace"], cwd=src, env=env)
        where = src / "src"
    else:
        cmakedir = run([tools_venv / "dispatch-config", "--cmakedir"]).stdout.strip()
        run([tools_venv / "cmake", "-S", src, "-B", tmp_path / "build",
             f"-Ddispatchgen_DIR={cmakedir}", f"-DPython_EXECUTABLE={tools_venv / 'python'}"],
            env=env)
        run([tools_venv / "cmake", "--build", tmp_path / "build"], env=env)
        where = tmp_path / "out"
        shutil.copytree(src / "src" / "varext", where / "varext")
        for so in (tmp_path / "build").glob("_varext*.so"):
            shutil.copy2(so, where / "varext")
    r = run([tools_venv / "python", "-c", VAREXT_REPORT], cwd=where, env=env)
    targets, impl, xor_ok, so = r.stdout.split()  # both entries chose one target
    best, asm = _varext_expected(set(Path("/proc/cpuinfo").read_text().split()))
    assert (targets, xor_ok) == (f"['{best}']", "True"), r.stdout
    if asm:
        assert impl == asm, r.stdout  # the .S variant, not xor_avx2.c
        assert "AVX2" in run(["strings", so]).stdout.split()  # .asciz DISPATCH_CPU_TARGET_NAME
    exported = run(["nm", "-D", "--defined-only", so]).stdout.split()
    assert exported[-1] == "PyInit__varext" and len(exported) == 3, exported


# ---- a plain CMake program ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def hello_cmake(tmp_path_factory, tools_venv) -> Path:
    """tests/examples/hello built by plain CMake, the toolkit found through
    `dispatch-config --cmakedir` of its installed wheel, the baseline from the
    environment."""
    tmp = tmp_path_factory.mktemp("hello-cmake")
    cmakedir = run([tools_venv / "dispatch-config", "--cmakedir"]).stdout.strip()
    env = _env(tmp, DISPATCHGEN_CPU_BASELINE="sse42")
    r = run([tools_venv / "cmake", "-S", EXAMPLES / "hello", "-B", tmp / "build",
             f"-Ddispatchgen_DIR={cmakedir}", f"-DDISPATCHGEN_PYTHON={tools_venv / 'python'}"],
            env=env)
    assert "baseline:  SSE SSE2 SSE3 SSSE3 SSE41 POPCNT SSE42 " in r.stdout, r.stdout
    run([tools_venv / "cmake", "--build", tmp / "build"], env=env)
    return tmp / "build" / "hello"


def test_a_plain_cmake_program_chooses_per_cpu(hello_cmake):
    cpu = set(Path("/proc/cpuinfo").read_text().split())
    best = "AVX512_SKX" if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= cpu \
        else "FMA3__AVX2" if {"avx2", "fma"} <= cpu else "baseline"
    assert run([hello_cmake]).stdout.strip() == f"{best} {best}"
    if QEMU:
        r = run([QEMU, "-cpu", "Nehalem", hello_cmake], env=_env(hello_cmake.parent))
        assert r.stdout.strip() == "baseline baseline"  # SSE42 is in the baseline


@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
def test_a_plain_cmake_program_is_guarded_below_its_baseline(hello_cmake):
    """Penryn has SSE4.1 but neither POPCNT nor SSE4.2: the program guard
    (Note [Program guard]) stops it before main, as the Meson build's."""
    r = subprocess.run([QEMU, "-cpu", "Penryn", str(hello_cmake)], capture_output=True,
                       text=True, env=_env(hello_cmake.parent))
    assert (r.returncode, r.stdout) == (1, ""), (r.returncode, r.stdout, r.stderr)  # not -4
    assert r.stderr.startswith("hello: this CPU lacks POPCNT SSE42, which this build of hello "
                               "requires"), r.stderr


SHARED_CMAKE = """cmake_minimum_required(VERSION 3.17)
project(down LANGUAGES C)
find_package(dispatchgen 0.1 REQUIRED)
add_library(down SHARED)
dispatchgen_add_sources(down NAME down SOURCES lib.c)
add_executable(use use.c)
target_link_libraries(use PRIVATE down)
"""


@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
def test_a_cmake_shared_library_gets_its_guard_as_a_constructor(tmp_path, tools_venv):
    """A NAME'd SHARED library links (a shared object has no .preinit_array:
    the CMake package asks for the constructor) and refuses a CPU below its
    baseline when loaded."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(SHARED_CMAKE)
    (src / "lib.c").write_text('__attribute__((visibility("default"))) int down_answer(void);\n'
                               "int down_answer(void) { return 42; }\n")
    (src / "use.c").write_text('#include <stdio.h>\nint down_answer(void);\n'
                               'int main(void) { printf("%d\\n", down_answer()); return 0; }\n')
    cmakedir = run([tools_venv / "dispatch-config", "--cmakedir"]).stdout.strip()
    env = _env(tmp_path, DISPATCHGEN_CPU_BASELINE="sse42")
    run([tools_venv / "cmake", "-S", src, "-B", tmp_path / "build",
         f"-Ddispatchgen_DIR={cmakedir}", f"-DDISPATCHGEN_PYTHON={tools_venv / 'python'}"], env=env)
    run([tools_venv / "cmake", "--build", tmp_path / "build"], env=env)
    use = tmp_path / "build" / "use"
    assert run([QEMU, "-cpu", "Nehalem", use], env=_env(tmp_path)).stdout == "42\n"
    r = subprocess.run([QEMU, "-cpu", "Penryn", str(use)], capture_output=True, text=True,
                       env=_env(tmp_path))
    assert (r.returncode, r.stdout) == (1, ""), (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("down: this CPU lacks POPCNT SSE42,"), r.stderr


def test_a_vendored_copy_serves_cmake_and_its_errors_name_the_file_and_line(tmp_path, tools_venv):
    """`dispatch-config --vendor` copies the CMake package too; find_package
    finds it by PATHS, and a bad @targets statement stops the configure with
    the planner's line."""
    src = tmp_path / "hello"
    shutil.copytree(EXAMPLES / "hello", src)
    run([tools_venv / "dispatch-config", "--vendor", src / "tools" / "dispatchgen"])
    lists = (src / "CMakeLists.txt").read_text()
    (src / "CMakeLists.txt").write_text(lists.replace(
        "find_package(dispatchgen 0.1 REQUIRED)",
        'find_package(dispatchgen 0.1 REQUIRED NO_DEFAULT_PATH\n'
        '  PATHS "${CMAKE_CURRENT_SOURCE_DIR}/tools/dispatchgen/dispatchkit/cmake")'))
    text = (src / "hello.dispatch.c").read_text()
    (src / "hello.dispatch.c").write_text(text.replace("avx512_skx", "avx9000", 1))
    r = subprocess.run([tools_venv / "cmake", "-S", src, "-B", tmp_path / "build"],
                       capture_output=True, text=True, env=_env(tmp_path))
    assert r.returncode != 0
    assert f"{src / 'hello.dispatch.c'}:1: unknown target 'avx9000'" in r.stderr, r.stderr
    assert "tools/dispatchgen/dispatchkit/cmake/dispatchgenConfig.cmake" in r.stderr, r.stderr


def test_an_activated_venv_serves_find_package_without_a_hint(tmp_path, tools_venv):
    """The wheel installs forwarding files into <venv>/share/cmake/dispatchgen,
    where plain CMake looks by itself for a prefix whose bin/ is on PATH: no
    dispatchgen_DIR, no CMAKE_PREFIX_PATH; the version request is checked."""
    env = _env(tmp_path, PATH=f"{tools_venv}{os.pathsep}{os.environ['PATH']}")
    assert (tools_venv.parent / "share" / "cmake" / "dispatchgen" / "dispatchgenConfig.cmake").is_file()
    r = run([tools_venv / "cmake", "-S", EXAMPLES / "hello", "-B", tmp_path / "build"], env=env)
    assert "dispatchgen_add_sources(hello)" in r.stdout or "baseline:" in r.stdout, r.stdout
    run([tools_venv / "cmake", "--build", tmp_path / "build"], env=env)
    chosen, info = run([tmp_path / "build" / "hello"]).stdout.split()  # CALL's pick, INFO's name
    assert chosen == info and chosen in {"AVX512_SKX", "FMA3__AVX2", "SSE42", "baseline"}, chosen
    # a version the toolkit is not: refused by its version file, through the forwarder
    src = tmp_path / "hello-v9"
    shutil.copytree(EXAMPLES / "hello", src)
    lists = (src / "CMakeLists.txt").read_text()
    (src / "CMakeLists.txt").write_text(lists.replace("find_package(dispatchgen 0.1 REQUIRED)",
                                                      "find_package(dispatchgen 9 REQUIRED)"))
    r = subprocess.run([tools_venv / "cmake", "-S", src, "-B", tmp_path / "build-v9"],
                       capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "0.1.0" in r.stderr, r.stderr
