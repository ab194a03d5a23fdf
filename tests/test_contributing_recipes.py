"""docs/contributing.md's recipes, followed literally on a scratch copy of the
repository: the worked examples' blocks (each marked `<!-- recipe: NAME;
file: PATH; HOW -->`) are applied as written, the files they touch are
counted against the counts the doc states, and the result is built and run:

- the operator recipe (a fake `square`): one `pip install` of the scratch
  copy with `-Dcuda=disabled -Dcpu-dispatch="avx2 fma3"`, then the recipe's
  own test file and the lists it edits, run against that install;
- the CPU-feature recipe (x86's SHA): the toolkit alone, no runtime build:
  its feature tests, `dispatchgen report` validating the feature against the
  compiler, and the C runtime's detection compared with /proc/cpuinfo
  (natively, and on an emulated CPU without it where qemu-x86_64 is here).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cpu_program import compile_program, write_headers  # noqa: E402
from _load import load_file  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "contributing.md"
BLOCK = re.compile(
    r"<!-- recipe: (?P<recipe>[\w-]+); file: (?P<path>\S+); "
    r"(?P<how>append|new|after|before|replace)(?:: (?P<anchor>.*?))? -->\n"
    r"```\w*\n(?P<body>.*?)```", re.S)
# The section of each scripted recipe, and the sentence that states its counts.
SECTIONS = {"operator": "## Adding an operator\n",
            "cpu-feature": "## Adding a CPU feature to the toolkit\n"}
STATED = re.compile(r"This\s+recipe\s+edits\s+(\d+)\s+files\s+outside\s+`tests/`\s+and\s+"
                    r"(\d+)\s+test\s+files")
QEMU = shutil.which("qemu-x86_64")
CC = shutil.which("gcc") or shutil.which("cc")
# pytest's own script, not `python -m pytest`: that would put the scratch
# copy's root, and its source `dispatch/`, first on sys.path.
PYTEST = Path(sys.executable).parent / "pytest"

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64" or CC is None,
                                reason="the worked examples are x86's, built with a C compiler")


def _edits(recipe: str) -> list[re.Match]:
    found = [m for m in BLOCK.finditer(DOC.read_text()) if m["recipe"] == recipe]
    assert found, f"docs/contributing.md has no blocks of the {recipe} recipe"
    return found


def _is_test(path: str) -> bool:
    return "tests" in Path(path).parts


def _stated(recipe: str) -> tuple[int, int]:
    text = DOC.read_text()
    section = text.split(SECTIONS[recipe], 1)[1].split("\n## ", 1)[0]
    m = STATED.search(section)
    assert m, f"{SECTIONS[recipe].strip()} states no file counts"
    return int(m[1]), int(m[2])


def _apply(root: Path, m: re.Match) -> None:
    """One block, as the doc says: a new file, appended, inserted after or
    before the one line holding the anchor, or in place of the anchor."""
    path, how, anchor, body = root / m["path"], m["how"], m["anchor"], m["body"]
    where = f"{m['path']} ({how}: {anchor!r})"
    if how == "new":
        assert not path.exists(), f"{where}: the file exists already"
        path.write_text(body)
        return
    text = path.read_text()
    if how == "append":
        path.write_text(text + body)
    elif how == "replace":
        assert text.count(anchor) == 1, f"{where}: the anchor is not there exactly once"
        path.write_text(text.replace(anchor, body.strip()))
    else:
        lines = text.splitlines(keepends=True)
        hits = [i for i, ln in enumerate(lines) if anchor in ln]
        assert len(hits) == 1, f"{where}: {len(hits)} lines hold the anchor"
        at = hits[0] + (how == "after")
        path.write_text("".join(lines[:at]) + body + "".join(lines[at:]))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A copy of the checkout's files (tracked, and untracked-not-ignored),
    with both scripted recipes applied."""
    if not (REPO / ".git").exists() or not shutil.which("git"):
        pytest.skip("needs a git checkout to list the project's files")
    root = tmp_path_factory.mktemp("recipes") / "repo"
    scratch_copy = load_file(REPO / "tools" / "recipe_scratch.py", "recipe_scratch")
    scratch_copy.copy_checkout(root)  # the copy the other recipe scripts work on
    for recipe in SECTIONS:
        for m in _edits(recipe):
            _apply(root, m)
    return root


def _run(cmd: list, cwd: Path, env: dict | None = None, timeout: int = 900):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISPATCH_", "PYTHONPATH")) and k != "LD_PRELOAD"}
    env.update(extra)
    return env


@pytest.mark.parametrize("recipe", list(SECTIONS))
def test_each_recipe_touches_the_files_the_doc_states(recipe, scratch):
    paths = {m["path"] for m in _edits(recipe)}
    outside = {p for p in paths if not _is_test(p)}
    assert (len(outside), len(paths - outside)) == _stated(recipe), sorted(paths)
    for p in paths:  # the edits landed: each file differs from the checkout's
        assert not (REPO / p).exists() or (REPO / p).read_text() != (scratch / p).read_text(), p
    # The summary table of the doc says the same count.
    row = {"operator": "an elementwise operator, CPU and SIMD",
           "cpu-feature": "a CPU feature of the toolkit"}[recipe]
    assert re.search(rf"\| {row} \| {len(outside)} \| {len(paths - outside)} \|", DOC.read_text())


@pytest.fixture(scope="module")
def operator_install(scratch, tmp_path_factory) -> Path:
    """The scratch copy built and installed once, the CUDA module off, each
    kernel source at the baseline and one target above it: AVX2 on x86 (the
    recipe's kernel compiled with the 128- and 256-bit vocabularies, and its
    AVX2 variant the one its tests run wherever the CPU has AVX2); elsewhere
    the name is skipped and the baseline alone is built. Every target (SSE4.2,
    AVX-512, ...) cost twice the compile time for a kernel written with the
    same dv_ calls as every other float kernel, which each build of the
    checkout compiles for all of them."""
    site = tmp_path_factory.mktemp("recipes-site")
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
          "--target", site, "-Csetup-args=-Dcuda=disabled",
          "-Csetup-args=-Dcpu-dispatch=avx2 fma3", "."], scratch, _env())
    return site


def test_the_operator_recipe_builds_and_its_tests_pass(scratch, operator_install):
    env = _env(PYTHONPATH=str(operator_install))
    # The recipe's own test file and the list it edits, against the scratch build.
    r = _run([PYTEST, "-q", "-n", "0", "-p", "no:cacheprovider",
              "tests/test_ops_square.py", "tests/test_tables_agree.py::test_known_loop_facts_are_kept"],
             scratch, env)
    assert " passed" in r.stdout and "failed" not in r.stdout, r.stdout
    # Through the public interface, from outside the checkout: the table gave
    # the operator, its method, its out= form, the loop id and a SIMD kernel.
    probe = ("import dispatch, dispatch.iterator, dispatch.kernels; "
             "a = dispatch.tensor([1.5, -2.0, 3.0]); "
             "print(dispatch.square(a).tolist(), a.square().tolist(), "
             "dispatch.ops.square(dispatch.tensor([3], dtype=dispatch.int32)).tolist(), "
             "'square' in dispatch.iterator.LOOPS, dispatch.kernels.has('square', 'float32'))")
    r = _run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(operator_install)!r}); "
              + probe], operator_install.parent, _env())
    assert r.stdout.split() == ["[2.25,", "4.0,", "9.0]", "[2.25,", "4.0,", "9.0]", "[9.0]",
                                "True", "True"], r.stdout


DETECT = r"""
#include <stdio.h>
#include "dispatch/cpu_features.h"
#include "dispatch/cpu_runtime.h"
int main(void) {
    if (dispatch_cpu_init() != 0) return 2;
    printf("%d\n", dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_SHA));
    return 0;
}
"""


def test_the_cpu_feature_recipe_is_known_validated_and_detected(scratch, tmp_path):
    toolkit = scratch / "tools" / "dispatchgen"
    # The toolkit's own tests of its tables, and the C runtime's tests
    # (natively and on emulated CPUs), on the scratch copy.
    _run([PYTEST, "-q", "-n", "0", "-p", "no:cacheprovider",
          "tests/toolkit/test_features.py", "tests/test_cpu_runtime_c.py"], scratch, _env())
    # Configure validates it against the compiler and offers it to `max`.
    r = _run([sys.executable, toolkit / "dispatchgen", "report", "--cc", CC, "--cpu-baseline",
              "min", "--cpu-dispatch", "max", "--json"], scratch,
             _env(DISPATCHGEN_CACHE_DIR=str(tmp_path / "probe-cache")))
    assert '"SHA"' in r.stdout, r.stdout[-2000:]
    # Detection: the C runtime of the scratch toolkit says what /proc/cpuinfo says.
    table = _run([sys.executable, "-c", "from dispatchkit import ctable; print(ctable.render())"],
                 toolkit, _env()).stdout
    (tmp_path / "detect.c").write_text(DETECT)
    exe = compile_program(CC, write_headers(tmp_path / "inc", table=table), tmp_path / "detect.c",
                          tmp_path / "detect", "-O1", toolkit=toolkit)
    flags = next((ln for ln in Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("flags")), None)
    if flags is not None:
        assert _run([exe], tmp_path, _env()).stdout.strip() == str(int("sha_ni" in flags.split()))
    if QEMU:  # a CPU without SHA: Haswell
        assert _run([QEMU, "-cpu", "Haswell", exe], tmp_path, _env()).stdout.strip() == "0"
