"""dispatch.cuda: the CUDA device, chosen at runtime and loaded on first use.

`import dispatch` never loads the CUDA module (dispatch/_cuda, a plain shared
library with the CUDA runtime linked statically) nor the driver: the first
call here, or the first tensor put on device "cuda", does (Note [Lazy CUDA]).
Where CUDA cannot run, `is_available()` is False and `unavailable_reason()`
says why; every CUDA operation then raises RuntimeError with that reason.

>>> import dispatch
>>> isinstance(dispatch.cuda.is_available(), bool)
True
"""

from __future__ import annotations

import os
import sys
import threading

from . import _cuda_build, _devices
from ._core import ffi, lib as core
from ._devices import _DEVICE_NAMES
from ._errors import _raise
from ._factories import empty
from ._tensor import Tensor, _cptr

__all__ = ["is_available", "unavailable_reason", "device_count", "get_device_name",
           "get_device_capability", "synchronize", "memory_stats", "empty_cache", "archs",
           "code_for_capability", "last_launch", "last_reduce"]

# Note [Lazy CUDA]
# ~~~~~~~~~~~~~~~~
# As torch.cuda does, nothing CUDA happens at import: the module is dlopened,
# the driver asked for its devices and the caching allocator registered in the
# device allocator table (sources/core/storage.c) once, by _init(), on the
# first CUDA use, under a lock. The outcome is kept: a machine without a
# driver answers the same reason every time without asking again.
# DISPATCH_DISABLE_CUDA=1 keeps it all off.
#
# The lock is an RLock, and _busy marks an initialization under way: Python
# code can run inside _init on the very thread that holds the lock (a signal
# handler between two bytecodes, a __del__ or weakref callback run by the
# cyclic GC while _load allocates or registers kernels), and when that code
# asks about CUDA (is_available(), a tensor made on "cuda", ...) a plain Lock
# would deadlock it (issue 35). That nested call is told CUDA is being
# initialized, and the answer is not kept: the next call gets the real one.

_lock = threading.RLock()
_state: tuple | None = None  # (ctypes library or None, reason "" when usable)
_busy = False  # an _init is running (set and read under _lock only)
_REENTERED = ("CUDA is being initialized on this thread (this call ran inside that "
              "initialization: from a signal handler, a __del__ or a weakref callback); "
              "ask again once it is done")

CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_STUB_LIBRARY = 34


def archs() -> list:
    """The architectures the CUDA module was built for: SASS sm_XY, then PTX compute_XY."""
    return [*_cuda_build.SASS, *_cuda_build.PTX]


def _num(arch: str) -> tuple:
    """(major, minor) of "sm_86" or "compute_120"; ValueError naming anything else."""
    head, _, digits = arch.partition("_") if isinstance(arch, str) else ("", "", "")
    if head not in ("sm", "compute") or not digits.isdigit() or not digits.isascii():
        raise ValueError(f"not a CUDA architecture name: {arch!r} (expected sm_XY or "
                         "compute_XY, e.g. sm_86)")
    n = int(digits)
    return n // 10, n % 10


def code_for_capability(major: int, minor: int, sass: list | None = None,
                        ptx: list | None = None) -> tuple | None:
    """Which code of this build a device of compute capability major.minor runs:
    ("sass", "sm_86") for machine code built for it (an sm_XY cubin runs on the
    same major version with an equal or higher minor), ("ptx", "compute_120")
    for PTX the driver compiles (any PTX of an equal or lower version), None when
    nothing can serve it."""
    sass = _cuda_build.SASS if sass is None else sass
    ptx = _cuda_build.PTX if ptx is None else ptx
    runs = [a for a in sass if _num(a)[0] == major and _num(a)[1] <= minor]
    if runs:
        return "sass", max(runs, key=_num)
    jit = [a for a in ptx if _num(a) <= (major, minor)]
    if jit:
        return "ptx", max(jit, key=_num)
    return None


def _module_path() -> str | None:
    import importlib.util  # lazy: only a CUDA use asks for the module (Note [Lazy CUDA])

    spec = importlib.util.find_spec("dispatch._cuda")
    return spec.origin if spec is not None else None


def _load() -> tuple:
    if not _cuda_build.BUILT:
        return None, f"not built with CUDA: {_cuda_build.WHY}"
    if os.environ.get("DISPATCH_DISABLE_CUDA", "") not in ("", "0"):
        return None, "CUDA is disabled by DISPATCH_DISABLE_CUDA=1"
    path = _module_path()
    if path is None:
        return None, "not built with CUDA: the module dispatch._cuda is missing from this install"
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    except OSError as e:
        return None, f"the CUDA module could not be loaded: {e}"
    _declare(lib)
    n = ctypes.c_int(0)
    code = lib.dcu_device_count(ctypes.byref(n))
    if code != 0:
        what = _describe(lib, code)
        if code in (CUDA_ERROR_INSUFFICIENT_DRIVER, CUDA_ERROR_STUB_LIBRARY):
            return lib, f"no NVIDIA driver: cudaGetDeviceCount failed with {what}"
        if code == CUDA_ERROR_NO_DEVICE:
            return lib, f"no CUDA device: cudaGetDeviceCount failed with {what}"
        return lib, f"CUDA could not start: cudaGetDeviceCount failed with {what}"
    if n.value == 0:
        return lib, "no CUDA device (the driver reports 0 devices)"
    unusable = []
    for i in range(n.value):
        name, (major, minor) = _properties(lib, i)
        if code_for_capability(major, minor) is not None:
            return lib, ""
        unusable.append(f"device {i} ({name}) has compute capability {major}.{minor}")
    return lib, ("; ".join(unusable) + f", below every architecture built "
                 f"({' '.join(_cuda_build.SASS) or 'none'}) and no PTX can serve it "
                 f"(PTX: {' '.join(_cuda_build.PTX) or 'none'}); rebuild with -Dcuda-arch")


def _declare(lib) -> None:
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    for name in ("dcu_last_error", "dcu_error_name", "dcu_error_string"):
        getattr(lib, name).restype = ctypes.c_char_p
    lib.dcu_error_name.argtypes = lib.dcu_error_string.argtypes = [ctypes.c_int]
    lib.dcu_allocator.restype = ctypes.c_void_p
    lib.dcu_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.dcu_memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    lib.dcu_stream_wait_legacy.argtypes = [ctypes.c_void_p]
    lib.dcu_last_launch.argtypes = [ctypes.c_void_p]
    lib.dcu_last_reduce.argtypes = [ctypes.c_void_p]
    lib.dcu_device_properties.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                          ctypes.POINTER(ctypes.c_size_t)]


def _describe(lib, code: int) -> str:
    """"cudaErrorInsufficientDriver (35): CUDA driver version is insufficient ...\""""
    return (f"{lib.dcu_error_name(code).decode()} ({code}): "
            f"{lib.dcu_error_string(code).decode()}")


def _check(lib, code: int) -> None:
    """Every CUDA call's status: RuntimeError naming the operation, the error and its text."""
    if code != 0:
        raise RuntimeError(f"CUDA error in {lib.dcu_last_error().decode(errors='replace')}")


def _properties(lib, i: int) -> tuple:
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    name = ctypes.create_string_buffer(256)
    major, minor, mem = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
    _check(lib, lib.dcu_device_properties(i, name, 256, ctypes.byref(major), ctypes.byref(minor),
                                          ctypes.byref(mem)))
    return name.value.decode(errors="replace"), (major.value, minor.value)


def _init() -> tuple:
    global _state, _busy
    if _state is None:
        with _lock:  # re-entered only by this thread (Note [Lazy CUDA])
            if _state is None and _busy:
                return None, _REENTERED  # not kept: the outer call decides
            _busy = True
            try:
                if _state is None:  # (a nested call before `_busy = True` may have done it)
                    lib, reason = _load()
                    if not reason:
                        core.dispatch_allocator_register(
                            1, ffi.cast("dispatch_allocator *", lib.dcu_allocator()))
                        _register_kernels(lib)
                    _state = (lib, reason)
            finally:
                _busy = False
    return _state


def _lib():
    """The loaded module, or RuntimeError with the reason CUDA is unavailable."""
    lib, reason = _init()
    if reason:
        raise RuntimeError(f"CUDA is not available: {reason}")
    return lib


def is_available() -> bool:
    """True when CUDA tensors can be made here: built with CUDA, a driver, a
    device, and code (SASS or PTX) in this build that the device can run."""
    return not _init()[1]


def unavailable_reason() -> str:
    """Why is_available() is False ("" when it is True)."""
    return _init()[1]


def device_count() -> int:
    """Number of CUDA devices (0 where CUDA is unavailable, as torch.cuda says)."""
    lib, reason = _init()
    if lib is None or reason:
        return 0
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    n = ctypes.c_int(0)
    _check(lib, lib.dcu_device_count(ctypes.byref(n)))
    return n.value


def _device_index(i) -> int:
    if i is None:
        return 0
    if isinstance(i, str):
        i = int(i.split(":")[1]) if ":" in i else 0
    n = device_count()
    if not 0 <= int(i) < n:
        raise ValueError(f"CUDA device {i} does not exist (device_count() is {n})")
    return int(i)


def get_device_name(i=None) -> str:
    """The name of CUDA device i (default 0)."""
    lib = _lib()
    return _properties(lib, _device_index(i))[0]


def get_device_capability(i=None) -> tuple:
    """(major, minor) compute capability of CUDA device i (default 0)."""
    lib = _lib()
    return _properties(lib, _device_index(i))[1]


def synchronize() -> None:
    """Wait for all work on the current CUDA device."""
    lib = _lib()
    _check(lib, lib.dcu_synchronize())


def memory_stats() -> dict:
    """The caching allocator's numbers: allocated, reserved (allocated + cached),
    peaks, cudaMalloc calls, cache hits, out-of-memory retries, block counts."""
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    lib = _lib()
    fields = ("allocated", "reserved", "peak_allocated", "peak_reserved", "cudaMalloc_calls",
              "cudaFree_calls", "cache_hits", "oom_retries", "active_blocks", "cached_blocks")
    buf = (ctypes.c_uint64 * len(fields))()
    lib.dcu_memory_stats(buf)
    return dict(zip(fields, (int(v) for v in buf)))


def empty_cache() -> None:
    """Give every cached (free) block back to the driver."""
    _lib().dcu_empty_cache()


def memcpy(dst: int, src: int, nbytes: int, kind: int) -> None:
    """cudaMemcpy; kind 1 host->device, 2 device->host, 3 device->device."""
    lib = _lib()
    _check(lib, lib.dcu_memcpy(dst, src, nbytes, kind))


# DLPack streams -----------------------------------------------------------------------------
# Note [DLPack streams]
# ~~~~~~~~~~~~~~~~~~~~~
# `__dlpack__(stream=s)` on a CUDA tensor: the consumer says on which stream it
# will use the data, and the producer makes the data ready there. As the array
# API standard numbers them for CUDA: None or 1 is the legacy default stream,
# 2 the per-thread default stream, any other positive integer a cudaStream_t,
# -1 "do not synchronize"; 0 is refused (ambiguous). This runtime queues all
# its CUDA work on the legacy default stream, so None, 1 and -1 need nothing;
# for 2 or a stream handle an event is recorded on the legacy stream and the
# consumer's stream waits for it (dcu_stream_wait_legacy), the host does not.
# As a consumer, from_dlpack passes stream=1: our stream.

LEGACY_STREAM, PER_THREAD_STREAM, NO_SYNC = 1, 2, -1


def dlpack_stream(stream) -> int | None:
    """The stream a CUDA export must make wait for our work (Note [DLPack
    streams]): None when none must (stream None, 1 or -1), else 2 or the
    cudaStream_t. TypeError or ValueError, naming it, for a stream DLPack does
    not allow on CUDA. Touches no CUDA."""
    if stream is None:
        return None
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"stream must be None or an int for a cuda tensor (got "
                        f"{type(stream).__name__} {stream!r}): 1 the legacy default stream, "
                        "2 the per-thread default stream, a cudaStream_t, or -1 for no "
                        "synchronization")
    stream = int(stream)
    if stream in (LEGACY_STREAM, NO_SYNC):
        return None
    if stream == 0:
        raise ValueError("stream=0 is not allowed for a cuda tensor (DLPack refuses it as "
                         "ambiguous): pass 1 for the legacy default stream or 2 for the "
                         "per-thread default stream")
    if stream < NO_SYNC or stream >= 1 << 64:
        raise ValueError(f"stream {stream} is not a CUDA stream: expected None, -1, 1, 2 or a "
                         "cudaStream_t (a pointer, below 2**64)")
    return stream


def stream_wait(stream: int) -> None:
    """Make CUDA stream `stream` (2: the per-thread default stream, else a
    cudaStream_t) wait for the work queued on the legacy default stream, without
    blocking the host (cudaEventRecord + cudaStreamWaitEvent)."""
    lib = _lib()
    _check(lib, lib.dcu_stream_wait_legacy(stream))


def runtime_info() -> dict:
    """What show_runtime() and `python -m dispatch` print for CUDA."""
    info = {"built": _cuda_build.BUILT, "archs": archs(), "available": False,
            "reason": "", "devices": []}
    if not _cuda_build.BUILT:
        info["reason"] = unavailable_reason()
        return info
    lib, reason = _init()
    info["available"], info["reason"] = not reason, reason
    if not reason:
        for i in range(device_count()):
            name, cap = _properties(lib, i)
            code = code_for_capability(*cap)
            runs = ("none" if code is None else
                    f"its own SASS ({code[1]})" if code[0] == "sass" else
                    f"PTX {code[1]} compiled by the driver (JIT)")
            info["devices"].append({"index": i, "name": name, "capability": list(cap),
                                    "code": runs})
    return info


def print_report(out) -> None:
    info = runtime_info()
    print("CUDA", file=out)
    print(f"  {'built':<16} {' '.join(info['archs']) if info['built'] else 'no'}", file=out)
    if not info["available"]:
        print(f"  {'unavailable':<16} {info['reason']}", file=out)
    for d in info["devices"]:
        cap = ".".join(map(str, d["capability"]))
        print(f"  {'device ' + str(d['index']):<16} {d['name']} (sm {cap}): runs {d['code']}",
              file=out)


# Copies between devices for .to / .cuda() / .cpu() ------------------------------------------
# copy_ is C's (Note [Copies that touch a device] in sources/dispatcher/device_copy.c);
# these new tensors on the other device move with cudaMemcpy, every strided step
# on the host: a non-contiguous CUDA view is read through the span of its storage
# that it covers.

H2D, D2H, D2D = 1, 2, 3


def _span(t) -> tuple:
    """(lo, n): the view's lowest element offset from data_ptr() and the number
    of elements from there to its highest."""
    lo = sum(min(0, (s - 1) * st) for s, st in zip(t.shape, t.stride()) if s > 0)
    hi = sum(max(0, (s - 1) * st) for s, st in zip(t.shape, t.stride()) if s > 0)
    return lo, hi - lo + 1


def _download(t):
    """A contiguous host copy of CUDA tensor t."""
    out = empty(*t.shape, dtype=t.dtype)
    if t.numel() == 0:
        return out
    size = t.dtype.itemsize
    if t.is_contiguous():
        memcpy(out.data_ptr(), t.data_ptr(), t.numel() * size, D2H)
        return out
    lo, n = _span(t)
    raw = empty(n, dtype=t.dtype)
    memcpy(raw.data_ptr(), t.data_ptr() + lo * size, n * size, D2H)
    return raw.as_strided(t.shape, t.stride(), -lo).contiguous()


def _upload_into(dst, host) -> None:
    """Write contiguous host tensor `host` (dst's shape and dtype) into CUDA tensor dst."""
    if dst.numel() == 0:
        return
    size = dst.dtype.itemsize
    if dst.is_contiguous():
        memcpy(dst.data_ptr(), host.data_ptr(), dst.numel() * size, H2D)
        return
    lo, n = _span(dst)
    raw = empty(n, dtype=dst.dtype)
    memcpy(raw.data_ptr(), dst.data_ptr() + lo * size, n * size, D2H)
    raw.as_strided(dst.shape, dst.stride(), -lo).copy_(host)
    memcpy(dst.data_ptr() + lo * size, raw.data_ptr(), n * size, H2D)


def copy_to_device(t, device: int):
    """t on device 0 (cpu) or 1 (cuda): a new tensor, the same shape, dtype and values."""
    _lib()
    if device == 1 and _cptr(t).device == 0:
        out = empty(*t.shape, dtype=t.dtype, device="cuda")
        _upload_into(out, t.contiguous())
        return out
    if device == 0 and _cptr(t).device == 1:
        return _download(t)
    raise RuntimeError(f"cannot copy a {t.device} tensor to {_DEVICE_NAMES[device]}")


# Note [CUDA operators]
# ~~~~~~~~~~~~~~~~~~~~~
# The built-in elementwise kernels of sources/dispatcher/operators_*.c are
# registered at the CUDA key as they are at CPU (dispatch_kernels_register_device):
# the same promotion, broadcasting, allocation and checks; where the CPU runs
# its loop, a CUDA tensor's call goes to dispatch_iter_device_op, which plans
# with the CPU's engine and hands the plan to the module's dcu_elementwise
# (sources/cuda/cuda_elementwise.cu; the loops in cuda_elementwise.cuh). The reductions (sum, mean, max, min,
# max/min with a dim, argmax, argmin) are registered the same way: the CPU
# kernel's argument checks, result shape and dtype, then
# dispatch_iter_device_reduce hands the input to the module's dcu_reduce
# (sources/cuda/cuda_reduce.cu), which plans (Note [CUDA reduction plans] in
# sources/cuda/cuda_reduce_plan.c) and reduces in an order fixed by the shape
# and strides alone (Note [Deterministic CUDA reductions]).

def _register_kernels(lib) -> None:
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    addr = ctypes.cast(lib.dcu_elementwise, ctypes.c_void_p).value
    if core.dispatch_device_loop_register(1, ffi.cast("dispatch_device_loop_fn", addr)) < 0:
        raise RuntimeError("could not register the CUDA elementwise loops")
    addr = ctypes.cast(lib.dcu_reduce, ctypes.c_void_p).value
    if core.dispatch_device_reduce_register(1, ffi.cast("dispatch_device_reduce_fn", addr)) < 0:
        raise RuntimeError("could not register the CUDA reductions")
    # copy_ on and across devices is C's (Note [Copies that touch a device] in
    # sources/dispatcher/device_copy.c), through the module's byte copy
    addr = ctypes.cast(lib.dcu_copy_bytes, ctypes.c_void_p).value
    if core.dispatch_device_memcpy_register(1, ffi.cast("dispatch_device_memcpy_fn", addr)) < 0:
        raise RuntimeError("could not register the CUDA byte copy")
    if core.dispatch_kernels_register_device(core.dispatch_key_from_name(b"CUDA")) < 0:
        _raise()


PATHS = ("vector", "cast", "strided")


def last_launch() -> dict:
    """What the last elementwise CUDA call chose (Note [CUDA launch plans] in
    sources/cuda/cuda_launch.c): path ("vector", "cast", "strided"), vector width
    (4, 2, 1), the number of 32-bit-indexable pieces, coalesced dims, elements."""
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    lib = _lib()

    class Record(ctypes.Structure):
        _fields_ = [("path", ctypes.c_int32), ("vec", ctypes.c_int32), ("pieces", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("numel", ctypes.c_int64)]

    r = Record()
    lib.dcu_last_launch(ctypes.byref(r))
    return {"path": PATHS[r.path], "vec": r.vec, "pieces": r.pieces, "ndim": r.ndim,
            "numel": r.numel}


REDUCE_PATHS = ("inner", "outer", "strided")


def last_reduce() -> dict:
    """What the last CUDA reduction chose (Note [CUDA reduction plans] in
    sources/cuda/cuda_reduce_plan.c): path ("inner", "outer", "strided"), vector
    width (elements per load; columns per thread on "outer"), threads per output
    (256 a block, 32 a warp, 1 outer), blocks per output (splits), outputs,
    elements reduced per output, row lanes per block ("outer"), the combine's
    threads per output (0: no combine), the kernel's blocks and its launches
    (1: a split is combined by its last block, Note [One launch per reduction]
    in sources/cuda/cuda_reduce.cuh)."""
    import ctypes  # lazy: only a CUDA use needs it (Note [Lazy CUDA])

    lib = _lib()

    class Record(ctypes.Structure):
        _fields_ = [("path", ctypes.c_int32), ("vec", ctypes.c_int32), ("tpo", ctypes.c_int32),
                    ("splits", ctypes.c_int32), ("nout", ctypes.c_int64),
                    ("count", ctypes.c_int64), ("lanes", ctypes.c_int32),
                    ("ctpo", ctypes.c_int32), ("blocks", ctypes.c_int64),
                    ("launches", ctypes.c_int32), ("pad_", ctypes.c_int32)]

    r = Record()
    lib.dcu_last_reduce(ctypes.byref(r))
    return {"path": REDUCE_PATHS[r.path], "vec": r.vec, "threads_per_output": r.tpo,
            "splits": r.splits, "outputs": r.nout, "elements": r.count, "lanes": r.lanes,
            "combine_threads_per_output": r.ctpo, "blocks": r.blocks, "launches": r.launches}


# The Tensor class and the factories reach this module through the device
# registry (Note [Device registry] in dispatch/_devices.py), never by import.
_devices.register("cuda", sys.modules[__name__])
