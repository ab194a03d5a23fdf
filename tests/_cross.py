"""The cross targets of the qemu-user tests (test_cross_matrix.py,
test_cross_downstream.py): each architecture's sysroot, cross file, compiler
and qemu, and the environment its guests run in."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

# The environment of a program the tests start under qemu or wine, or build
# themselves: never the sanitizer job's x86 libasan (tests/conftest.py), nor
# this process's DISPATCH_* settings.
GUEST_ENV = {k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.startswith("DISPATCH_")}


@dataclass(frozen=True)
class Target:
    triple: str          # the sysroot /usr/<triple> and the cross file <triple>.ini
    cc: str              # the compiler of the cross file
    qemu: str
    high_baseline: str   # -Dcpu-baseline above low_cpu
    missing: str         # what low_cpu lacks of it
    low_cpu: str
    high_cpu: str        # a CPU that has it

    def missing_tools(self) -> list[str]:
        return [t for t in (self.cc, self.qemu) if shutil.which(t) is None] + \
            ([] if Path("/usr", self.triple).is_dir() else [f"/usr/{self.triple}"])


TARGETS = {
    "aarch64": Target("aarch64-linux-gnu", "aarch64-linux-gnu-gcc", "qemu-aarch64", "asimdhp",
                      "ASIMDHP", "cortex-a53", "cortex-a76"),
    "ppc64le": Target("powerpc64le-linux-gnu", "powerpc64le-linux-gnu-gcc", "qemu-ppc64le",
                      "vsx3", "VSX3", "power8", "power9"),
    "s390x": Target("s390x-linux-gnu", "s390x-linux-gnu-gcc", "qemu-s390x", "vxe", "VXE",
                    "qemu,vxeh=off", "qemu"),
    "riscv64": Target("riscv64-linux-gnu", "clang-19", "qemu-riscv64", "rvv", "RVV",
                      "rv64", "rv64,v=true,vlen=128,vext_spec=v1.0"),
}


# Architectures whose CPU runtime is checked through tests/cross/cpu_report.c
# and the program guard only, not a whole cross build of this repository.
REPORT_TARGETS = {
    "ppc64": Target("powerpc64-linux-gnu", "powerpc64-linux-gnu-gcc", "qemu-ppc64", "vsx3",
                    "VSX3", "power8", "power9"),
}


def require(arch: str) -> Target:
    """The target of arch; skips the test, naming what is missing, without its tools."""
    target = TARGETS.get(arch) or REPORT_TARGETS[arch]
    missing = target.missing_tools()
    if missing:
        pytest.skip(f"{arch}: needs {', '.join(missing)} (Debian: gcc-{target.triple} "
                    f"and libc6-dev-*-cross, clang-19 for riscv64, qemu-user)")
    return target
