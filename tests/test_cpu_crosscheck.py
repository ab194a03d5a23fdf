"""The non-x86 detection paths of sources/cpu/ compile: each is behind an
architecture #if, so the x86 build never sees them. clang type-checks them
for every architecture the toolkit has a table for (-fsyntax-only, warnings
as errors).

No cross sysroot is installed, so the host's glibc headers stand in for the
target's (with an empty gnu/stubs-32.h, which only multilib hosts ship): the
check is for our code, not for the target's libc.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cpu_program import include_flags, sources, write_headers  # noqa: E402

CLANG = shutil.which("clang")
HOST_INCLUDE = Path("/usr/include/x86_64-linux-gnu")

TARGETS = ["aarch64-linux-gnu", "arm-linux-gnueabihf", "powerpc64le-linux-gnu",
           "s390x-linux-gnu", "i686-linux-gnu", "x86_64-linux-gnu"]

pytestmark = [
    pytest.mark.skipif(CLANG is None, reason="clang not found"),
    pytest.mark.skipif(not HOST_INCLUDE.is_dir(),
                       reason="needs an x86_64 Debian-style /usr/include"),
]


@pytest.fixture(scope="module")
def include_dir(tmp_path_factory) -> Path:
    inc = tmp_path_factory.mktemp("cpu-cross")
    (inc / "gnu").mkdir()
    (inc / "gnu" / "stubs-32.h").write_text("")
    return write_headers(inc)  # an empty configuration


@pytest.mark.parametrize("target", TARGETS)
def test_detection_compiles_for(target, include_dir):
    # The library's sources only: the C test includes pthread.h, whose x86
    # glibc version does not parse for other targets.
    cmd = [CLANG, f"--target={target}", "-std=c11", "-fsyntax-only", "-Wall", "-Wextra",
           "-Wpedantic", "-Werror", *include_flags(include_dir),
           "-isystem", str(include_dir), "-isystem", "/usr/include",
           "-isystem", str(HOST_INCLUDE), *sources()]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
