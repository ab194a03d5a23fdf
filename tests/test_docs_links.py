"""The README and docs stand on their own, and no file names a path that is gone.

Every relative link in README.md and docs/*.md resolves inside the checkout;
every repository path named in a tracked file (``sources/core/loops.c``,
``tests/test_docs_links.py``, ...) exists, apart from the generated files and the
deliberately bad names that tests feed the tools.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(
    r"(?<![\w/.-])((?:sources|tools|tests|docs|dispatch|\.ci)/[A-Za-z0-9_./-]+"
    r"\.(?:c|h|py|md|toml|build|cdef|sh|txt|in|S|cu|cuh|json|ini))\b")

# Written by the build (not tracked), or names a test hands the tools on purpose.
GENERATED = {"_cpu_dispatch.h", "_cpu_features_table.h", "dispatch_config.json", "_ops_generated.py", "_cuda_build.py",
             "_loops.h", "kernels_sources.h",
             "ops_generated.c", "_version.py"}
ON_PURPOSE = {"sources/kernels/add-1.dispatch.c", "tools/cffi/a.cdef", "tools/cffi/b.cdef",
              "dispatch/x.h",
              # made by the worked examples of docs/contributing.md, on a scratch
              # copy only (tests/test_contributing_recipes.py)
              "tests/test_ops_square.py", "tools/dispatchgen/dispatchkit/checks/cpu_sha.c"}


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
        return [ROOT / f for f in out]
    except (OSError, subprocess.CalledProcessError):  # an sdist: no git
        return [p for p in ROOT.rglob("*") if p.is_file() and "build" not in p.parts]


def _resolves(name: str) -> bool:
    if name in ON_PURPOSE or Path(name).name in GENERATED or "*" in name:
        return True
    if (ROOT / name).exists():
        return True
    # `dispatch/x.h` is an include path: the header lies in sources/include/
    # (the runtime's) or in the toolkit's include/.
    return name.endswith(".h") and any(
        (d / name).exists() for d in (ROOT / "sources" / "include",
                                      ROOT / "tools" / "dispatchgen" / "dispatchkit" / "include"))


def test_doc_links_stay_inside_the_checkout_and_exist():
    bad = []
    for doc in DOCS:
        for target in _LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor
            path = (doc.parent / target.split("#")[0]).resolve()
            if ROOT not in path.parents and path != ROOT or not path.exists():
                bad.append(f"{doc.relative_to(ROOT)}: ({target})")
    assert not bad, "links that leave the repository or are gone:\n" + "\n".join(bad)


def test_docs_do_not_send_readers_outside_the_repository():
    for doc in DOCS:
        text = doc.read_text()
        assert "../shared" not in text, f"{doc.relative_to(ROOT)} points outside the repository"


def test_every_repository_path_named_in_a_file_exists():
    bad = set()
    for f in _tracked():
        if f.suffix not in {".c", ".h", ".py", ".md", ".toml", ".build", ".cdef", ".sh", ".txt",
                            ".in", ".cu", ".ini", ""} or not f.is_file():
            continue
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for name in _PATH.findall(text):
            if not _resolves(name.rstrip(".")):
                bad.add(f"{f.relative_to(ROOT)} names {name}")
    assert not bad, "stale references:\n" + "\n".join(sorted(bad))


def test_readme_is_a_short_guide_without_notes_of_the_code():
    """README is the user's guide (install, the two products, first examples,
    links); the manuals live in docs/, and Notes in the code are for the
    docs that explain the code, not for the guide."""
    text = (ROOT / "README.md").read_text()
    assert "Note [" not in text
    assert len(text.splitlines()) <= 150
    for doc in ("toolkit", "semantics", "cuda", "performance", "downstream", "contributing"):
        assert f"](docs/{doc}.md)" in text, doc


def test_the_two_include_folders_hold_no_file_name_twice():
    """docs/design.md: `dispatch/x.h` names one header, the runtime's or the
    toolkit's, whichever -I comes first."""
    runtime = {p.name for p in (ROOT / "sources" / "include" / "dispatch").glob("*.h")}
    toolkit = {p.name for p in
               (ROOT / "tools" / "dispatchgen" / "dispatchkit" / "include" / "dispatch").glob("*.h")}
    assert runtime and toolkit and not runtime & toolkit, runtime & toolkit
