"""The Python floor in pyproject.toml is what the code needs, no more, no less.

The package (dispatch/, the build-time generators in tools/) needs the
newest of the features listed in NEEDS that it uses; the toolkit's generator
(tools/dispatchgen/dispatchkit/, tools/dispatchgen/dispatchgen) promises Python >= 3.9 to projects
that run it from a bare checkout, so it may use none newer.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLKIT_FLOOR = (3, 9)

# What a feature needs: stdlib modules by import name, C API by identifier.
NEEDS_MODULES = {"tomllib": (3, 11), "graphlib": (3, 9), "zoneinfo": (3, 9)}
NEEDS_C_API = {
    "Py_NewRef": (3, 10), "Py_XNewRef": (3, 10), "Py_IsNone": (3, 10),
    "PyModule_AddObjectRef": (3, 10), "PyType_GetModuleByDef": (3, 11),
    "PyErr_GetRaisedException": (3, 12), "PyLong_AsInt": (3, 13),
}


def _floor() -> tuple[int, int]:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)", spec.strip())
    assert m, f"requires-python {spec!r} is not a plain '>=X.Y' floor"
    return int(m.group(1)), int(m.group(2))


def _is_toolkit(p: Path) -> bool:
    rel = p.relative_to(ROOT).as_posix()
    return rel.startswith("tools/dispatchgen/dispatchkit/") or rel == "tools/dispatchgen/dispatchgen"


def _python_files() -> list[Path]:
    files = sorted((ROOT / "dispatch").rglob("*.py")) + sorted((ROOT / "tools").rglob("*.py"))
    files.append(ROOT / "tools" / "dispatchgen" / "dispatchgen")  # the launcher, no suffix
    assert files
    return files


def _imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _needed(files, c_files) -> tuple[tuple[int, int], list[str]]:
    need, why = (3, 0), []
    for p in files:
        for mod in _imported_modules(ast.parse(p.read_text(), str(p))) & NEEDS_MODULES.keys():
            why.append(f"{p.relative_to(ROOT)} imports {mod} ({NEEDS_MODULES[mod]})")
            need = max(need, NEEDS_MODULES[mod])
    for p in c_files:
        text = p.read_text()
        for name, v in NEEDS_C_API.items():
            if re.search(rf"\b{name}\b", text):
                why.append(f"{p.relative_to(ROOT)} calls {name} ({v})")
                need = max(need, v)
    return need, why


def test_the_running_python_meets_the_floor():
    assert sys.version_info[:2] >= _floor()


def test_the_floor_is_what_the_package_needs():
    files = [p for p in _python_files() if not _is_toolkit(p)]
    need, why = _needed(files, sorted((ROOT / "dispatch").glob("*.c")))
    assert _floor() == need, (
        f"pyproject says >= {_floor()}, the code needs {need}: " + "; ".join(why))


def test_the_package_parses_at_the_floor():
    for p in _python_files():
        version = TOOLKIT_FLOOR if _is_toolkit(p) else _floor()
        ast.parse(p.read_text(), str(p), feature_version=version)


def test_the_toolkit_needs_nothing_past_its_promise():
    need, why = _needed([p for p in _python_files() if _is_toolkit(p)], [])
    assert need <= TOOLKIT_FLOOR, "; ".join(why)
    text = (ROOT / "tools" / "dispatchgen" / "dispatchkit" / "__init__.py").read_text()
    assert "Python >= %d.%d" % TOOLKIT_FLOOR in text
    toolkit = tomllib.loads((ROOT / "tools" / "dispatchgen" / "pyproject.toml").read_text())
    assert toolkit["project"]["requires-python"] == ">=%d.%d" % TOOLKIT_FLOOR


def test_ruff_targets_the_floor():
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    assert ruff["target-version"] == "py%d%d" % _floor()
