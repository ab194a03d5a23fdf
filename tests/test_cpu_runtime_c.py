"""The C-level test of sources/cpu/ (tools/dispatchgen/tests/test_cpu_runtime.c: table
consistency, the /proc readers, env handling through the test hook, the trace
registry, racing first detection) built by the C compiler and run natively and
on emulated CPUs, so a plain `pytest` covers what `meson test` does.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools" / "dispatchgen") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools" / "dispatchgen"))

from dispatchkit import ctable  # noqa: E402

CPU = ROOT / "tools" / "dispatchgen" / "dispatchkit" / "cpu"
TEST = ROOT / "tools" / "dispatchgen" / "tests" / "test_cpu_runtime.c"
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
QEMU = shutil.which("qemu-x86_64")
SOURCES = ["cpu_features.c", "cpu_detect.c", "cpu_dispatch_trace.c"]

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler found")


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("cpu-runtime-c")
    (work / "dispatch").mkdir()
    # The feature ids and table rows, as configure writes them.
    (work / "dispatch" / ctable.HEADER_NAME).write_text(ctable.render())
    # The configuration macros of a `min` x86-64 build; the test reads only these.
    (work / "dispatch" / "_cpu_dispatch.h").write_text(
        '#define DISPATCH_WITH_CPU_BASELINE "SSE SSE2 SSE3"\n'
        '#define DISPATCH_WITH_CPU_DISPATCH "SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 '
        'AVX512F AVX512CD AVX512_SKX"\n'
        "#define DISPATCH_WITH_CPU_BASELINE_CALL(MACRO, ...)\n"
        "#define DISPATCH_WITH_CPU_DISPATCH_CALL(MACRO, ...)\n")
    exe = work / "test_cpu_runtime"
    cmd = [CC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread",
           f"-I{work}", f"-I{ROOT / 'tools' / 'dispatchgen' / 'dispatchkit' / 'include'}", f"-I{CPU}",
           *[str(CPU / s) for s in SOURCES], str(TEST), "-o", str(exe)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return exe


def _clean_env() -> dict:
    # no LD_PRELOAD: the sanitizer job's libasan would kill a qemu guest (tests/conftest.py)
    return {k: v for k, v in os.environ.items()
            if not k.startswith("DISPATCH_") and k != "LD_PRELOAD"}


def test_runtime_c_checks_pass_natively(program):
    proc = subprocess.run([str(program)], check=False, env=_clean_env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.skipif(QEMU is None or platform.machine() != "x86_64",
                    reason="qemu-x86_64 not found or not an x86_64 host")
@pytest.mark.parametrize("cpu", ["Nehalem", "Haswell", "max"])
def test_runtime_c_checks_pass_on_emulated(program, cpu):
    proc = subprocess.run([QEMU, "-cpu", cpu, str(program)], check=False, env=_clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
