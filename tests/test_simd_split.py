"""sources/kernels/simd.h is split by instruction set (issue 13 item 5): one
file per ISA under sources/kernels/simd/ with only that ISA's primitives,
one generic file with what is built from them, and every operation written
once for float32 and float64 (Note [One template per lane type] in simd.h).
These tests guard the split: each ISA file implements the same vocabulary
with the same bits, and nothing is written twice."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "sources" / "kernels"
SIMD = KERNELS / "simd"
PROBE = REPO / "tests" / "simd" / "ops_probe.c"
ISA_FILES = ["x86_512-inl.h", "x86_256-inl.h", "x86_128-inl.h", "arm_neon-inl.h", "scalar-inl.h"]


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    m = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(m.group(1).split()) if m else set()


def _ops(path: Path) -> set[str]:
    """The operations a per-lane section defines: DV_INLINE ... DV_(name)(."""
    return set(re.findall(r"^DV_INLINE [^\n]*?\bDV_\((\w+)\)\(", path.read_text(), re.M))


def _run_probe(tmp_path: Path, cc: str, flags: list[str], runner: list[str] | None = None) -> str:
    exe = tmp_path / f"probe-{cc}-{'_'.join(flags) or 'base'}".replace("/", "_")
    r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", *flags,
                        f"-I{KERNELS}", str(PROBE), "-o", str(exe), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([*(runner or []), str(exe)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


# (label, flags, the DV_NAME it must select, cpu flag needed to run it)
X86_VARIANTS = [
    ("scalar", ["-U__SSE__", "-U__SSE2__", "-U__SSE3__"], "scalar", None),
    ("sse2", [], "sse2", None),
    ("sse4.1", ["-msse4.1"], "sse2", "sse4_1"),
    ("avx2", ["-mavx2"], "avx2", "avx2"),
    ("avx2+fma", ["-mavx2", "-mfma"], "avx2", "fma"),
    ("avx512f", ["-mavx512f", "-mfma"], "avx512f", "avx512f"),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    """The scalar file's answers: plain C, no intrinsics."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    return _run_probe(tmp_path_factory.mktemp("ref"), "gcc", X86_VARIANTS[0][1])


@pytest.mark.skipif(not re.match(r"x86_64|amd64", platform.machine(), re.I),
                    reason="x86-64 host")
@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("label,flags,name,cpu", X86_VARIANTS, ids=[v[0] for v in X86_VARIANTS])
def test_every_x86_simd_file_gives_the_scalar_bits(tmp_path, reference, cc, label, flags, name,
                                                   cpu):
    if shutil.which(cc) is None:
        pytest.skip(f"no {cc}")
    if cpu and cpu not in _cpu_flags():
        pytest.skip(f"this CPU has no {cpu}")
    out = _run_probe(tmp_path, cc, flags)
    assert out == reference, label
    pre = subprocess.run([cc, *flags, f"-I{KERNELS}", "-dM", "-E", "-x", "c", "-"],
                         input='#include "simd.h"\n', capture_output=True, text=True, check=True)
    assert f'#define DV_NAME "{name}"' in pre.stdout


@pytest.mark.skipif(not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")
                         and Path("/usr/aarch64-linux-gnu").is_dir()),
                    reason="needs gcc-aarch64-linux-gnu and qemu-user")
def test_the_neon_simd_file_gives_the_scalar_bits(tmp_path, reference):
    out = _run_probe(tmp_path, "aarch64-linux-gnu-gcc", [],
                     ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"])
    assert out == reference


def test_the_probe_covers_every_operation(reference):
    """A new operation must be added to tests/simd/ops_probe.c too."""
    every = set().union(*(_ops(SIMD / f) for f in ISA_FILES), _ops(SIMD / "generic-inl.h"))
    probed = set(re.findall(r"\bdv_(\w+?)_##S\(", PROBE.read_text()))
    assert every - probed == set()
    assert re.search(r"^partial f32 1$", reference, re.M)
    assert re.search(r"^partial f64 1$", reference, re.M)


@pytest.mark.parametrize("isa", ISA_FILES)
def test_each_isa_file_with_the_generic_file_defines_the_whole_vocabulary(isa):
    generic = _ops(SIMD / "generic-inl.h")
    reference = _ops(SIMD / "scalar-inl.h") | generic
    assert _ops(SIMD / isa) | generic == reference
    # only what the generic file leaves to a target when it has an
    # instruction, the file saying so by the generic file's switch
    switches = {"ldexp": "DV_NATIVE_LDEXP", "max": "DV_NATIVE_MINMAX", "min": "DV_NATIVE_MINMAX"}
    overlap = _ops(SIMD / isa) & generic
    assert overlap <= set(switches)
    for op in overlap:
        assert f"#define {switches[op]} 1" in (SIMD / isa).read_text(), op


@pytest.mark.parametrize("name", ISA_FILES + ["generic-inl.h"])
def test_each_simd_file_uses_only_its_own_intrinsics(name):
    text = re.sub(r"/\*.*?\*/", "", (SIMD / name).read_text(), flags=re.S)
    x86 = set(re.findall(r"\b_mm\w*", text))
    neon = set(re.findall(r"\bv[a-z0-9]+q_\w+|\bvreinterpretq\w*|\bvmaxvq\w*", text))
    if name.startswith("x86_"):
        assert neon == set()
    elif name.startswith("arm_neon"):
        assert x86 == set()
    elif name == "generic-inl.h":  # the FTZ mode only; the rest is built from dv_*
        assert x86 <= {"_mm_getcsr", "_mm_setcsr"} and neon == set()
    else:
        assert x86 == set() and neon == set()


def test_no_simd_operation_is_written_twice_for_float32_and_float64():
    for path in [*SIMD.iterdir(), KERNELS / "simd.h"]:
        text = path.read_text()
        twins = re.findall(r"^DV_INLINE [^\n]*\bdv_\w+_f(?:32|64)\s*\(", text, re.M)
        assert twins == [], f"{path.name}: {twins}"


def test_kernels_include_only_simd_h():
    for path in KERNELS.glob("*.[ch]"):
        if path.name == "simd.h":
            continue
        assert not re.search(r'#include\s+"simd/', path.read_text()), path.name
