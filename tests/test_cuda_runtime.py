"""CUDA chosen at runtime (issue 14, part 1): never loaded by `import dispatch`,
is_available() False with the right reason where CUDA cannot run, and every
CUDA factory and copy raising that reason. The tests marked gpu need an NVIDIA
GPU and skip here, saying why ("no CUDA device: <reason>")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import dispatch
from dispatch import cuda, ops

REASON = cuda.unavailable_reason()
gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device: {REASON}")
no_gpu = pytest.mark.skipif(cuda.is_available(), reason="a GPU is present: CUDA is available")
DTYPES = (dispatch.bool, dispatch.int8, dispatch.uint8, dispatch.int16, dispatch.int32,
          dispatch.int64, dispatch.float16, dispatch.float32, dispatch.float64)


def _run(code: str, tmp_path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, **env}, timeout=120)


MAPS = ("import dispatch, json; m = open('/proc/self/maps').read(); "
        "print(json.dumps(['dispatch/_cuda' in m or '/_cuda.' in m, 'libcuda' in m, "
        "'libcudart' in m]))")


def test_import_dispatch_maps_neither_the_cuda_module_nor_libcuda(tmp_path):
    proc = _run(MAPS, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, False, False]


def test_first_cuda_use_loads_the_module_when_built(tmp_path):
    proc = _run("import dispatch, json; dispatch.cuda.is_available(); " + MAPS.split("; ", 1)[1], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0] == bool(dispatch.__cuda_archs__)


def test_disable_cuda_env_keeps_it_off_with_that_reason(tmp_path):
    code = ("import dispatch, json; print(dispatch.cuda.is_available()); "
            "print(dispatch.cuda.unavailable_reason()); " + MAPS.split("; ", 1)[1])
    proc = _run(code, tmp_path, DISPATCH_DISABLE_CUDA="1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "False"
    if dispatch.__cuda_archs__:
        assert lines[1] == "CUDA is disabled by DISPATCH_DISABLE_CUDA=1"
        assert json.loads(lines[2])[0] is False  # the module was not even loaded


@no_gpu
def test_is_available_false_with_the_right_reason():
    assert cuda.is_available() is False
    if not dispatch.__cuda_archs__:
        assert REASON.startswith("not built with CUDA: ")
        assert "nvcc was not found" in REASON or "-Dcuda=disabled" in REASON
    elif os.environ.get("DISPATCH_DISABLE_CUDA", "") not in ("", "0"):
        assert "DISPATCH_DISABLE_CUDA" in REASON
    elif not any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl")):
        assert REASON.startswith("no NVIDIA driver: cudaGetDeviceCount failed with "
                                 "cudaErrorInsufficientDriver (35): "), REASON
    assert cuda.device_count() == 0


@no_gpu
@pytest.mark.parametrize("make", [
    lambda: dispatch.empty(2, device="cuda"),
    lambda: dispatch.zeros(2, 3, device="cuda"),
    lambda: dispatch.ones(2, device="cuda:0"),
    lambda: dispatch.full((2,), 1.5, device="cuda"),
    lambda: dispatch.arange(5, device="cuda"),
    lambda: dispatch.tensor([1, 2, 3], device="cuda"),
    lambda: dispatch.ones(2, 3).cuda(),
    lambda: dispatch.ones(2, 3).T.to("cuda"),
], ids=["empty", "zeros", "ones", "full", "arange", "tensor", "cuda", "to"])
def test_cuda_factory_or_copy_raises_the_reason(make):
    with pytest.raises(RuntimeError) as e:
        make()
    assert "no allocator is registered for device 'cuda'" in str(e.value)
    assert REASON in str(e.value)


@no_gpu
@pytest.mark.parametrize("call", [cuda.synchronize, cuda.memory_stats, cuda.empty_cache,
                                  cuda.get_device_name, cuda.get_device_capability])
def test_cuda_api_without_cuda_raises_the_reason(call):
    with pytest.raises(RuntimeError, match="CUDA is not available: "):
        call()


def test_cpu_tensor_to_cpu_is_itself():
    t = dispatch.ones(3)
    assert t.cpu() is t and t.to("cpu") is t and not t.is_cuda
    assert t.to(dispatch.float64).dtype == dispatch.float64  # .to(dtype) unchanged


@pytest.mark.parametrize("arch", ["x", None, "sm_", "sm_8a", "compute", "sm_\u0668\u0666"])
def test_code_for_capability_names_a_malformed_architecture(arch):
    """A bad name in sass= or ptx= was a bare IndexError (found by fuzzing)."""
    with pytest.raises(ValueError, match="not a CUDA architecture name"):
        cuda.code_for_capability(8, 0, sass=[arch], ptx=["compute_80"])
    with pytest.raises(ValueError, match="not a CUDA architecture name"):
        cuda.code_for_capability(8, 0, sass=[], ptx=[arch])


def test_code_for_capability_prefers_own_sass_then_ptx():
    sass, ptx = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_120"], ["compute_120"]
    assert cuda.code_for_capability(8, 6, sass, ptx) == ("sass", "sm_86")
    assert cuda.code_for_capability(8, 9, sass, ptx) == ("sass", "sm_86")  # same major, newer minor
    assert cuda.code_for_capability(9, 0, sass, ptx) == ("sass", "sm_90")
    assert cuda.code_for_capability(10, 0, sass, ptx) is None  # sm_90 SASS does not run on 10.x
    assert cuda.code_for_capability(12, 1, sass, ptx) == ("sass", "sm_120")
    assert cuda.code_for_capability(13, 0, sass, ptx) == ("ptx", "compute_120")  # driver JIT
    assert cuda.code_for_capability(7, 0, sass, ptx) is None  # below every arch
    assert cuda.code_for_capability(10, 0, sass, ["compute_90"]) == ("ptx", "compute_90")


def test_show_runtime_and_python_m_dispatch_report_cuda(tmp_path):
    import io

    out = io.StringIO()
    dispatch.show_runtime(out)
    text = out.getvalue()
    assert "\nCUDA\n" in text
    if dispatch.__cuda_archs__:
        assert " ".join(dispatch.__cuda_archs__) in text
    assert (REASON in text) if REASON else "runs" in text
    proc = _run("import runpy, sys; sys.argv = ['x', '--json']; "
                "runpy.run_module('dispatch', run_name='__main__')", tmp_path)
    info = json.loads(proc.stdout)["cuda"]
    assert info["built"] == bool(dispatch.__cuda_archs__)
    assert info["state"] == ("not built" if not dispatch.__cuda_archs__
                             else "available" if cuda.is_available() else "unavailable")


# Mixing devices: fake_cuda_allocator (tests/conftest.py) makes CUDA-tagged tensors here ----

def test_cuda_and_cpu_tensor_in_one_operator_is_an_error_naming_both(fake_cuda_allocator):
    g = dispatch.empty(3, device="cuda")
    assert g.device == "cuda" and g.is_cuda
    c = dispatch.ones(3)
    for call in (lambda: ops.add(g, c), lambda: ops.add(c, g), lambda: g + c,
                 lambda: ops.addcmul(c, g, g)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                               "but found at least two devices, cuda and cpu"):
            call()


def test_cuda_tensor_with_0dim_cpu_tensor_is_not_a_device_error(fake_cuda_allocator):
    g = dispatch.empty(3, device="cuda")
    for other in (dispatch.tensor(2.0), 2.0):
        with pytest.raises(NotImplementedError, match="'CUDA' backend"):  # no CUDA kernel yet
            ops.add(g, other)


# On a GPU (skipped here) -------------------------------------------------------------------

@gpu
def test_gpu_device_properties_and_report():
    assert cuda.device_count() >= 1
    assert cuda.get_device_name(0)
    major, minor = cuda.get_device_capability(0)
    assert cuda.code_for_capability(major, minor) is not None
    cuda.synchronize()
    assert cuda.runtime_info()["devices"][0]["code"]


@gpu
@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_gpu_every_dtype_round_trips_bit_for_bit(d):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=4096, dtype=np.uint8)
    if d is dispatch.bool:
        raw = raw & 1
    # dtype.numpy is a property (the NumPy dtype), not a method: the H100 run
    # failed here calling it ("'numpy.dtypes.Int8DType' object is not callable")
    host = dispatch.from_numpy(raw.view(d.numpy).reshape(64, -1))
    dev = host.cuda()
    assert dev.device == "cuda" and dev.dtype == d and dev.shape == host.shape
    back = dev.cpu()
    assert back.numpy().tobytes() == host.numpy().tobytes()
    assert dispatch.tensor(host.numpy(), device="cuda").cpu().numpy().tobytes() == host.numpy().tobytes()


@gpu
def test_gpu_non_contiguous_sources_and_copy_across_devices():
    np = pytest.importorskip("numpy")
    a = dispatch.arange(24, dtype=dispatch.float32).reshape(4, 6)
    t = a.T
    assert np.array_equal(t.cuda().cpu().numpy(), t.numpy())
    g = a.cuda()
    assert np.array_equal(g.T.cpu().numpy(), t.numpy())  # strided CUDA view read back
    assert np.array_equal(g[:, ::2].cpu().numpy(), a.numpy()[:, ::2])
    dst = dispatch.zeros(4, 6, device="cuda")
    dst.copy_(a)
    assert np.array_equal(dst.cpu().numpy(), a.numpy())
    dst[:, 1].copy_(dispatch.full((4,), 7.0))
    expect = a.numpy().copy()
    expect[:, 1] = 7
    assert np.array_equal(dst.cpu().numpy(), expect)
    host = dispatch.zeros(4, 6, dtype=dispatch.float64)
    host.copy_(g)
    assert np.array_equal(host.numpy(), a.numpy())
    assert np.array_equal(dispatch.full((2, 2), 3, device="cuda").cpu().numpy(), np.full((2, 2), 3))


@gpu
def test_gpu_allocator_reuses_freed_blocks():
    cuda.empty_cache()
    before = cuda.memory_stats()
    t = dispatch.empty(1000, device="cuda")
    mid = cuda.memory_stats()
    assert mid["cudaMalloc_calls"] == before["cudaMalloc_calls"] + 1
    del t
    t = dispatch.empty(1000, device="cuda")
    after = cuda.memory_stats()
    assert after["cudaMalloc_calls"] == mid["cudaMalloc_calls"]
    assert after["cache_hits"] == mid["cache_hits"] + 1
    assert after["allocated"] >= 4000 and after["peak_allocated"] >= after["allocated"]
    del t
    cuda.empty_cache()
    assert cuda.memory_stats()["reserved"] == cuda.memory_stats()["allocated"]


@gpu
def test_gpu_out_of_memory_retries_then_memory_error_says_asked_and_held():
    keep = dispatch.empty(1 << 20, device="cuda")
    del keep  # one cached block the retry must give back
    with pytest.raises(MemoryError, match=r"tried to allocate \d+ bytes .*holds \d+ bytes "
                                          r"allocated and \d+ cached.*cudaErrorMemoryAllocation"):
        dispatch.empty(1 << 50, dtype=dispatch.uint8, device="cuda")
    assert cuda.memory_stats()["oom_retries"] >= 1
    assert cuda.memory_stats()["cached_blocks"] == 0


@gpu
def test_gpu_mixing_devices_names_both():
    with pytest.raises(RuntimeError, match="cuda and cpu"):
        ops.add(dispatch.ones(3, device="cuda"), dispatch.ones(3))


@gpu
@pytest.mark.parametrize("d", DTYPES + (dispatch.bfloat16,), ids=lambda d: d.name)
def test_gpu_values_on_the_host_are_the_cpu_ones(d):
    """item(), float(), tolist() and repr() of a real CUDA tensor (after a
    device op, so the copy must wait for it) give the CPU tensor's
    (tests/test_cuda_host_values.py checks each on the fake device)."""
    c = dispatch.arange(6, dtype=dispatch.float64).reshape(2, 3).to(d)
    g = c.cuda().T.contiguous()  # the device's copy loop, queued on its stream
    c = c.T.contiguous()
    assert g.tolist() == c.tolist()
    assert g[2, 1].item() == c[2, 1].item() and float(g[1, 0]) == float(c[1, 0])
    suffix = f", dtype={d!r}" if d not in (dispatch.float32, dispatch.int64, dispatch.bool) else ""
    assert repr(g) == repr(c)[:len(repr(c)) - len(suffix) - 1] + f", device='cuda:0'{suffix})"
    with pytest.raises(TypeError, match=r"Use Tensor\.cpu\(\) to copy"):
        g.numpy()
