"""Copies of this checkout, and the ccache the session's gcc builds of it share.

A build in `<copy>/build` compiles with the same lines whatever folder the
copy is in (the generated files and compile lines hold no absolute path:
docs/toolkit.md "Builds that cache and distribute"), so two such builds with
the same options and compiler share every object through one CCACHE_DIR.
test_compilers.py's gcc tree and test_build_cache.py's first clone are two
such builds: whichever runs second takes its objects from the cache."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def copy_checkout(dest: Path) -> Path | None:
    """The checkout's files (tracked and untracked-not-ignored) copied to dest;
    None where this is not a git checkout (nothing says which files are its)."""
    if not (REPO / ".git").exists() or not shutil.which("git"):
        return None
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def ccache_counts_hits() -> bool:
    """ccache is installed and new enough (4.2) to print its counters."""
    return bool(shutil.which("ccache")) and subprocess.run(
        ["ccache", "--print-stats"], capture_output=True).returncode == 0
