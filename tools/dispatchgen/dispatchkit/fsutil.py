"""File-system steps the commands share, made safe for hostile paths."""

from __future__ import annotations

import os
from pathlib import Path


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
