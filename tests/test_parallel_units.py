"""A parallel run's units (tests/_parallel_units.py, the scheduler conftest
gives pytest-xdist): one per file, and one for the files sharing a session
fixture that builds, so nothing is built twice on two workers."""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

from _parallel_units import COSTLY_SESSION_FIXTURES, SHARED_BUILDS, scheduler_class, unit_of


def test_a_test_is_its_files_unit_or_its_shared_builds():
    assert unit_of("tests/test_ops_numpy.py::test_add[int8]") == "tests/test_ops_numpy.py"
    assert unit_of("tests/toolkit/test_targets.py::test_x") == "tests/toolkit/test_targets.py"
    trees = unit_of("tests/test_compilers.py::test_c_tests_pass[gcc]")
    assert trees == unit_of("tests/test_build_cache.py::test_second_clone_elsewhere_is_all_"
                            "ccache_hits") == unit_of("tests/test_kernels_isa.py::test_y")
    assert trees in SHARED_BUILDS and trees != unit_of("tests/test_cross_matrix.py::test_z")


def test_every_shared_file_exists_and_is_in_one_unit():
    files = [f for group in SHARED_BUILDS.values() for f in group]
    assert len(files) == len(set(files))
    here = os.path.dirname(__file__)
    assert [f for f in files if not os.path.exists(os.path.join(here, f))] == []


def test_the_scheduler_splits_node_ids_into_units():
    pytest.importorskip("xdist")
    cls = scheduler_class()
    sched = cls.__new__(cls)  # its scope alone: a worker's config has no workers to count
    ids = ["tests/test_compilers.py::test_a", "tests/test_build_cache.py::test_b",
           "tests/test_tensor_views.py::test_c[x-y]"]
    assert [sched._split_scope(i) for i in ids] == [unit_of(i) for i in ids]
    assert sched._split_scope(ids[0]) == sched._split_scope(ids[1])


def test_every_costly_fixture_is_used_within_one_unit(request):
    """SHARED_BUILDS against what the collected tests use (the whole suite's
    collection under `pytest`; a selection checks what it collected)."""
    units_of = defaultdict(set)
    for item in request.session.items:
        for name in COSTLY_SESSION_FIXTURES:
            if name in item.fixturenames:
                units_of[name].add(unit_of(item.nodeid))
    assert {n: u for n, u in units_of.items() if len(u) != 1} == {}
    if len({item.path for item in request.session.items}) > 50:
        assert {"runtime_ccache", "meson_tree", "toolkit_wheel", "cross_tree",
                "wine_env"} <= set(units_of)
