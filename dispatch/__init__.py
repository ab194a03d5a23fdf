"""dispatch: a tensor/operator runtime whose SIMD kernels are built with the
CPU dispatch toolkit dispatchgen (a distribution of its own; docs/toolkit.md,
"Names").

>>> import dispatch
>>> dispatch.probe_target() in dispatch.probe_targets()
True
"""

# See Note [Baseline guard] in sources/cpu/cpu_baseline_guard.c: this import
# must come first, before any module built with the baseline flags loads.
from . import _cpu_guard  # noqa: F401

# Note [Import time]
# ~~~~~~~~~~~~~~~~~~
# `import dispatch` imports no NumPy (Note [NumPy is optional] in _values.py),
# nor typing or dataclasses: in a fresh interpreter those cost more than the
# package itself (typing brings re). The modules `import dispatch` loads name
# typing's types in annotations only (`from __future__ import annotations`,
# imported under `if TYPE_CHECKING`). tools/bench/bench_import.py times it;
# tests/test_import_without_numpy.py checks what it leaves out.
from ._core import ffi, lib
from ._cpu import *  # noqa: F401,F403  (detection + env overrides, at import)
from ._cpu import __all__ as _cpu_all
from ._cpu import __cpu_baseline__, __cpu_dispatch__, __cpu_features__  # noqa: F401
from ._dtypes import *  # noqa: F403  (dtype, float32, int64, ...)
from ._dtypes import __all__ as _dtypes_all
from ._tensor import *  # noqa: F401,F403  (Tensor, live_storages, live_tensors)
from ._tensor import __all__ as _tensor_all
from ._interop import *  # noqa: F403  (from_numpy, from_dlpack)
from ._interop import __all__ as _interop_all
from ._factories import *  # noqa: F403  (tensor, empty, zeros, ones, full, arange)
from ._factories import __all__ as _factories_all
from . import library, ops  # noqa: E402,F401
from . import cuda  # noqa: E402,F401  (loads nothing CUDA: Note [Lazy CUDA] in cuda.py)
from .iterator import get_num_threads, set_num_threads  # noqa: E402

# Choose the probe and the SIMD kernels for this CPU once, now: the chosen
# loops replace the reference ones in the loop table every operator reads.
if lib.dispatch_kernels_init() != 0 or lib.dispatch_kernels_simd_init() != 0:
    raise RuntimeError(ffi.string(lib.dispatch_cpu_error()).decode(errors="backslashreplace"))


def probe_target() -> str:
    """The target the probe kernel runs here ("AVX512_SKX", ..., "baseline").

    >>> dispatch.probe_target() in ("AVX512_SKX", "FMA3__AVX2", "SSE42", "baseline")
    True
    """
    return ffi.string(lib.dispatch_probe_chosen()).decode()


def probe_targets() -> list:
    """Every target the probe kernel was compiled for, highest first."""
    return ffi.string(lib.dispatch_probe_targets()).decode().split()


# The GPU architectures the CUDA module was built for (SASS sm_XY, then PTX
# compute_XY), as __cpu_dispatch__ lists CPU targets; [] when not built.
__cuda_archs__ = cuda.archs()

__all__ = [*_cpu_all, *_tensor_all[:1], *_dtypes_all[:1], *_factories_all[:1],
           *_factories_all[1:], *_interop_all, *_dtypes_all[1:], *_tensor_all[1:], "ops", "library", "probe_target", "probe_targets",
           "get_num_threads", "set_num_threads", "cuda"]


# Operators as functions of the package, as torch.exp is torch's:
# dispatch.exp(a) is dispatch.ops.exp(a). Looked up on first use (no import
# cost) and left out of __all__, so `from dispatch import *` shadows no
# builtin (sum, max, min, abs).
def __getattr__(name: str):  # noqa: ANN202
    if not name.startswith("_") and name in ops.OPERATORS:
        packet = getattr(ops, name)
        # later lookups are plain module attributes (ops._invalidate drops it)
        globals()[name] = packet
        return packet
    if name == "return_types":  # as torch.return_types: max(x, 1).values, .indices
        return ops.return_types
    raise AttributeError(f"module 'dispatch' has no attribute '{name}'")


def __dir__() -> list:
    return sorted(set(globals()) | set(ops.OPERATORS))
