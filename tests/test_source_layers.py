"""The C sources' rooms (issue 28, item 3): each folder of sources/ is one
layer of docs/design.md's drawing ("The C sources in layers"), a file includes
the headers of its own layer or lower ones only, and no set of files includes
itself in a circle (include guards hide a circle from the compiler, not from
the next reader).

A public header (one of sources/include/dispatch/) belongs to the folder
that implements it: the one with a .c file of its name, else the one
defining most of the functions it declares. Read from the source, so it needs no build.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "sources"
PUBLIC = SOURCES / "include" / "dispatch"
DESIGN = ROOT / "docs" / "design.md"
SUFFIXES = {".c", ".h", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _layers() -> dict[str, int]:
    """folder -> height, from the drawing's `sources/<folder>/  NAME` lines:
    the first drawn is the highest; sources/cuda/, "a module of its own",
    sits above them all (nothing includes it)."""
    text = DESIGN.read_text()
    block = text[text.index("## The C sources in layers"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    order = re.findall(r"^sources/(\w+)/", block, re.M)
    assert {"dispatcher", "iterator", "kernels", "core", "cpu", "cuda"} <= set(order), order
    drawn = [f for f in order if f != "cuda"]
    heights = {f: len(drawn) - i for i, f in enumerate(drawn)}
    heights["cuda"] = len(drawn) + 1
    return heights


def _files() -> list[Path]:
    return sorted(p for p in SOURCES.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def _includes(path: Path) -> list[Path]:
    """The files of this tree that `path` includes (generated and toolkit
    headers are not in sources/: they are the layers below all of these)."""
    out = []
    for name in INCLUDE.findall(path.read_text(errors="replace")):
        for candidate in (path.parent / name, SOURCES / "include" / name):
            if candidate.is_file():
                out.append(candidate.resolve())
                break
    return out


def _folder(path: Path) -> str:
    return path.relative_to(SOURCES).parts[0]


def _owner(header: Path, files: list[Path]) -> str:
    """The folder that implements a public header."""
    for p in files:
        if p.stem == header.stem and p.suffix in (".c", ".cu") and _folder(p) != "include":
            return _folder(p)
    declared = set(re.findall(r"\b(dispatch_\w+)\s*\(", header.read_text()))
    counts: dict[str, int] = {}
    for p in files:
        if _folder(p) == "include" or p.suffix not in (".c", ".cu"):
            continue
        text = p.read_text(errors="replace")
        for fn in declared:
            # a definition: the name at the start of a line's declarator, then a body
            if re.search(rf"^\w[\w \*]*\b{fn}\s*\([^;{{]*\)\s*\{{", text, re.M):
                counts[_folder(p)] = counts.get(_folder(p), 0) + 1
    assert counts, f"{header.name}: no folder of sources/ implements it"
    return max(sorted(counts), key=counts.get)


def _circles(graph: dict[Path, list[Path]]) -> list[list[Path]]:
    """Each include circle once (iterative DFS over the file graph)."""
    state: dict[Path, int] = {}
    found = []
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(graph.get(start, [])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(graph.get(nxt, []))))
                path.append(nxt)
    return found


@pytest.fixture(scope="module")
def tree():
    files = _files()
    graph = {p.resolve(): _includes(p) for p in files}
    owners = {p.resolve(): _owner(p, files) for p in sorted(PUBLIC.glob("*.h"))}
    return files, graph, owners


def _name(p: Path) -> str:
    return str(p.relative_to(SOURCES.resolve()))


def test_the_circle_finder_finds_circles():
    a, b, c = Path("/a.h"), Path("/b.h"), Path("/c.h")
    assert _circles({a: [b], b: [c], c: []}) == []
    assert _circles({a: [b], b: [a], c: []}) == [[a, b, a]]


def test_every_public_header_belongs_to_a_drawn_folder(tree):
    _, _, owners = tree
    layers = _layers()
    assert owners, "no public headers found"
    for header, folder in owners.items():
        assert folder in layers, f"{header.name} belongs to {folder}/, which the drawing lacks"


def test_no_include_circle_in_sources(tree):
    _, graph, _ = tree
    circles = [" -> ".join(_name(p) for p in c) for c in _circles(graph)]
    assert circles == []


def _upward(files, graph, owners, layers) -> list[str]:
    """Every include of a header whose folder sits above the includer's."""
    bad = []
    for p in files:
        here = owners.get(p.resolve(), _folder(p))
        for inc in graph[p.resolve()]:
            there = owners.get(inc, _folder(inc))
            if layers.get(there, 0) > layers.get(here, 0):
                bad.append(f"{_name(p.resolve())} ({here}) includes {_name(inc)} ({there})")
    return bad


def test_the_drawing_orders_the_folders():
    layers = _layers()
    assert layers["cuda"] > layers["dispatcher"] > layers["iterator"] > layers["kernels"]
    assert layers["kernels"] > layers["core"] > layers["cpu"]


def test_no_file_includes_a_higher_layer(tree):
    files, graph, owners = tree
    assert _upward(files, graph, owners, _layers()) == []


def test_the_layer_check_sees_an_upward_include(tree):
    files, graph, owners = tree
    loops_c = (SOURCES / "core" / "loops.c").resolve()
    iterator_h = (PUBLIC / "iterator.h").resolve()
    assert owners[iterator_h] == "iterator"
    planted = {**graph, loops_c: graph[loops_c] + [iterator_h]}
    assert _upward(files, planted, owners, _layers()) == [
        "core/loops.c (core) includes include/dispatch/iterator.h (iterator)"]
