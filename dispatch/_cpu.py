"""The runtime CPU features, as Python sees them.

Importing this module runs detection (once per process) and applies
``DISPATCH_DISABLE_CPU_FEATURES`` / ``DISPATCH_ENABLE_CPU_FEATURES``; a request
that cannot be honoured raises here, at import:

- both variables set: ``ImportError``;
- an unknown name, a baseline feature disabled, a missing feature enabled,
  an over-long value: ``RuntimeError``;
- a name this build does not dispatch: a ``CPUFeatureWarning`` naming the
  dispatched set.

>>> import dispatch
>>> set(dispatch.__cpu_baseline__) <= {f for f, on in dispatch.__cpu_features__.items() if on}
True
"""

from __future__ import annotations

import sys
import warnings
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import TextIO

from . import _devices
from ._core import ffi, lib

__all__ = [
    "CPUFeatureWarning",
    "DispatchRecord",
    "__cpu_baseline__",
    "__cpu_dispatch__",
    "__cpu_features__",
    "dispatch_trace",
    "runtime_info",
    "show_runtime",
]


class CPUFeatureWarning(UserWarning):
    """A DISPATCH_*_CPU_FEATURES name that changes no compiled code here."""


class DispatchRecord(namedtuple("DispatchRecord", "name targets chosen")):
    """One dispatched function: its compiled targets (highest interest
    first, a tuple of str) and the one chosen at load for this CPU."""

    __slots__ = ()


def _text(ptr) -> str:
    return "" if ptr == ffi.NULL else ffi.string(ptr).decode(errors="backslashreplace")


def _check_env(rc: int) -> None:
    """Raise or warn for what dispatch_cpu_init() (or the test hook) reported."""
    for line in _text(lib.dispatch_cpu_warnings()).splitlines():
        warnings.warn(line, CPUFeatureWarning, stacklevel=3)
    if rc == 0:
        return
    message = _text(lib.dispatch_cpu_error())
    if lib.dispatch_cpu_error_kind() == lib.DISPATCH_CPU_ERROR_CONFLICT:
        raise ImportError(message)
    raise RuntimeError(message)


def _arch_rows() -> list[tuple[str, int]]:
    """(name, id) of every feature and group of this architecture, table order."""
    rows = []
    for i in range(lib.dispatch_cpu_feature_count()):
        row = lib.dispatch_cpu_feature_at(i)
        if row.on_this_arch:
            rows.append((_text(row.name), row.id))
    return rows


def _features() -> dict[str, bool]:
    return {name: bool(lib.dispatch_cpu_have(fid)) for name, fid in _arch_rows()}


def dispatch_trace() -> list[DispatchRecord]:
    """Every dispatched function that recorded its choice, in load order.

    >>> all(r.chosen in r.targets or r.chosen == "none" for r in dispatch_trace())
    True
    """
    out = []
    rec = ffi.new("dispatch_cpu_trace_record *")
    for i in range(lib.dispatch_cpu_trace_count()):
        if lib.dispatch_cpu_trace_get(i, rec) == 0:
            targets = tuple(_text(rec.targets).split())
            out.append(DispatchRecord(_text(rec.name), targets, _text(rec.chosen)))
    return out


def runtime_info() -> dict:
    """What show_runtime() prints, as data: architecture, baseline, the
    dispatched features found / not found on this CPU, those turned off by
    the env variables, and the dispatch trace."""
    features = _features()
    detected = {name: bool(lib.dispatch_cpu_have_detected(fid)) for name, fid in _arch_rows()}
    return {
        "arch": _text(lib.dispatch_cpu_arch()),
        "baseline": list(__cpu_baseline__),
        "found": [f for f in __cpu_dispatch__ if features.get(f)],
        "not_found": [f for f in __cpu_dispatch__ if not detected.get(f)],
        "disabled_by_env": [f for f in __cpu_dispatch__ if detected.get(f) and not features.get(f)],
        "functions": [
            {"name": r.name, "targets": list(r.targets), "chosen": r.chosen}
            for r in dispatch_trace()
        ],
    }


def show_runtime(file: TextIO | None = None) -> None:
    """Print the CPU features of this build and machine, and which target
    each dispatched function uses.

    >>> import dispatch, io
    >>> out = io.StringIO(); dispatch.show_runtime(out)
    >>> "baseline" in out.getvalue()
    True
    """
    out = file if file is not None else sys.stdout
    info = runtime_info()

    def line(label: str, names: list[str]) -> None:
        print(f"  {label:<16} {' '.join(names) if names else '(none)'}", file=out)

    print(f"CPU features ({info['arch']})", file=out)
    line("baseline", info["baseline"])
    line("found", info["found"])
    line("not found", info["not_found"])
    if info["disabled_by_env"]:
        line("disabled by env", info["disabled_by_env"])
    print("dispatched functions", file=out)
    if not info["functions"]:
        print("  (none recorded)", file=out)
    width = max((len(f["name"]) for f in info["functions"]), default=0)
    for f in info["functions"]:
        print(f"  {f['name']:<{width}}  {f['chosen']:<12} of {' '.join(f['targets'])}", file=out)
    # its report loads the CUDA module (show_runtime is a CUDA use); dispatch.cuda
    # sits above this module: Note [Device registry] in dispatch/_devices.py
    _devices.backend("cuda").print_report(out)


def _redetect_for_tests() -> dict[str, bool]:
    """The test hook (Note [Chosen once] in tools/dispatchgen/dispatchkit/cpu/cpu_dispatch_trace.c):
    re-read the env variables, detect again, re-run every registered
    chooser, and return the new feature map. Raises like the import does.
    Not for production: another thread dispatching meanwhile may see either
    choice. The module's __cpu_features__ keeps its import-time value."""
    _check_env(lib.dispatch_cpu_redetect_for_tests())
    return _features()


_check_env(lib.dispatch_cpu_init())

__cpu_baseline__: list[str] = _text(lib.dispatch_cpu_baseline_names()).split()
__cpu_dispatch__: list[str] = _text(lib.dispatch_cpu_dispatch_names()).split()
__cpu_features__: dict[str, bool] = _features()
