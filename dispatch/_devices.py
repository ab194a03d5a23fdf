"""Devices by name and number, and the registry their Python backends fill.

Note [Device registry]
~~~~~~~~~~~~~~~~~~~~~~
The Tensor class and the factories need a few things of the CUDA device
(copies to and from it, why it is unavailable, DLPack's streams), but
dispatch/cuda.py sits above them: it makes tensors and registers a Python
kernel. So cuda.py registers itself here when it loads (`import dispatch`
imports it; loading it loads nothing CUDA: Note [Lazy CUDA]) and the lower
modules ask `backend("cuda")`, never importing it. The registry holds the
module itself, so its functions are looked up at each call (tests replace
them). A backend offers:
    unavailable_reason() -> str          "" when the device can run
    copy_to_device(t, device_num) -> Tensor
    dlpack_stream(stream) -> int | None  Note [DLPack streams]
    stream_wait(stream) -> None
    print_report(file) -> None           show_runtime()'s section
    _lib() -> the loaded module          RuntimeError where it cannot load
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from . import _tables
from ._core import ffi, lib

_DEVICES = dict(_tables.DEVICES)  # name -> id, read from C
_DEVICE_NAMES = {v: k for k, v in _DEVICES.items()}
_CPU = _DEVICES["cpu"]
_META = _DEVICES["meta"]
_CUDA = _DEVICES["cuda"]
_DL_CPU, _DL_CUDA = 1, 2  # DLDeviceType kDLCPU, kDLCUDA

_backends: dict[str, Any] = {}


def register(name: str, backend: Any) -> None:
    """Make `backend` (a module, Note [Device registry]) the backend of device `name`."""
    if name not in _DEVICES:
        raise ValueError(f"unknown device {name!r}; expected one of {sorted(_DEVICES)}")
    _backends[name] = backend


def backend(name: str) -> Any:
    """The registered backend of device `name`; RuntimeError when none is."""
    found = _backends.get(name)
    if found is None:
        raise RuntimeError(f"no Python backend is registered for device {name!r} (dispatch."
                           f"{name} registers it when it loads: import dispatch first)")
    return found


def _device_num(device: Any) -> int:
    if device is None:
        return 0
    name = str(device).split(":")[0]
    if name not in _DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {sorted(_DEVICES)}")
    if name == "cuda":
        _cuda_allocator()
    return _DEVICES[name]


def _cuda_allocator() -> None:
    """Device "cuda" needs the CUDA module's allocator: the first use loads it
    (Note [Lazy CUDA] in dispatch/cuda.py); where CUDA cannot run, say why."""
    if lib.dispatch_allocator_get(_CUDA) == ffi.NULL:
        reason = backend("cuda").unavailable_reason()
        if reason:
            raise RuntimeError("no allocator is registered for device 'cuda': CUDA is not "
                               f"available: {reason}")
