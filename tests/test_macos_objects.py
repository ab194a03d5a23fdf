"""The CPU runtime and the program guard compiled for macOS (arm64 and x86_64)
with clang-19, without an SDK: the plan from `dispatchgen configure --cc
"clang-19 --target=...-apple-macos11"`, the runtime sources with clang's own
headers plus the few C library declarations in tests/macos_headers, objects
only (nothing is linked or run: there is no Mac here). Checked in the objects:
the detection calls sysctlbyname, and the guard is a Mach-O initializer
(__mod_init_func), Mach-O having no .preinit_array.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "dispatchgen"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from dispatchkit import paths  # noqa: E402

CLANG = shutil.which("clang-19")
OBJDUMP = shutil.which("llvm-objdump-19")
HEADERS = ROOT / "tests" / "macos_headers"
TARGETS = {"arm64-apple-macos11": "ARM64", "x86_64-apple-macos11": "X86_64"}

pytestmark = pytest.mark.skipif(CLANG is None or OBJDUMP is None,
                                reason="clang-19 or llvm-objdump-19 is not installed")


@pytest.fixture(scope="module", params=sorted(TARGETS))
def plan(request, tmp_path_factory):
    """(target, include dir holding dispatch/_cpu_dispatch.h as configure wrote it)."""
    target = request.param
    work = tmp_path_factory.mktemp(target)
    inc = work / "include" / "dispatch"
    proc = subprocess.run(
        [sys.executable, str(TOOLS / "dispatchgen"), "configure", "--cc",
         f"clang-19 --target={target}", "--cache-dir", str(work / "cache"),
         "--outdir", str(inc)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return target, work


def _compile(target: str, work: Path, source: str, *defines: str) -> Path:
    obj = work / f"{Path(source).stem}{'-'.join(('',) + defines).replace('=', '_')}.o"
    cmd = [CLANG, f"--target={target}", "-nostdlibinc", "-isystem", str(HEADERS),
           "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", *(f"-D{d}" for d in defines),
           f"-I{work / 'include'}", f"-I{paths.PKG / 'include'}", f"-I{paths.CPU}",
           "-c", str(paths.CPU / source), "-o", str(obj)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    return obj


def _objdump(*args: str) -> str:
    proc = subprocess.run([OBJDUMP, *args], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_runtime_compiles_and_detects_through_sysctl(plan):
    target, work = plan
    objs = [_compile(target, work, s) for s in paths.RUNTIME_SOURCES]
    detect = objs[paths.RUNTIME_SOURCES.index("cpu_detect.c")]
    assert detect.read_bytes()[:4] == bytes.fromhex("cffaedfe")  # MH_MAGIC_64
    undefined = _objdump("-t", str(detect))
    assert "_sysctlbyname" in undefined
    assert "getauxval" not in undefined and "open" not in undefined.split()
    if target.startswith("x86_64"):
        assert "cpuid" in _objdump("-d", str(detect))


@pytest.mark.parametrize("defines", [
    ("DISPATCH_PROGRAM_NAME_CHARS=104,101,108,108,111",),
    ("DISPATCH_PROGRAM_NAME_CHARS=104,101,108,108,111", "DISPATCH_PROGRAM_GUARD_CONSTRUCTOR"),
], ids=["program", "shared-library"])
def test_the_guard_is_a_mach_o_initializer(plan, defines):
    target, work = plan
    obj = _compile(target, work, paths.PROGRAM_GUARD, *defines)
    sections = _objdump("-h", str(obj))
    assert "__mod_init_func" in sections
    assert "preinit" not in sections
    relocs = _objdump("-r", str(obj))
    block = relocs[relocs.index("[__mod_init_func]"):]
    assert f"{TARGETS[target]}_RELOC_UNSIGNED" in block.splitlines()[2]
    assert "_dispatch__pg_constructor" in block.splitlines()[2]
