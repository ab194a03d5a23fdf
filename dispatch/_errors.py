"""The runtime's errors, raised as Python exceptions; its warnings, as warnings.

C records an error kind and a message per thread (sources/core/error.c); the
kind picks the exception class (read from C: dispatch/_tables.py). A Python
kernel's own exception travels through C as the kind ERR_PYTHON and is
re-raised as it was.
"""

from __future__ import annotations

import threading
import warnings

from . import _tables
from ._core import ffi, lib

_EXCEPTIONS = _tables.ERRORS  # error kind -> exception class, read from C
_ERR_PYTHON = _tables.ERR_PYTHON
_pending = threading.local()  # the exception a Python kernel raised, per thread


def _raise() -> None:
    """Raise the error the C runtime recorded for this thread."""
    kind = lib.dispatch_error_kind_get()
    if kind == _ERR_PYTHON:
        exc = getattr(_pending, "exc", None)
        _pending.exc = None
        lib.dispatch_error_clear()
        if exc is not None:
            raise exc
    msg = ffi.string(lib.dispatch_error_message()).decode(errors="backslashreplace")
    lib.dispatch_error_clear()
    raise _EXCEPTIONS.get(kind, RuntimeError)(msg or "unknown error in the dispatch runtime")


def _warn_if_any(stacklevel: int = 3) -> None:
    """Turn a warning the C runtime recorded (e.g. a duplicate kernel) into a UserWarning."""
    msg = lib.dispatch_warning_message()
    if msg != ffi.NULL:
        text = ffi.string(msg).decode(errors="backslashreplace")
        lib.dispatch_warning_clear()
        warnings.warn(text, UserWarning, stacklevel=stacklevel)
