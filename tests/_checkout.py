"""Copies of this checkout, and the ccache the session's gcc builds of it share.

A build in `<copy>/build` compiles with the same lines whatever folder the
copy is in (the generated files and compile lines hold no absolute path:
docs/toolkit.md "Builds that cache and distribute"), so two such builds with
the same options and compiler share every object through one CCACHE_DIR.
test_compilers.py's gcc tree and test_build_cache.py's first clone are two
such builds (both `cc`, the gcc: ccache keys on the name a build calls its
compiler by): whichever runs second takes its objects from the cache.

A pip build is a third: meson-python configures in `<checkout>/.mesonpy-*`,
one folder below the sources as `build/` is, with the same options for the
C objects, and meson compiles through ccache by itself where it is
installed. So the session's cache starts as a copy of the user's one
(seed_ccache): in CI, where README's install has just filled it, the first
gcc build of a copy takes its objects from there instead of compiling them
all again (the second clone still proves two folders share every object)."""

from __future__ import annotations

import os
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


def same_compiler_as_cc(name: str) -> str:
    """`cc` where that runs the compiler `name` runs (ccache hashes the name a
    build calls its compiler by: meson's default and pip's builds say `cc`),
    else name itself."""
    found = [shutil.which(n) for n in ("cc", name)]
    if all(found) and os.path.realpath(found[0]) == os.path.realpath(found[1]):
        return "cc"
    return name


def ccache_counts_hits() -> bool:
    """ccache is installed and new enough (4.2) to print its counters."""
    return bool(shutil.which("ccache")) and subprocess.run(
        ["ccache", "--print-stats"], capture_output=True).returncode == 0


# A cache larger than this is a developer's own, not one build's: not copied.
SEED_LIMIT = 1 << 30


def seed_ccache(dest: Path) -> int:
    """Copy the user's ccache (`ccache -k cache_dir`) into dest, the
    session's: its entries, not its ccache.conf (the user's settings are not
    the session's) nor files in the middle of being written. Returns the
    bytes copied: 0 where there is no such cache or it is over SEED_LIMIT.
    Builds may write to it meanwhile (the sanitizer job's): a file that is
    gone by the time it is copied is left out."""
    found = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True, text=True)
    src = Path(found.stdout.strip()) if found.returncode == 0 else None
    if not src or not src.is_dir() or src.resolve() == dest.resolve():
        return 0
    size = 0
    for root, _, files in os.walk(src):
        for name in files:
            try:
                size += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass
        if size > SEED_LIMIT:
            return 0
    copied = 0

    def copy(a: str, b: str) -> None:
        nonlocal copied
        try:
            shutil.copy2(a, b)
            copied += os.stat(b).st_size
        except FileNotFoundError:
            pass

    shutil.copytree(src, dest, dirs_exist_ok=True, copy_function=copy,
                    ignore=shutil.ignore_patterns("ccache.conf", "*.tmp*", "*.lock", "lock*"))
    return copied
