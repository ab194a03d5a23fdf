"""Libraries as they are written (issue 11, item 3): tests/examples/mylib keeps
one source file per instruction set plus a hand-written `.S`, declared as
targets' variants in mylib.variants.ini (`dispatchgen meson --variants`,
tools/dispatchgen/dispatchkit/variants.py): no renames, every file compiled once, the
public DISPATCH_CPU_TARGET_NAME / DISPATCH_CPU_TARGET_IS_BASELINE macros."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vendored import vendored_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "mylib"
QEMU = shutil.which("qemu-x86_64")

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64",
                                reason="mylib's variants are x86's")


def _setup(tool, tmp: Path, name: str, *options: str) -> tuple[Path, str]:
    src = vendored_copy(EXAMPLE, tmp / f"src-{name}")
    build = tmp / f"build-{name}"
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    r = subprocess.run([tool("meson"), "setup", str(build), str(src), *options],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    b = subprocess.run([tool("ninja"), "-C", str(build)], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    return build, r.stdout


def _demo(build: Path, cpu: str | None = None) -> str:
    cmd = [str(build / "mylib-demo")]
    if cpu:
        cmd = [QEMU, "-cpu", cpu, *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    env.pop("LD_PRELOAD", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip()


@pytest.fixture(scope="module")
def built(tmp_path_factory, build_tool) -> Path:
    return _setup(build_tool, tmp_path_factory.mktemp("mylib"), "default")[0]


def _native() -> str:
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= flags:
        return "AVX512_SKX"
    return "AVX2" if "avx2" in flags else "SSE41" if "sse4_1" in flags else "baseline"


def test_every_file_is_compiled_exactly_once(built: Path) -> None:
    commands = json.loads((built / "compile_commands.json").read_text())
    counts = collections.Counter(Path(c["file"]).name for c in commands)
    for name in ("mylib_portable.c", "mylib_sse41.c", "mylib_avx2.c", "mylib_avx2_xor.S",
                 "mylib_avx512.c"):
        assert counts[name] == 1, counts
    assert "DISPATCH_CPU_DISPATCH_CURFX" not in (EXAMPLE / "mylib_avx2.c").read_text()


def test_the_library_keeps_its_own_names(built: Path) -> None:
    symbols = subprocess.run(["nm", str(built / "mylib-demo")], check=True, capture_output=True,
                             text=True).stdout.split()
    for name in ("mylib_sum_portable", "mylib_sum_sse41", "mylib_sum_avx2", "mylib_sum_avx512",
                 "mylib_xor_avx2", "mylib_xor_avx2_built_for"):
        assert name in symbols


def test_the_best_variant_runs_natively_and_is_correct(built: Path) -> None:
    best = _native()
    assert _demo(built) == f"sum={best} xor={best} asm=AVX2 ok"


@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found")
@pytest.mark.parametrize("cpu,expected", [("qemu64", "baseline"), ("Nehalem", "SSE41"),
                                          ("Haswell", "AVX2")])
def test_each_emulated_cpu_runs_its_variant(built: Path, cpu: str, expected: str) -> None:
    # on Haswell xor is the hand-written assembly
    assert _demo(built, cpu) == f"sum={expected} xor={expected} asm=AVX2 ok"


def test_variants_inside_the_baseline_are_kept_and_never_recurse(tmp_path, build_tool) -> None:
    """BLAKE3's case: with AVX2 in the baseline, the AVX2 file is still mylib's
    AVX2 variant (its own names), chosen where nothing higher runs."""
    build, out = _setup(build_tool, tmp_path, "avx2", "-Dcpu-baseline=avx2")
    assert "mylib.variants.ini: builds AVX512_SKX AVX2 SSE41 baseline" in out
    best = _native()
    assert _demo(build) == f"sum={best} xor={best} asm=AVX2 ok"
    if QEMU:
        assert _demo(build, "Haswell") == "sum=AVX2 xor=AVX2 asm=AVX2 ok"


def test_a_narrow_dispatch_skips_variants_with_a_note(tmp_path, build_tool) -> None:
    build, out = _setup(build_tool, tmp_path, "narrow", "-Dcpu-dispatch=sse41")
    assert "mylib.variants.ini: builds SSE41 baseline" in out
    assert "skipped [avx2] AVX2" in out
    assert _demo(build) == "sum=SSE41 xor=SSE41 asm=- ok"


def _config(tmp: Path) -> Path:
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    subprocess.run([sys.executable, str(REPO / "tools" / "dispatchgen" / "dispatchgen"), "configure",
                    "--outdir", str(tmp / "cfg")], check=True, capture_output=True, env=env)
    return tmp / "cfg" / "dispatch_config.json"


@pytest.mark.parametrize("text,message", [
    ("[library]\nname = x\n\n[avx9000]\nsources = a.c\nf = f_a\n",
     "lib.variants.ini:4: unknown"),
    ("[library]\nname = x\n[avx2]\nsources = a.c\n[(avx2)]\nsources = b.c\n",
     "lib.variants.ini:5: [(avx2)] is target AVX2 again (also [avx2])"),
    ("[library]\nname = x\n[sse41]\nf = f_sse41\n", "lib.variants.ini:3: [sse41] lists no sources"),
    ("[avx2]\nsources = a.c\n", "needs [library] with name"),
    ("[library]\nname = x\n[avx2]\nsources = a.c\nf = not-a-name\n", "must be C identifiers"),
])
def test_variants_file_errors_name_the_line(tmp_path, text, message) -> None:
    ini = tmp_path / "lib.variants.ini"
    ini.write_text(text)
    r = subprocess.run([sys.executable, str(REPO / "tools" / "dispatchgen" / "dispatchgen"), "meson-variants",
                        str(ini), "--config", str(_config(tmp_path)), "--outdir", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("defines,name,is_baseline", [
    ([], '"baseline"', "1"),
    (["-DDISPATCH__CPU_TARGET_CURRENT=FMA3__AVX2"], '"FMA3__AVX2"', "0"),
])
def test_a_targets_source_knows_its_target_and_whether_it_is_the_baseline(
        built: Path, defines, name, is_baseline) -> None:
    """DISPATCH_CPU_TARGET_NAME / _IS_BASELINE of cpu_dispatch.h, as a @targets
    source's baseline compile and a target's compile see them."""
    code = "#include \"dispatch/cpu_dispatch.h\"\nN=DISPATCH_CPU_TARGET_NAME B=DISPATCH_CPU_TARGET_IS_BASELINE\n"
    r = subprocess.run(["cc", "-E", "-P", *defines,
                        f"-I{built}",
                        f"-I{REPO / 'tools' / 'dispatchgen' / 'dispatchkit' / 'include'}", "-"],
                       input=code, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f'N="{name.strip(chr(34))}" B={is_baseline}' in r.stdout.replace(" =", "=")
