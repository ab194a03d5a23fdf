"""`dispatch-config`: where the installed toolkit is, for a downstream build.

    dispatch-config --pkgconfigdir     the directory of dispatch.pc
    dispatch-config --cflags           -I flags for the headers and runtime sources
    dispatch-config --libs             (empty: the runtime is compiled by the user's build)
    dispatch-config --version
    dispatch-config --dispatchgen      a script path: `python <it> configure ...`
    dispatch-config --vendor DIR       copy the toolkit alone (a meson subproject) to DIR
    dispatch-config --meson            two lines for a meson.build without pkg-config:
                                       the cflags, then the dispatchgen script

The same layout serves a checkout (tools/dispatchkit beside sources/) and an
installed package (dispatchkit/ with its files under dispatchkit/_tree).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import List, Optional

from . import __version__

PKG = Path(__file__).resolve().parent

# The toolkit alone, relative to the root of a checkout (or of _tree). The
# Python package tools/dispatchkit comes on top of these.
TOOLKIT_FILES = [
    "meson.build",
    "meson_options.txt",
    "tools/dispatchgen.py",
    "tools/cffi/cpu.cdef",
    "sources/cpu/meson.build",
    "sources/cpu/cpu_internal.h",
    "sources/cpu/cpu_features.c",
    "sources/cpu/cpu_detect.c",
    "sources/cpu/cpu_dispatch_trace.c",
    "sources/cpu/cpu_baseline_guard.c",
    "sources/cpu/cpu_module_guard.c",
    "sources/include/dispatch/cpu_dispatch.h",
    "sources/include/dispatch/cpu_features.h",
    "sources/include/dispatch/cpu_runtime.h",
    "sources/include/dispatch/cpu_module.h",
]


def root() -> Path:
    """The directory holding meson.build, sources/ and tools/ (minus the package)."""
    tree = PKG / "_tree"
    return tree if tree.is_dir() else PKG.parents[1]


def pkgconfigdir() -> Path:
    return PKG / "lib" / "pkgconfig"


def cflags() -> str:
    r = root()
    return f"-I{r / 'sources' / 'include'} -I{r / 'sources'}"


def vendor(dest: Path) -> List[Path]:
    """Copy the toolkit alone to dest (e.g. subprojects/dispatch); returns the files."""
    src = root()
    copied = []
    for rel in TOOLKIT_FILES:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
        copied.append(target)
    pkg_dest = dest / "tools" / "dispatchkit"
    for f in sorted(PKG.rglob("*")):
        rel = f.relative_to(PKG)
        if (f.is_dir() or "__pycache__" in rel.parts or rel.parts[0] in ("_tree", "lib")
                or f.suffix == ".pyc"):
            continue
        target = pkg_dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        copied.append(target)
    return copied


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="dispatch-config", description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--pkgconfigdir", action="store_true", help="directory of dispatch.pc")
    g.add_argument("--cflags", action="store_true", help="compiler flags")
    g.add_argument("--libs", action="store_true", help="linker flags (none)")
    g.add_argument("--version", action="store_true", help="the toolkit's version")
    g.add_argument("--dispatchgen", action="store_true", help="path of the generator script")
    g.add_argument("--meson", action="store_true", help="cflags and dispatchgen, one a line")
    g.add_argument("--vendor", type=Path, metavar="DIR",
                   help="copy the toolkit alone (meson subproject) into DIR")
    args = p.parse_args(argv)
    if args.pkgconfigdir:
        print(pkgconfigdir())
    elif args.cflags:
        print(cflags())
    elif args.libs:
        print("")
    elif args.version:
        print(__version__)
    elif args.meson:
        print(cflags())
        print(root() / "tools" / "dispatchgen.py")
    elif args.dispatchgen:
        print(root() / "tools" / "dispatchgen.py")
    else:
        try:
            files = vendor(args.vendor)
        except OSError as exc:
            print(f"dispatch-config: error: {exc}", file=sys.stderr)
            return 2
        print(f"dispatch-config: copied {len(files)} files to {args.vendor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
