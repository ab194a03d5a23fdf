"""`dispatch-config`: where the installed toolkit is, for a downstream build.

    dispatch-config --pkgconfigdir     the directory of dispatchgen.pc
    dispatch-config --cflags           -I flag of the headers
    dispatch-config --libs             (empty: the runtime is compiled by the user's build)
    dispatch-config --version
    dispatch-config --dispatchgen      the generator as a script path: `python <it> ...`
    dispatch-config --vendor DIR       copy the toolkit into DIR (a folder of your project)

The same layout serves a checkout (tools/dispatchgen), an installed wheel and
a vendored copy: everything is under the dispatchkit package (paths.py).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import List, Optional

from . import __version__
from .errors import DispatchError, printable, write_stdout
from .paths import INCLUDE, PKG, PKGCONFIG

# The launcher --vendor writes beside the package: find_program('dispatchgen',
# dirs: <the folder>) finds it. The checkout's tools/dispatchgen/dispatchgen is
# this text (tests/toolkit checks).
LAUNCHER = '''\
#!/usr/bin/env python3
"""dispatchgen from a copy of the toolkit folder (this repository's
tools/dispatchgen, or one `dispatch-config --vendor` wrote): the same CLI as the
installed `dispatchgen` command. A meson.build finds it with
find_program('dispatchgen', dirs: <this folder>).

The engine is the dispatchkit package beside this file (standard library
only, Python >= 3.9); this copy runs, whatever else is installed.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatchkit.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
'''

# Written by --vendor into the destination, so a second --vendor may replace it.
MARKER = ".dispatchgen-vendored"


def cflags() -> str:
    return f"-I{INCLUDE}"


def _package_files() -> List[Path]:
    return [f for f in sorted(PKG.rglob("*"))
            if f.is_file() and "__pycache__" not in f.relative_to(PKG).parts
            and f.suffix != ".pyc"]


def vendor(dest_arg: str) -> List[Path]:
    """Copy the toolkit into dest (e.g. tools/dispatchgen): the dispatchkit
    package and the `dispatchgen` launcher; returns the files written.

    Refuses an empty destination, the toolkit itself, a place inside a meson
    subprojects/ directory (meson forbids a project to compile a
    subproject's files by path), and a non-empty directory that an earlier
    --vendor did not make: it never overwrites a file it did not write.
    """
    if not str(dest_arg).strip():
        raise DispatchError("--vendor needs a directory, e.g. tools/dispatchgen; "
                            "got an empty string")
    dest = Path(dest_arg)
    real = dest.resolve()
    if real == PKG.parent.resolve() or PKG.resolve() in (real, *real.parents):
        raise DispatchError("is the toolkit itself; vendor into your project, "
                            "e.g. tools/dispatchgen", str(dest))
    if "subprojects" in real.parts:
        raise DispatchError("is inside a subprojects/ directory, whose files meson does "
                            "not let a project compile; vendor into another folder of "
                            "your project, e.g. tools/dispatchgen", str(dest))
    if dest.exists() and not dest.is_dir():
        raise DispatchError("exists and is not a directory", str(dest))
    if dest.is_dir() and any(dest.iterdir()) and not (dest / MARKER).is_file():
        raise DispatchError("is a non-empty directory that dispatch-config did not write; "
                            "choose a new one (e.g. tools/dispatchgen) or remove it",
                            str(dest))
    if (dest / MARKER).is_file():
        shutil.rmtree(dest / "dispatchkit", ignore_errors=True)
    written = []
    for f in _package_files():
        target = dest / "dispatchkit" / f.relative_to(PKG)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        written.append(target)
    for path, text in ((dest / "dispatchgen", LAUNCHER), (dest / MARKER, __version__ + "\n")):
        path.write_text(text, encoding="utf-8")
        written.append(path)
    (dest / "dispatchgen").chmod(0o755)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="dispatch-config", description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--pkgconfigdir", action="store_true", help="directory of dispatchgen.pc")
    g.add_argument("--cflags", action="store_true", help="compiler flags")
    g.add_argument("--libs", action="store_true", help="linker flags (none)")
    g.add_argument("--version", action="store_true", help="the toolkit's version")
    g.add_argument("--dispatchgen", action="store_true", help="path of the generator script")
    g.add_argument("--vendor", metavar="DIR",
                   help="copy the toolkit into DIR, a folder of your project (e.g. tools/dispatchgen)")
    args = p.parse_args(argv)
    try:
        if args.vendor is not None:
            files = vendor(args.vendor)
            out = f"dispatch-config: copied {len(files)} files to {printable(str(args.vendor))}"
        elif args.pkgconfigdir:
            out = str(PKGCONFIG)
        elif args.cflags:
            out = cflags()
        elif args.libs:
            out = ""
        elif args.version:
            out = __version__
        else:
            out = str(PKG / "__main__.py")
        write_stdout(out + "\n")
    except DispatchError as exc:
        print(f"dispatch-config: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dispatch-config: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
