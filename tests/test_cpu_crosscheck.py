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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools" / "dispatchgen") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools" / "dispatchgen"))

from dispatchkit import ctable  # noqa: E402

CPU = ROOT / "tools" / "dispatchgen" / "dispatchkit" / "cpu"
CLANG = shutil.which("clang")
HOST_INCLUDE = Path("/usr/include/x86_64-linux-gnu")

TARGETS = ["aarch64-linux-gnu", "arm-linux-gnueabihf", "powerpc64le-linux-gnu",
           "s390x-linux-gnu", "i686-linux-gnu", "x86_64-linux-gnu"]
# The library only: the C test includes pthread.h, whose x86 glibc version
# does not parse for other targets.
SOURCES = ["cpu_detect.c", "cpu_features.c", "cpu_dispatch_trace.c"]

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
    (inc / "dispatch").mkdir()
    # The feature ids and table rows, as configure writes them.
    (inc / "dispatch" / ctable.HEADER_NAME).write_text(ctable.render())
    # The generated header's configuration macros, for an empty configuration.
    (inc / "dispatch" / "_cpu_dispatch.h").write_text(
        '#define DISPATCH_WITH_CPU_BASELINE ""\n'
        '#define DISPATCH_WITH_CPU_DISPATCH ""\n'
        "#define DISPATCH_WITH_CPU_BASELINE_CALL(MACRO, ...)\n"
        "#define DISPATCH_WITH_CPU_DISPATCH_CALL(MACRO, ...)\n")
    return inc


@pytest.mark.parametrize("target", TARGETS)
def test_detection_compiles_for(target, include_dir):
    cmd = [CLANG, f"--target={target}", "-std=c11", "-fsyntax-only", "-Wall", "-Wextra",
           "-Wpedantic", "-Werror", f"-I{include_dir}", f"-I{ROOT / 'tools' / 'dispatchgen' / 'dispatchkit' / 'include'}",
           "-isystem", str(include_dir), "-isystem", "/usr/include",
           "-isystem", str(HOST_INCLUDE), *[str(CPU / s) for s in SOURCES]]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
