"""The units a parallel run (pytest-xdist, `--dist loadgroup`) hands to its
workers: one per test file, so a file's module fixtures (a build, a scratch
copy of the checkout) are made once; and the files that share a costly
session fixture are one unit, so its build is made once, on one worker, and
reused there as in a serial run (tests/conftest.py's meson_tree takes its
objects from the ccache test_build_cache.py fills, for one)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# Session fixtures that build something (a tree of this checkout, a wheel, a
# WINEPREFIX): a second worker using one would build it again. The cheap ones
# (build_tool, sanitized, ...) do not bind files together.
TESTS = Path(__file__).resolve().parent
COSTLY_SESSION_FIXTURES = ("runtime_ccache", "meson_tree", "toolkit_wheel",
                           "builders_wheelhouse", "cross_tree", "cross_meson_test", "wine_env")


def units(items: Iterable) -> dict[Path, str]:
    """{test file: its unit's name}: the file's path under tests/, or, for
    files bound by a costly fixture, the first such file's (in collection
    order) joined by '+' to the fixtures that bind them."""
    items = list(items)
    files = list(dict.fromkeys(item.path for item in items))
    parent = {f: f for f in files}

    def root(f: Path) -> Path:
        while parent[f] != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    first_user: dict[str, Path] = {}
    bound: dict[Path, set[str]] = {f: set() for f in files}
    for item in items:
        for name in COSTLY_SESSION_FIXTURES:
            if name in item.fixturenames:
                bound[item.path].add(name)
                other = first_user.setdefault(name, item.path)
                a, b = root(other), root(item.path)
                if a != b:  # the earlier file stays the root: names follow collection order
                    a, b = sorted((a, b), key=files.index)
                    parent[b] = a
    names: dict[Path, str] = {}
    for f in files:
        r = root(f)
        members = [g for g in files if root(g) == r]
        fixtures = sorted(set().union(*(bound[g] for g in members)))
        name = r.relative_to(TESTS).as_posix() if r.is_relative_to(TESTS) else str(r)
        names[f] = name if len(members) == 1 else "+".join([name, *fixtures])
    return names
