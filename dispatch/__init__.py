"""dispatch: CPU dispatch toolkit for Python C extensions, and the tensor
runtime built with it.

>>> import dispatch
>>> dispatch.probe_target() in dispatch.probe_targets()
True
"""

# See Note [Baseline guard] in sources/cpu/cpu_baseline_guard.c: this import
# must come first, before any module built with the baseline flags loads.
from . import _cpu_guard  # noqa: F401
from ._core import ffi, lib

if lib.dispatch_kernels_init() != 0:
    raise RuntimeError(ffi.string(lib.dispatch_cpu_error()).decode())


def probe_target() -> str:
    """The target the probe kernel runs here ("AVX512_SKX", ..., "baseline")."""
    return ffi.string(lib.dispatch_probe_chosen()).decode()


def probe_targets() -> list:
    """Every target the probe kernel was compiled for, highest first."""
    return ffi.string(lib.dispatch_probe_targets()).decode().split()


__all__ = ["probe_target", "probe_targets"]
