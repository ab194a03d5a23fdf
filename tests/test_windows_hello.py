"""The variant a Windows program built with the toolkit chooses, and the env
overrides (issue 47, item 1): tests/examples/hello configured with meson's
cross files for mingw-w64 (tests/cross/x86_64-w64-mingw32.ini: gcc;
x86_64-w64-mingw32-clang.ini: clang-19) with the toolkit vendored, as a user
would, and run under wine. The same example built natively for Linux is the
reference: under each HELLO_DISABLE/ENABLE_CPU_FEATURES setting the Windows
program prints what the Linux one prints and exits with its status, and with
no setting it picks the best variant this CPU runs (/proc/cpuinfo).

Skips, naming what is missing, without mingw-w64, clang-19 or wine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vendored import vendored_copy  # noqa: E402
from test_windows_mingw import _cpu_flags, _run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "hello"
CROSS = {"gcc": ("x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32.ini"),
         "clang": ("clang-19", "x86_64-w64-mingw32-clang.ini")}

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

# (DISABLE, ENABLE): unset, a feature off, the baseline only, one feature kept,
# a feature this CPU may lack, both set (refused).
SETTINGS = [(None, None), ("AVX512_SKX", None), (None, "baseline"), (None, "SSE42"),
            (None, "AVX2 FMA3"), (None, "AVX512FP16"), ("AVX2", "AVX2")]


def _meson_build(tmp: Path, build_tool, cross: list[str]) -> Path:
    src = vendored_copy(EXAMPLE, tmp / "src")
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    env.pop("LD_PRELOAD", None)
    setup = subprocess.run([build_tool("meson"), "setup", str(tmp / "build"), str(src), *cross],
                           capture_output=True, text=True, env=env)
    assert setup.returncode == 0, setup.stdout[-4000:] + setup.stderr[-4000:]
    ninja = subprocess.run([build_tool("ninja"), "-C", str(tmp / "build")],
                           capture_output=True, text=True, env=env)
    assert ninja.returncode == 0, ninja.stdout[-4000:]
    return tmp / "build"


def _env(base: dict, disable, enable) -> dict:
    env = {k: v for k, v in base.items() if not k.startswith("HELLO_")}
    if disable is not None:
        env["HELLO_DISABLE_CPU_FEATURES"] = disable
    if enable is not None:
        env["HELLO_ENABLE_CPU_FEATURES"] = enable
    return env


@pytest.fixture(scope="module")
def linux_answers(tmp_path_factory, build_tool):
    """What the native Linux hello prints under each setting."""
    if os.uname().machine != "x86_64":
        pytest.skip("the reference is a native x86-64 build")
    exe = _meson_build(tmp_path_factory.mktemp("hello-linux"), build_tool, []) / "hello"
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return {s: _run([str(exe)], env=_env(base, *s)) for s in SETTINGS}


@pytest.mark.parametrize("compiler", sorted(CROSS))
def test_windows_hello_chooses_and_obeys_the_env_as_on_linux(tmp_path, build_tool, wine_env,
                                                             linux_answers, compiler):
    cc, ini = CROSS[compiler]
    if shutil.which(cc) is None or shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.skip(f"needs {cc} and mingw-w64 (Debian: gcc-mingw-w64-x86-64)")
    build = _meson_build(tmp_path, build_tool,
                         ["--cross-file", str(REPO / "tests" / "cross" / ini)])
    exe = build / "hello.exe"
    assert exe.read_bytes()[:2] == b"MZ"
    flags = _cpu_flags()
    best = ("AVX512_SKX" if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags
            else "FMA3__AVX2" if {"avx2", "fma"} <= flags else "SSE42" if "sse4_2" in flags
            else "baseline")
    for setting in SETTINGS:
        r = _run(["wine", str(exe)], env=_env(wine_env, *setting))
        linux = linux_answers[setting]
        if setting == (None, None):
            assert r.stdout.split() == [best, best], r.stdout + r.stderr
        assert (r.returncode, r.stdout) == (linux.returncode, linux.stdout), (setting, r.stderr)
        own = [line for line in r.stderr.splitlines() if not line.startswith("wine:")]
        assert own == linux.stderr.splitlines(), setting
