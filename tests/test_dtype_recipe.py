"""docs/contributing.md's "Adding a dtype", followed literally on a scratch
copy by tools/dtype_recipe.py (issue 39, item 3): `uint16` is one line
appended to the dtype list, one file outside tests/, and then works through
the public interface (wrapping arithmetic, comparisons, sum -> int64,
max/argmax, casts, range errors, promotion, NumPy interop);
`float8_e4m3fn` is two lines of the same file (its list line and its
format's row), and then works through the public interface against a
pure-Python reference of its format (tools/narrow_float_check.py: casts bit
for bit, every operator as float32 then one rounding, float32 reductions,
promotion, printing, DLPack); tests/test_tables_agree.py passes against the
copy's build.

Applying and counting takes seconds; building the copy (one target per
kernel source, no CUDA, as test_reduction_recipe.py's) and checking it is one
build of both dtypes (each recipe counted on its own copy), shared by the
two tests that read it.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "contributing.md"


def _recipe():
    tools = str(ROOT / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)  # its helpers come from tools/recipe_scratch.py
    return load_file(ROOT / "tools" / "dtype_recipe.py", "dtype_recipe")


def test_an_integer_dtype_is_one_line_in_one_file_as_the_docs_count(tmp_path, capsys):
    assert _recipe().main(["--no-build", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the recipe touched 1 files" in out, out
    assert "sources/include/dispatch/dtype.h" in out
    assert re.search(r"\| an integer dtype \| 1 \| 0 \|", DOC.read_text()), "the table's count"


def test_a_narrow_float_is_two_lines_of_one_file_as_the_docs_count(tmp_path, capsys):
    recipe = _recipe()
    assert recipe.main(["float", "--no-build", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    found = re.search(r"float8_e4m3fn: the recipe touched (\d+) files \(tests/ not counted, "
                      r"none added\): (.*)", out)
    assert found, out
    assert int(found[1]) <= recipe.FLOAT_LIMIT == 6  # issue 39's limit for a narrow float
    assert found[1] == "1" and found[2] == "sources/include/dispatch/dtype.h", out
    text = (tmp_path / "src" / recipe.LIST).read_text()
    assert recipe.FLOAT_LINE in text and recipe.FORMAT_LINE in text  # both lines, nothing else
    assert re.search(r"\| a narrow float dtype \| 1 \| 0 \|", DOC.read_text()), "the table"


def test_the_recipe_is_the_one_the_docs_write():
    """The section names the script, the lists, and the counts it measures."""
    text = DOC.read_text()
    section = text[text.index("## Adding a dtype"):]
    section = " ".join(section[:section.index("\n## ", 3)].split())
    for needle in ("tools/dtype_recipe.py", "DISPATCH_FORALL_DTYPES",
                   "sources/include/dispatch/dtype.h", "Note [Integer facts]",
                   "an integer touches 1 file", "DISPATCH_FORALL_BITS_FLOATS",
                   "Note [Narrow floats]", "a narrow float touches 1 file",
                   "tools/dtype_recipe.py float", "tools/narrow_float_check.py"):
        assert needle in section, needle
    recipe = _recipe()
    assert recipe.FLOAT_LINE.strip() in section and recipe.FORMAT_LINE.strip() in section


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Both recipes, each counted on its own copy, built together once: what
    the script printed, and its error (None when every check held)."""
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            _recipe().main(["integer", "float", "--keep", str(tmp_path_factory.mktemp("dtypes"))])
        except SystemExit as e:  # a failing check: the tests below say which
            error = str(e)
    return out.getvalue(), error


def test_the_recipe_builds_and_uint16_works(built):
    out, error = built
    assert "uint16: every check holds" in out, (out, error)
    assert "tests/test_tables_agree.py: " in out and " passed" in out, (out, error)


def test_the_float_recipe_builds_and_float8_e4m3fn_works(built):
    out, error = built
    assert error is None, error
    for step in ("facts", "widening", "rounding", "casts", "python_values", "binary_ops",
                 "unary_ops", "scalars_and_in_place", "comparisons_and_where", "reductions",
                 "promotion", "printing", "dlpack"):
        assert f"float8_e4m3fn: {step}: ok" in out, (step, out)
    assert "float8_e4m3fn: every check holds" in out, out


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
