"""The scratch copy that the contributor recipes are followed on
(tools/reduction_recipe.py, tools/dtype_recipe.py): copy the checkout, edit
it as docs/contributing.md says, count what changed, build it quickly, and run
a check against that build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_checkout(dst: Path) -> None:
    """The tracked and untracked-but-not-ignored files of the checkout."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for raw in names:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the work tree
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel)


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one `old` of path by `new`; stop when the recipe no longer matches."""
    text = path.read_text()
    if text.count(old) != 1:
        raise SystemExit(f"recipe: {path}: expected one {old.strip()!r}; the recipe no longer "
                         "matches the source (update docs/contributing.md and this script)")
    path.write_text(text.replace(old, new))


def changed_files(a: Path, b: Path) -> list[str]:
    """Files that differ between two trees, or exist in one only."""
    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    fa, fb = files(a), files(b)
    return sorted(k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k))


def apply_to_copy(work: Path, apply) -> tuple[Path, list[str]]:
    """The checkout copied to work/before and work/src, `apply(src)` run on
    the second; src and the files the recipe changed."""
    before, src = work / "before", work / "src"
    copy_checkout(before)
    shutil.copytree(before, src)
    apply(src)
    return src, changed_files(before, src)


def build_copy(src: Path, work: Path, what: str) -> dict:
    """Build the runtime of the copy at src into work/site (one target per
    kernel source, no C tests, no CUDA module); the environment that imports it."""
    site = work / "site"
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
           "--target", str(site), f"-Cbuild-dir={work / 'build'}",
           "-Csetup-args=-Dcuda=disabled", "-Csetup-args=-Dcpu-dispatch=none",
           "-Csetup-args=-Dtests=false", str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"recipe: the copy with {what} does not build:\n" + r.stdout[-4000:] +
                         r.stderr[-4000:])
    return dict(os.environ, PYTHONPATH=str(site))


def run_check(check: str, work: Path, env: dict, what: str) -> None:
    """Run the Python `check` against the copy's build; stop with its error."""
    r = subprocess.run([sys.executable, "-c", check], cwd=work, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"recipe: {what} built but is wrong:\n" + r.stderr[-4000:])
    print(r.stdout.strip())
