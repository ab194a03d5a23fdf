"""A parallel run's units (tests/_parallel_units.py, applied by conftest as
xdist_group marks): one per file, and one for the files sharing a session
fixture that builds, so nothing is built twice on two workers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from _parallel_units import COSTLY_SESSION_FIXTURES, TESTS, units


@dataclass
class Item:  # what units() reads of a pytest item
    path: Path
    fixturenames: tuple[str, ...] = ()


def test_each_file_is_its_own_unit_unless_a_costly_fixture_binds_it():
    a, b, c, d, e = (TESTS / f"test_{n}.py" for n in "abcde")
    sub = TESTS / "toolkit" / "test_a.py"
    got = units([Item(a, ("tmp_path",)), Item(b, ("meson_tree", "runtime_ccache")),
                 Item(c), Item(d, ("runtime_ccache",)), Item(e, ("wine_env",)),
                 Item(c, ("build_tool",)), Item(sub), Item(e, ("toolkit_wheel",)),
                 Item(a, ("toolkit_wheel",))])
    # a and e share toolkit_wheel, b and d runtime_ccache: two units, each
    # named by its first file; build_tool (cheap) binds nothing.
    assert got[c] == "test_c.py" and got[sub] == "toolkit/test_a.py"
    assert got[a] == got[e] == "test_a.py+toolkit_wheel+wine_env"
    assert got[b] == got[d] == "test_b.py+meson_tree+runtime_ccache"


def test_the_units_are_the_same_in_any_collection_order_of_items_within_files():
    a, b = TESTS / "test_a.py", TESTS / "test_b.py"
    one = units([Item(a), Item(b, ("cross_tree",)), Item(a, ("cross_meson_test", "cross_tree"))])
    two = units([Item(a, ("cross_meson_test", "cross_tree")), Item(b, ("cross_tree",)), Item(a)])
    assert one == two == {a: "test_a.py+cross_meson_test+cross_tree",
                          b: "test_a.py+cross_meson_test+cross_tree"}


def test_this_session_marks_every_test_with_its_files_unit(request):
    by_file, by_fixture = defaultdict(set), defaultdict(set)
    for item in request.session.items:
        marks = [m.args[0] for m in item.iter_markers("xdist_group")]
        assert len(marks) == 1, item.nodeid
        by_file[item.path].add(marks[0])
        for name in COSTLY_SESSION_FIXTURES:
            if name in item.fixturenames:
                by_fixture[name].add(marks[0])
    assert {f: g for f, g in by_file.items() if len(g) != 1} == {}
    assert {n: g for n, g in by_fixture.items() if len(g) != 1} == {}
    # The suite has its shared builds (this checkout's trees, the toolkit's
    # wheel) wherever the whole suite was collected.
    if len(by_file) > 50:
        assert {"runtime_ccache", "meson_tree", "toolkit_wheel"} <= set(by_fixture)
