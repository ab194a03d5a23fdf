"""CUDA reductions (issue 15 item 3): the host plan, the emulated summation
order, the routing of sum/mean/max/min/argmax/argmin on CUDA tensors, and the
GPU equality tests.

Without a GPU: the planner (sources/cuda/cuda_reduce_plan.c) runs through its
C test and, as a shared library, through ctypes (the host emulation of the
device's summation order against math.fsum and the CPU); the routing runs in a
subprocess with a fake device (host memory) whose reduction is NumPy's, so the
CPU kernel's checks, dtypes and shapes are seen to reach the device hook. The
tests marked gpu need an NVIDIA GPU and skip, saying why, elsewhere.
"""

from __future__ import annotations

import ctypes
import json
import math
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import dispatch
from dispatch import cuda

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "sources" / "cuda"
REASON = cuda.unavailable_reason()
gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device: {REASON}")


def _cc():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


# the plan and its emulated order, on the host -------------------------------------------

def test_reduce_planner_paths_coalescing_vector_splits_c_test_passes(cuda_host_c_test):
    # inner/outer/strided by layout, coalescing that keeps row-major order, the
    # vector width from alignment, splits from the shape only, 64-bit index
    # math past 2^31, and the emulated order's exact integer sums
    r = cuda_host_c_test("cuda_reduce_plan")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.fixture(scope="module")
def planlib(tmp_path_factory):
    so = tmp_path_factory.mktemp("reduce_plan") / "libreduceplan.so"
    subprocess.run([_cc(), "-std=c11", "-O1", "-shared", "-fPIC", str(SRC / "cuda_reduce_plan.c"),
                    "-o", str(so)], check=True, capture_output=True, text=True)
    lib = ctypes.CDLL(str(so))
    i64p = ctypes.POINTER(ctypes.c_int64)
    lib.dcr_plan_make.argtypes = [ctypes.c_void_p, ctypes.c_int, i64p, i64p, ctypes.c_uint32,
                                  ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.dcr_emulate_sum_f32.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.dcr_emulate_sum_f64.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _plan(lib, shape, strides, mask, itemsize):
    p = ctypes.create_string_buffer(4096)  # the dcr_plan, opaque here
    n = len(shape)
    sh = (ctypes.c_int64 * max(n, 1))(*shape)
    st = (ctypes.c_int64 * max(n, 1))(*strides)
    err = ctypes.create_string_buffer(128)
    assert lib.dcr_plan_make(p, n, sh, st, mask, itemsize, 256, err, 128) == 0, err.value
    path, vec, tpo, splits = struct.unpack_from("4i", p.raw, 0)
    return p, {"path": path, "vec": vec, "tpo": tpo, "splits": splits}


def _emulate(lib, t, mask):
    """The device's sum of CPU tensor t over mask, emulated (float32/float64)."""
    isz = t.dtype.itemsize
    p, info = _plan(lib, t.shape, [s * isz for s in t.stride()], mask, isz)
    nout = 1
    for d, n in enumerate(t.shape):
        if not mask >> d & 1:
            nout *= n
    ctype = ctypes.c_float if t.dtype == dispatch.float32 else ctypes.c_double
    out = (ctype * max(nout, 1))()
    fn = lib.dcr_emulate_sum_f32 if t.dtype == dispatch.float32 else lib.dcr_emulate_sum_f64
    fn(p, ctypes.c_void_p(t.data_ptr()), out)
    return list(out)[:nout], info


@pytest.mark.parametrize("n", [1, 7, 1000, 16383, 16384, 100003, 1 << 20])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_emulated_device_sum_is_within_the_cpu_bound_of_fsum(planlib, n, dtype):
    r = random.Random(n)
    vals = [r.uniform(-1, 1) for _ in range(n)]
    t = dispatch.tensor(vals, dtype=getattr(dispatch, dtype))
    exact = math.fsum(t.tolist())
    got, info = _emulate(planlib, t, 1)
    eps = 2.0 ** -24 if dtype == "float32" else 2.0 ** -53
    # a tree of depth about log2(n) over sum |x|: docs/semantics.md's bound for the CPU
    bound = (math.log2(n) + 2) * eps * math.fsum(abs(v) for v in t.tolist())
    assert abs(got[0] - exact) <= bound
    assert abs(got[0] - t.sum().item()) <= 2 * bound
    if n >= 2 * 8192:
        assert info["splits"] > 1  # the two-kernel path is what was emulated


def test_emulated_sum_over_rows_columns_and_strided_dims_matches_fsum(planlib):
    r = random.Random(5)
    t = dispatch.tensor([r.uniform(-4, 4) for _ in range(64 * 96)],
                        dtype=dispatch.float64).reshape(64, 96)
    rows = t.tolist()
    for view, mask, want in [
        (t, 2, [math.fsum(row) for row in rows]),                            # inner
        (t, 1, [math.fsum(row[j] for row in rows) for j in range(96)]),      # outer
        (t[:, ::3], 2, [math.fsum(row[::3]) for row in rows]),               # strided
        (t.T, 1, [math.fsum(row) for row in rows]),                          # inner, transposed
    ]:
        got, _ = _emulate(planlib, view, mask)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert abs(g - w) <= 1e-12 * 96 * 4


def test_emulated_order_does_not_depend_on_alignment_or_vector_width(planlib):
    # Note [Deterministic CUDA reductions]: the pointer's alignment changes the
    # vector width, never the split, the threads per output or the sum's bits
    r = random.Random(9)
    vals = [r.uniform(-1, 1) * 10 ** r.randint(-6, 6) for _ in range(50000)]
    aligned = dispatch.tensor(vals, dtype=dispatch.float32)
    shifted = dispatch.tensor([0.0] + vals, dtype=dispatch.float32)[1:]
    a, ia = _emulate(planlib, aligned, 1)
    b, ib = _emulate(planlib, shifted, 1)
    assert a == b
    _, i16 = _plan(planlib, [50000], [4], 1, 4)
    buf = ctypes.create_string_buffer(4096)
    sh, st = (ctypes.c_int64 * 1)(50000), (ctypes.c_int64 * 1)(4)
    assert planlib.dcr_plan_make(buf, 1, sh, st, 1, 4, 260, None, 0) == 0
    path, vec, tpo, splits = struct.unpack_from("4i", buf.raw, 0)
    assert i16["vec"] == 4 and vec == 1  # 16-byte aligned: vector loads; 260: none
    assert (tpo, splits) == (i16["tpo"], i16["splits"]) and splits > 1


def _plan_fields(lib, shape, strides, mask, itemsize, data=256):
    """The plan's leading ints: path, vec, tpo, splits, group, lanes, ctpo."""
    buf = ctypes.create_string_buffer(4096)
    n = len(shape)
    sh = (ctypes.c_int64 * max(n, 1))(*shape)
    st = (ctypes.c_int64 * max(n, 1))(*strides)
    assert lib.dcr_plan_make(buf, n, sh, st, mask, itemsize, data, None, 0) == 0
    return dict(zip(("path", "vec", "tpo", "splits", "group", "lanes", "ctpo"),
                    struct.unpack_from("7i", buf.raw, 0)))


@pytest.mark.parametrize("shape", [(4096, 16), (20000, 24), (70000, 3), (1000, 64)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_emulated_column_sums_split_over_lanes_and_blocks_are_within_the_fsum_bound(planlib, shape,
                                                                                   dtype):
    # the outer path (Note [Outer reductions]): lanes walk rows in order, a
    # tree over the lanes, then the parallel combine of the splits
    rows, cols = shape
    r = random.Random(rows * cols)
    flat = [r.uniform(-1, 1) for _ in range(rows * cols)]
    t = dispatch.tensor(flat, dtype=getattr(dispatch, dtype)).reshape(rows, cols)
    got, info = _emulate(planlib, t, 1)
    f = _plan_fields(planlib, [rows, cols], [cols * t.dtype.itemsize, t.dtype.itemsize], 1,
                     t.dtype.itemsize)
    assert info["path"] == 1 and f["lanes"] > 1  # outer, several lanes per block
    if rows >= 4096:
        assert f["splits"] > 1 and f["ctpo"] == f["lanes"]  # the combine ran, by lanes
    eps = 2.0 ** -24 if dtype == "float32" else 2.0 ** -53
    vals = t.tolist()
    # a lane adds about rows / (lanes * splits) values in order, then two trees
    depth = rows / (f["lanes"] * f["splits"]) + math.log2(f["lanes"]) + f["splits"] / 32 + 10
    for j in range(cols):
        col = [row[j] for row in vals]
        assert abs(got[j] - math.fsum(col)) <= depth * eps * math.fsum(abs(v) for v in col), j


@pytest.mark.parametrize("n", [(1 << 22) + 5, 3 << 20])
def test_emulated_full_sum_with_a_block_wide_combine_is_within_the_fsum_bound(planlib, n):
    # past 256 partials the combine takes a block per output (ctpo 256)
    r = random.Random(n)
    t = dispatch.tensor([r.uniform(-1, 1) for _ in range(n)], dtype=dispatch.float32)
    f = _plan_fields(planlib, [n], [4], 1, 4)
    assert f["splits"] > 256 and f["ctpo"] == 256
    got, _ = _emulate(planlib, t, 1)
    vals = t.tolist()
    bound = (math.log2(n) + 2) * 2.0 ** -24 * math.fsum(abs(v) for v in vals)
    assert abs(got[0] - math.fsum(vals)) <= bound


def test_emulated_bits_are_a_function_of_the_shape_alone(planlib):
    # the same values at another alignment (vector widths 4 and 1) or inside a
    # wider buffer (another row stride, so no vector loads): the same bits,
    # full sums and column sums alike, because the plan's lanes, splits,
    # chunk and combine come from the shape only
    r = random.Random(3)
    rows, cols = 5000, 8
    vals = [r.uniform(-1, 1) * 10 ** r.randint(-5, 5) for _ in range(rows * cols)]
    aligned = dispatch.tensor(vals, dtype=dispatch.float32).reshape(rows, cols)
    shifted = dispatch.tensor([0.0] + vals, dtype=dispatch.float32)[1:].reshape(rows, cols)
    wide = dispatch.zeros(rows, cols + 3)
    wide[:, :cols] = aligned
    views = [aligned, shifted, wide[:, :cols]]
    isz = 4
    plans = [_plan_fields(planlib, [rows, cols], [v.stride()[0] * isz, isz], 1, isz,
                          v.data_ptr()) for v in views]
    assert plans[0]["vec"] == 4 and plans[2]["vec"] == 1
    assert len({(p["lanes"], p["splits"], p["ctpo"]) for p in plans}) == 1
    col_sums = [_emulate(planlib, v, 1)[0] for v in views]
    assert col_sums[0] == col_sums[1] == col_sums[2]
    full = [_emulate(planlib, v.reshape(-1) if v.is_contiguous() else v.contiguous().reshape(-1), 1)[0]
            for v in views[:2]]
    assert struct.pack("f", full[0][0]) == struct.pack("f", full[1][0])


# routing on a fake device -----------------------------------------------------------------

_FAKE = r'''
import json
import numpy as np
import dispatch
from dispatch import cuda
from dispatch._core import ffi, lib

import fake_cuda_host
_fake = fake_cuda_host.install()  # the host-memory "cuda" device
calls = []

def dname(d):
    return ffi.string(lib.dispatch_dtype_name(d)).decode()

@ffi.callback("dispatch_device_loop_fn")
def device_loop(loop, dtype, p, dtypes, loop_dtypes, mask, ctx, err, cap):
    shape = ffi.new("int64_t[]", [p.shape[d] for d in reversed(range(p.ndim))])
    strides = [ffi.new("int64_t[]", [p.strides[k][d] for d in reversed(range(p.ndim))])
               for k in range(p.nops)]
    ops = ffi.new("dispatch_iter_operand[]", p.nops)
    for k in range(p.nops):
        ops[k].data = ffi.cast("char *", p.data[k])
        ops[k].ndim = p.ndim
        ops[k].shape = shape
        ops[k].strides = strides[k]
        ops[k].dtype = dtypes[k]
    assert lib.dispatch_iter_elementwise_op(loop, dtype, p.nops, ops, ctx) == 0
    return 0

fail = []

def reduce(op, dtype, inp, ndim, shape, strides, mask, out_dtype, out, indices):
    shape = [shape[d] for d in range(ndim)]
    strides = [strides[d] for d in range(ndim)]
    calls.append({"op": op, "dtype": dname(dtype), "shape": shape, "strides": strides,
                  "mask": mask, "out_dtype": dname(out_dtype), "indices": indices != ffi.NULL})
    if fail:
        raise RuntimeError(fail[0])
    npd = np.dtype("bool" if dname(dtype) == "bool" else dname(dtype))
    span = npd.itemsize + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    raw = np.frombuffer(ffi.buffer(inp, max(span, npd.itemsize)), dtype=np.uint8)
    x = np.lib.stride_tricks.as_strided(raw.view(npd) if span else raw[:0].view(npd),
                                        shape=shape, strides=strides)
    axes = tuple(d for d in range(ndim) if mask >> d & 1)
    kept = [n for d, n in enumerate(shape) if not mask >> d & 1]
    flat = np.moveaxis(x, axes, tuple(range(ndim - len(axes), ndim))).reshape(kept + [-1])
    acc = np.float64 if npd.kind == "f" else np.int64
    if op in (0, 1):
        r = flat.astype(acc).sum(axis=-1)
        if op == 1:
            r = r / flat.shape[-1] if flat.shape[-1] else r * np.nan
        ind = None
    else:
        ind = (np.argmax if op == 2 else np.argmin)(flat, axis=-1)
        r = np.take_along_axis(flat, ind[..., None], -1)[..., 0]
    ond = np.dtype("bool" if dname(out_dtype) == "bool" else dname(out_dtype))
    n = int(np.prod(kept))
    np.frombuffer(ffi.buffer(out, n * ond.itemsize), dtype=ond)[:] = np.asarray(r).astype(ond).ravel()
    if indices != ffi.NULL:
        np.frombuffer(ffi.buffer(indices, n * 8), dtype=np.int64)[:] = np.asarray(ind).ravel()
    return 0

@ffi.callback("dispatch_device_reduce_fn")
def device_reduce(op, dtype, inp, ndim, shape, strides, mask, out_dtype, out, indices, err, cap):
    try:
        return reduce(op, dtype, inp, ndim, shape, strides, mask, out_dtype, out, indices)
    except BaseException as e:
        msg = f"fake device reduce: {type(e).__name__}: {e}".encode()[: cap - 1]
        ffi.memmove(err, msg + b"\0", len(msg) + 1)
        return 1

assert lib.dispatch_device_loop_register(1, device_loop) == 0
assert lib.dispatch_device_reduce_register(1, device_reduce) == 0
assert lib.dispatch_kernels_register_device(lib.dispatch_key_from_name(b"CUDA")) > 0

out = {}
def val(r):
    if isinstance(r, tuple):
        return [val(x) for x in r]
    if isinstance(r, dispatch.Tensor):
        c = r.cpu()
        return {"dtype": c.dtype.name, "shape": list(c.shape), "device": str(r.device),
                "value": c.tolist()}
    return r

def case(name, fn, on_cpu=True):
    del calls[:]
    rec = {}
    try:
        rec["value"] = val(fn(lambda t: t.to("cuda")))
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["calls"] = list(calls)
    if on_cpu:
        try:
            rec["cpu"] = val(fn(lambda t: t))
        except Exception as e:
            rec["cpu_error"] = f"{type(e).__name__}: {e}"
    out[name] = rec

F = dispatch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
I = dispatch.tensor([[1, 5, 3], [4, 2, 6]], dtype=dispatch.int32)
B = dispatch.tensor([True, False, True], dtype=dispatch.bool)
N = dispatch.tensor([1.0, float("nan"), 3.0, float("nan")])
H = dispatch.tensor([1.0, 2.0, 3.5], dtype=dispatch.float16)
E = dispatch.empty(2, 0)
o = dispatch.ops
case("sum_all", lambda g: g(F).sum())
case("sum_dim_keepdim", lambda g: o.sum(g(F), 1, keepdim=True))
case("sum_dims", lambda g: o.sum(g(F), [0, 1]))
case("sum_transposed", lambda g: o.sum(g(F).T, 0))
case("sum_int", lambda g: g(I).sum())
case("sum_bool", lambda g: g(B).sum())
case("sum_dtype", lambda g: o.sum(g(I), dtype=dispatch.float64))
case("sum_0dim", lambda g: g(dispatch.tensor(2.5)).sum())
case("sum_empty_dim", lambda g: o.sum(g(E), 1))
case("mean_dim", lambda g: o.mean(g(F), 0))
case("mean_empty", lambda g: o.mean(g(E), 1))
case("mean_int", lambda g: o.mean(g(I)))
case("mean_half", lambda g: o.mean(g(H)))
case("max_all", lambda g: g(F).max())
case("max_dim", lambda g: o.max(g(F), 1))
case("min_dim_keepdim", lambda g: o.min(g(F), 0, keepdim=True))
case("max_dims", lambda g: o.max(g(F), [0, 1]))
case("argmax", lambda g: o.argmax(g(F)))
case("argmin_dim", lambda g: o.argmin(g(F), 1))
case("argmax_nan", lambda g: o.argmax(g(N)))
case("max_nan", lambda g: g(N).max())
case("argmax_bool", lambda g: o.argmax(g(B)))
case("max_empty", lambda g: g(E).max())
case("max_empty_dim", lambda g: o.max(g(E), 1))
case("sum_bad_dim", lambda g: o.sum(g(F), 2))
case("sum_repeated_dim", lambda g: o.sum(g(F), [1, 1]))
case("addcmul_half_int", lambda g: o.addcmul(g(H), g(dispatch.tensor([1, 2, 3], dtype=dispatch.int32)),
                                             g(H), value=0.5))
case("addcmul_half_0dim", lambda g: o.addcmul(g(H), g(H), g(dispatch.tensor(3.0, dtype=dispatch.float32))))
fail.append("boom")
case("device_failure", lambda g: g(F).sum(), on_cpu=False)
case("device_failure_index", lambda g: o.max(g(F), 1), on_cpu=False)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def fake(tmp_path_factory, fake_cuda_child_env):
    if cuda.is_available():
        pytest.skip("a GPU is present: the real device reductions are registered")
    pytest.importorskip("numpy")
    tmp = tmp_path_factory.mktemp("fake_reduce")
    proc = subprocess.run([sys.executable, "-c", _FAKE], capture_output=True, text=True, cwd=tmp,
                          timeout=300, env=fake_cuda_child_env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _cuda_equals_cpu(rec):
    assert "error" not in rec, rec
    got, want = rec["value"], rec["cpu"]
    pairs = list(zip(got, want)) if isinstance(got, list) else [(got, want)]
    for g, w in pairs:
        assert g["device"] == "cuda"
        assert g["dtype"] == w["dtype"] and g["shape"] == w["shape"]
        assert json.dumps(g["value"]) == json.dumps(w["value"]), (g, w)


@pytest.mark.parametrize("name", ["sum_all", "sum_dim_keepdim", "sum_dims", "sum_transposed",
                                  "sum_int", "sum_bool", "sum_dtype", "sum_0dim", "sum_empty_dim",
                                  "mean_dim", "mean_empty", "mean_half", "max_all", "max_dim",
                                  "min_dim_keepdim", "max_dims", "argmax", "argmin_dim",
                                  "argmax_nan", "max_nan"])
def test_cuda_reductions_reach_the_device_hook_with_the_cpus_shape_and_dtype(fake, name):
    _cuda_equals_cpu(fake[name])
    assert len(fake[name]["calls"]) == 1, fake[name]["calls"]  # one device reduction each


def test_cuda_sum_hands_the_device_byte_strides_and_the_dim_mask(fake):
    call = fake["sum_transposed"]["calls"][0]
    assert call["shape"] == [3, 2] and call["strides"] == [4, 12] and call["mask"] == 1
    assert fake["sum_dim_keepdim"]["calls"][0]["mask"] == 2
    assert fake["sum_all"]["calls"][0]["mask"] == 3


def test_cuda_integer_and_bool_sums_write_int64_and_dtype_casts_first(fake):
    assert fake["sum_int"]["calls"][0]["out_dtype"] == "int64"
    assert fake["sum_bool"]["calls"][0]["out_dtype"] == "int64"
    # dtype=float64: the input is cast on the device (the copy loop), then reduced in float64
    c = fake["sum_dtype"]["calls"][0]
    assert c["dtype"] == "float64" and c["out_dtype"] == "float64"


def test_cuda_float16_mean_is_one_device_reduction_of_the_float16_input(fake):
    # no float32 copy on the host side: the device accumulates in float32
    c = fake["mean_half"]["calls"][0]
    assert c["dtype"] == "float16" and c["out_dtype"] == "float16" and c["op"] == 1


def test_cuda_max_with_dim_asks_for_values_and_indices_in_one_reduction(fake):
    for name in ("max_dim", "min_dim_keepdim", "argmax", "argmin_dim", "argmax_nan"):
        (call,) = fake[name]["calls"]
        assert call["indices"], name
    assert not fake["max_all"]["calls"][0]["indices"]
    assert not fake["max_dims"]["calls"][0]["indices"]


@pytest.mark.parametrize("name", ["mean_int", "argmax_bool", "max_empty", "max_empty_dim",
                                  "sum_bad_dim", "sum_repeated_dim"])
def test_cuda_reduction_argument_errors_are_the_cpus_and_reach_no_device(fake, name):
    rec = fake[name]
    assert "cpu_error" in rec, rec
    assert rec["error"] == rec["cpu_error"]
    assert rec["calls"] == []


def test_cuda_reduction_failure_is_a_runtime_error_with_the_devices_message(fake):
    for name in ("device_failure", "device_failure_index"):
        assert fake[name]["error"] == "RuntimeError: fake device reduce: RuntimeError: boom"


def test_cuda_reduction_without_a_registered_device_reduction_says_so(fake_cuda_allocator):
    from dispatch._core import ffi, lib

    # the C route alone: no device reduction registered for this device
    t = dispatch.empty(3, device="cuda")
    shape = ffi.new("int64_t[]", [3])
    strides = ffi.new("int64_t[]", [4])
    if cuda.is_available():
        pytest.skip("a GPU is present: its reductions are registered")
    rc = lib.dispatch_iter_device_reduce(1, 0, 7, ffi.cast("char *", t.data_ptr()), 1, shape,
                                         strides, 1, 7, ffi.NULL, ffi.NULL)
    assert rc == -1
    assert b"no cuda reductions are registered" in ffi.string(lib.dispatch_error_message())
    lib.dispatch_error_clear()


# on a GPU: every reduction, dtype and layout equals the CPU ------------------------------------

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "keepdim", "empty", "one"]


def _values(dtype, n, seed):
    r = random.Random(seed)
    if dtype == "bool":
        return [r.random() < 0.5 for _ in range(n)]
    if dtype.startswith("float") or dtype == "bfloat16":
        return [r.uniform(-8, 8) for _ in range(n)]
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-2**15, 2**15 - 1)}.get(
        dtype, (-10**6, 10**6))
    return [r.randint(lo, hi) for _ in range(n)]


def _make(dtype, layout):
    dt = getattr(dispatch, dtype)
    if layout == "empty":
        return dispatch.empty(0, 5, dtype=dt)
    if layout == "one":
        return dispatch.tensor(_values(dtype, 1, 4), dtype=dt).reshape(1, 1)
    if layout == "expanded":
        return dispatch.tensor(_values(dtype, 33, 4), dtype=dt).reshape(1, 33).expand(300, 33)
    t = dispatch.tensor(_values(dtype, 300 * 66, 4), dtype=dt).reshape(300, 66)
    if layout == "transposed":
        return t.T
    if layout == "sliced":
        return t[1:, ::2]
    return t


def _close(got, want, count):
    """Exact for integers, bool, max/min; floats within docs/semantics.md's bound
    ("Accuracy"): each sum within about log2(n) eps sum|x| of the exact one
    (|x| <= 8 here)."""
    g, w = got.cpu(), want
    assert g.dtype == w.dtype and g.shape == w.shape
    gl, wl = g.reshape(-1).tolist(), w.reshape(-1).tolist()
    eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}.get(
        w.dtype.name, 2.0 ** -53)
    bound = 2 * (math.log2(max(count, 2)) + 2) * eps * 8 * count
    for x, y in zip(gl, wl):
        if isinstance(y, float) and math.isnan(y):
            assert math.isnan(x)
        elif w.dtype.is_floating_point:
            assert abs(x - y) <= bound + 2 * eps * abs(y), (x, y)
        else:
            assert x == y


def _cases(t, layout):
    keep = layout == "keepdim"
    ops = dispatch.ops
    floating = t.dtype.name.startswith("float") or t.dtype.name == "bfloat16"
    yield "sum", lambda x: ops.sum(x)
    yield "sum_dim0", lambda x: ops.sum(x, 0, keepdim=keep)
    yield "sum_dim1", lambda x: ops.sum(x, 1, keepdim=keep)
    if floating:
        yield "mean", lambda x: ops.mean(x)
        yield "mean_dim1", lambda x: ops.mean(x, 1, keepdim=keep)
    if t.numel() > 0:
        yield "max", lambda x: x.max()
        yield "min", lambda x: x.min()
    if t.shape[1] > 0:
        yield "max_dim1", lambda x: ops.max(x, 1, keepdim=keep)
        yield "min_dim1", lambda x: ops.min(x, 1, keepdim=keep)
        if t.dtype != dispatch.bool:
            yield "argmax_dim1", lambda x: ops.argmax(x, 1)
    if t.shape[0] > 0:
        yield "max_dim0", lambda x: ops.max(x, 0, keepdim=keep)
        if t.dtype != dispatch.bool and t.numel() > 0:
            yield "argmin", lambda x: ops.argmin(x)
            yield "argmin_dim0", lambda x: ops.argmin(x, 0)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cuda_reductions_equal_cpu(dtype, layout):
    t = _make(dtype, layout)
    g = t.cuda() if layout not in ("transposed", "sliced", "expanded") else None
    if layout == "transposed":
        g = t.T.contiguous().cuda().T
    elif layout == "sliced":
        g = _make(dtype, "contiguous").cuda()[1:, ::2]
    elif layout == "expanded":
        g = t[:1].contiguous().cuda().expand(300, 33)
    for name, fn in _cases(t, layout):
        want = fn(t)
        got = fn(g)
        if isinstance(want, tuple):
            _close(got[0], want[0], t.numel())
            assert got[1].cpu().tolist() == want[1].tolist(), name
        else:
            _close(got, want, t.numel())


@gpu
@pytest.mark.parametrize("n", [1000, 1 << 20, (1 << 22) + 3])
def test_cuda_sum_gives_identical_bits_on_every_call_and_the_emulated_bits(planlib, n):
    r = random.Random(n)
    t = dispatch.tensor([r.uniform(-1, 1) for _ in range(n)], dtype=dispatch.float32)
    g = t.cuda()
    first = g.sum().item()
    for _ in range(5):
        assert g.sum().item() == first
    want, _ = _emulate(planlib, t, 1)
    assert struct.pack("f", first) == struct.pack("f", want[0])
    rows = t[: (n // 64) * 64].reshape(-1, 64)
    got = rows.cuda().sum(1).cpu().tolist()
    want, _ = _emulate(planlib, rows, 2)
    assert got == want
    got = rows.cuda().sum(0).cpu().tolist()  # the outer path: lanes, splits, combine
    want, _ = _emulate(planlib, rows, 1)
    assert got == want


@gpu
@pytest.mark.parametrize("shape", [(4096, 16), (20000, 24), (3, 100000), (513, 7)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_cuda_outer_reductions_equal_the_cpu(shape, dtype):
    # sum/amax/amin/max/argmin over dim 0 on the outer path (lanes, vector
    # columns where aligned, split rows) against the CPU
    r = random.Random(hash(shape))
    n = shape[0] * shape[1]
    vals = [r.randint(-50, 50) for _ in range(n)]
    t = dispatch.tensor(vals, dtype=getattr(dispatch, dtype)).reshape(*shape)
    g = t.cuda()
    ops = dispatch.ops
    assert ops.amax(g, 0).cpu().tolist() == ops.amax(t, 0).tolist()
    assert cuda.last_reduce()["path"] == "outer"
    assert ops.amin(g, 0).cpu().tolist() == ops.amin(t, 0).tolist()
    v, i = ops.max(g, 0)
    w, j = ops.max(t, 0)
    assert v.cpu().tolist() == w.tolist() and i.cpu().tolist() == j.tolist()
    assert ops.argmin(g, 0).cpu().tolist() == ops.argmin(t, 0).tolist()
    assert ops.sum(g, 0).cpu().tolist() == ops.sum(t, 0).tolist()  # small integers: exact


@gpu
def test_cuda_max_argmax_nan_and_ties_take_the_first_index():
    t = dispatch.tensor([1.0, 7.0, float("nan"), 7.0, float("nan")])
    g = t.cuda()
    assert math.isnan(g.max().item())
    assert dispatch.ops.argmax(g).item() == 2 and dispatch.ops.argmin(g).item() == 2
    ties = dispatch.tensor([3, 9, 1, 9, 1], dtype=dispatch.int32).cuda()
    assert dispatch.ops.argmax(ties).item() == 1 and dispatch.ops.argmin(ties).item() == 2
    big = dispatch.zeros(1 << 21)
    big[12345] = float("nan")
    big[200000] = float("nan")
    assert dispatch.ops.argmax(big.cuda()).item() == 12345


@gpu
def test_cuda_reduction_paths_read_back():
    x = dispatch.ones(256, 1024).cuda()
    x.sum(1)
    r = cuda.last_reduce()
    assert r["path"] == "inner" and r["vec"] == 4 and r["outputs"] == 256
    x.sum(0)
    assert cuda.last_reduce()["path"] == "outer"
    x[:, ::2].sum(1)
    assert cuda.last_reduce()["path"] == "strided"
    dispatch.ones(1 << 22).cuda().sum()
    r = cuda.last_reduce()
    assert r["splits"] > 1 and r["outputs"] == 1 and r["elements"] == 1 << 22
    assert r["launches"] == 1  # the last block combined the splits


# the float16 addcmul with promoted CUDA operands (issue 15's known gap) ----------------------

@pytest.mark.parametrize("name", ["addcmul_half_int", "addcmul_half_0dim"])
def test_float16_addcmul_with_non_float16_cuda_operands_casts_them_on_the_device(fake, name):
    # before: "copy_: cannot walk cuda memory on the host" (the operands were
    # converted to float16 with core's host copy)
    rec = fake[name]
    assert rec["value"]["dtype"] == "float16"
    _cuda_equals_cpu(rec)


def test_meta_reductions_still_give_shapes_and_dtypes_without_a_device_reduction():
    # meta tensors have no data: the device-reduce route must not ask for one
    m = dispatch.empty(2, 4, 3, device="meta")
    assert dispatch.ops.sum(m, 1).shape == (2, 3)
    assert dispatch.ops.mean(m, [0, 2], keepdim=True).shape == (1, 4, 1)
    assert dispatch.ops.sum(m, dtype=dispatch.float64).dtype is dispatch.float64
    v, i = dispatch.ops.max(m, 2)
    assert v.shape == i.shape == (2, 4) and i.dtype is dispatch.int64 and v.device == "meta"
    assert dispatch.ops.argmin(m).shape == ()
    h = dispatch.empty(3, device="meta", dtype=dispatch.float16)
    assert dispatch.ops.addcmul(h, h, dispatch.empty(3, device="meta", dtype=dispatch.int32)).dtype \
        is dispatch.float16


# Note [The NaN and the zero of a sum] on the device (issue 38, item 4) ------------------------

_QUIET_NAN = {"float32": "7fc00000", "float64": "7ff8000000000000", "float16": "7e00",
              "bfloat16": "7fc0"}


def _bits(t) -> list:
    """Each element's bits, hex (tolist() would turn every NaN into Python's;
    bfloat16 has no NumPy dtype: read by ctypes)."""
    c = t.cpu().contiguous()
    width = c.dtype.itemsize
    raw = ctypes.string_at(c.data_ptr(), width * c.numel()) if c.numel() else b""
    code = {2: "H", 4: "I", 8: "Q"}[width]
    return [f"{v:0{2 * width}x}" for v in struct.unpack(f"<{c.numel()}{code}", raw)]


@gpu
@pytest.mark.parametrize("dtype", list(_QUIET_NAN))
@pytest.mark.parametrize("n", [5, 4099, 1 << 20])
def test_cuda_nan_sums_and_means_are_the_positive_quiet_nan_and_zero_sums_are_plus_zero(dtype, n):
    # negative NaNs with payloads, where a hardware add would keep one,
    # written as bits (bfloat16 has no NumPy dtype: its bits go in by ctypes)
    t = dispatch.zeros(n, dtype=getattr(dispatch, dtype))
    width = t.dtype.itemsize
    fmt = {2: "<H", 4: "<I", 8: "<Q"}[width]
    for at, nan in ((n // 3, {"float32": 0xffc00123, "float64": 0xfff8000000000123,
                              "float16": 0xfe01, "bfloat16": 0xffc1}[dtype]),
                    (n - 1, {"float32": 0xff800001 | 0x400000,
                             "float64": 0xfff0000000000001 | (1 << 51),
                             "float16": 0xfc01 | 0x200, "bfloat16": 0xff81 | 0x40}[dtype])):
        ctypes.memmove(t.data_ptr() + width * at, struct.pack(fmt, nan), width)
    g = t.cuda()
    rows = t.reshape(1, n)
    for got, want in [(g.sum(), t.sum()), (dispatch.ops.mean(g), dispatch.ops.mean(t)),
                      (rows.cuda().sum(1), rows.sum(1)), (rows.cuda().sum(0), rows.sum(0))]:
        assert _bits(got) == _bits(want), dtype
    assert _bits(t.sum()) == [_QUIET_NAN[dtype]]
    # a sum of -0.0s is +0.0, as the CPU's
    z = dispatch.full((n,), -0.0, dtype=getattr(dispatch, dtype))
    assert _bits(z.cuda().sum()) == _bits(z.sum()) == ["0" * (2 * width)]


# one launch per reduction (issue 38, item 1) ----------------------------------------------

# Every kind of split plan the kernels combine in their last block (Note [One
# launch per reduction] in sources/cuda/cuda_reduce.cuh): (shape, every
# other element of the last dim, reduced dims' mask, path, combine threads).
_SPLIT_CASES = [
    (((1 << 22) + 3,), False, 1, 0, 256),  # inner, a block-wide combine
    ((4, 1 << 18), False, 2, 0, 32),        # inner rows, a warp's combine
    ((4, 1 << 19), True, 2, 2, 32),         # strided rows
    # outer: the combine's threads per output are the block's lanes (Note
    # [The outer combine]), every column of the block at once
    ((4096, 16), False, 1, 1, 64),          # outer: 16 outputs, 4 threads across
    ((20000, 24), False, 1, 1, 32),         # outer: a column of 32 past the 24 outputs
    ((20000, 7), False, 1, 1, 128),         # outer, one column a thread
    (((1 << 21) + 77, 2), False, 1, 1, 256),  # outer, a block-wide combine
]


REDUCE_PATHS_BY_NUMBER = {0: "inner", 1: "outer", 2: "strided"}


def _split_view(t, every_other):
    return t[:, ::2] if every_other else t


@pytest.mark.parametrize("shape, every_other, mask, path, ctpo", _SPLIT_CASES)
def test_split_cases_are_split_plans_of_their_path_and_combine(planlib, shape, every_other, mask,
                                                                path, ctpo):
    # what the GPU test below relies on, checked on any machine: each case
    # splits, on the path and with the combine it names, in one launch
    t = _split_view(dispatch.empty(*shape), every_other)
    f = _plan_fields(planlib, list(t.shape), [s * 4 for s in t.stride()], mask, 4)
    assert (f["path"], f["ctpo"]) == (path, ctpo) and f["splits"] > 1


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_split_reductions_are_one_launch_with_the_emulated_bits_on_every_run(planlib, dtype):
    # which block of a column finishes last changes from run to run; the
    # bits it writes must not: the emulated order's, every time
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(38)
    for shape, every_other, mask, path, _ in _SPLIT_CASES:
        a = (rng.uniform(-1, 1, size=shape) * 10.0 ** rng.integers(-4, 5, size=shape)).astype(dtype)
        t = _split_view(dispatch.from_numpy(a), every_other)
        g = _split_view(dispatch.from_numpy(a).cuda(), every_other)
        dims = [d for d in range(t.ndim) if mask >> d & 1]
        want, _ = _emulate(planlib, t, mask)
        pack = "f" if dtype == "float32" else "d"
        want_bits = [struct.pack(pack, w) for w in want]
        for _ in range(3):
            got = dispatch.ops.sum(g, dims).cpu()
            r = cuda.last_reduce()
            assert REDUCE_PATHS_BY_NUMBER[path] == r["path"] and r["splits"] > 1, shape
            assert r["launches"] == 1
            assert [struct.pack(pack, v) for v in got.reshape(-1).tolist()] == want_bits, shape
        # max and its indices through the same last-block combine: the CPU's
        v, i = dispatch.ops.max(g, dims[0])
        w, j = dispatch.ops.max(t, dims[0])
        assert cuda.last_reduce()["launches"] == 1
        assert v.cpu().tolist() == w.tolist() and i.cpu().tolist() == j.tolist(), shape



def test_the_40000_row_float16_column_sum_is_a_split_outer_plan(planlib):
    # what the GPU test below relies on, checked on any machine
    f = _plan_fields(planlib, [40000, 256], [256 * 2, 2], 1, 2)
    assert REDUCE_PATHS_BY_NUMBER[f["path"]] == "outer" and f["splits"] > 1, f


@gpu
def test_cuda_float16_column_sums_of_40000_rows_are_one_launch_the_same_bits_and_the_cpus_within_an_ulp():
    """Issue 48's (40000, 256) float16 sum(dim=0): split over blocks (40000
    rows), combined in one launch, the same bits on every run, and the
    CPU's float16 within one float16 ulp (both accumulate in float32 and
    round once, in different orders)."""
    np = pytest.importorskip("numpy")
    a = np.random.default_rng(48).uniform(-1, 1, size=(40000, 256)).astype(np.float16)
    t = dispatch.from_numpy(a)
    g = t.cuda()
    want = np.asarray(dispatch.ops.sum(t, 0).numpy(), dtype=np.float64)
    runs = []
    for _ in range(3):
        got = dispatch.ops.sum(g, 0).cpu()
        r = cuda.last_reduce()
        assert r["path"] == "outer" and r["splits"] > 1 and r["launches"] == 1, r
        runs.append(_bits(got))
    assert runs[0] == runs[1] == runs[2]
    got = np.asarray(dispatch.ops.sum(g, 0).cpu().numpy(), dtype=np.float64)
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(got - want) <= ulp), np.max(np.abs(got - want) / ulp)


def test_host_bench_of_small_cuda_reductions_reaches_the_device_once_per_call(tmp_path):
    # tools/bench/bench_cuda_reduce_host.py: the host's share of a reduction,
    # the device's work left out (a C no-op); it asserts every call reached it
    _cc()  # the bench compiles its no-op device
    bench = ROOT / "tools" / "bench" / "bench_cuda_reduce_host.py"
    r = subprocess.run([sys.executable, str(bench), "--repeat", "1", "--number", "20", "--json"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert {row["call"] for row in rows} >= {"ops.sum(x, 0)", "ops.sum(x)", "ops.amax(x, 0)"}
    assert all(row["host_us"] > 0 and row["cpu_us"] > 0 for row in rows)


# max/min NaN payloads of the narrow floats (issue 48, item 4) ----------------------------

# NaNs as bits, per narrow float: quiet of both signs, quiet with a payload,
# and signalling (a hardware max/min or a round trip through float32 could
# quieten one, change its payload or pick another).
_NARROW_NANS = {"float16": [0x7E00, 0xFE00, 0x7E15, 0xFC01, 0x7C3F],
                "bfloat16": [0x7FC0, 0xFFC0, 0x7FC5, 0xFF81, 0x7F83]}


def _narrow_with_nans(dtype, shape, places, nans):
    """A tensor of small integers (a ramp) with NaN bits written at the flat
    `places`, one of `nans` each in turn."""
    n = math.prod(shape)
    t = dispatch.tensor([float((i * 7) % 11 - 5) for i in range(n)]).to(getattr(dispatch, dtype))
    t = t.reshape(*shape).contiguous()
    for k, p in enumerate(places):
        b = struct.pack("<H", nans[k % len(nans)])
        ctypes.memmove(t.data_ptr() + 2 * p, b, 2)
    return t


@gpu
@pytest.mark.parametrize("dtype", list(_NARROW_NANS))
@pytest.mark.parametrize("shape, places", [
    ((5,), [2]),
    ((4099,), [7, 4098]),
    ((1 << 20,), [12345, 700001]),
    ((64, 130), [3, 131, 1000, 8319]),     # rows with and without NaNs, several per row
    ((4096, 16), [5, 21, 37, 40000]),       # columns: the outer path
])
def test_cuda_max_min_nan_payloads_of_narrow_floats_are_the_cpus(dtype, shape, places):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _bits import assert_same_bits

    ops = dispatch.ops
    for nans in (_NARROW_NANS[dtype], _NARROW_NANS[dtype][::-1]):
        t = _narrow_with_nans(dtype, shape, places, nans)
        g = t.cuda()
        for name in ("amax", "amin"):
            f = getattr(ops, name)
            assert_same_bits(f(g).cpu(), f(t), f"{name} {dtype} {shape}")
            for dim in range(len(shape)):
                assert_same_bits(f(g, dim).cpu(), f(t, dim), f"{name}(dim={dim}) {dtype} {shape}")
        assert_same_bits(g.max().cpu(), t.max(), f"max {dtype} {shape}")
        assert_same_bits(g.min().cpu(), t.min(), f"min {dtype} {shape}")
        if len(shape) == 2:
            vg, ig = ops.max(g, 1)
            vc, ic = ops.max(t, 1)
            assert_same_bits(vg.cpu(), vc, f"max(dim=1) values {dtype} {shape}")
            assert ig.cpu().tolist() == ic.tolist()
