"""A "cuda" device over host memory, for the CUDA routing tests on machines
without a GPU: one allocator and one copy, shared by the fake_cuda fixtures
of conftest.py and the child processes of test_cuda_ops.py and
test_cuda_reductions.py (which register device kernels, a process-wide act;
they find this module through PYTHONPATH, see CHILD_ENV)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any


def host_allocator() -> tuple[Any, tuple]:
    """A dispatch_allocator whose blocks are host memory, and the objects that
    must stay alive while it is registered."""
    from dispatch._core import ffi

    blocks: dict = {}

    @ffi.callback("void *(size_t, void *)")
    def alloc(n, ctx):
        buf = ffi.new("char[]", max(int(n), 1))
        blocks[int(ffi.cast("uintptr_t", buf))] = buf
        return buf

    @ffi.callback("void (void *, void *)")
    def free(p, ctx):
        blocks.pop(int(ffi.cast("uintptr_t", p)), None)

    name = ffi.new("char[]", b"fake-cuda")
    allocator = ffi.new("dispatch_allocator *", {"name": name, "alloc": alloc, "free": free})
    return allocator, (blocks, alloc, free, name)


def host_memcpy(dst: int, src: int, n: int, kind: int) -> None:
    """dispatch.cuda.memcpy for host memory: every direction is a memmove."""
    ctypes.memmove(dst, src, n)


BYTE_COPIES: list = []  # (kind, nbytes) of each byte copy C asked of the fake device


def host_byte_copy() -> Any:
    """A dispatch_device_memcpy_fn over host memory (every kind a memmove),
    recording each call in BYTE_COPIES."""
    from dispatch._core import ffi

    @ffi.callback("dispatch_device_memcpy_fn")
    def copy(dst, src, n, kind, err, cap):
        BYTE_COPIES.append((int(kind), int(n)))
        ctypes.memmove(int(ffi.cast("uintptr_t", dst)), int(ffi.cast("uintptr_t", src)), int(n))
        return 0

    return copy


def install() -> tuple:
    """In a child process: the host allocator as device 1's, copies by
    memmove (Python's and C's), no CUDA module. Keep the result alive."""
    from dispatch import cuda
    from dispatch._core import lib

    allocator, keep = host_allocator()
    lib.dispatch_allocator_register(1, allocator)
    byte_copy = host_byte_copy()
    assert lib.dispatch_device_memcpy_register(1, byte_copy) == 0
    cuda._lib = lambda: None
    cuda.memcpy = host_memcpy
    return allocator, keep, byte_copy


def child_env() -> dict:
    """The environment of a child script that imports this module."""
    here = str(Path(__file__).resolve().parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}
