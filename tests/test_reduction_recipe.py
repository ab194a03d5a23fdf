"""docs/contributing.md's "Adding a reduction", followed literally on a scratch
copy by tools/reduction_recipe.py (issue 39, item 1): a throwaway FOLD
reduction, sumsq, is the table's row, its kernel source, a meson line and its
operators.toml entries, four files and no engine edit.

Applying and counting takes seconds; building the copy (one target per
kernel source, no CUDA: 36 s on two cores without ccache) and checking sumsq
against NumPy is one build, shared by nothing else.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "contributing.md"


def _recipe():
    return load_file(ROOT / "tools" / "reduction_recipe.py", "reduction_recipe")


def test_the_recipe_touches_four_files_and_no_engine(tmp_path, capsys):
    assert _recipe().main(["--no-build", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the recipe touched 4 files" in out, out
    for name in ("reduction_table.h", "sumsq.dispatch.c", "meson.build", "operators.toml"):
        assert name in out


def test_the_recipe_is_the_one_the_docs_write():
    """The script's four steps are the section's four steps, file by file."""
    text = DOC.read_text()
    section = text[text.index("## Adding a reduction"):]
    section = section[:section.index("\n## ", 3)]
    for path in ("sources/include/dispatch/reduction_table.h", "sources/kernels/meson.build",
                 "sources/dispatcher/operators.toml", "tools/reduction_recipe.py",
                 "DISPATCH_KERNELS_REDUCE(FOLD_"):
        assert path in section, path
    assert re.search(r"\| a reduction \| 4 \| 0 \| yes", text), "the summary table's count"


def test_the_recipe_builds_and_sumsq_is_numpys(tmp_path, capsys):
    assert _recipe().main(["--keep", str(tmp_path)]) == 0
    assert "sumsq: every check holds" in capsys.readouterr().out
