"""The toolkit's own packaging (tools/dispatchgen) states one version, and
what it ships sits in the one package folder its wheel installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"


def test_the_version_is_the_same_everywhere_the_toolkit_states_it():
    from dispatchkit import __version__
    project = tomllib.loads((TOOLKIT / "pyproject.toml").read_text())["project"]
    pc = (TOOLKIT / "dispatchkit" / "lib" / "pkgconfig" / "dispatchgen.pc").read_text()
    assert project["version"] == __version__
    assert re.search(r"^Version: (.+)$", pc, re.M)[1] == __version__


def test_everything_the_toolkit_ships_is_inside_its_package():
    """The wheel holds dispatchkit/ only: headers, CPU runtime sources and
    checks live there, not elsewhere in the repository."""
    pkg = TOOLKIT / "dispatchkit"
    for rel in ("include/dispatch/cpu_dispatch.h", "include/dispatch/cpu_features.h",
                "include/dispatch/cpu_runtime.h", "include/dispatch/cpu_module.h",
                "cpu/cpu_features.c", "cpu/cpu_detect.c", "cpu/cpu_dispatch_trace.c",
                "cpu/cpu_module_guard.c", "cpu/cpu_internal.h", "checks/cpu_avx2.c",
                "lib/pkgconfig/dispatchgen.pc", "__main__.py"):
        assert (pkg / rel).is_file(), rel
    root = TOOLKIT.parents[1]
    assert not list((root / "sources" / "include" / "dispatch").glob("cpu_*.h"))
    assert not (root / "tools" / "dispatchkit").exists()
