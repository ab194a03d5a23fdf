"""clang-cl, for real (issue 47, item 2): every probe and every variant of
tests/examples compiled to COFF objects with `clang-cl
--target=x86_64-pc-windows-msvc`, and the instructions in them checked
against their target with llvm-objdump.

There is no Windows SDK here: only clang's own headers, freestanding
(`/clang:-ffreestanding`, so immintrin.h does not ask for the SDK's
stdlib.h). hello.dispatch.c includes <stdio.h> for printf, mylib_sse41.c
<string.h>: one-line stand-ins declare what they use (an object needs the
declaration, not the SDK). What
needs the SDK, the UCRT or Python's Windows headers (the CPU runtime, the
module guard, main.c, _pyext.c, the C++ scale.dispatch.cpp, and linking any
.exe, .dll or .pyd) is not compiled here: docs/downstream.md, "MSVC".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[2]

EXAMPLES = ROOT / "tests" / "examples"
TARGET = "--target=x86_64-pc-windows-msvc"
FREESTANDING = "/clang:-ffreestanding"


def _tool(*names: str) -> str:
    for name in names:
        found = shutil.which(name) or shutil.which(name, path="/usr/lib/llvm-19/bin")
        if found:
            return found
    pytest.skip(f"{names[0]} is not installed (Debian: clang-19, llvm-19)")


@pytest.fixture(scope="module")
def clang_cl() -> str:
    return _tool("clang-cl", "clang-cl-19")


@pytest.fixture(scope="module")
def objdump() -> str:
    return _tool("llvm-objdump-19", "llvm-objdump")


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory) -> Path:
    """<stdio.h> and <string.h> as far as the examples' variants need them
    (see the module's doc)."""
    inc = tmp_path_factory.mktemp("sdk-stand-in")
    (inc / "stdio.h").write_text("int printf(const char *fmt, ...);\n")
    (inc / "string.h").write_text("#include <stddef.h>\n"
                                  "void *memcpy(void *dst, const void *src, size_t n);\n")
    return inc


def _plan(cli, clang_cl: str, cache, outdir: Path, *args: str) -> List[List[str]]:
    r = cli(["meson", "--cc", f"{clang_cl} {TARGET}", "--cflags", FREESTANDING,
             "--cache-dir", str(cache), "--outdir", str(outdir), *args])
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.strip().split("\n")]


def _compile(clang_cl: str, src: str, flags: List[str], obj: Path, stand_in: Path) -> None:
    cmd = [clang_cl, TARGET, FREESTANDING, f"-I{stand_in}", *flags, "/nologo", "/c",
           f"/Fo{obj}", "--", src]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and obj.is_file(), f"{' '.join(cmd)}\n{r.stderr}"


def _instructions(objdump: str, obj: Path) -> str:
    r = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(obj)], capture_output=True,
                       text=True, check=True)
    assert "file format coff-x86-64" in r.stdout
    return r.stdout


def _build(cli, clang_cl, objdump, stand_in, cache, tmp_path, skip, *args) -> Dict[str, str]:
    """Every library of the plan, but those whose name starts with one of
    ``skip`` (they need the SDK),
    compiled: library name -> its objects' disassembly."""
    out: Dict[str, str] = {}
    for name, sources, link, cflags in _plan(cli, clang_cl, cache, tmp_path / "gen", *args):
        if name.startswith(skip):
            continue
        text = ""
        for i, src in enumerate(sources.split()):
            obj = tmp_path / f"{name}.{i}.obj"
            _compile(clang_cl, src, cflags.split(), obj, stand_in)
            text += _instructions(objdump, obj)
        out[name] = text
    return out


_ZMM = re.compile(r"\bzmm\d")
_YMM = re.compile(r"\bymm\d")


def _vector_width(text: str) -> str:
    return "zmm" if _ZMM.search(text) else "ymm" if _YMM.search(text) else "xmm or none"


def test_every_probe_answers_as_clang_does(cli, clang_cl, cache_dir, tmp_path):
    """Every feature's check compiled on its own (--exhaustive-probe) in cl's
    syntax, to .obj: clang-cl lacks exactly what clang 19 itself lacks (the
    Xeon Phi extensions it dropped), and builds everything else."""
    r = cli(["report", "--json", "--exhaustive-probe", "--cc", f"{clang_cl} {TARGET}",
             "--cflags", FREESTANDING, "--cache-dir", str(cache_dir)])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["arch"] == "x86_64"
    assert report["compiler"]["family"] == "clang-cl"
    lacks = set(report["unsupported"])
    assert lacks == {"AVX512ER", "AVX512PF", "AVX5124FMAPS", "AVX5124VNNIW",
                     "AVX512_KNL", "AVX512_KNM"}, report["unsupported"]
    assert {"AVX512_SPR", "AVX512FP16", "VAES", "GFNI", "AVX2", "FMA3"} <= \
        set(report["dispatch"]["features"])


def test_arch_in_the_cflags_raises_the_baseline(cli, clang_cl, cache_dir):
    """`/arch:AVX2` in the flags: clang-cl predefines x86-64-v3's macros, so
    all of x86-64-v3 joins the baseline, each with a note."""
    r = cli(["report", "--json", "--cc", f"{clang_cl} {TARGET}", "--cflags",
             f"{FREESTANDING} /arch:AVX2", "--cpu-dispatch", "avx512_skx",
             "--cache-dir", str(cache_dir)])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    v3 = {"AVX2", "FMA3", "F16C", "BMI", "BMI2", "LZCNT", "MOVBE", "CX16", "LAHF"}
    assert v3 <= set(report["baseline"]["features"])
    assert "AVX512F" not in report["baseline"]["features"]
    assert report["dispatch"]["features"] == ["AVX512_SKX"]
    assert any(n.startswith("cpu-baseline: AVX2 joins the baseline") for n in report["notes"])


def test_hello_objects(cli, clang_cl, objdump, stand_in, cache_dir, tmp_path):
    objs = _build(cli, clang_cl, objdump, stand_in, cache_dir, tmp_path,
                  ("hello_cpu_runtime", "hello_sources"),
                  "--name", "hello", "--sources", str(EXAMPLES / "hello" / "main.c"),
                  "--dispatch", str(EXAMPLES / "hello" / "hello.dispatch.c"))
    assert set(objs) == {"hello_dispatch_c_AVX512_SKX", "hello_dispatch_c_FMA3__AVX2",
                         "hello_dispatch_c_SSE42", "hello_dispatch_c_baseline"}
    for name, text in objs.items():  # whoami and say_hello: no vectors in any
        assert "say_hello" in text and _vector_width(text) == "xmm or none", name


def test_pyext_sum_objects(cli, clang_cl, objdump, stand_in, cache_dir, tmp_path):
    objs = _build(cli, clang_cl, objdump, stand_in, cache_dir, tmp_path,
                  ("_pyext_cpu_runtime", "_pyext_sources", "scale_dispatch_cpp_"),
                  "--module", "pyext._pyext",
                  "--sources", str(EXAMPLES / "pyext" / "src" / "_pyext.c"),
                  "--dispatch", str(EXAMPLES / "pyext" / "src" / "sum.dispatch.c"),
                  str(EXAMPLES / "pyext" / "src" / "scale.dispatch.cpp"))
    assert set(objs) == {f"sum_dispatch_c_{t}" for t in
                         ("AVX512_SKX", "FMA3__AVX2", "SSE42", "baseline")}
    # a strict double sum is not vectorized; each variant has its own symbol
    for name, text in objs.items():
        target = name.rsplit("_c_", 1)[1]
        assert f"pyext_sum_{target}" in text or target == "baseline", name


@pytest.mark.parametrize("example, ini, prefix", [
    ("varext", "src/varext.variants.ini", "varext"),
    ("mylib", "mylib.variants.ini", "mylib"),
])
def test_variants_objects_hold_their_targets_instructions(cli, clang_cl, objdump, stand_in,
                                                         cache_dir, tmp_path, example, ini,
                                                         prefix):
    """The AVX-512 variant has zmm registers (EVEX), the AVX2 one ymm and no
    zmm, SSE4.1 and the baseline neither. gcc-syntax assembly (.S) is not
    for clang-cl: varext's AVX2 variant is its C alternative (asm=false);
    mylib's .S half of its AVX2 variant is left out."""
    plan = _plan(cli, clang_cl, cache_dir, tmp_path / "gen", "--name", prefix,
                 "--variants", str(EXAMPLES / example / ini), "--option", "asm=false")
    widths = {}
    for name, sources, _, cflags in plan:
        if name.endswith("_cpu_runtime"):
            continue
        text = ""
        for i, src in enumerate(s for s in sources.split() if not s.endswith(".S")):
            obj = tmp_path / f"{name}.{i}.obj"
            _compile(clang_cl, src, cflags.split(), obj, stand_in)
            text += _instructions(objdump, obj)
        widths[name] = _vector_width(text)
    assert widths == {f"{prefix}_AVX512_SKX": "zmm", f"{prefix}_AVX2": "ymm",
                      f"{prefix}_SSE41": "xmm or none", f"{prefix}_baseline": "xmm or none"}


def test_the_same_flags_without_avx512_give_no_zmm(clang_cl, objdump, stand_in, tmp_path):
    """The check above can fail: varext's AVX-512 file compiled with the AVX2
    variant's flags does not build, and its AVX2 file has no zmm."""
    src = EXAMPLES / "varext" / "src" / "xor_avx512.c"
    cmd = [clang_cl, TARGET, FREESTANDING, "-mavx2", "-DDISPATCH_CPU_TARGET_IS_BASELINE=0",
           "/nologo", "/c", f"/Fo{tmp_path / 'x.obj'}", "--", str(src)]
    assert subprocess.run(cmd, capture_output=True, check=False).returncode != 0


def test_the_commands_of_the_downstream_manual(clang_cl, objdump, cache_dir, tmp_path):
    """docs/downstream.md's `<!-- msvc-run -->` block, run with bash as a
    user would, in a copy of tests/examples/varext; its three counts are the
    AVX-512 variant's zmm, the AVX2 variant's ymm and its zmm (none)."""
    text = (ROOT / "docs" / "downstream.md").read_text()
    block = re.search(r"<!-- msvc-run -->\n```sh\n(.*?)```", text, re.S)
    assert block, "docs/downstream.md lost its <!-- msvc-run --> block"
    shutil.copytree(EXAMPLES / "varext", tmp_path / "varext")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(clang_cl, bin_dir / "clang-cl")
    os.symlink(objdump, bin_dir / "llvm-objdump")
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(cache_dir),
           "PATH": os.pathsep.join([str(bin_dir), str(ROOT / "tools" / "dispatchgen"),
                                    os.environ.get("PATH", "")])}
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block[1]], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    zmm_512, ymm_2, zmm_2 = (int(n) for n in r.stdout.split())
    assert zmm_512 > 0 and ymm_2 > 0 and zmm_2 == 0, r.stdout


def test_hello_for_windows_on_arm(cli, clang_cl, objdump, stand_in, cache_dir, tmp_path):
    """`--target=aarch64-pc-windows-msvc`: the arch comes from _M_ARM64 (and
    clang's __aarch64__), and hello's Arm targets compile to arm64 COFF
    objects, each with its own names (say_hello_SVE, ...)."""
    r = cli(["meson", "--name", "hello", "--cc", f"{clang_cl} --target=aarch64-pc-windows-msvc",
             "--cflags", FREESTANDING, "--cache-dir", str(cache_dir),
             "--outdir", str(tmp_path / "gen"),
             "--dispatch", str(EXAMPLES / "hello" / "hello.dispatch.c")])
    assert r.returncode == 0, r.stderr
    assert "arch:      aarch64" in r.stderr
    texts = {}
    for line in r.stdout.strip().split("\n"):
        name, sources, _, cflags = line.split("\t")
        if name.endswith("_cpu_runtime"):
            continue
        obj = tmp_path / f"{name}.obj"
        cmd = [clang_cl, "--target=aarch64-pc-windows-msvc", FREESTANDING, f"-I{stand_in}",
               *cflags.split(), "/nologo", "/c", f"/Fo{obj}", "--", sources]
        c = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert c.returncode == 0, c.stderr
        d = subprocess.run([objdump, "-d", str(obj)], capture_output=True, text=True, check=True)
        assert "file format coff-arm64" in d.stdout
        texts[name] = d.stdout
    assert set(texts) == {"hello_dispatch_c_SVE", "hello_dispatch_c_ASIMDHP",
                          "hello_dispatch_c_baseline"}
    assert "<say_hello_SVE>:" in texts["hello_dispatch_c_SVE"]
    assert "<say_hello_ASIMDHP>:" in texts["hello_dispatch_c_ASIMDHP"]
    assert "<say_hello>:" in texts["hello_dispatch_c_baseline"]
