"""Which input generated each file of an output folder, across runs.

Two `dispatchgen` runs into one --outdir (two modules in one meson.build)
each checked only their own outputs, so the second could replace the first's
header. Each run now records, in OWNERS beside its outputs, what asked for
each file; the next run reads it and refuses a file another input claimed,
naming both. A rerun of the same input claims its own files again: allowed,
and the record is rewritten byte-identical.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .errors import DispatchError, printable

OWNERS = ".dispatchgen-outputs.json"
_LIMIT = 16 << 20  # far above any real record; bounds what a planted file costs


def _read(folder: str) -> Dict[str, str]:
    """The folder's record; none when absent, not a regular file (a link is
    never followed), too large or not a record: it is rewritten whole."""
    path = os.path.join(folder, OWNERS)
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _LIMIT:
            return {}
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read(_LIMIT + 1).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        return {}
    return data


def _relative(origin: str, folder: str) -> str:
    """The origin as recorded: its line number dropped ("a.ini:2 ([library]
    name = m)": the same owner when an edit moves its line) and an absolute
    path made relative to the output folder, so that the record, like every
    generated file, is the same bytes in any clone (tests/test_build_cache.py)."""
    origin = re.sub(r":\d+(?= \()", "", origin)
    m = re.match(r"^(.*?)( \(.*\))?$", origin, re.S)
    path, rest = m.group(1), m.group(2) or ""
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path, folder)
        except ValueError:  # another drive (Windows): kept as given
            pass
    return path + rest


def claim(outputs: Sequence[Tuple[str, str]]) -> List[Tuple[Path, str]]:
    """Refuse an output (resolved entry, origin) that an earlier run into its
    folder generated for another origin; return the records to write with
    the outputs."""
    by_folder: Dict[str, Dict[str, str]] = {}
    for entry, origin in outputs:
        folder, name = os.path.split(entry)
        origin = _relative(origin, folder)
        if folder not in by_folder:
            by_folder[folder] = _read(folder)
        record = by_folder[folder]
        other = record.get(name.casefold())
        if other is not None:
            # a record of an earlier toolkit holds absolute origins: the same input
            other = _relative(other, folder)
        if other is not None and other != origin:
            raise DispatchError(f"{printable(origin)} would generate {printable(name)} in "
                                f"{printable(folder)}, which an earlier run generated for "
                                f"{printable(other)}; give each module its own --outdir or "
                                f"rename one of them (if that input is gone, delete {OWNERS} "
                                "there)")
        record[name.casefold()] = origin
    return [(Path(folder, OWNERS), json.dumps(record, sort_keys=True, indent=0) + "\n")
            for folder, record in by_folder.items()]
