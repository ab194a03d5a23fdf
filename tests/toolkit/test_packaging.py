"""The toolkit's own packaging (tools/dispatchgen) states one version, and
what it ships sits in the one package folder its wheel installs."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"


def test_the_version_is_the_same_everywhere_the_toolkit_states_it():
    from dispatchkit import __version__
    project = tomllib.loads((TOOLKIT / "pyproject.toml").read_text())["project"]
    pc = (TOOLKIT / "dispatchkit" / "lib" / "pkgconfig" / "dispatchgen.pc").read_text()
    cmake = (TOOLKIT / "dispatchkit" / "cmake" / "dispatchgenConfigVersion.cmake").read_text()
    assert project["version"] == __version__
    assert re.search(r"^Version: (.+)$", pc, re.M)[1] == __version__
    assert re.search(r'^set\(PACKAGE_VERSION "(.+)"\)$', cmake, re.M)[1] == __version__


def test_everything_the_toolkit_ships_is_inside_its_package():
    """The wheel holds dispatchkit/ only: headers, CPU runtime sources and
    checks live there, not elsewhere in the repository."""
    pkg = TOOLKIT / "dispatchkit"
    for rel in ("include/dispatch/cpu_dispatch.h", "include/dispatch/cpu_features.h",
                "include/dispatch/cpu_runtime.h", "include/dispatch/cpu_module.h",
                "cpu/cpu_features.c", "cpu/cpu_detect.c", "cpu/cpu_dispatch_trace.c",
                "cpu/cpu_module_guard.c", "cpu/cpu_program_guard.c", "cpu/cpu_internal.h",
                "checks/cpu_avx2.c", "lib/pkgconfig/dispatchgen.pc", "__main__.py",
                "cmake/dispatchgenConfig.cmake", "cmake/dispatchgenConfigVersion.cmake",
                "setuptools_ext.py"):
        assert (pkg / rel).is_file(), rel
    root = TOOLKIT.parents[1]
    assert not list((root / "sources" / "include" / "dispatch").glob("cpu_*.h"))
    assert not (root / "tools" / "dispatchkit").exists()


def _flit(hook: str, out: Path) -> Path:
    """Runs flit_core's PEP 517 hook `hook` in the toolkit's folder (as pip's
    build would), into `out`; returns the file it wrote."""
    code = (f"import sys, flit_core.buildapi as b; "
            f"print(b.{hook}(sys.argv[1]))")
    r = subprocess.run([sys.executable, "-c", code, str(out)], cwd=TOOLKIT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out / r.stdout.strip().splitlines()[-1]


def test_the_sdist_holds_every_include_and_the_launcher(tmp_path):
    """`[tool.flit.sdist] include` names files that exist, and the sdist built
    from it carries the `dispatchgen` launcher beside the package."""
    pytest.importorskip("flit_core", reason="requirements-dev.txt installs flit_core")
    pyproject = tomllib.loads((TOOLKIT / "pyproject.toml").read_text())
    include = pyproject["tool"]["flit"]["sdist"]["include"]
    missing = [name for name in include if not (TOOLKIT / name).exists()]
    assert not missing, f"sdist include names files that do not exist: {missing}"
    sdist = _flit("build_sdist", tmp_path)
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for name in include:
        assert name.rstrip("/") in names or any(n.startswith(name) for n in names), name
    assert "dispatchgen" in names
    assert "dispatchkit/cpu/cpu_features.c" in names
    assert "README.md" in names and "pyproject.toml" in names
    tracked = subprocess.run(["git", "ls-files", "tests"], cwd=TOOLKIT, capture_output=True,
                             text=True).stdout.split()
    assert tracked and set(tracked) <= names


def test_the_wheel_has_project_urls_and_its_readme_no_dangling_links(tmp_path):
    """The wheel's description is the toolkit's README: it links nothing that the
    wheel does not ship (no relative links), and the wheel names where the
    repository and its documentation are (Project-URL)."""
    pytest.importorskip("flit_core", reason="requirements-dev.txt installs flit_core")
    readme = (TOOLKIT / "README.md").read_text()
    relative = [t for t in re.findall(r"\]\(([^)\s]+)\)", readme)
                if not re.match(r"[a-z]+://", t)]
    assert not relative, f"README links the wheel does not ship: {relative}"
    wheel = _flit("build_wheel", tmp_path)
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(meta).decode()
        (entry_points,) = [n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = z.read(entry_points).decode()
        assert "dispatchkit/cmake/dispatchgenConfig.cmake" in z.namelist()
    # scikit-build-core adds the package's folder to CMAKE_PREFIX_PATH
    assert "[cmake.prefix]\ndispatchgen=dispatchkit\n" in entry_points, entry_points
    urls = re.findall(r"^Project-URL: (\w+), (\S+)$", text, re.M)
    assert {name for name, _ in urls} >= {"Repository", "Documentation"}, urls
    assert all(url.startswith("https://") for _, url in urls), urls
