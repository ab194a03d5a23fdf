"""CUDA operators (issue 15): host-side routing, the launch planner, and the
GPU equality tests.

Without a GPU, CUDA-tagged tensors come from a fake allocator over host memory
(as in test_dlpack_cuda.py); what runs here is the host logic: which path a
copy takes, and the launch planner (sources/cuda/cuda_launch.c) through its C
test. The tests marked gpu need an NVIDIA GPU and skip, saying why, elsewhere.
"""

from __future__ import annotations

import gc
import shutil
import subprocess
from pathlib import Path

import pytest

import dispatch
from dispatch import cuda

ROOT = Path(__file__).resolve().parents[1]
REASON = cuda.unavailable_reason()
gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device: {REASON}")


@pytest.fixture
def fake_cuda():
    """"cuda" tensors over host memory, filled through memmove copies."""
    if cuda.is_available():
        pytest.skip("a GPU is present: the real allocator is registered")
    import ctypes

    from dispatch._core import ffi, lib

    blocks = {}

    @ffi.callback("void *(size_t, void *)")
    def alloc(n, ctx):
        buf = ffi.new("char[]", max(int(n), 1))
        blocks[int(ffi.cast("uintptr_t", buf))] = buf
        return buf

    @ffi.callback("void (void *, void *)")
    def free(p, ctx):
        blocks.pop(int(ffi.cast("uintptr_t", p)), None)

    name = ffi.new("char[]", b"fake-cuda")
    a = ffi.new("dispatch_allocator *", {"name": name, "alloc": alloc, "free": free})
    before = lib.dispatch_allocator_get(1)
    lib.dispatch_allocator_register(1, a)
    mp = pytest.MonkeyPatch()
    mp.setattr(cuda, "_lib", lambda: None)
    mp.setattr(cuda, "memcpy", lambda dst, src, n, kind: ctypes.memmove(dst, src, n))
    try:
        yield mp
    finally:
        mp.undo()
        gc.collect()
        lib.dispatch_allocator_register(1, before)


# item 0: no host walk over device memory ----------------------------------------------------

def test_core_copy_refuses_to_walk_cuda_memory_on_the_host(fake_cuda):
    from dispatch._core import ffi, lib

    g = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]]).to("cuda")
    gt = g.T
    for call in (lambda: lib.dispatch_tensor_clone(g._p),
                 lambda: lib.dispatch_tensor_contiguous(gt._p),
                 lambda: lib.dispatch_tensor_to_dtype(g._p, dispatch.float64.num)):
        assert call() == ffi.NULL
        msg = ffi.string(lib.dispatch_error_message()).decode()
        assert "cannot walk cuda memory on the host" in msg
        lib.dispatch_error_clear()


@pytest.mark.parametrize("make", [lambda g: g.clone(), lambda g: g.T.contiguous(),
                                  lambda g: g.to(dispatch.float64)],
                         ids=["clone", "contiguous", "to_dtype"])
def test_cuda_clone_contiguous_to_dtype_go_to_the_cuda_copy_kernel_not_core(fake_cuda, make):
    # no GPU: no CUDA copy_ kernel is registered, so the dispatcher says so
    # (before the fix, C's clone walked the device memory on the host)
    g = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]]).to("cuda")
    with pytest.raises(NotImplementedError, match="'CUDA' backend"):
        make(g)


def test_cuda_clone_calls_copy_into_a_new_cuda_tensor(fake_cuda):
    import dispatch._tensor as T

    calls = []

    def copy_(self, src):
        calls.append((self.device, src.device, self.dtype, self.shape, self.is_contiguous()))
        return self

    fake_cuda.setattr(T.Tensor, "copy_", copy_)
    g = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]]).to("cuda")
    g.T.contiguous()
    g.to(dispatch.int32)
    g.clone()
    assert calls == [("cuda", "cuda", dispatch.float32, (2, 2), True),
                     ("cuda", "cuda", dispatch.int32, (2, 2), True),
                     ("cuda", "cuda", dispatch.float32, (2, 2), True)]


def test_contiguous_cuda_tensor_contiguous_and_same_dtype_to_are_self(fake_cuda):
    g = dispatch.tensor([1.0, 2.0]).to("cuda")
    assert g.contiguous().data_ptr() == g.data_ptr()
    assert g.to(dispatch.float32).data_ptr() == g.data_ptr()


def test_cpu_clone_contiguous_unchanged():
    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.T.contiguous().tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert t.clone().tolist() == t.tolist() and t.clone().data_ptr() != t.data_ptr()
