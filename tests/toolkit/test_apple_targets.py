"""Apple targets planned off a Mac: `--target=*-apple-macos*` (and Apple clang's
`-arch`) with clang-19 and no macOS SDK here. The feature checks compile
-ffreestanding to objects (Note [Apple without an SDK] in probe.py); a command
for two architectures at once is refused in one line."""

from __future__ import annotations

import json
import subprocess
import shutil
import sys

import pytest
from dispatchkit.build_config import configure
from dispatchkit.cli import DEFAULT_BASELINE, DEFAULT_DISPATCH

CLANG = shutil.which("clang-19")
pytestmark = pytest.mark.skipif(CLANG is None, reason="clang-19 is not installed")

FREESTANDING_NOTE = "compiled -ffreestanding"


def _configure(cc, cache_dir, cflags=""):
    return configure(cc, cflags, DEFAULT_BASELINE, DEFAULT_DISPATCH, cache_dir)


def test_arm64_macos_plans_with_the_m1_baseline(cache_dir):
    cfg = _configure("clang-19 --target=arm64-apple-macos11", cache_dir)
    assert cfg.arch == "aarch64"
    # clang's default CPU for arm64 macOS is the M1: its extensions join the baseline
    assert {"ASIMD", "ASIMDHP", "ASIMDDP", "ASIMDFHM"} <= set(cfg.baseline)
    assert {"I8MM", "BF16"} <= set(cfg.dispatch)
    assert any(FREESTANDING_NOTE in n for n in cfg.notes)
    assert "-ffreestanding" not in " ".join(f for v in cfg.dispatch_flags.values() for f in v)


def test_x86_64_macos_plans_every_avx512_generation(cache_dir):
    cfg = _configure("clang-19 --target=x86_64-apple-macos11", cache_dir)
    assert cfg.arch == "x86_64"
    assert {"SSE2", "SSE3"} <= set(cfg.baseline)
    assert {"AVX2", "AVX512_SKX", "AVX512_SPR"} <= set(cfg.dispatch)
    assert not cfg.unsupported.get("AVX2"), cfg.unsupported


def test_arch_picks_the_architecture_with_an_apple_target(cache_dir):
    cfg = _configure("clang-19 --target=x86_64-apple-macos11", cache_dir, cflags="-arch arm64")
    assert cfg.arch == "aarch64"


def test_a_linux_target_probes_hosted_as_before(cache_dir):
    cfg = _configure("clang-19", cache_dir)
    assert not any(FREESTANDING_NOTE in n for n in cfg.notes)


def test_two_archs_in_one_command_is_one_line(cli, cache_dir, tmp_path):
    proc = cli(["configure", "--cc", "clang-19 --target=arm64-apple-macos11",
                "--cflags", "-arch arm64 -arch x86_64", "--cache-dir", str(cache_dir),
                "--outdir", str(tmp_path / "out")])
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "2 architectures" in lines[0] and "configure once per -arch" in lines[0]


@pytest.mark.skipif(sys.platform == "darwin", reason="-arch alone is fine on a Mac")
def test_arch_alone_off_a_mac_says_to_name_the_target(cli, cache_dir, tmp_path):
    proc = cli(["configure", "--cc", "clang-19 -arch arm64", "--cache-dir", str(cache_dir),
                "--outdir", str(tmp_path / "out")])
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--target=arm64-apple-macos11" in lines[0], proc.stderr


def test_the_cli_writes_the_plan(cli, cache_dir, tmp_path):
    out = tmp_path / "out"
    proc = cli(["configure", "--cc", "clang-19 --target=arm64-apple-macos11",
                "--cache-dir", str(cache_dir), "--outdir", str(out)])
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "dispatch_config.json").read_text())
    assert data["arch"] == "aarch64" and "BF16" in data["dispatch"]
    assert (out / "_cpu_dispatch.h").is_file()


def test_a_warm_cache_plans_an_apple_target_without_a_warning(cli, tmp_path):
    """The answer "are the C library's headers there" is cached like every
    other answer: the cache's type check once dropped it, so every run
    after the first warned that the cache held an entry of the wrong type."""
    cmd = ["configure", "--cc", "clang-19 --target=x86_64-apple-macos11",
           "--cache-dir", str(tmp_path / "cache"), "--outdir", str(tmp_path / "out")]
    assert cli(cmd).returncode == 0
    again = cli(cmd)
    assert again.returncode == 0, again.stderr
    assert "warning" not in again.stderr, again.stderr


# -- the examples' variants compiled for macOS -------------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "examples"
MACOS_HEADERS = ROOT / "tests" / "macos_headers"  # the few C library names they use
OBJDUMP = shutil.which("llvm-objdump-19")


def _variant_objects(cli, tmp_path, cache_dir, target, *args):
    """Every variant library of the plan (not the CPU runtime: test_macos_objects.py)
    compiled with its own flags: library name -> its objects' disassembly."""
    if OBJDUMP is None:
        pytest.skip("llvm-objdump-19 is not installed")
    cc = f"clang-19 --target={target}"
    r = cli(["meson", "--cc", cc, "--cache-dir", str(cache_dir),
             "--outdir", str(tmp_path / "gen"), *args])
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.strip().split("\n"):
        name, sources, _, cflags = line.split("\t")
        if name.endswith("_cpu_runtime"):
            continue
        text = ""
        for i, src in enumerate(s for s in sources.split() if not s.endswith(".S")):
            obj = tmp_path / f"{name}.{i}.o"
            c = subprocess.run([CLANG, f"--target={target}", "-ffreestanding", "-nostdlibinc",
                                "-isystem", str(MACOS_HEADERS), *cflags.split(), "-c", src,
                                "-o", str(obj)], capture_output=True, text=True, check=False)
            assert c.returncode == 0, c.stderr
            d = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", str(obj)],
                               capture_output=True, text=True, check=True)
            assert "file format mach-o" in d.stdout, d.stdout[:200]
            text += d.stdout
        out[name] = text
    return out


@pytest.mark.parametrize("example, ini", [("varext", "src/varext.variants.ini"),
                                          ("mylib", "mylib.variants.ini")])
def test_x86_64_macos_variants_hold_their_targets_instructions(cli, cache_dir, tmp_path,
                                                               example, ini):
    """The AVX-512 variant has zmm registers, the AVX2 one ymm and no zmm,
    SSE4.1 and the baseline neither (varext's AVX2 variant in C: asm=false;
    mylib's .S half left out, as for clang-cl)."""
    objs = _variant_objects(cli, tmp_path, cache_dir, "x86_64-apple-macos11", "--name", example,
                            "--variants", str(EXAMPLES / example / ini), "--option", "asm=false")
    import re
    width = {name: "zmm" if re.search(r"\bzmm\d", t) else "ymm" if re.search(r"\bymm\d", t)
             else "xmm or none" for name, t in objs.items()}
    assert width == {f"{example}_AVX512_SKX": "zmm", f"{example}_AVX2": "ymm",
                     f"{example}_SSE41": "xmm or none", f"{example}_baseline": "xmm or none"}


def test_arm64_macos_hello_variants_compile_with_their_names(cli, cache_dir, tmp_path):
    """On arm64 macOS the M1's extensions are the baseline: hello's variants
    are the baseline and SVE (planned; never chosen on an Apple core, whose
    detection says no SVE: tests/test_cpu_recorded.py), each under its name."""
    objs = _variant_objects(cli, tmp_path, cache_dir, "arm64-apple-macos11", "--name", "hello",
                            "--dispatch", str(EXAMPLES / "hello" / "hello.dispatch.c"))
    assert set(objs) == {"hello_dispatch_c_SVE", "hello_dispatch_c_baseline"}
    assert "_say_hello_SVE>:" in objs["hello_dispatch_c_SVE"]
    assert "_say_hello>:" in objs["hello_dispatch_c_baseline"]


def test_the_commands_of_the_downstream_manual(cache_dir, tmp_path):
    """docs/downstream.md's `<!-- macos-run -->` block, run with bash as a
    user would from a checkout (here: a folder that links the checkout's
    tools/ and tests/): both plans written, the guard a Mach-O initializer."""
    if OBJDUMP is None:
        pytest.skip("llvm-objdump-19 is not installed")
    import os
    import re
    text = (ROOT / "docs" / "downstream.md").read_text()
    block = re.search(r"<!-- macos-run -->\n```sh\n(.*?)```", text, re.S)
    assert block, "docs/downstream.md lost its <!-- macos-run --> block"
    for name in ("tools", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(cache_dir)}
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block[1]], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "__mod_init_func" in r.stdout, r.stdout
    for arch in ("arm64", "x86_64"):
        assert (tmp_path / "build" / arch / "dispatch" / "dispatch_config.json").is_file()
