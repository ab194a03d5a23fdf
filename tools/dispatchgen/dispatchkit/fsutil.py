"""File-system steps the commands share, made safe for hostile paths."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional

from .errors import DispatchError, os_error_reason, printable


def make_dirs(path: Path) -> None:
    """``mkdir -p`` without recursion: Path.mkdir(parents=True) recursed once
    per missing level, a RecursionError for a path 1000 folders deep.

    >>> make_dirs(Path("."))
    """
    missing = []
    path = Path(path)
    while not os.path.lexists(path):
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:  # made meanwhile by another writer
            if not folder.is_dir():
                raise


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def not_regular(mode: int) -> Optional[str]:
    """What a file of this mode is, when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path, what: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path``, which must be a regular file
    (a link to one is fine): a FIFO would block the build forever, a device
    never end. DispatchError naming the path otherwise. Opened non-blocking,
    checked again on the open descriptor (a file swapped after the stat)."""
    try:
        kind = not_regular(os.stat(path).st_mode)
        if kind is None:
            fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
            try:
                kind = not_regular(os.fstat(fd).st_mode)
                if kind is None:
                    with os.fdopen(fd, "rb") as fh:
                        fd = -1
                        return fh.read(limit + 1)
            finally:
                if fd >= 0:
                    os.close(fd)
    except (OSError, ValueError) as exc:
        raise DispatchError(f"cannot read {what}: {os_error_reason(exc)}", str(path)) from None
    raise DispatchError(f"cannot read {what}: it is {kind}, not a regular file", str(path))


def check_regular_or_absent(path: Path, what: str) -> None:
    """A file the toolkit appends to or replaces: absent, or a regular file."""
    try:
        kind = not_regular(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        raise DispatchError(f"cannot use {what}: {os_error_reason(exc)}", str(path)) from None
    if kind is not None:
        raise DispatchError(f"cannot use {what}: it is {kind}, not a regular file", str(path))


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (or a link to one); False for a
    missing or unreachable path."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def check_no_null(value: str, what: str) -> None:
    """Paths and names reach the OS as C strings: a null byte is refused by name."""
    if "\0" in value:
        raise DispatchError(f"{what} {printable(value)!r} holds a null byte")


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
