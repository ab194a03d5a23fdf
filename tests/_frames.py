"""What a call runs in Python: the tests of the C paths (Note [Operator
packets], [New tensors in C], [Views in C]) show a call makes no Python
frame of the package."""

from __future__ import annotations

import gc
import sys
from typing import Callable


def python_calls(fn: Callable[[], object], outside: str) -> list[str]:
    """The Python functions entered while fn() runs, but those of the file
    `outside` (the calling test's own lambdas). sys.setprofile sees each
    Python frame as a 'call' event; C functions are 'c_call' events."""
    seen: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename != outside:
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_qualname}")

    # No collection while fn() runs: one runs other code's finalizers and
    # gc.callbacks, Python functions that are not the call's (hypothesis
    # registers one in any process that imported it: a CI run saw its
    # gc_callback twice under x[1:, :-1, 2:5:2]).
    was_enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if was_enabled:
            gc.enable()
    return seen
