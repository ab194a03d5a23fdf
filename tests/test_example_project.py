"""A downstream meson project (tests/examples/hello, a C program) builds its
own dispatchable source with the toolkit vendored into its tools/dispatchgen."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vendored import vendored_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "hello"


def _setup(tool, tmp: Path, name: str, *options: str) -> Path:
    """Build the example in tmp; tool is conftest's build_tool (meson, ninja)."""
    src = vendored_copy(EXAMPLE, tmp / f"src-{name}")
    build = tmp / f"build-{name}"
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    subprocess.run([tool("meson"), "setup", str(build), str(src), *options],
                   check=True, capture_output=True, text=True, env=env)
    subprocess.run([tool("ninja"), "-C", str(build)], check=True, capture_output=True,
                   text=True)
    return build


@pytest.fixture(scope="module")
def built(tmp_path_factory, build_tool) -> Path:
    return _setup(build_tool, tmp_path_factory.mktemp("hello"), "default")


def test_every_target_symbol_is_linked(built: Path) -> None:
    symbols = subprocess.run(["nm", str(built / "hello")], check=True, capture_output=True,
                             text=True).stdout.split()
    for name in ("whoami_AVX512_SKX", "whoami_FMA3__AVX2", "whoami_SSE42", "whoami"):
        assert name in symbols


def test_the_chosen_variant_is_the_highest_the_cpu_runs(built: Path) -> None:
    flags = Path("/proc/cpuinfo").read_text().split()
    expected = ("AVX512_SKX" if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"}
                <= set(flags) else "FMA3__AVX2" if {"avx2", "fma"} <= set(flags)
                else "SSE42" if "sse4_2" in flags else "baseline")
    out = subprocess.run([str(built / "hello")], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == [expected, expected]


def test_call_all_runs_every_supported_variant_highest_first(built: Path) -> None:
    out = subprocess.run([str(built / "hello"), "--all"], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    order = ["AVX512_SKX", "FMA3__AVX2", "SSE42", "baseline"]
    names = [line.split()[-1] for line in out]
    assert names[-1] == "baseline"
    assert names == sorted(names, key=order.index)


def test_dispatch_cpu_features_restrict_the_choice(built: Path) -> None:
    env = {**os.environ, "HELLO_DISABLE_CPU_FEATURES": "AVX2"}  # the program's own prefix
    out = subprocess.run([str(built / "hello")], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] in ("SSE42", "baseline")


def test_two_configures_generate_byte_identical_files(tmp_path: Path, built: Path,
                                                     build_tool) -> None:
    again = _setup(build_tool, tmp_path, "again")
    # No per-target wrapper files: each target compiles hello.dispatch.c itself
    # (Note [No wrapper files]); every file configure generates is compared.
    assert not list(built.glob("hello.dispatch.*.c"))
    generated = ["hello.dispatch.h",
                 "dispatch/_cpu_dispatch.h", "dispatch/_cpu_features_table.h",
                 "dispatch/dispatch_config.json"]
    for rel in generated:
        assert filecmp.cmp(built / rel, again / rel, shallow=False), rel
    for rel in generated:
        assert str(built) not in (built / rel).read_text()


def test_a_narrower_dispatch_builds_fewer_targets(tmp_path: Path, build_tool) -> None:
    build = _setup(build_tool, tmp_path, "narrow", "-Dcpu-baseline=avx2",
                   "-Dcpu-dispatch=avx512_skx")
    symbols = subprocess.run(["nm", str(build / "hello")], check=True, capture_output=True,
                             text=True).stdout.split()
    assert "whoami_AVX512_SKX" in symbols and "whoami" in symbols
    # SSE42 is in an AVX2 baseline; (avx2 fma3) needs FMA3, not dispatched.
    assert "whoami_SSE42" not in symbols and "whoami_FMA3__AVX2" not in symbols
