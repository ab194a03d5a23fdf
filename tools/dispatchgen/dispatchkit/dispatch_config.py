"""`dispatch-config`: where the installed toolkit is, for a downstream build.

    dispatch-config --pkgconfigdir     the directory of dispatchgen.pc
    dispatch-config --cmakedir         the directory of dispatchgenConfig.cmake (dispatchgen_DIR)
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
import os
import stat
import sys
from pathlib import Path
from typing import List, Optional

from . import __version__
from .errors import DispatchError, os_error_reason, printable, shown, write_stdout
from .fsutil import make_dirs
from .paths import CMAKE, INCLUDE, PKG, PKGCONFIG

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

if sys.version_info < (3, 9):  # before any import this Python cannot parse: one line
    sys.stderr.write("dispatchgen: error: needs Python >= 3.9 (%s is %d.%d)\\n"
                     % (sys.executable, sys.version_info[0], sys.version_info[1]))
    sys.exit(2)

from pathlib import Path  # noqa: E402

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
    --vendor did not make: it never overwrites a file it did not write. It
    never writes through a symbolic link either: see Note [Vendor writes no
    link].

    >>> vendor("tools/dispatchgen")  # doctest: +SKIP
    """
    if not str(dest_arg).strip():
        raise DispatchError("--vendor needs a directory, e.g. tools/dispatchgen; "
                            "got an empty string")
    dest = Path(dest_arg)
    if dest.is_symlink():
        raise DispatchError("is a symbolic link; --vendor writes only into a real folder of "
                            "your project, never through a link: name the folder itself",
                            str(dest))
    try:
        real = dest.resolve()
    except (OSError, RuntimeError) as exc:  # a loop among its parents
        raise DispatchError(f"cannot resolve the path: {os_error_reason(exc)}", str(dest)) from None
    if real == PKG.parent.resolve() or PKG.resolve() in (real, *real.parents):
        raise DispatchError("is the toolkit itself; vendor into your project, "
                            "e.g. tools/dispatchgen", str(dest))
    if "subprojects" in real.parts:
        raise DispatchError("is inside a subprojects/ directory, whose files meson does "
                            "not let a project compile; vendor into another folder of "
                            "your project, e.g. tools/dispatchgen", str(dest))
    if os.path.lexists(dest) and not dest.is_dir():
        raise DispatchError("exists and is not a directory", str(dest))
    if dest.is_dir() and os.path.lexists(dest / MARKER):
        _refuse_links(dest)  # the marker among them
    ours = dest.is_dir() and _is_regular(dest / MARKER)
    if dest.is_dir() and any(dest.iterdir()) and not ours:
        raise DispatchError("is a non-empty directory that dispatch-config did not write; "
                            "choose a new one (e.g. tools/dispatchgen) or remove it",
                            str(dest))
    files = _package_files()
    _check_length(real, [Path("dispatchkit") / f.relative_to(PKG) for f in files], str(dest))

    make_dirs(dest)
    if ours:
        _remove_tree(dest / "dispatchkit")
        for name in ("dispatchgen", MARKER):
            if os.path.lexists(dest / name):
                os.unlink(dest / name)
    written = []
    for f in files:
        target = dest / "dispatchkit" / f.relative_to(PKG)
        make_dirs(target.parent)
        _create(target, f.read_bytes(), 0o666)  # less the umask, as copyfile
        written.append(target)
    _create(dest / "dispatchgen", LAUNCHER.encode("utf-8"), 0o755, exact=True)  # a program
    _create(dest / MARKER, (__version__ + "\n").encode("utf-8"), 0o666)
    return written + [dest / "dispatchgen", dest / MARKER]


# Note [Vendor writes no link]: a second --vendor replaces its own copy, in a
# folder someone else may have written into since. It never makes a symbolic
# link, so one there was planted: `d/dispatchgen -> ../victim` made the
# launcher overwrite victim (and chmod it 755), a linked marker got the
# version written into its target, a linked `d/dispatchkit` received the
# package outside the folder. So the destination itself and everything under
# it are checked first (lstat, no link followed, no recursion: a tree 2000
# levels deep is walked like any other) and any link is refused, naming it;
# then every directory is made with mkdir and every file created with
# O_CREAT|O_EXCL|O_NOFOLLOW, which fail rather than follow a link planted
# after the check.


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _walk(top: Path):
    """Every entry under top, parents first, without following a link and
    without recursion: (path, lstat result)."""
    stack = [top]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            path = Path(entry.path)
            st = entry.stat(follow_symlinks=False)
            yield path, st
            if stat.S_ISDIR(st.st_mode):
                stack.append(path)


def _refuse_links(dest: Path) -> None:
    for path, st in _walk(dest):
        if stat.S_ISLNK(st.st_mode):
            try:
                to = os.readlink(path)
            except OSError:
                to = "?"
            raise DispatchError(f"is a symbolic link (to {printable(to)}) inside the folder "
                                "--vendor writes; it never writes through a link (Note [Vendor "
                                "writes no link]): remove it, or vendor into a new folder",
                                str(path))


def _remove_tree(top: Path) -> None:
    """rmtree without recursion (a planted tree may be deeper than Python's
    recursion limit); links were refused already, and one made since is
    removed, never followed."""
    if not os.path.lexists(top):
        return
    if not stat.S_ISDIR(os.lstat(top).st_mode):
        os.unlink(top)
        return
    folders = [top]
    for path, st in _walk(top):
        if stat.S_ISDIR(st.st_mode):
            folders.append(path)
        else:
            os.unlink(path)
    for folder in reversed(folders):  # children after their parents in the walk
        os.rmdir(folder)


def _check_length(real: Path, files: List[Path], dest: str) -> None:
    """Refuse, before writing anything, a destination whose files would have
    paths longer than the system takes (a half-written copy otherwise)."""
    longest = max((str(real / f) for f in files), key=len)
    try:
        anchor = next(p for p in (real, *real.parents) if p.exists())
        limit = os.pathconf(anchor, "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError, StopIteration):
        limit = 4096
    if limit and len(os.fsencode(longest)) >= limit:
        raise DispatchError(f"is too deep: the copy's longest path would be "
                            f"{len(os.fsencode(longest))} bytes, and this system takes paths "
                            f"shorter than {limit}; vendor into a shorter path", shown(dest, 120))


def _create(path: Path, data: bytes, mode: int, exact: bool = False) -> None:
    """A new file, never through a link: O_EXCL fails on anything there.
    ``exact``: ``mode`` whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, mode)
    with os.fdopen(fd, "wb") as fh:
        if exact and hasattr(os, "fchmod"):
            os.fchmod(fh.fileno(), mode)
        fh.write(data)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="dispatch-config", description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--pkgconfigdir", action="store_true", help="directory of dispatchgen.pc")
    g.add_argument("--cmakedir", action="store_true", help="directory of dispatchgenConfig."
                   "cmake: cmake -Ddispatchgen_DIR=\"$(dispatch-config --cmakedir)\"")
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
        elif args.cmakedir:
            out = str(CMAKE)
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
        where = exc.filename if isinstance(exc.filename, str) else None
        print(f"dispatch-config: error: {DispatchError(os_error_reason(exc), where and shown(where, 200))}",
              file=sys.stderr)
        return 2
    except RecursionError:  # a path deeper than any of the above expected
        print("dispatch-config: error: a path too deep to handle", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
