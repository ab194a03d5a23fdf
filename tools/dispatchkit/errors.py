"""The one exception type the CLI turns into a single clean error line."""

from __future__ import annotations

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
        return f"{self.where}: {self.message}" if self.where else self.message
