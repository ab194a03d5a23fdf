"""The C runtime on a second architecture: cross-compiled for aarch64 with
Debian's gcc-aarch64-linux-gnu (tests/cross/aarch64-linux-gnu.ini,
-Dpython=false) and its C tests run under qemu-aarch64. On aarch64 the
kernels' baseline is ASIMD (sources/kernels/simd/arm_neon-inl.h): the
kernel test compares every chosen loop with the reference loops there, the
CPU test reads the hwcaps qemu reports, the float16 test checks the
portable conversions against aarch64's own _Float16."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from itertools import takewhile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cross import GUEST_ENV  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CROSS = REPO / "tests" / "cross" / "aarch64-linux-gnu.ini"

pytestmark = [pytest.mark.skipif(
    not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")
         and Path("/usr/aarch64-linux-gnu").is_dir()),
    reason="needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user"),
    pytest.mark.cross_build]


@pytest.fixture(scope="module")
def tree(cross_tree):
    """The session's one aarch64 build (conftest.py; test_cross_matrix.py runs
    its SVE rows on it)."""
    return cross_tree("aarch64")


def test_c_tests_pass_under_qemu_aarch64(tree, cross_meson_test):
    r = cross_meson_test("aarch64")  # the run test_cross_matrix.py reads too
    assert r.returncode == 0, r.stdout[-6000:]
    for name in ("cpu_runtime", "dispatcher", "kernels", "narrow_float", "casts"):
        assert re.search(rf"dispatch:{name}\s+OK", r.stdout), name
    assert "44 (loop, dtype) kernels and 11 sums checked" in r.stdout
    assert "32 integer products checked" in r.stdout


def test_the_aarch64_kernels_are_asimd_code(tree):
    objdump = shutil.which("aarch64-linux-gnu-objdump")
    if objdump is None:
        pytest.skip("no aarch64-linux-gnu-objdump")
    for source, pattern in (("arith", r"\bfadd\s+v\d+\.4s"), ("exp_log", r"\bfmla\s+v\d+\.2d"),
                            ("sum", r"\bfadd\s+v\d+\.2d")):
        lib = tree / "sources" / "kernels" / f"lib{source}_dispatch_c_baseline.a"
        asm = subprocess.run([objdump, "-d", str(lib)], capture_output=True, text=True,
                             check=True).stdout
        assert re.search(pattern, asm), f"{source}: no {pattern} in its ASIMD build"


@pytest.mark.parametrize("cpu,half_target", [("cortex-a53", "baseline"),
                                             ("cortex-a76", "ASIMDHP"), ("max", "ASIMDHP")])
def test_float16_variant_follows_the_emulated_cpu(tree, cpu, half_target):
    """half_arith has an ASIMDHP variant: a Cortex-A53 (ARMv8.0, no float16
    arithmetic) gets the baseline and passes; an A76 gets ASIMDHP and gives
    the same bits; a stray FP16 instruction on the A53 would be SIGILL."""
    r = subprocess.run(["qemu-aarch64", "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu",
                        str(tree / "sources" / "test_kernels")], capture_output=True, text=True,
                       env=GUEST_ENV)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    # the leading "source target" lines
    chosen = dict(takewhile(lambda f: len(f) == 2, map(str.split, r.stdout.splitlines())))
    assert chosen["half_arith"] == half_target and chosen["arith"] == "baseline"


def test_the_asimdhp_variant_uses_float16_arithmetic(tree):
    objdump = shutil.which("aarch64-linux-gnu-objdump")
    if objdump is None:
        pytest.skip("no aarch64-linux-gnu-objdump")
    lib = tree / "sources" / "kernels" / "libhalf_arith_dispatch_c_ASIMDHP.a"
    asm = subprocess.run([objdump, "-d", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    assert re.search(r"\bfadd\s+v\d+\.8h", asm) and re.search(r"\bfsqrt\s+v\d+\.8h", asm)
