"""Shared fixtures: a meson build of this repository per C compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    """A build tool from this venv or PATH (skips the test when absent)."""
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if not found:
        pytest.skip(f"{name} is not installed (pip install -r requirements-dev.txt)")
    return found


@pytest.fixture(scope="session")
def build_tool():
    """tool(name) -> path of meson, ninja, ... (skips when absent)."""
    return tool


@pytest.fixture(scope="session")
def meson_tree(tmp_path_factory):
    """build(cc) -> a build dir of this repository compiled by cc (once per
    session and compiler; a compiler that is not installed skips)."""
    trees: dict[str, Path] = {}

    def build(cc: str) -> Path:
        if cc not in trees:
            if not shutil.which(cc):
                pytest.skip(f"{cc} is not installed")
            meson, ninja = tool("meson"), tool("ninja")
            tree = tmp_path_factory.mktemp(f"tree-{cc}")
            env = {**os.environ, "CC": cc}
            out = []
            # release: the optimisation level pip builds with (more warnings show)
            for cmd in ([meson, "setup", str(tree), str(REPO), "-Dtests=true",
                         "-Dbuildtype=release"],
                        [ninja, "-C", str(tree)]):
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-4000:]}{r.stderr[-4000:]}"
                out.append(r.stdout + r.stderr)
            (tree / "build-output.txt").write_text(out[1])  # the compile log
            trees[cc] = tree
        return trees[cc]

    return build
