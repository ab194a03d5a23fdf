"""The units a parallel run (pytest-xdist, `--dist loadfile`) hands to its
workers: one per test file, so a file's module fixtures (a build, a scratch
copy of the checkout) are made once; and one for the files that share a
costly session fixture, so its build is made once, on one worker, and reused
there as in a serial run (tests/conftest.py's meson_tree takes its objects
from the ccache test_build_cache.py fills, for one).

xdist's own grouping by mark (`--dist loadgroup`, 3.8) renames each test's
node id, which pytest 9.2 no longer reads (Node.nodeid is its _id); the
scheduler here (conftest's pytest_xdist_make_scheduler) groups by the file
named in the node id.
tests/test_parallel_units.py checks SHARED_BUILDS against the fixtures the
collected tests really use."""

from __future__ import annotations

# Session fixtures that build something (a tree of this checkout, a wheel, a
# WINEPREFIX): a second worker using one would build it again. The cheap ones
# (build_tool, sanitized, ...) do not bind files together.
COSTLY_SESSION_FIXTURES = ("runtime_ccache", "meson_tree", "toolkit_wheel",
                           "builders_wheelhouse", "cross_tree", "cross_meson_test", "wine_env")

# {unit: the test files (under tests/) that share its costly fixtures}
SHARED_BUILDS = {
    "this checkout's trees (meson_tree, runtime_ccache)":
        ("test_build_cache.py", "test_compilers.py", "test_kernels_isa.py"),
    "the cross trees (cross_tree, cross_meson_test)":
        ("test_cross_aarch64.py", "test_cross_matrix.py"),
    "the toolkit's wheel (toolkit_wheel, builders_wheelhouse)":
        ("test_docs_snippets.py", "test_downstream_extension.py", "test_three_builders.py",
         "test_toolkit_wheel.py"),
    "the WINEPREFIX (wine_env)":
        ("test_windows_guard.py", "test_windows_hello.py", "test_windows_mingw.py"),
}
_UNIT_OF_FILE = {f"tests/{f}": unit for unit, files in SHARED_BUILDS.items() for f in files}


def unit_of(nodeid: str) -> str:
    """The unit of a test, by its node id (relative to the rootdir, as xdist
    sees it): its file's shared unit, else the file itself."""
    path = nodeid.split("::", 1)[0]
    return _UNIT_OF_FILE.get(path, path)


def scheduler_class():
    """xdist's file scheduler, its scope a test's unit (imported here, not at
    the top: a run without xdist never calls this)."""
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return UnitScheduling
