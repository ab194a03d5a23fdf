"""The C-level test of sources/cpu/ (tools/dispatchgen/tests/test_cpu_runtime.c: table
consistency, the /proc readers, env handling through the test hook, the trace
registry, racing first detection) built by the C compiler and run natively and
on emulated CPUs, so a plain `pytest` covers what `meson test` does.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cpu_program import CC, compile_program, write_headers  # noqa: E402
from _cross import GUEST_ENV  # noqa: E402

TEST = ROOT / "tools" / "dispatchgen" / "tests" / "test_cpu_runtime.c"
QEMU = shutil.which("qemu-x86_64")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler found")


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("cpu-runtime-c")
    # The configuration of a `min` x86-64 build; the test reads only these macros.
    write_headers(work, "SSE SSE2 SSE3",
                  "SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 AVX512F AVX512CD AVX512_SKX")
    return compile_program(CC, work, TEST, work / "test_cpu_runtime", "-O2", timeout=120)


def test_runtime_c_checks_pass_natively(program):
    proc = subprocess.run([str(program)], check=False, env=GUEST_ENV, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.skipif(QEMU is None or platform.machine() != "x86_64",
                    reason="qemu-x86_64 not found or not an x86_64 host")
@pytest.mark.parametrize("cpu", ["Nehalem", "Haswell", "max"])
def test_runtime_c_checks_pass_on_emulated(program, cpu):
    proc = subprocess.run([QEMU, "-cpu", cpu, str(program)], check=False, env=GUEST_ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
