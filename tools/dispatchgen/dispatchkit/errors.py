"""The one exception type the CLI turns into a single clean error line."""

from __future__ import annotations

import os
import sys
from typing import Optional


class DispatchError(Exception):
    """A user error: bad option value, bad @targets statement, unusable compiler.

    ``where`` is ``"file:line"`` for source errors, or the option name.
    """

    def __init__(self, message: str, where: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        # One printable line whatever the user wrote: a file name or token with
        # a newline, an escape sequence or an undecodable byte (a surrogate) is
        # shown escaped.
        return printable(f"{self.where}: {self.message}" if self.where else self.message)


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\n``, ``\\x1b``, ``\\udcff``).

    >>> printable("a\\tb")
    'a\\\\tb'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def os_error_reason(exc: BaseException) -> str:
    """Why a file operation failed, as an error quotes it: an OSError's text
    without its errno and path ("Permission denied"), else the message."""
    return printable(exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))


def shown(token: str, limit: int = 60) -> str:
    """A user's token as an error quotes it: escaped, and cut after ``limit`` characters."""
    token = printable(token)
    return token if len(token) <= limit else token[:limit] + "..."


def write_stdout(text: str) -> None:
    """Write the command's output; a closed or failing stdout is a DispatchError.

    After a failed write the descriptor is pointed at /dev/null, so the
    interpreter's own flush at exit does not print a second, raw error.
    """
    out = sys.stdout
    if out is None:
        raise DispatchError("cannot write the output: standard output is closed")
    try:
        out.write(text)
        out.flush()
    except OSError as exc:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except (OSError, ValueError):
            pass
        raise DispatchError(f"cannot write the output: {exc.strerror or exc}") from None
