"""Reading the files a user names (sources, target groups, variants, build
configuration), with a bound: `dispatchgen targets /dev/zero` or a FIFO that
never ends used to grow the process until the kernel killed it."""

from __future__ import annotations

from pathlib import Path

from .errors import DispatchError
from .fsutil import read_regular

# Far above any source, groups, variants or configuration file (a dense 1 MB
# @targets statement already takes half a second to parse).
INPUT_LIMIT = 64 << 20


def read_input(path: Path, what: str, limit: int = INPUT_LIMIT) -> str:
    """The UTF-8 text of `path`; DispatchError naming the file (and `what`
    it was read as) when it cannot be read, is not UTF-8, or is longer than
    `limit` bytes."""
    data = read_regular(path, what, limit)
    if len(data) > limit:
        raise DispatchError(f"cannot read {what}: longer than {limit >> 20} MiB "
                            "(is it a regular file?)", str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DispatchError(f"cannot read {what}: {exc}", str(path)) from None
