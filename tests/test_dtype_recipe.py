"""docs/contributing.md's "Adding a dtype", followed literally for an integer
on a scratch copy by tools/dtype_recipe.py (issue 39, item 3): `uint16` is one
line appended to the dtype list, one file outside tests/, and then works
through the public interface (wrapping arithmetic, comparisons, sum -> int64,
max/argmax, casts, range errors, promotion, NumPy interop) with
tests/test_tables_agree.py passing against the copy's build.

Applying and counting takes seconds; building the copy (one target per
kernel source, no CUDA, as test_reduction_recipe.py's) and checking it is one
build, shared by nothing else.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "contributing.md"


def _recipe():
    tools = str(ROOT / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)  # its helpers come from tools/recipe_scratch.py
    spec = importlib.util.spec_from_file_location("dtype_recipe",
                                                  ROOT / "tools" / "dtype_recipe.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["dtype_recipe"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_an_integer_dtype_is_one_line_in_one_file_as_the_docs_count(tmp_path, capsys):
    assert _recipe().main(["--no-build", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the recipe touched 1 files" in out, out
    assert "sources/include/dispatch/dtype.h" in out
    assert re.search(r"\| an integer dtype \| 1 \| 0 \|", DOC.read_text()), "the table's count"


def test_the_recipe_is_the_one_the_docs_write():
    """The section names the script, the list, and the count it measures."""
    text = DOC.read_text()
    section = text[text.index("## Adding a dtype"):]
    section = " ".join(section[:section.index("\n## ", 3)].split())
    for needle in ("tools/dtype_recipe.py", "DISPATCH_FORALL_DTYPES",
                   "sources/include/dispatch/dtype.h", "Note [Integer facts]",
                   "an integer touches 1 file"):
        assert needle in section, needle


def test_the_recipe_builds_and_uint16_works(tmp_path, capsys):
    assert _recipe().main(["--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "uint16: every check holds" in out, out
    assert "tests/test_tables_agree.py: " in out and " passed" in out, out


def _compile_dtype_c(tmp_path, extra_line: str | None):
    """sources/core/dtype.c compiled (syntax only) against a copy of dtype.h,
    with one more line appended to the list when extra_line is given."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    inc = tmp_path / "include"
    shutil.copytree(ROOT / "sources" / "include", inc)
    if extra_line:
        _recipe().edit(inc / "dispatch" / "dtype.h", _recipe().LAST,
                        _recipe().LAST[:-1] + " \\\n" + extra_line)
    return subprocess.run([cc, "-std=c11", "-fsyntax-only", f"-I{inc}",
                           str(ROOT / "sources" / "core" / "dtype.c")],
                          capture_output=True, text=True)


def test_an_unsigned_integer_beyond_int64_fails_to_compile(tmp_path):
    """Note [Integer facts]: every integer reads as int64, so a uint64 line is a
    compile error that names it, never a range that silently wraps."""
    assert _compile_dtype_c(tmp_path / "ok", None).returncode == 0
    r = _compile_dtype_c(tmp_path / "u64",
                         '    X(A, UINT64, "uint64", u64, uint64_t, 8, INT, "u", "Q", UInt)\n')
    assert r.returncode != 0
    assert "uint64: every value of an integer dtype must fit int64" in r.stderr, r.stderr
