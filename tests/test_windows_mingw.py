"""The toolkit's C CPU runtime built for Windows x86-64 with mingw-w64 (gcc,
and clang --target=x86_64-w64-mingw32) and run under wine (issue 47, item 1):
tests/cross/cpu_report.c, the same program the qemu tests run, reports the
host's features and refuses a baseline above this CPU with its one line and
exit status 3 before the payload (compiled with the baseline flags) runs;
the runtime's own C test (tools/dispatchgen/tests/test_cpu_runtime.c) built
with the cross files by meson (tests/windows/cpu_runtime) passes `meson test`
under wine.
Skips, naming what is missing, without mingw-w64 or wine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DISPATCHGEN = REPO / "tools" / "dispatchgen" / "dispatchgen"
TOOLKIT_INCLUDE = REPO / "tools" / "dispatchgen" / "dispatchkit" / "include"

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

COMPILERS = {
    "gcc": ["x86_64-w64-mingw32-gcc"],
    "clang": ["clang-19", "--target=x86_64-w64-mingw32"],
}

# Baselines from low to high with the /proc/cpuinfo flag each one needs last.
_LADDER = [("avx2", "avx2"), ("avx512_skx", "avx512bw"), ("avx512_icl", "avx512_vbmi2"),
           ("avx512_spr", "avx512_fp16")]


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _baselines() -> tuple[str | None, str | None]:
    """(the highest ladder baseline this CPU has, the lowest it lacks)."""
    flags = _cpu_flags()
    have = None
    for name, flag in _LADDER:
        if flag not in flags:
            return have, name
        have = name
    return have, None


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """report(compiler, baseline) -> cpu_report.exe, built once per pair."""
    programs: dict[tuple[str, str], Path] = {}

    def build(compiler: str, baseline: str) -> Path:
        cc = COMPILERS[compiler]
        if shutil.which(cc[0]) is None or shutil.which("x86_64-w64-mingw32-gcc") is None:
            pytest.skip(f"needs {cc[0]} and mingw-w64 (Debian: gcc-mingw-w64-x86-64)")
        key = (compiler, baseline)
        if key in programs:
            return programs[key]
        out = tmp_path_factory.mktemp(f"win-{compiler}-{baseline}")
        r = _run(["python3", str(DISPATCHGEN), "configure", "--cc", " ".join(cc),
                  "--cpu-baseline", baseline, "--cpu-dispatch", "none",
                  "--outdir", str(out / "dispatch"), "--package", "dispatch", "--meson"])
        assert r.returncode == 0, r.stderr
        cfg = dict(line.split("\t", 1) for line in r.stdout.splitlines())
        runtime, defines = cfg["runtime"].split("\t")
        payload = out / "payload.o"
        r = _run([*cc, "-O2", *cfg["baseline_flags"].split(), "-c",
                  str(REPO / "tests" / "cross" / "payload.c"), "-o", str(payload)])
        assert r.returncode == 0, r.stderr
        exe = out / "cpu_report.exe"
        r = _run([*cc, "-std=c11", "-O2", "-I", str(out), "-I", str(TOOLKIT_INCLUDE),
                  *defines.split(), *runtime.split(),
                  str(REPO / "tests" / "cross" / "cpu_report.c"), str(payload), "-o", str(exe)])
        assert r.returncode == 0, r.stderr
        assert exe.read_bytes()[:2] == b"MZ"  # a PE image, not a host program
        programs[key] = exe
        return exe

    return build


@pytest.mark.parametrize("compiler", sorted(COMPILERS))
def test_windows_program_reports_the_hosts_features(report, wine_env, compiler):
    have, _ = _baselines()
    if have is None:
        pytest.skip("this CPU lacks AVX2")
    r = _run(["wine", str(report(compiler, have))], env=wine_env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["arch"] == "x86_64"
    flags = _cpu_flags()
    for feature, flag in [("AVX2", "avx2"), ("FMA3", "fma"), ("AVX512F", "avx512f"),
                          ("AVX512BW", "avx512bw"), ("AVX512FP16", "avx512_fp16")]:
        assert lines[feature] == ("1" if flag in flags else "0"), feature
    assert lines["payload"] == "523776.0"


@pytest.mark.parametrize("compiler", sorted(COMPILERS))
def test_windows_baseline_above_the_cpu_fails_with_one_line(report, wine_env, compiler):
    _, above = _baselines()
    if above is None:
        pytest.skip("this CPU has every baseline of the ladder (avx512_spr)")
    r = _run(["wine", str(report(compiler, above))], env=wine_env)
    assert r.returncode == 3, r.stdout + r.stderr  # not an illegal instruction
    errors = [line for line in r.stdout.splitlines() if line.startswith("baseline error")]
    assert len(errors) == 1 and "this CPU lacks" in errors[0]
    assert "payload" not in r.stdout


@pytest.mark.parametrize("compiler,ini", [("gcc", "x86_64-w64-mingw32.ini"),
                                          ("clang", "x86_64-w64-mingw32-clang.ini")])
def test_windows_runtime_c_test_passes_under_meson_test(tmp_path, build_tool, wine_env,
                                                        compiler, ini):
    """tools/dispatchgen/tests/test_cpu_runtime.c (table, env parsing through
    _putenv_s, threads racing into the first detection, the trace) built by
    tests/windows/cpu_runtime/meson.build with the cross file and run by
    `meson test` under its exe_wrapper, wine."""
    cc = COMPILERS[compiler]
    if shutil.which(cc[0]) is None or shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.skip(f"needs {cc[0]} and mingw-w64 (Debian: gcc-mingw-w64-x86-64)")
    env = {**wine_env, "DISPATCHGEN_CACHE_DIR": str(tmp_path / "cache")}
    setup = _run([build_tool("meson"), "setup", str(tmp_path / "build"),
                  str(REPO / "tests" / "windows" / "cpu_runtime"),
                  "--cross-file", str(REPO / "tests" / "cross" / ini)], env=env)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    test = _run([build_tool("meson"), "test", "-C", str(tmp_path / "build"), "-v",
                 "--print-errorlogs"], env=env)
    assert test.returncode == 0, test.stdout[-4000:] + test.stderr[-2000:]
    assert "test_cpu_runtime.exe" in test.stdout  # the Windows program, run by wine
    assert "1/1 cpu_runtime:cpu_runtime" in test.stdout and " OK " in test.stdout
