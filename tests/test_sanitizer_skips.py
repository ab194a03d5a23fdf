"""The sanitizer job skips only files that never load the ASan build
(conftest.RUN_NO_SANITIZED_CODE, and the toolkit's tests under
conftest.TOOLKIT_TESTS): each named file exists and none imports the
package, so a file that starts using it cannot stay on the list unnoticed."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

TESTS = Path(__file__).resolve().parent


@functools.cache
def _conftest():
    return load_file(TESTS / "conftest.py", "_conftest_copy")


def _skip_list() -> frozenset:
    return _conftest().RUN_NO_SANITIZED_CODE


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_listed_files_exist_and_never_import_the_package():
    listed = _skip_list()
    assert listed
    for name in sorted(listed):
        path = TESTS / name
        assert path.is_file(), f"{name} is on the sanitizer skip list but does not exist"
        assert "dispatch" not in _imports(path), f"{name} imports dispatch: it runs sanitized code"


def test_the_toolkit_tests_never_import_the_package():
    folder = _conftest().TOOLKIT_TESTS
    files = sorted(folder.rglob("*.py"))
    assert folder == TESTS / "toolkit" and len(files) > 10
    for path in files:
        assert "dispatch" not in _imports(path), f"{path.name} imports dispatch: it runs sanitized code"
