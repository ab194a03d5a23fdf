"""CUDA operators (issue 15): host-side routing, the launch planner, and the
GPU equality tests.

Without a GPU, CUDA-tagged tensors come from a fake allocator over host memory
(as in test_dlpack_cuda.py); what runs here is the host logic: which path a
copy takes, and the launch planner (sources/cuda/cuda_launch.c) through its C
test. The tests marked gpu need an NVIDIA GPU and skip, saying why, elsewhere.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import dispatch
from dispatch import cuda

ROOT = Path(__file__).resolve().parents[1]
REASON = cuda.unavailable_reason()
gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device: {REASON}")


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


# item 1: the launch planner, on the host ----------------------------------------------------

def test_launch_planner_vector_size_path_split_and_dividers_c_test_passes(cuda_host_c_test):
    # vector width 4/2/1 from every operand's alignment, the vector/cast/strided
    # choice, 32-bit pieces past 2^31 elements or 2^31 bytes, the fast dividers
    # of the offset calculator against plain division
    proc = cuda_host_c_test("cuda_launch")
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == "ok", proc.stderr


def test_launch_planner_reads_the_strided_engines_plan_layout(cuda_host_c_test):
    # dcu_plan_in (sources/cuda/cuda_launch.h) is dispatch_strided_plan as the
    # CUDA module receives it: same size and offsets
    from dispatch._core import ffi

    proc = cuda_host_c_test("cuda_launch")
    layout = [int(v) for v in proc.stdout.splitlines()[1].split()[1:]]
    t = "dispatch_strided_plan"
    assert layout == [ffi.sizeof(t), ffi.offsetof(t, "ndim"), ffi.offsetof(t, "numel"),
                      ffi.offsetof(t, "shape"), ffi.offsetof(t, "strides"),
                      ffi.offsetof(t, "data")]


# the host half of the CUDA operators, with a fake device loop -------------------------------
# The built-in elementwise kernels run for CUDA tensors with the CPU's promotion,
# broadcasting, allocation and checks, and hand a plan to the device loop. Here a
# fake device loop (host memory under a fake "cuda" allocator) records what it
# gets and runs it with the CPU's loops where no operand is cast. It runs in a
# child process: registering kernels at the CUDA key is process-wide.

_FAKE_DEVICE = r'''
import ctypes, json, sys
import dispatch
from dispatch import cuda
from dispatch._core import ffi, lib

import fake_cuda_host
_fake = fake_cuda_host.install()  # the host-memory "cuda" device
calls = []

def dname(d):
    return ffi.string(lib.dispatch_dtype_name(d)).decode()

def run(loop, dtype, p, dtypes, loop_dtypes, mask, ctx):
    n = p.nops
    rec = {"loop": ffi.string(lib.dispatch_loop_name(loop)).decode(), "dtype": dname(dtype),
           "shape": [p.shape[d] for d in range(p.ndim)],
           "strides": [[p.strides[k][d] for d in range(p.ndim)] for k in range(n)],
           "dtypes": [dname(dtypes[k]) for k in range(n)],
           "loop_dtypes": [dname(loop_dtypes[k]) for k in range(n)], "scalars": mask,
           "ctx": None}
    if ctx != ffi.NULL:  # the host scalar, read back through a float64 0-dim tensor
        t = dispatch.empty(1, dtype=dispatch.float64)
        src = dispatch.tensor(0, dtype=getattr(dispatch, dname(dtype)))
        ctypes.memmove(src.data_ptr(), int(ffi.cast("uintptr_t", ctx)), src.dtype.itemsize)
        rec["ctx"] = float(src.item())
    calls.append(rec)
    # run it on the host with the CPU's engine (fake device memory is host memory)
    shape = ffi.new("int64_t[]", [p.shape[d] for d in reversed(range(p.ndim))])
    strides = [ffi.new("int64_t[]", [p.strides[k][d] for d in reversed(range(p.ndim))])
               for k in range(n)]
    ops = ffi.new("dispatch_iter_operand[]", n)
    for k in range(n):
        ops[k].data = ffi.cast("char *", p.data[k])
        ops[k].ndim = p.ndim
        ops[k].shape = shape
        ops[k].strides = strides[k]
        ops[k].dtype = dtypes[k]
    assert lib.dispatch_iter_elementwise_op(loop, dtype, n, ops, ctx) == 0
    return 0

@ffi.callback("dispatch_device_loop_fn")
def device_loop(loop, dtype, p, dtypes, loop_dtypes, mask, ctx, err, cap):
    try:
        return run(loop, dtype, p, dtypes, loop_dtypes, mask, ctx)
    except BaseException as e:
        msg = f"fake device loop: {type(e).__name__}: {e}".encode()[: cap - 1]
        ffi.memmove(err, msg + b"\0", len(msg) + 1)
        return 1

assert lib.dispatch_device_loop_register(1, device_loop) == 0
assert lib.dispatch_kernels_register_device(lib.dispatch_key_from_name(b"CUDA")) > 0

out = {}
def case(name, fn):
    del calls[:]
    del fake_cuda_host.BYTE_COPIES[:]
    try:
        r = fn()
        out[name] = {"calls": list(calls), "value": r, "bytes": list(fake_cuda_host.BYTE_COPIES)}
    except Exception as e:
        out[name] = {"calls": list(calls), "error": f"{type(e).__name__}: {e}",
                     "bytes": list(fake_cuda_host.BYTE_COPIES)}

def g(values, dtype=dispatch.float32):
    return dispatch.tensor(values, dtype=dtype).to("cuda")

a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
b = [[0.5, 0.25, 2.0], [1.0, -1.0, 8.0]]
case("add", lambda: (g(a) + g(b)).cpu().tolist())
case("add_scalar", lambda: (g(a) + 2.5).cpu().tolist())
case("add_cpu_0dim", lambda: (g(a) + dispatch.tensor(2.0)).cpu().tolist())
case("transposed", lambda: (g(a).T + g(b).T).cpu().tolist())
case("broadcast_row", lambda: (g(a) * g([1.0, 2.0, 3.0])).cpu().tolist())
case("promote", lambda: (g([1, 2], dispatch.int32) + g([0.5, 0.5])).dtype.name)
case("add_alpha_", lambda: g(a).add_(g(b), alpha=2).cpu().tolist())
case("exp_int", lambda: dispatch.ops.exp(g([1, 2], dispatch.int64)).dtype.name)
case("compare", lambda: (g(a) < g(b)).cpu().tolist())
case("where", lambda: dispatch.ops.where(g([True, False], dispatch.bool), g([1.0, 2.0]),
                                     g([3.0, 4.0])).cpu().tolist())
case("addcmul",
     lambda: dispatch.ops.addcmul(g([1.0]), g([2.0]), g([3.0]), value=0.5).cpu().tolist())
case("fill_", lambda: g([0.0, 0.0, 0.0]).fill_(7).cpu().tolist())
case("half_times_scalar", lambda: (g([6.0], dispatch.float16) * 0.1).dtype.name)
case("cast", lambda: g(a).to(dispatch.int32).dtype.name)
case("copy_strided", lambda: g(a).T.contiguous().cpu().tolist())
case("clone", lambda: g(a).clone().cpu().tolist())
def overlap():
    x = g([1.0, 2.0, 3.0, 4.0])
    x[1:].add_(x[:-1])
    return x.cpu().tolist()
case("overlap_in_place", overlap)
case("self_overlap_out", lambda: g([1.0]).expand(3).add_(g([1.0, 2.0, 3.0])))
case("sub_bool", lambda: g([True], dispatch.bool) - g([True], dispatch.bool))
case("copy_into_expanded", lambda: g([1.0]).expand(3).copy_(g([1.0, 2.0, 3.0])))
case("sub_bool_", lambda: g([True], dispatch.bool).sub_(g([True], dispatch.bool)))
case("div_int_in_place", lambda: g([1, 2], dispatch.int8).div_(g([1, 2], dispatch.int8)))
case("sum", lambda: g(a).sum())
# copy_ with a device on either side: C's (Note [Copies that touch a device])
def into(dst, src):
    dst.copy_(src)
    return dst.cpu().tolist() if dst.device == "cuda" else dst.tolist()
case("copy_dense", lambda: into(g([[0.0] * 3] * 2), g(a)))
case("copy_to_itself", lambda: (lambda x: into(x, x))(g(a)))
def copy_overlapping():
    x = g([1.0, 2.0, 3.0, 4.0])
    x[1:].copy_(x[:-1])
    return x.cpu().tolist()
case("copy_overlapping", copy_overlapping)
case("copy_cast_on_device", lambda: into(g([[0, 0, 0]] * 2, dispatch.int32), g(a)))
case("upload_dense", lambda: into(g([[0.0] * 3] * 2), dispatch.tensor(a)))
case("upload_broadcast_cast",
     lambda: into(g([[0.0] * 3] * 2), dispatch.tensor([1, 2, 3], dtype=dispatch.int64)))
case("upload_strided", lambda: into(g([[0.0] * 2] * 3).T, dispatch.tensor(a)))
case("upload_bad_shape", lambda: into(g([[0.0] * 3] * 2), dispatch.tensor([1.0, 2.0])))
case("download_dense", lambda: into(dispatch.zeros(2, 3), g(a)))
case("download_strided_cast",
     lambda: into(dispatch.zeros(3, 2, dtype=dispatch.float64), g(a).T))
case("download_broadcast", lambda: into(dispatch.zeros(2, 3), g([1.0, 2.0, 3.0])))
case("download_empty", lambda: into(dispatch.zeros(0, 3), g([[1.0, 2.0, 3.0]])[:0]))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def fake_device(tmp_path_factory, fake_cuda_child_env):
    if cuda.is_available():
        pytest.skip("a GPU is present: the real device loops are registered")
    import json
    import sys

    tmp = tmp_path_factory.mktemp("fake_device")
    proc = subprocess.run([sys.executable, "-c", _FAKE_DEVICE], capture_output=True, text=True,
                          cwd=tmp, timeout=300, env=fake_cuda_child_env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _one(case):
    assert "error" not in case, case
    assert len(case["calls"]) == 1, case["calls"]
    return case["calls"][0]


def test_cuda_add_runs_the_device_loop_on_one_coalesced_dim(fake_device):
    c = fake_device["add"]
    call = _one(c)
    assert (call["loop"], call["dtype"], call["shape"]) == ("add", "float32", [6])
    assert call["strides"] == [[4], [4], [4]] and call["scalars"] == 0 and call["ctx"] is None
    assert c["value"] == [[1.5, 2.25, 5.0], [5.0, 4.0, 14.0]]


@pytest.mark.parametrize("case", ["add_scalar", "add_cpu_0dim"])
def test_python_scalar_and_0dim_cpu_tensor_are_kernel_arguments(fake_device, case):
    c = fake_device[case]
    call = _one(c)
    assert call["scalars"] == 1 << 2 and call["shape"] == [6]
    assert c["value"][0][0] == 1.0 + (2.5 if case == "add_scalar" else 2.0)


def test_transposed_operands_coalesce_and_broadcast_gets_stride_0(fake_device):
    # the output is allocated contiguous, the inputs are transposed: two dims
    call = _one(fake_device["transposed"])
    assert call["shape"] == [2, 3] and call["strides"] == [[4, 8], [12, 4], [12, 4]]
    assert fake_device["transposed"]["value"] == [[1.5, 5.0], [2.25, 4.0], [5.0, 14.0]]
    call = _one(fake_device["broadcast_row"])
    assert call["shape"] == [3, 2] and call["strides"][2] == [4, 0]
    assert fake_device["broadcast_row"]["value"] == [[1.0, 4.0, 9.0], [4.0, 10.0, 18.0]]


def test_promotion_casts_in_the_device_loop(fake_device):
    c = fake_device["promote"]
    call = _one(c)
    assert c["value"] == "float32" and call["dtype"] == "float32"
    assert call["dtypes"] == ["float32", "int32", "float32"]
    assert call["loop_dtypes"] == ["float32"] * 3
    e = fake_device["exp_int"]
    assert e["value"] == "float32" and _one(e)["dtypes"] == ["float32", "int64"]


def test_in_place_alpha_compare_where_addcmul_fill_on_device(fake_device):
    c = fake_device["add_alpha_"]
    assert _one(c)["ctx"] == 2.0 and c["value"][0] == [2.0, 2.5, 7.0]
    c = fake_device["compare"]
    assert _one(c)["loop_dtypes"] == ["bool", "float32", "float32"]
    assert c["value"] == [[False, False, False], [False, False, True]]
    c = fake_device["where"]
    assert _one(c)["loop_dtypes"] == ["float32", "bool", "float32", "float32"]
    assert c["value"] == [1.0, 4.0]
    c = fake_device["addcmul"]
    assert _one(c)["ctx"] == 0.5 and c["value"] == [4.0]
    c = fake_device["fill_"]
    assert _one(c)["loop"] == "fill" and _one(c)["ctx"] == 7.0 and c["value"] == [7.0] * 3


def test_float16_times_python_scalar_is_a_float32_loop_rounded_once(fake_device):
    # Note [float16 with a scalar] in operators_elementwise.c: the device does the same
    call = _one(fake_device["half_times_scalar"])
    assert call["dtype"] == "float32" and call["dtypes"] == ["float16", "float16", "float32"]
    assert call["scalars"] == 1 << 2 and fake_device["half_times_scalar"]["value"] == "float16"


def test_cuda_cast_contiguous_and_clone_use_the_device_copy_loop(fake_device):
    call = _one(fake_device["cast"])
    assert call["loop"] == "copy" and call["dtypes"] == ["int32", "float32"]
    c = fake_device["copy_strided"]
    assert _one(c)["loop"] == "copy" and c["value"] == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert fake_device["clone"]["value"] == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


# copy_ with a device on either side (Note [Copies that touch a device]): the
# fake device records each byte copy C asks of it as (kind, bytes): 1 host to
# device, 2 device to host, 3 within the device
H2D, D2H, D2D = 1, 2, 3


def _copied(case):
    assert "error" not in case, case
    return [c["loop"] for c in case["calls"]], [tuple(b) for b in case["bytes"]], case["value"]


def test_cuda_copy_of_one_dense_layout_is_one_byte_copy_on_the_device(fake_device):
    # issue 38: o.copy_(a) between CUDA tensors of one dtype and layout is one
    # cudaMemcpyAsync on the runtime's stream, no kernel, no Python
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert _copied(fake_device["copy_dense"]) == ([], [(D2D, 24)], a)
    assert _copied(fake_device["copy_to_itself"]) == ([], [], a)
    # a cast, or bytes that overlap, go to the COPY loop (the overlap read first)
    assert _copied(fake_device["copy_cast_on_device"]) == (["copy"], [], [[1, 2, 3], [4, 5, 6]])
    assert _copied(fake_device["copy_overlapping"]) == (["copy", "copy"], [],
                                                        [1.0, 1.0, 2.0, 3.0])


def test_cuda_copy_from_the_host_casts_and_broadcasts_there_then_uploads_once(fake_device):
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert _copied(fake_device["upload_dense"]) == ([], [(H2D, 24)], a)
    assert _copied(fake_device["upload_broadcast_cast"]) == ([], [(H2D, 24)],
                                                             [[1.0, 2.0, 3.0]] * 2)
    # a strided destination: uploaded dense, scattered by the COPY loop
    assert _copied(fake_device["upload_strided"]) == (["copy"], [(H2D, 24)], a)
    bad = fake_device["upload_bad_shape"]
    assert "error" in bad and bad["bytes"] == [], bad  # refused before any byte moves


def test_cuda_copy_to_the_host_downloads_once_then_casts_and_broadcasts_there(fake_device):
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert _copied(fake_device["download_dense"]) == ([], [(D2H, 24)], a)
    # a strided source is made dense on the device first
    assert _copied(fake_device["download_strided_cast"]) == (["copy"], [(D2H, 24)],
                                                             [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    assert _copied(fake_device["download_broadcast"]) == ([], [(D2H, 12)], [[1.0, 2.0, 3.0]] * 2)
    assert _copied(fake_device["download_empty"]) == ([], [], [])


def test_input_overlapping_the_output_is_copied_on_the_device_first(fake_device):
    c = fake_device["overlap_in_place"]
    assert [k["loop"] for k in c["calls"]] == ["copy", "add"]
    assert c["value"] == [1.0, 3.0, 5.0, 7.0]  # read as it was before the write, as on the CPU


def test_device_errors_are_the_cpus(fake_device):
    assert "overlaps itself" in fake_device["self_overlap_out"]["error"]
    assert "Subtraction" in fake_device["sub_bool"]["error"]
    # copy_ into a self-overlapping CUDA tensor: core's RuntimeError and message
    assert fake_device["copy_into_expanded"]["error"].startswith(
        "RuntimeError: unsupported operation: more than one element")
    assert fake_device["sub_bool_"]["error"].startswith("TypeError: Subtraction")
    assert fake_device["div_int_in_place"]["error"].startswith("RuntimeError: result type float32")
    # reductions route to the device's reduction (tests/test_cuda_reductions.py);
    # with none registered (this fake device has loops only) the error says so
    assert fake_device["sum"]["error"] == "RuntimeError: sum: no cuda reductions are registered"


# on a GPU: every operator, dtype and layout equals the CPU ----------------------------------

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"]
UNARY = ["neg", "abs", "sqrt", "exp", "log"]


def _values(dtype, n, seed):
    import random

    r = random.Random(seed)
    if dtype == "bool":
        return [r.random() < 0.5 for _ in range(n)]
    if dtype.startswith("float"):
        v = [r.uniform(-8, 8) for _ in range(n)]
        v[:4] = [0.0, -0.0, float("nan"), float("inf")][: min(4, n)]
        return v
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-2**15, 2**15 - 1)}.get(
        dtype, (-10**6, 10**6))
    return [r.randint(lo, hi) for _ in range(n)]


def _same(got, want, dtype, ulps=0):
    import math

    g, w = got.cpu().tolist(), want.tolist()
    assert got.dtype == want.dtype and got.shape == want.shape
    flat_g = g if isinstance(g, list) else [g]
    flat_w = w if isinstance(w, list) else [w]
    while flat_g and isinstance(flat_g[0], list):
        flat_g = [x for row in flat_g for x in row]
        flat_w = [x for row in flat_w for x in row]
    for x, y in zip(flat_g, flat_w):
        if isinstance(y, float) and math.isnan(y):
            assert isinstance(x, float) and math.isnan(x)
        elif ulps and isinstance(y, float) and math.isfinite(y):
            eps = {"float16": 2.0 ** -10, "float32": 2.0 ** -23}.get(want.dtype.name,
                                                                   2.0 ** -52)
            assert abs(x - y) <= ulps * max(abs(y), 2.0 ** -14) * eps, (x, y)
        else:
            assert x == y and math.copysign(1, x) == math.copysign(1, y) if isinstance(y, float) \
                else x == y


LAYOUTS = ["contiguous", "transposed", "stepped", "broadcast", "scalar"]


def _layout(t, how):
    if how == "transposed":
        return t.T.contiguous().T
    if how == "stepped":  # every other column of a tensor twice as wide
        wide = dispatch.empty(t.shape[0], 2 * t.shape[1], dtype=t.dtype, device=t.device)
        view = wide[:, ::2]
        view.copy_(t)
        return view
    return t


@gpu
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_binary_on_cuda_equals_cpu(op, dtype, layout):
    dt = getattr(dispatch, dtype)
    a = dispatch.tensor(_values(dtype, 64 * 33, 1), dtype=dt).reshape(64, 33)
    b = dispatch.tensor(_values(dtype, 64 * 33, 2), dtype=dt).reshape(64, 33)
    if layout == "broadcast":
        b = b[:1]
    if layout == "scalar":
        b = b[0, 0].item()
    fn = getattr(dispatch.ops, op)
    try:
        want = fn(_layout(a, layout), b)
    except (TypeError, RuntimeError) as e:
        with pytest.raises(type(e)):
            fn(_layout(a.cuda(), layout), b if layout == "scalar" else b.cuda())
        return
    got = fn(_layout(a.cuda(), layout), b if layout == "scalar" else b.cuda())
    _same(got, want, dtype)


@gpu
@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_on_cuda_equals_cpu_within_ulp_bounds(op, dtype):
    dt = getattr(dispatch, dtype)
    a = dispatch.tensor(_values(dtype, 4099, 3), dtype=dt)
    fn = getattr(dispatch.ops, op)
    try:
        want = fn(a)
    except (TypeError, RuntimeError) as e:
        with pytest.raises(type(e)):
            fn(a.cuda())
        return
    _same(fn(a.cuda()), want, dtype, ulps=4 if op in ("exp", "log") else 0)


@gpu
@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_casts_on_cuda_equal_cpu_bit_for_bit(src, dst):
    a = dispatch.tensor(_values(src, 1000, 4), dtype=getattr(dispatch, src))
    _same(a.cuda().to(getattr(dispatch, dst)), a.to(getattr(dispatch, dst)), dst)
    _same(a.cuda().T.contiguous(), a.T.contiguous(), src)


@gpu
@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["bool", "int8", "uint8", "int16", "int32", "int64"])
def test_out_of_range_float_to_int_casts_on_cuda_follow_the_cpu_rule(src, dst):
    """Note [Float to integer casts]: out of range, NaN and +-inf give
    INT32_MIN/INT64_MIN (the narrow dtypes wrap the int32 result) on the
    device too, not the GPU's own clamping conversion; so does dtype=."""
    nan, inf = float("nan"), float("inf")
    v = [300.7, 1e10, -5e9, 3.0, nan, inf, -inf, -0.0, 0.5, -1.5, 2.0 ** 31, -2.0 ** 31 - 1,
         2.0 ** 31 - 0.5, -2.0 ** 31 - 0.5, 2.0 ** 32 + 7, 65537.5, 2.0 ** 63, -2.0 ** 63, 1e30,
         65504.0, 70000.5]
    a = dispatch.tensor(v, dtype=dispatch.float64).to(getattr(dispatch, src))
    dt = getattr(dispatch, dst)
    _same(a.cuda().to(dt), a.to(dt), dst)
    if dst != "bool":
        _same(dispatch.ops.sum(a.cuda(), dtype=dt), dispatch.ops.sum(a, dtype=dt), dst)


@gpu
def test_where_addcmul_fill_in_place_on_cuda_equal_cpu():
    c = dispatch.tensor(_values("bool", 300, 5), dtype=dispatch.bool)
    x = dispatch.tensor(_values("float32", 300, 6))
    y = dispatch.tensor(_values("float32", 300, 7))
    _same(dispatch.ops.where(c.cuda(), x.cuda(), y.cuda()), dispatch.ops.where(c, x, y),
          "float32")
    for dtype in ("float16", "float32", "float64", "int32"):
        t = [dispatch.tensor(_values(dtype, 300, s), dtype=getattr(dispatch, dtype))
             for s in (8, 9, 10)]
        v = 0.5 if dtype.startswith("float") else 3
        _same(dispatch.ops.addcmul(*[u.cuda() for u in t], value=v),
              dispatch.ops.addcmul(*t, value=v), dtype)
    g = x.cuda()
    g.add_(y.cuda(), alpha=2)
    _same(g, x.clone().add_(y, alpha=2), "float32")
    _same(dispatch.empty(77, device="cuda").fill_(2.5), dispatch.empty(77).fill_(2.5), "float32")


@gpu
def test_misaligned_views_take_vector_widths_4_2_1():
    base = dispatch.arange(4096, dtype=dispatch.float32).cuda()
    other = base + 1
    for offset, vec in ((0, 4), (2, 2), (1, 1)):
        got = base[offset:offset + 1000] + other[:1000]
        assert cuda.last_launch()["path"] == "vector"
        assert cuda.last_launch()["vec"] == vec
        _same(got, base.cpu()[offset:offset + 1000] + other.cpu()[:1000], "float32")
    (base[::2] + 1.0)
    assert cuda.last_launch()["path"] == "strided"
    base.to(dispatch.float64)
    assert cuda.last_launch()["path"] == "cast"


@gpu
def test_int8_tensor_past_2_31_elements_is_split_into_32_bit_pieces():
    n = 2**31 + 4097
    free = dispatch.cuda.memory_stats()
    a = dispatch.empty(n, dtype=dispatch.int8, device="cuda").fill_(3)
    b = a + a
    rec = cuda.last_launch()
    assert rec["pieces"] == 2 and rec["numel"] == n
    tail = b[n - 5:].cpu().tolist()
    assert tail == [6] * 5 and b[:3].cpu().tolist() == [6] * 3
    del a, b, free
    cuda.empty_cache()


# the module and the benchmark, without a GPU ------------------------------------------------

def test_cuda_module_exports_the_elementwise_loop_and_its_launch_record():
    import ctypes

    from dispatch import _cuda_build

    if not _cuda_build.BUILT:
        pytest.skip(f"not built with CUDA: {_cuda_build.WHY}")
    lib = ctypes.CDLL(cuda._module_path(), mode=ctypes.RTLD_LOCAL)
    assert lib.dcu_elementwise and lib.dcu_last_launch


def test_bench_cuda_without_a_gpu_exits_nonzero_saying_why(tmp_path):
    import sys

    if cuda.is_available():
        pytest.skip("a GPU is present: the benchmark runs")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "run.py"), "--cuda"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "no usable CUDA GPU here" in proc.stderr and "Traceback" not in proc.stderr
    assert REASON in proc.stderr
