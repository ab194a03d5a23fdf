"""DLPack for CUDA tensors (issue 14, item 5): export on kDLCUDA device 0, import
from any CUDA producer, the stream argument as the array API standard says
(Note [DLPack streams] in dispatch/cuda.py), dl_device and copy.

Without a GPU the host-side logic runs here: argument checks, device mapping,
stream resolution, and whole exports and imports of "cuda" tensors made by a
fake allocator over host memory (with cudaMemcpy replaced by memmove where a
copy between devices is asked for). The tests marked gpu need an NVIDIA GPU
(and PyTorch built with CUDA) and skip here, saying why."""

from __future__ import annotations

import ctypes
import gc
import re

import numpy as np
import pytest

import dispatch
from dispatch import cuda

REASON = cuda.unavailable_reason()
_REAL_LIB = cuda._lib
gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device: {REASON}")
no_gpu = pytest.mark.skipif(cuda.is_available(), reason="a GPU is present: CUDA is available")

_get = ctypes.pythonapi.PyCapsule_GetPointer
_get.restype, _get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _name(capsule) -> str:
    return repr(capsule).split('"')[1]


def _dl_tensor(capsule) -> int:
    """Address of the capsule's DLTensor (after version, manager_ctx, deleter
    and flags in a versioned one; first in a legacy one)."""
    name = _name(capsule)
    p = _get(capsule, name.encode())
    return p + (8 + 3 * 8 if name == "dltensor_versioned" else 0)


def _device(capsule) -> tuple:
    t = _dl_tensor(capsule)  # DLTensor: data, then DLDevice {int32 type, int32 id}
    return (ctypes.c_int32.from_address(t + 8).value, ctypes.c_int32.from_address(t + 12).value)


def _set_device(capsule, device_type: int, device_id: int) -> None:
    t = _dl_tensor(capsule)
    ctypes.c_int32.from_address(t + 8).value = device_type
    ctypes.c_int32.from_address(t + 12).value = device_id


def _flags(capsule) -> int:
    return ctypes.c_uint64.from_address(_get(capsule, b"dltensor_versioned") + 24).value


def _data(capsule) -> int:
    return ctypes.c_void_p.from_address(_dl_tensor(capsule)).value or 0


# Stream resolution (no CUDA touched) ---------------------------------------------------------

@pytest.mark.parametrize("stream", [None, 1, -1])
def test_dlpack_stream_legacy_default_or_no_sync_needs_no_wait(stream):
    assert cuda.dlpack_stream(stream) is None


@pytest.mark.parametrize("stream", [2, 3, 0x7F12_3456_7890, 2**64 - 1])
def test_dlpack_stream_per_thread_or_handle_is_waited_on(stream):
    assert cuda.dlpack_stream(stream) == stream


@pytest.mark.parametrize("stream, error, match", [
    (0, ValueError, "stream=0 is not allowed"),
    (-2, ValueError, "stream -2 is not a CUDA stream"),
    (2**64, ValueError, "is not a CUDA stream"),
    (True, TypeError, "bool True"),
    (1.0, TypeError, "float 1.0"),
    ("1", TypeError, "str '1'"),
    (object(), TypeError, "stream must be None or an int"),
])
def test_dlpack_stream_invalid_values_raise_naming_them(stream, error, match):
    with pytest.raises(error, match=match):
        cuda.dlpack_stream(stream)


def test_dlpack_stream_resolution_does_not_load_cuda(tmp_path):
    import subprocess
    import sys

    code = ("import dispatch.cuda as c; assert c.dlpack_stream(2) == 2; "
            "c.dlpack_stream(None); m = open('/proc/self/maps').read(); "
            "print('/_cuda.' in m or 'libcuda' in m)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# "cuda" tensors over host memory: the whole protocol without a GPU ------------------------------

def _on_cuda(values, dtype=dispatch.float32):
    return dispatch.tensor(values, dtype=dtype).to("cuda")


@pytest.fixture
def waits(monkeypatch):
    calls = []
    monkeypatch.setattr(cuda, "stream_wait", calls.append)
    return calls


def test_cuda_tensor_dlpack_device_is_kdlcuda_0(fake_cuda):
    assert _on_cuda([1.0]).__dlpack_device__() == (2, 0)


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_cuda_export_is_zero_copy_on_kdlcuda_0(fake_cuda, max_version):
    g = _on_cuda([[1, 2, 3], [4, 5, 6]])
    c = g.__dlpack__(max_version=max_version)
    assert _name(c) == ("dltensor" if max_version is None else "dltensor_versioned")
    assert _device(c) == (2, 0)
    assert _data(c) == g.data_ptr()


@pytest.mark.parametrize("stream", [None, 1, -1])
def test_cuda_export_on_our_stream_or_no_sync_waits_for_nothing(fake_cuda, waits, stream):
    _on_cuda([1.0]).__dlpack__(stream=stream)
    assert waits == []


@pytest.mark.parametrize("stream", [2, 0xDEAD_BEE0])
def test_cuda_export_to_another_stream_makes_it_wait(fake_cuda, waits, stream):
    c = _on_cuda([1.0]).__dlpack__(stream=stream, max_version=(1, 0))
    assert waits == [stream] and _device(c) == (2, 0)


def test_cuda_export_stream_wait_is_a_checked_cuda_call_not_skipped(fake_cuda):
    # No CUDA here: the event record + wait is attempted, and says why it cannot run.
    g = _on_cuda([1.0])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cuda, "_lib", _REAL_LIB)
        with pytest.raises(RuntimeError, match="CUDA is not available: "):
            g.__dlpack__(stream=2)


@pytest.mark.parametrize("stream, error", [(0, ValueError), (-5, ValueError), ("s", TypeError)])
def test_cuda_export_invalid_stream_is_refused_before_any_work(fake_cuda, waits, stream, error):
    gc.collect()
    before = dispatch.live_storages()
    g = _on_cuda([1.0, 2.0])
    with pytest.raises(error, match="stream"):
        g.__dlpack__(stream=stream, copy=True)
    assert waits == []
    del g
    gc.collect()
    assert dispatch.live_storages() == before


def test_cuda_export_dl_device_own_device_is_zero_copy(fake_cuda):
    g = _on_cuda([1.0, 2.0])
    c = g.__dlpack__(max_version=(1, 0), dl_device=(2, 0), copy=False)
    assert _device(c) == (2, 0) and _data(c) == g.data_ptr() and _flags(c) == 0


def test_cuda_export_dl_device_cpu_is_a_host_copy_flagged_copied(fake_cuda):
    g = _on_cuda([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).T  # non-contiguous
    for copy in (None, True):
        c = g.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=copy)
        assert _device(c) == (1, 0) and _flags(c) == 2  # IS_COPIED
        a = np.from_dlpack(_Holder(c, (1, 0)))
        assert a.tolist() == [[1, 4], [2, 5], [3, 6]]


def test_cuda_export_dl_device_cpu_with_copy_false_is_a_buffer_error(fake_cuda):
    with pytest.raises(BufferError, match="copy=False"):
        _on_cuda([1.0]).__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)


def test_cuda_export_dl_device_cpu_needs_stream_none(fake_cuda):
    with pytest.raises(ValueError, match="stream must be None for an export to the CPU"):
        _on_cuda([1.0]).__dlpack__(max_version=(1, 0), dl_device=(1, 0), stream=1)


@pytest.mark.parametrize("dl_device", [(2, 1), (10, 0), (3, 0)])
def test_cuda_export_to_another_device_is_a_buffer_error(fake_cuda, dl_device):
    with pytest.raises(BufferError, match=r"DLPack device .*only \(2, 0\), its own"):
        _on_cuda([1.0]).__dlpack__(max_version=(1, 0), dl_device=dl_device)


@pytest.mark.parametrize("dl_device", ["cuda", (2,), 5])
def test_malformed_dl_device_is_a_type_error(dl_device):
    with pytest.raises(TypeError, match="dl_device must be a"):
        dispatch.zeros(2).__dlpack__(dl_device=dl_device)


def test_cuda_export_copy_true_is_a_device_copy_flagged_copied(fake_cuda, monkeypatch):
    import dispatch._tensor as T

    copies = []

    def copy_on_device(t):  # the CUDA copy_ kernel is registered when CUDA starts
        copies.append(t.device)
        return dispatch.tensor(t.cpu().tolist(), dtype=t.dtype).to("cuda")

    monkeypatch.setattr(T, "_copy_on_device", copy_on_device)
    g = _on_cuda([1.0, 2.0])
    c = g.__dlpack__(max_version=(1, 0), copy=True)
    assert copies == ["cuda"]
    assert _device(c) == (2, 0) and _data(c) != g.data_ptr() and _flags(c) == 2


def test_cuda_copy_for_export_goes_through_the_cuda_copy_kernel(fake_cuda):
    # not C's clone, which would walk device memory on the host: the dispatcher's
    # copy_ at the CUDA key (no kernel there without a GPU)
    import dispatch._tensor as T

    with pytest.raises(NotImplementedError, match="'CUDA' backend"):
        T._copy_on_device(_on_cuda([1.0]))


def test_read_only_cuda_tensor_exports_flagged_or_is_refused_unversioned(fake_cuda):
    c = _on_cuda([1.0, 2.0]).__dlpack__(max_version=(1, 0))
    ctypes.c_uint64.from_address(_get(c, b"dltensor_versioned") + 24).value = 1  # READ_ONLY
    ro = dispatch.from_dlpack(c)
    assert ro.device == "cuda"
    assert _flags(ro.__dlpack__(max_version=(1, 0))) == 1
    with pytest.raises(BufferError, match="read-only"):
        ro.__dlpack__()
    with pytest.raises(ValueError, match="read-only"):
        ro.copy_(dispatch.tensor([3.0, 4.0]))
    assert ro.cpu().tolist() == [1.0, 2.0]


class _Holder:
    """A producer handing out one given capsule (a peer library)."""

    def __init__(self, capsule, device, calls=None):
        self.capsule, self.device, self.calls = capsule, device, calls

    def __dlpack__(self, **kwargs):
        if self.calls is not None:
            self.calls.append(kwargs)
        return self.capsule

    def __dlpack_device__(self):
        return self.device


class _Spy:
    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def test_cuda_import_is_zero_copy_with_strides_and_offset(fake_cuda):
    g = _on_cuda(list(range(20)), dispatch.int64).view(4, 5)
    v = g[1:, ::2]
    u = dispatch.from_dlpack(v)
    assert u.device == "cuda"
    assert u.shape == v.shape and u.stride() == v.stride() and u.data_ptr() == v.data_ptr()
    # shared memory: a write through one side is seen by the other (the fake
    # device memory is host memory; on a GPU this is test_gpu_torch_to_dispatch...)
    ctypes.c_int64.from_address(u.data_ptr()).value = -1
    ctypes.c_int64.from_address(u.data_ptr() + 8 * u.stride()[1]).value = -2
    assert g.cpu()[1].tolist() == [-1, 6, -2, 8, 9]


def test_cuda_producer_is_asked_on_our_stream_versioned_first(fake_cuda, waits):
    spy = _Spy(_on_cuda([1.0, 2.0]))
    t = dispatch.from_dlpack(spy)
    assert spy.calls == [{"max_version": (1, 0), "stream": 1}]
    assert t.device == "cuda" and waits == []


def test_legacy_cuda_producer_is_asked_with_stream_only(fake_cuda):
    g = _on_cuda([1.0, 2.0])
    calls = []

    class Legacy:
        def __dlpack__(self, stream=None):
            calls.append(stream)
            return g.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return (2, 0)

    t = dispatch.from_dlpack(Legacy())
    assert calls == [1] and t.data_ptr() == g.data_ptr()


def test_cuda_capsule_consumed_twice_is_an_error(fake_cuda):
    c = _on_cuda([1.0]).__dlpack__()
    dispatch.from_dlpack(c)
    assert _name(c) == "used_dltensor"
    with pytest.raises(ValueError, match="consumed already"):
        dispatch.from_dlpack(c)


def test_cuda_device_other_than_0_is_refused_and_released(fake_cuda):
    with pytest.raises(BufferError, match="CUDA device 1 .*device 0 only"):
        dispatch.from_dlpack(_Holder(None, (2, 1)))
    gc.collect()
    before = dispatch.live_storages()
    c = _on_cuda([1.0]).__dlpack__(max_version=(1, 0))
    _set_device(c, 2, 1)
    with pytest.raises(RuntimeError, match=r"CUDA device 1 \(DLPack device \(2, 1\)\); this "
                                           "runtime uses CUDA device 0 only"):
        dispatch.from_dlpack(c)
    del c
    gc.collect()
    assert dispatch.live_storages() == before  # consumed, and the deleter ran


@no_gpu
def test_cuda_capsule_without_cuda_is_refused_with_the_reason_and_released():
    gc.collect()
    before = dispatch.live_storages()
    c = dispatch.arange(3).__dlpack__()
    _set_device(c, 2, 0)
    with pytest.raises(RuntimeError, match="CUDA device 0 .*CUDA is not available here .*: "
                                           + re.escape(REASON[:20])):
        dispatch.from_dlpack(c)
    del c
    gc.collect()
    assert dispatch.live_storages() == before


@no_gpu
def test_cuda_producer_without_cuda_is_a_buffer_error_with_the_reason():
    with pytest.raises(BufferError,
                       match="CUDA is not available here: " + re.escape(REASON[:20])):
        dispatch.from_dlpack(_Holder(None, (2, 0)))


def test_rocm_producer_is_refused_clearly():
    with pytest.raises(BufferError, match=r"ROCm device \(DLPack device \(10, 0\)\); only CPU "
                                          "and CUDA device 0"):
        dispatch.from_dlpack(_Holder(None, (10, 0)))


def test_from_dlpack_cuda_to_cpu_asks_the_producer_for_a_host_copy(fake_cuda):
    spy = _Spy(_on_cuda([1.0, 2.0, 3.0]))
    t = dispatch.from_dlpack(spy, device="cpu")
    assert spy.calls == [{"max_version": (1, 0), "dl_device": (1, 0), "copy": True}]
    assert t.device == "cpu" and t.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match="copy=False"):
        dispatch.from_dlpack(spy, device="cpu", copy=False)


def test_from_dlpack_cuda_to_cpu_falls_back_for_a_producer_without_dl_device(fake_cuda):
    g = _on_cuda([1.0, 2.0])

    class Old:
        def __dlpack__(self, stream=None, max_version=None):
            return g.__dlpack__(stream=stream, max_version=max_version)

        def __dlpack_device__(self):
            return (2, 0)

    t = dispatch.from_dlpack(Old(), device="cpu")
    assert t.device == "cpu" and t.tolist() == [1.0, 2.0]


def test_from_dlpack_cpu_to_cuda_is_a_copy_or_refused_with_copy_false(fake_cuda):
    src = np.arange(3.0)
    t = dispatch.from_dlpack(src, device="cuda")
    assert t.device == "cuda" and t.cpu().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(BufferError, match="copy=False"):
        dispatch.from_dlpack(src, device="cuda", copy=False)
    with pytest.raises(BufferError, match="copy=False"):
        dispatch.from_dlpack(src.__dlpack__(), device="cuda", copy=False)


def test_from_dlpack_bare_capsule_with_copy_true_is_a_copy():
    src = np.arange(3.0)
    t = dispatch.from_dlpack(src.__dlpack__(), copy=True)
    t.fill_(7)
    assert src.tolist() == [0.0, 1.0, 2.0]


def test_meta_tensor_export_still_refused():
    with pytest.raises(BufferError, match="meta"):
        dispatch.empty(2, device="meta").__dlpack__(stream=1)


# On a GPU with PyTorch built with CUDA (skipped here) -----------------------------------------

def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return torch


@gpu
def test_gpu_torch_to_dispatch_shares_memory_with_strides_and_offset():
    torch = _torch_cuda()
    q = torch.arange(20, dtype=torch.int64, device="cuda").view(4, 5)[1:, ::2]
    u = dispatch.from_dlpack(q)
    assert u.device == "cuda" and u.data_ptr() == q.data_ptr()
    assert u.shape == tuple(q.shape) and u.stride() == q.stride()
    assert u.cpu().tolist() == q.cpu().tolist()
    u.copy_(dispatch.full((3, 3), -3, dtype=dispatch.int64))  # a write through our side
    assert (q == -3).all().item()


@gpu
def test_gpu_dispatch_to_torch_shares_memory_with_strides_and_offset():
    torch = _torch_cuda()
    t = dispatch.arange(12, dtype=dispatch.float32).view(3, 4).to("cuda")
    v = t[1:, 1:].T
    p = torch.from_dlpack(v)
    assert p.is_cuda and p.data_ptr() == v.data_ptr()
    assert tuple(p.shape) == v.shape and p.stride() == v.stride()
    p.fill_(100)  # a write through torch's side
    torch.cuda.synchronize()
    assert t.cpu().tolist() == [[0, 1, 2, 3], [4, 100, 100, 100], [8, 100, 100, 100]]


@gpu
@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                                  "float32", "float64"])
def test_gpu_torch_round_trip_every_dtype(name):
    torch = _torch_cuda()
    p = (torch.arange(12, device="cuda") % 3).to(getattr(torch, name))
    u = dispatch.from_dlpack(p)
    back = torch.from_dlpack(u)
    assert back.data_ptr() == p.data_ptr() and torch.equal(back, p)


@gpu
def test_gpu_stream_argument_accepted_for_every_kind():
    torch = _torch_cuda()
    t = dispatch.arange(4, dtype=dispatch.float32).to("cuda")
    s = torch.cuda.Stream()
    for stream in (None, 1, 2, -1, s.cuda_stream):
        c = t.__dlpack__(stream=stream, max_version=(1, 0))
        assert _device(c) == (2, 0)
    with torch.cuda.stream(s):  # torch consumes on its non-default stream: we make it wait
        p = torch.from_dlpack(t)
        assert (p.cpu() == torch.arange(4.0)).all().item()
    with pytest.raises(ValueError, match="stream=0"):
        t.__dlpack__(stream=0)


@gpu
def test_gpu_torch_capsule_consumed_twice_is_an_error():
    torch = _torch_cuda()
    c = torch.utils.dlpack.to_dlpack(torch.arange(3, device="cuda"))
    u = dispatch.from_dlpack(c)
    assert u.device == "cuda"
    with pytest.raises(ValueError, match="consumed already"):
        dispatch.from_dlpack(c)


@gpu
def test_gpu_dl_device_cpu_copy_and_from_dlpack_device_cpu():
    torch = _torch_cuda()
    t = dispatch.arange(6, dtype=dispatch.float64).view(2, 3).to("cuda")
    a = np.from_dlpack(_Holder(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0)), (1, 0)))
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]
    p = torch.arange(3.0, device="cuda")
    h = dispatch.from_dlpack(p, device="cpu")
    assert h.device == "cpu" and h.tolist() == [0.0, 1.0, 2.0]


@gpu
def test_gpu_dispatch_round_trip_through_itself_and_outlives_the_producer():
    t = dispatch.arange(5, dtype=dispatch.int32).to("cuda")
    u = dispatch.from_dlpack(t)
    assert u.data_ptr() == t.data_ptr()
    del t
    gc.collect()
    assert u.cpu().tolist() == [0, 1, 2, 3, 4]
