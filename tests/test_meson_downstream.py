"""Downstream meson projects built with the toolkit manual's snippet (issues 11 and 12):
one generator process for all sources, *.dispatch.cpp, disable-optimization,
hidden per-target symbols, and @targets errors shown once as file:line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vendored import vendor_toolkit  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "hello"
MANUAL = REPO / "docs" / "toolkit.md"
BEGIN, END = "# BEGIN MANUAL SNIPPET", "# END MANUAL SNIPPET"

SOURCE = """/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx */
#include "dispatch/cpu_dispatch.h"
#include "{stem}.dispatch.h"
int DISPATCH_CPU_DISPATCH_CURFX({fn})(void);
int DISPATCH_CPU_DISPATCH_CURFX({fn})(void) {{ return {n}; }}
"""


def manual_snippet() -> str:
    """The ```meson block of docs/toolkit.md's "Using the toolkit ...", "A C program"."""
    text = MANUAL.read_text()
    section = text.split("## Using the toolkit from your own meson project", 1)[1]
    section = section.split("### A C program", 1)[1]
    return section.split("```meson\n", 1)[1].split("```", 1)[0]


def example_snippet() -> str:
    text = (EXAMPLE / "meson.build").read_text()
    inner = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return inner.split("\n", 2)[2]  # after the BEGIN comment's two lines


def test_the_manual_snippet_is_the_example_projects_lines():
    snippet = manual_snippet()
    assert example_snippet() in snippet
    assert "check: true" not in snippet


def test_the_manual_states_the_snippets_line_count():
    """The manual: "The N lines from `dispatchgen` to `endforeach`" (issue 11: write the count)."""
    lines = manual_snippet().splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("dispatchgen ="))
    last = next(i for i, ln in enumerate(lines) if ln.startswith("endforeach"))
    text = MANUAL.read_text()
    assert f"The {last - first + 1} lines from `dispatchgen` to `endforeach`" in text


def project(tmp: Path, sources: dict, languages=("c",)) -> Path:
    """A downstream project: the manual's snippet for ``sources`` (name -> text)."""
    src = tmp / "src"
    src.mkdir()
    vendor_toolkit(src)
    for name, text in sources.items():
        (src / name).write_text(text)
    snippet = example_snippet().replace(
        "files('hello.dispatch.c')", "files(" + ", ".join(f"'{n}'" for n in sources) + ")")
    snippet = snippet.replace("'--sources', files('main.c'), ", "")
    langs = ", ".join(f"'{lang}'" for lang in languages)
    shutil.copy(EXAMPLE / "meson_options.txt", src)
    (src / "meson.build").write_text(
        f"project('down', {langs}, default_options: ['c_std=c11', 'buildtype=release'])\n"
        + snippet + "lib = static_library('down', dependencies: libs)\n")
    return src


def sources(n: int, ext: str = "c") -> dict:
    return {f"k{i}.dispatch.{ext}": SOURCE.format(stem=f"k{i}", fn=f"k{i}", n=i)
            for i in range(n)}


def setup(build_tool, src: Path, build: Path, *options: str, env=None, check=True):
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(src.parent / "cache"), **(env or {})}
    proc = subprocess.run([build_tool("meson"), "setup", str(build), str(src), *options],
                          capture_output=True, text=True, env=env)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("n", [1, 10])
def test_configure_runs_the_same_generator_processes_for_1_and_10_sources(
        tmp_path, build_tool, n):
    trace = tmp_path / "runs.log"
    src = project(tmp_path, sources(n))
    setup(build_tool, src, tmp_path / "build", env={"DISPATCHGEN_TRACE": str(trace)})
    runs = [line.split("\t") for line in trace.read_text().splitlines()]
    # ONE `dispatchgen meson` (configure and every source), whatever their number
    assert [r[0] for r in runs] == ["meson"], runs
    assert int(runs[0][1]) == n + 14  # the sources and the fixed options


def test_ten_sources_build_and_link_every_target(tmp_path, build_tool):
    src = project(tmp_path, sources(10))
    build = tmp_path / "build"
    setup(build_tool, src, build)
    subprocess.run([build_tool("ninja"), "-C", str(build)], check=True, capture_output=True)
    syms = subprocess.run(["nm", str(build / "libdown.a")], capture_output=True,
                          text=True).stdout
    for i in (0, 9):
        for suffix in ("", "_AVX512_SKX", "_FMA3__AVX2", "_SSE42"):
            assert f" k{i}{suffix}\n" in syms


@pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                    reason="needs a C++ compiler")
def test_a_dispatch_cpp_source_builds_beside_a_c_one(tmp_path, build_tool):
    srcs = {**sources(1), **{k.replace("k0", "p0"): v.replace("k0", "p0")
                             for k, v in sources(1, "cpp").items()}}
    srcs["p0.dispatch.cpp"] = srcs["p0.dispatch.cpp"].replace("int DISPATCH", 'extern "C" int DISPATCH', 1)
    src = project(tmp_path, srcs, languages=("c", "cpp"))
    build = tmp_path / "build"
    setup(build_tool, src, build)
    assert (build / "p0.dispatch.h").is_file()
    subprocess.run([build_tool("ninja"), "-C", str(build)], check=True, capture_output=True)
    syms = subprocess.run(["nm", str(build / "libdown.a")], capture_output=True,
                          text=True).stdout
    assert " p0_AVX512_SKX\n" in syms and " k0_AVX512_SKX\n" in syms


def test_disable_optimization_reaches_downstream_sources(tmp_path, build_tool):
    src = project(tmp_path, sources(2))
    build = tmp_path / "build"
    proc = setup(build_tool, src, build, "-Ddisable-optimization=true")
    assert "k0.dispatch.c: builds baseline" in proc.stdout
    subprocess.run([build_tool("ninja"), "-C", str(build)], check=True, capture_output=True)
    syms = subprocess.run(["nm", str(build / "libdown.a")], capture_output=True,
                          text=True).stdout
    assert " k0\n" in syms and "k0_AVX2" not in syms and "_AVX512_SKX" not in syms


def test_per_target_symbols_are_hidden(tmp_path, build_tool):
    src = project(tmp_path, sources(1))
    build = tmp_path / "build"
    setup(build_tool, src, build)
    subprocess.run([build_tool("ninja"), "-C", str(build)], check=True, capture_output=True)
    table = subprocess.run(["readelf", "-sW", str(build / "libdown.a")], capture_output=True,
                           text=True, check=True).stdout
    rows = [ln.split() for ln in table.splitlines() if ln.split()[-1:] in
            (["k0"], ["k0_AVX512_SKX"], ["k0_SSE42"])]
    assert len(rows) == 3 and all("HIDDEN" in r for r in rows), rows


def test_a_bad_targets_token_is_shown_once_with_file_and_line(tmp_path, build_tool):
    srcs = sources(2)
    srcs["k1.dispatch.c"] = srcs["k1.dispatch.c"].replace(
        "/*@targets $maxopt baseline", "/*@targets $maxopt baseline\n * avx2 avx9000_bogus")
    src = project(tmp_path, srcs)
    proc = setup(build_tool, src, tmp_path / "build", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in out
    assert out.count("avx9000_bogus") == 1, out
    assert re.search(r"k1\.dispatch\.c:2: .*avx9000_bogus", out), out
