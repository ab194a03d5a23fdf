"""Every loop the CUDA module declares (has_loop in sources/cuda/cuda_elementwise.cuh)
has its own branch in Compute, and a loop without one is a compile error, never
its input returned (issue 39, item 2).

The first test reads the header (no nvcc, no GPU); the second compiles a copy
of it with one branch taken out and expects nvcc's static_assert, where nvcc
is on PATH.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CUDA = ROOT / "sources" / "cuda"
HEADER = CUDA / "cuda_elementwise.cuh"
TABLE = ROOT / "sources" / "dispatcher" / "operators.toml"


def _has_loop_body(text: str) -> str:
    start = text.index("constexpr bool has_loop(")
    return text[start:text.index("\n}\n", start)]


def _compute_body(text: str) -> str:
    start = text.index("template <int LOOP, typename T> struct Compute {")
    return text[start:text.index("\n};\n", start)]


def _table_loops() -> list[str]:
    import tomllib

    return [e["name"].upper() for e in tomllib.loads(TABLE.read_text())["loop"]]


def test_every_loop_cuda_declares_has_its_compute_branch():
    text = HEADER.read_text()
    declared = set(re.findall(r"DISPATCH_LOOP_(\w+)", _has_loop_body(text)))
    branches = re.findall(r"LOOP == DISPATCH_LOOP_(\w+)\)", _compute_body(text))
    assert declared, "has_loop names no loop: the header's shape changed, fix this test"
    assert declared <= set(_table_loops()), declared - set(_table_loops())
    missing = sorted(declared - set(branches))
    assert not missing, f"has_loop lists {missing} but Compute has no branch for them"
    assert len(branches) == len(set(branches)), "a loop with two branches in Compute"


def test_compute_has_no_default_branch_that_copies():
    body = _compute_body(HEADER.read_text())
    assert "default:" not in body and "switch (LOOP)" not in body
    assert "static_assert(LOOP != LOOP" in body


def _loops_header(dst: Path) -> None:
    """The generated dispatch/_loops.h (tools/opgen.py), as the build writes it."""
    (dst / "dispatch").mkdir(parents=True)
    subprocess.run([sys.executable, str(ROOT / "tools" / "opgen.py"), str(TABLE), "--loops-h",
                    str(dst / "dispatch" / "_loops.h")], check=True)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_a_declared_loop_without_its_branch_does_not_compile(tmp_path):
    cuda = tmp_path / "cuda"
    shutil.copytree(CUDA, cuda)
    header = cuda / "cuda_elementwise.cuh"
    text = header.read_text()
    branch = re.search(r"\n\s*else if constexpr \(LOOP == DISPATCH_LOOP_TANH\)[^\n]*", text)
    assert branch, "no TANH branch to take out"
    header.write_text(text.replace(branch.group(0), ""))
    gen = tmp_path / "gen"
    _loops_header(gen)
    (cuda / "probe.cu").write_text(
        '#include "cuda_elementwise.cuh"\n'
        "__global__ void probe(float *o, Args a) {\n"
        "    *o = Compute<DISPATCH_LOOP_TANH, float>::run(1.0f, 1.0f, 1.0f, a);\n"
        "}\n")
    r = subprocess.run(
        ["nvcc", "-std=c++17", "-gencode", "arch=compute_75,code=compute_75",
         f"-I{ROOT / 'sources' / 'include'}", f"-I{gen}",
         f"-I{ROOT / 'tools' / 'dispatchgen' / 'dispatchkit' / 'include'}", f"-I{cuda}",
         "-c", str(cuda / "probe.cu"), "-o", str(tmp_path / "probe.o")],
        capture_output=True, text=True)
    assert r.returncode != 0, "a has_loop loop without its Compute branch compiled"
    assert "has no case here" in r.stdout + r.stderr, r.stdout + r.stderr
