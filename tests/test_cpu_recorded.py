"""The CPU detection's mapping on recorded answers (tools/dispatchgen/tests/
test_cpu_recorded.c): x86 CPUID registers of a Haswell, a Skylake-X, a Zen 4, a
Sapphire Rapids and three Intel Macs (with and without AVX-512, XCR0 lazily
without the AVX-512 state) through groups and the ENABLE/DISABLE variables; and
the hw.optional sysctl answers of Apple M1/M2/M3. CI has none of those CPUs:
this is how the group rule and the macOS branch are tested here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cpu_program import CC, compile_program, write_headers  # noqa: E402
from _cross import GUEST_ENV  # noqa: E402

TEST = ROOT / "tools" / "dispatchgen" / "tests" / "test_cpu_recorded.c"
AARCH64_CC = shutil.which("aarch64-linux-gnu-gcc")
QEMU_AARCH64 = shutil.which("qemu-aarch64")

# The baseline and dispatch list of each build (the configuration macros the runtime reads).
BUILDS = {
    "x86_64": ("SSE SSE2 SSE3", "SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 AVX512F "
               "AVX512CD AVX512_SKX X86_V2 X86_V3 X86_V4"),
    "aarch64": ("NEON NEON_FP16 NEON_VFPV4 ASIMD", "ASIMDHP ASIMDDP ASIMDFHM I8MM BF16"),
}


def _build(work: Path, cc: str, arch: str, extra=()) -> Path:
    root = write_headers(work / arch, *BUILDS[arch])
    return compile_program(cc, root, TEST, root / "test_cpu_recorded", *extra, "-O2",
                           timeout=180)


@pytest.mark.skipif(CC is None or os.uname().machine != "x86_64",
                    reason="needs a C compiler on an x86-64 host (the x86 feature table)")
def test_recorded_cpus_and_macs_on_x86_64(tmp_path):
    exe = _build(tmp_path, CC, "x86_64")
    proc = subprocess.run([str(exe)], check=False, env=GUEST_ENV, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.skipif(AARCH64_CC is None or QEMU_AARCH64 is None,
                    reason="aarch64-linux-gnu-gcc or qemu-aarch64 not found")
def test_recorded_macs_through_the_aarch64_runtime(tmp_path):
    """Apple M1/M2 answers through implications and env variables over the
    aarch64 table: an aarch64 build, run under qemu."""
    exe = _build(tmp_path, AARCH64_CC, "aarch64", ["-static"])
    proc = subprocess.run([QEMU_AARCH64, str(exe)], check=False, env=GUEST_ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
