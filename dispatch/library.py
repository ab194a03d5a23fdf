"""Define operators and register kernels from Python, and steer the dispatcher.

>>> import dispatch
>>> from dispatch import library
>>> _ = library.define("mylib_twice(Tensor self) -> Tensor")
>>> @library.impl("mylib_twice", "CPU")
... def _twice(self):
...     return self + self
>>> dispatch.ops.mylib_twice(dispatch.tensor([1, 2])).tolist()
[2, 4]
"""

from __future__ import annotations

import contextlib
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any, Callable, Iterator

from . import _tables
from . import ops as _ops
from ._core import ffi, lib
from ._errors import _ERR_PYTHON, _pending, _raise, _warn_if_any

__all__ = [
    "KEYS", "define", "impl", "fallthrough", "include_keys", "exclude_keys", "trace",
    "included_keys", "excluded_keys",
]

KEYS = tuple(_tables.KEYS)  # dispatcher.h's keys, in priority order, read from C
_PYTHON_KEY = _tables.KEYS["Python"]
# handles of registered Python kernels: registrations are permanent. No lock:
# one list.append is atomic and runs no Python code, while code holding a
# Lock can be re-entered by a signal handler or a __del__ that registers a
# kernel in turn, a deadlock (Note [Owner table without a lock] in
# dispatch/_interop.py).
_kernels: list[Any] = []


def _caller(depth: int = 2) -> str:
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def _key(name: str) -> int:
    k = lib.dispatch_key_from_name(name.encode())
    if k < 0:
        raise ValueError(f"unknown dispatch key '{name}'; expected one of {list(KEYS)}")
    return k


def _keyset(names: tuple[str, ...]) -> int:
    ks = 0
    for n in names:
        ks |= 1 << _key(n)
    return ks


def define(schema: str) -> _ops.OpOverload:
    """Declare an operator by schema; a second definition of a name is a RuntimeError."""
    h = lib.dispatch_def(schema.encode(), _caller().encode())
    if h == ffi.NULL:
        _raise()
    op = _ops.OpOverload(h)
    _ops._invalidate(op.name)
    return op


class _PyKernel:
    __slots__ = ("fn", "key", "op")

    def __init__(self, fn: Callable, key: int) -> None:
        self.fn, self.key, self.op = fn, key, None


@ffi.def_extern()
def dispatch_py_kernel(op, ks, args, rets, ctx):  # noqa: ANN001, ANN201  (cffi callback)
    """Run a Python kernel: args in, rets out; exceptions travel back through C."""
    k: _PyKernel = ffi.from_handle(ctx)
    try:
        if k.op is None:
            k.op = _ops.OpOverload(op)
        spec = k.op
        pos, kw = [], {}
        for i, a in enumerate(spec.args):
            v = _ops.ivalue_to_python(args[i], False)
            if a.kwarg_only:
                kw[a.name] = v
            else:
                pos.append(v)
        # A kernel at the Python key runs with Python excluded, so the operators
        # it calls go to the keys below (the backend), not back to itself.
        saved = lib.dispatch_tls_excluded()
        if k.key == _PYTHON_KEY:
            lib.dispatch_tls_set_excluded(saved | (1 << _PYTHON_KEY))
        try:
            out = k.fn(*pos, **kw)
        finally:
            lib.dispatch_tls_set_excluded(saved)
        outs = (out,) if spec.nrets == 1 else (() if out is None and spec.nrets == 0 else out)
        if not isinstance(outs, tuple) or len(outs) != spec.nrets:
            raise TypeError(f"kernel for {spec.name} must return {spec.nrets} value(s)")
        for i, v in enumerate(outs):
            _ops.python_to_ivalue(rets[i], v)
        return 0
    except BaseException as exc:  # noqa: BLE001  (re-raised by the caller of the operator)
        _pending.exc = exc
        lib.dispatch_error_set_message(_ERR_PYTHON, f"{type(exc).__name__}: {exc}".encode())
        return -1


def impl(name: str, key: str) -> Callable[[Callable], Callable]:
    """Decorator: register a Python function as the kernel of operator name at key.

    The function gets the operator's arguments (keyword-only ones as keywords) and
    returns its results. Registering a second kernel for the same key replaces
    the first and warns.
    """
    k = _key(key)
    where = _caller()

    def register(fn: Callable) -> Callable:
        entry = _PyKernel(fn, k)
        handle = ffi.new_handle(entry)
        _kernels.append(handle)
        debug = f"{where} (Python kernel {getattr(fn, '__qualname__', fn)!s})"
        if lib.dispatch_impl(name.encode(), k, lib.dispatch_py_kernel, handle, debug.encode()) < 0:
            _raise()
        _warn_if_any(stacklevel=3)
        return fn

    return register


def fallthrough(name: str, key: str) -> None:
    """Make key skip operator name: the call goes on to the next key."""
    if lib.dispatch_impl(name.encode(), _key(key), lib.dispatch_fallthrough_kernel, ffi.NULL,
                         f"{_caller()} (fallthrough)".encode()) < 0:
        _raise()
    _warn_if_any(stacklevel=3)


def _key_names(ks: int) -> list[str]:
    return [n for n in KEYS if ks >> _key(n) & 1]


def included_keys() -> list[str]:
    """This thread's include set, by name."""
    return _key_names(lib.dispatch_tls_included())


def excluded_keys() -> list[str]:
    """This thread's exclude set, by name."""
    return _key_names(lib.dispatch_tls_excluded())


@contextlib.contextmanager
def _added_to(get: Callable[[], int], put: Callable[[int], None],
              names: tuple[str, ...]) -> Iterator[None]:
    """Add names to a thread-local key set (get/put), restoring it on exit."""
    saved = get()
    put(saved | _keyset(names))
    try:
        yield
    finally:
        put(saved)


def include_keys(*names: str) -> contextlib.AbstractContextManager[None]:
    """Add keys to every call's key set in this thread (e.g. "Python", "Tracer")."""
    return _added_to(lib.dispatch_tls_included, lib.dispatch_tls_set_included, names)


def exclude_keys(*names: str) -> contextlib.AbstractContextManager[None]:
    """Remove keys from every call's key set in this thread."""
    return _added_to(lib.dispatch_tls_excluded, lib.dispatch_tls_set_excluded, names)


@contextlib.contextmanager
def trace() -> Iterator[list[str]]:
    """Record the operators called in this thread (the Tracer key's wrapper kernel).

    >>> with trace() as calls:
    ...     _ = dispatch.tensor([1.0]) + 1
    >>> calls
    ['add.Tensor']
    """
    calls: list[str] = []
    lib.dispatch_tracer_log_clear()
    try:
        with include_keys("Tracer"):
            yield calls
    finally:
        calls.extend(ffi.string(lib.dispatch_tracer_log_at(i)).decode()
                     for i in range(lib.dispatch_tracer_log_size()))
        lib.dispatch_tracer_log_clear()
