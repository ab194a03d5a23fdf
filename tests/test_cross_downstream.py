"""The toolkit, cross (issue 29, item 5): the downstream example
tests/examples/hello, a C program whose one dispatchable source names targets
of every architecture (x86's, asimdhp sve, vsx3 vsx4, vx vxe, rvv), is
configured with a Meson cross file (tests/cross/<triple>.ini) for aarch64,
ppc64le, s390x and riscv64 with the toolkit vendored, as a user would. The
generator validates the features against the cross compiler (targets of
other architectures are skipped with a note), and the program's chooser,
run under qemu-user, picks the variant each emulated CPU can run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vendored import vendored_copy  # noqa: E402
from _cross import GUEST_ENV, TARGETS, require  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "hello"

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

# (arch, qemu -cpu, the variant hello must choose there)
ROWS = [
    ("aarch64", "cortex-a53", "baseline"),
    ("aarch64", "cortex-a76", "ASIMDHP"),
    ("aarch64", "a64fx", "SVE"),
    ("ppc64le", "power8", "baseline"),
    ("ppc64le", "power9", "VSX3"),
    ("ppc64le", "power10", "VSX4"),
    ("s390x", "qemu,vx=off,vxeh=off", "baseline"),
    ("s390x", "qemu,vxeh=off", "VX"),
    ("s390x", "qemu", "VXE"),
    ("riscv64", "rv64", "baseline"),
    ("riscv64", "rv64,v=true,vlen=256,vext_spec=v1.0", "RVV"),
]
# What each cross build must compile besides the baseline (the rest of the
# @targets line belongs to other architectures).
BUILT = {"aarch64": {"ASIMDHP", "SVE"}, "ppc64le": {"VSX3", "VSX4"},
         "s390x": {"VX", "VXE"}, "riscv64": {"RVV"}}


@pytest.fixture(scope="module")
def hello(tmp_path_factory, build_tool):
    """build(arch) -> (the cross-built hello, meson's configure output)."""
    builds: dict[str, tuple[Path, str]] = {}

    def build(arch: str) -> tuple[Path, str]:
        target = require(arch)
        if arch not in builds:
            tmp = tmp_path_factory.mktemp(f"hello-{arch}")
            src = vendored_copy(EXAMPLE, tmp / "src")
            env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
            env.pop("LD_PRELOAD", None)
            setup = subprocess.run(
                [build_tool("meson"), "setup", str(tmp / "build"), str(src),
                 "--cross-file", str(REPO / "tests" / "cross" / f"{target.triple}.ini")],
                capture_output=True, text=True, env=env)
            assert setup.returncode == 0, setup.stdout[-4000:] + setup.stderr[-4000:]
            ninja = subprocess.run([build_tool("ninja"), "-C", str(tmp / "build")],
                                   capture_output=True, text=True, env=env)
            assert ninja.returncode == 0, ninja.stdout[-4000:]
            builds[arch] = (tmp / "build" / "hello", setup.stdout)
        return builds[arch]

    return build


@pytest.mark.parametrize("arch", list(BUILT))
def test_cross_configure_builds_that_architectures_targets_only(hello, arch):
    exe, log = hello(arch)
    nm = shutil.which(f"{TARGETS[arch].triple}-nm") or shutil.which("llvm-nm-19")
    if nm is None:
        pytest.skip(f"no nm for {arch}")
    symbols = set(subprocess.run([nm, str(exe)], capture_output=True, text=True,
                                 check=True).stdout.split())
    built = {s.removeprefix("whoami_") for s in symbols if s.startswith("whoami_")}
    assert built == BUILT[arch], (built, log[-3000:])
    assert "whoami" in symbols  # the baseline
    # x86's targets were validated against the cross compiler and skipped, saying why
    assert f"hello.dispatch.c:1: skipped 'avx512_skx': not a feature of {arch}" in log, log


@pytest.mark.parametrize("arch,cpu,chosen", ROWS, ids=[f"{a}-{c}" for a, c, _ in ROWS])
def test_the_chooser_picks_what_the_emulated_cpu_runs(hello, arch, cpu, chosen):
    exe, _ = hello(arch)
    target = TARGETS[arch]
    r = subprocess.run([target.qemu, "-cpu", cpu, "-L", f"/usr/{target.triple}", str(exe)],
                       capture_output=True, text=True, env=GUEST_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == [chosen, chosen], r.stdout
