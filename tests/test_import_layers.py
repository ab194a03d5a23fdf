"""The Python package's rooms (issue 28, item 3): every module of dispatch/ sits
in one layer of the table in docs/design.md ("Python layers"), imports only
its own layer or lower ones, and no set of modules imports itself in a circle.
Imports inside functions are the deliberate lazy ones only (NumPy, the CUDA
module's ctypes), each with a comment saying why.

Read from the source (ast), so it needs no build and sees every import,
module level or not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dispatch"
DESIGN = ROOT / "docs" / "design.md"

# Outside packages a function may import, lazily: each costs time or needs
# an optional install at import, and is needed by a few calls only.
LAZY_ALLOWED = {"numpy", "ctypes", "importlib.util"}


def _layer_table() -> dict[str, int]:
    """module -> layer, from the rows `| N | `mod`, `mod` | ... |` of design.md's table."""
    text = DESIGN.read_text()
    start = text.index("<!-- python-layers: read by tests/test_import_layers.py -->")
    layers: dict[str, int] = {}
    for row in text[start:].splitlines()[1:]:
        if not row.startswith("|"):
            if layers:
                break
            continue
        cells = [c.strip() for c in row.strip("|").split("|")]
        if not cells[0].isdigit():
            continue
        for name in re.findall(r"`([\w.]+)`", cells[1]):
            assert name not in layers, f"{name} is in two layers of the table"
            layers[name] = int(cells[0])
    return layers


def _modules() -> dict[str, Path]:
    """Every Python module of the package (generated .py.in templates too)."""
    out = {}
    for p in sorted(PACKAGE.iterdir()):
        if p.suffix == ".py" or p.name.endswith(".py.in"):
            out[p.name.split(".")[0]] = p
    return out


def _resolve(node: ast.ImportFrom | ast.Import, alias: ast.alias) -> str | None:
    """The dispatch module an import names ("_tensor"), else None (outside the package)."""
    if isinstance(node, ast.Import):
        parts = alias.name.split(".")
        return parts[1] if parts[0] == "dispatch" and len(parts) > 1 else None
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != "dispatch":
            return None
        return parts[1] if len(parts) > 1 else alias.name
    return node.module.split(".")[0] if node.module else alias.name


def _source(path: Path) -> str:
    """The module's text; a meson template's @VALUE@ placeholders read as 0."""
    return re.sub(r"@\w+@", "0", path.read_text())


def _imports(path: Path) -> list[tuple[str | None, str, int, bool]]:
    """(dispatch module or None, full name, line, inside a function) per imported name."""
    tree = ast.parse(_source(path), str(path))
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    full = alias.name if isinstance(child, ast.Import) else (child.module or "")
                    out.append((_resolve(child, alias), full, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return out


def _type_checking_lines(path: Path) -> set[int]:
    """Lines under `if TYPE_CHECKING:` (annotations only: never run)."""
    tree = ast.parse(_source(path))
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in _modules().items():
        graph[name] = {m for m, _, _, _ in _imports(path) if m is not None and m != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_the_parser_sees_imports():
    """Guard against a parser that finds nothing (then every check below passes)."""
    graph = _graph()
    assert "_tables" in graph["__init__"] or "_cpu" in graph["__init__"]
    assert any(graph.values())


def test_the_circle_finder_finds_circles():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_every_module_has_a_layer():
    layers = _layer_table()
    missing = sorted(set(_modules()) - set(layers))
    assert not missing, (f"modules without a layer in docs/design.md's Python layers table: "
                         f"{missing}; add each to the layer it belongs to")


def test_no_circle_in_the_package():
    circles = _circles(_graph())
    assert not circles, f"modules of dispatch/ that import each other in a circle: {circles}"


def test_no_module_imports_a_higher_layer():
    layers = _layer_table()
    bad = []
    for name, path in _modules().items():
        for target, _, line, _ in _imports(path):
            if target is None or target == name:
                continue
            if target not in layers:
                bad.append(f"dispatch/{path.name}:{line} imports {target}, which has no layer")
            elif layers[target] > layers.get(name, -1):
                bad.append(f"dispatch/{path.name}:{line} (layer {layers.get(name)}) imports "
                           f"{target} (layer {layers[target]})")
    assert not bad, "imports that go up the layers:\n" + "\n".join(bad)


def test_imports_inside_functions_are_the_deliberate_lazy_ones():
    bad = []
    for path in _modules().values():
        lines = path.read_text().splitlines()
        skip = _type_checking_lines(path)
        for target, full, line, in_function in _imports(path):
            if not in_function or line in skip:
                continue
            where = f"dispatch/{path.name}:{line}"
            if target is not None or full.startswith("."):
                bad.append(f"{where}: imports dispatch's {target or full} inside a function")
            elif full not in LAZY_ALLOWED:
                bad.append(f"{where}: imports {full} inside a function (lazy imports: "
                           f"{sorted(LAZY_ALLOWED)})")
            elif "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                bad.append(f"{where}: the lazy import of {full} needs a comment saying why")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", ["_errors", "_dtypes", "_devices", "_tensor", "_factories",
                                    "_interop"])
def test_the_rooms_exist(module):
    """Errors, dtypes, devices, the Tensor class, factories and interop are modules of their own."""
    assert module in _modules(), f"dispatch/{module}.py is missing"
