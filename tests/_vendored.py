"""A downstream project with the toolkit vendored, as the docs tell a user
to do (docs/toolkit.md): tools/dispatchgen inside the project, where the
examples' build files look first. The tests link it to this checkout's
toolkit instead of copying it, so a change to the toolkit is what they
build with."""

from __future__ import annotations

import shutil
from pathlib import Path

TOOLKIT = Path(__file__).resolve().parents[1] / "tools" / "dispatchgen"


def vendor_toolkit(src: Path) -> Path:
    """src/tools/dispatchgen, a link to this checkout's toolkit; returns src."""
    (src / "tools").mkdir(exist_ok=True)
    (src / "tools" / "dispatchgen").symlink_to(TOOLKIT, target_is_directory=True)
    return src


def vendored_copy(example: Path, dest: Path) -> Path:
    """A copy of the example project at dest, the toolkit vendored; returns dest."""
    shutil.copytree(example, dest)
    return vendor_toolkit(dest)
