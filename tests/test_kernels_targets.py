"""Every dispatched target of the kernels, proven on this machine.

Each target is forced in a fresh interpreter with DISPATCH_DISABLE_CPU_FEATURES
(the variable is read once, at import): the chooser must pick exactly that
target for every kernel source, the kernel test modules (and the float ->
integer cast rule's, whose dtype= reductions run the integer kernels) must
pass under it, and its results must equal the other targets' bit for bit
(+ - * / max min sqrt addcmul sum) or stay within the exp/log bound of each
other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch
import dispatch.kernels  # noqa: F401  (used as dispatch.kernels below)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernel_sources import own_targets  # noqa: E402
from _targets import DISABLE, runnable  # noqa: E402

HERE = Path(__file__).resolve().parent
# target -> features to disable so that it is the highest one left
TARGETS = DISABLE
# Emulated CPUs that lack the higher targets' instructions entirely: running a
# variant there proves it executes nothing beyond its target (a stray AVX-512
# or AVX instruction would be SIGILL). qemu-user stops at AVX2; NumPy 2 needs
# SSE4.2, so the baseline variant is proven with the env override only.
QEMU = {"SSE42": "Nehalem", "FMA3__AVX2": "Haswell"}
# Each source's @targets, highest first (the baseline is always there). A
# forced target makes a source choose the highest of its own at or below it.
ORDER = list(TARGETS)


def expected_choice(source: str, forced: str) -> str:
    own = own_targets(source)  # its @targets line, highest first
    return next(t for t in own if ORDER.index(t) >= ORDER.index(forced))


CHILD = r"""
import sys, numpy as np
from dispatch import iterator, kernels
inp = dict(np.load(sys.argv[1]))
out = {"chosen": np.array([kernels.chosen(s) for s in kernels.SOURCES])}
for name in ("float32", "float64"):
    a, b, c = inp[f"a_{name}"], inp[f"b_{name}"], inp[f"c_{name}"]
    for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
        o = np.empty_like(a); kernels.run(op, o, a, b); out[f"{op}_{name}"] = o
    o = np.empty_like(a); kernels.run("addcmul", o, a, b, c, ctx=0.3); out[f"addcmul_{name}"] = o
    o = np.empty_like(a); kernels.run("sqrt", o, np.abs(a)); out[f"sqrt_{name}"] = o
    x = inp[f"e_{name}"]
    o = np.empty_like(x); kernels.run("exp", o, x); out[f"exp_{name}"] = o
    x = inp[f"l_{name}"]
    o = np.empty_like(x); kernels.run("log", o, x); out[f"log_{name}"] = o
    s = inp[f"s_{name}"]
    out[f"sum_{name}"] = np.array([kernels.sum(s), kernels.sum(s[::7]), kernels.sum(s[::2]),
                                   kernels.sum(s[1:2050:2]), kernels.sum(s[3:40:2])], dtype=s.dtype)
    m = inp[f"m_{name}"]  # rows through max/min's fast pass, its NaN check, the exact pass
    for op in ("max", "min"):
        o = np.empty(m.shape[0], m.dtype); iterator.reduce(op, m, o, dims=(1,)); out[f"{op}_{name}"] = o
for name in ("int32", "int64"):
    a, b = inp[f"a_{name}"], inp[f"b_{name}"]
    for op in ("add", "sub", "mul", "maximum", "minimum"):
        o = np.empty_like(a); iterator.elementwise(op, o, a, b); out[f"{op}_{name}"] = o
a, b = inp["a_float16"], inp["b_float16"]
for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
    o = np.empty_like(a); kernels.run(op, o, a, b); out[f"{op}_float16"] = o
o = np.empty_like(a); kernels.run("add", o, a, b, ctx=-0.3); out["add_alpha_float16"] = o
o = np.empty_like(a); kernels.run("sqrt", o, np.abs(a)); out["sqrt_float16"] = o
o = np.empty(len(a[::3]), a.dtype); kernels.run("mul", o, a[::3], np.broadcast_to(b[7], o.shape))
out["mul_strided_float16"] = o  # a strided and a stride-0 operand
import dispatch  # the float16 <-> float32 casts: every half, then floats around half's range
h = dispatch.from_numpy(inp["h_all"].view(np.float16))
f = dispatch.from_numpy(inp["f_bits"].view(np.float32))
out["cast_f16_f32_float16"] = h.to(dispatch.float32).numpy().view(np.uint32)
out["cast_f16_f32_strided_float16"] = h[::3].to(dispatch.float32).numpy().view(np.uint32)
out["cast_f32_f16_float16"] = f.to(dispatch.float16).numpy().view(np.uint16)
out["cast_f32_f16_strided_float16"] = f[1::3].to(dispatch.float16).numpy().view(np.uint16)
s16 = dispatch.from_numpy(inp["s16"])  # float16 sums: whole leaves, partial rows, row sums
out["sum_f16_float16"] = np.concatenate(
    [np.atleast_1d(s16.sum().numpy()), np.atleast_1d(s16[:1023].sum().numpy()),
     np.atleast_1d(s16[:4097].sum().numpy()), s16.reshape(50, 100).sum(1).numpy(),
     s16.reshape(50, 100).sum(0).numpy(), s16.reshape(500, 10).sum(0).numpy(),
     np.atleast_1d(s16[::2].sum().numpy()), s16.reshape(50, 100)[:, 1::2].sum(1).numpy(),
     np.atleast_1d(s16.reshape(50, 100)[:, ::2].sum().numpy()),
     dispatch.amax(s16.reshape(50, 100), dim=0).numpy()]).view(np.uint16)
e16 = inp["h_all"][(inp["h_all"] & 0x7C00) != 0x7C00]
e16 = dispatch.from_numpy(np.random.default_rng(16).permutation(e16).view(np.float16))
out["ext_f16_float16"] = np.concatenate(  # float16 max/min as integers: every finite half
    [np.atleast_1d(e16.max().numpy()), np.atleast_1d(e16.min().numpy()),
     np.atleast_1d(e16[:4097].amax().numpy()), e16[:6400].reshape(50, 128).amin(1).numpy(),
     e16[:6400].reshape(50, 128).amax(1).numpy()]).view(np.uint16)
for name in ("int8", "int32", "int64", "uint8", "int16"):  # int_reduce: contiguous and columns
    m, q = dispatch.from_numpy(inp[f"r_{name}"]), dispatch.from_numpy(inp[f"p_{name}"])
    out[f"int_reduce_{name}"] = np.concatenate([
        np.array([m.sum().item(), dispatch.amax(m).item(), dispatch.amin(m).item()]),
        m.sum(0).numpy(), m.sum(1).numpy(), dispatch.amax(m, dim=0).numpy().astype(np.int64),
        dispatch.amin(m, dim=1).numpy().astype(np.int64), m[:, ::3].sum(1).numpy(),
        m[:, ::2].sum(1).numpy(), dispatch.amax(m[:, ::2], dim=1).numpy().astype(np.int64),
        np.array([dispatch.amin(m[:, 1::2]).item(), m[:, 1::2].sum().item()]),
        np.array([q.prod().item()]), q.prod(0).numpy(), q.prod(1).numpy(),
        q[:, ::3].prod(1).numpy()])
np.savez(sys.argv[2], **out)
"""


def _extreme_rows(rng, dt) -> np.ndarray:
    """Rows of 1000 (vector blocks, single vectors and a scalar tail): a NaN at
    positions in each part, infinities of one and of both signs, finite values
    whose sum overflows to +inf and to -inf together (max/min's fast pass
    then falls back to the exact pass), and rows of plain values."""
    info = np.finfo(dt)
    m = rng.uniform(-1, 1, (24, 1000)).astype(dt)
    for r, pos in enumerate((0, 5, 127, 128, 500, 991, 992, 995, 999)):
        m[r, pos] = np.nan
    m[9, 300] = np.inf
    m[10, 7], m[10, 900] = np.inf, -np.inf
    m[11, :] = info.max
    m[12, ::2], m[12, 1::2] = info.max, -info.max
    m[13, 3], m[13, 998] = np.nan, np.inf
    m[14, :] = -0.0
    m[14, 500] = 0.0
    return m


def _inputs(path) -> None:
    """The CHILD's inputs, made once here so every target reads the same bits."""
    rng = np.random.default_rng(11)
    inp = {}
    for dt in (np.float32, np.float64):
        name = np.dtype(dt).name
        a = np.ldexp(rng.uniform(-1, 1, 4099), rng.integers(-60, 60, 4099)).astype(dt)
        b = np.ldexp(rng.uniform(-1, 1, 4099), rng.integers(-60, 60, 4099)).astype(dt)
        a[:6] = [0.0, -0.0, np.inf, np.nan, 1.0, -1.0]
        b[:6] = [-0.0, 0.0, np.inf, 1.0, np.nan, -1.0]
        inp.update({f"a_{name}": a, f"b_{name}": b,
                    f"c_{name}": rng.uniform(-2, 2, 4099).astype(dt),
                    f"e_{name}": rng.uniform(-100, 100, 100_000).astype(dt),
                    f"l_{name}": np.ldexp(rng.uniform(1, 2, 100_000),
                                          rng.integers(-120, 120, 100_000)).astype(dt),
                    f"s_{name}": rng.uniform(-1, 1, 1_000_003).astype(dt),
                    f"m_{name}": _extreme_rows(rng, dt)})
    # float16: every finite magnitude, subnormals, +-0, inf, NaN
    a = np.ldexp(rng.uniform(-1, 1, 4099), rng.integers(-26, 17, 4099)).astype(np.float16)
    b = np.ldexp(rng.uniform(-1, 1, 4099), rng.integers(-26, 17, 4099)).astype(np.float16)
    a[:6] = [0.0, -0.0, np.inf, np.nan, 1.0, -1.0]
    b[:6] = [-0.0, 0.0, np.inf, 1.0, np.nan, -1.0]
    inp.update({"a_float16": a, "b_float16": b})
    s16 = rng.uniform(0, 0.01, 5000).astype(np.float16)  # large values cancel in pairs:
    big = rng.permutation(5000)[:600]                     # the summation order shows
    s16[big[::2]], s16[big[1::2]] = 30000, -30000
    inp["s16"] = s16
    for dt in (np.int8, np.int32, np.int64, np.uint8, np.int16):
        info = np.iinfo(dt)
        inp[f"r_{np.dtype(dt).name}"] = rng.integers(info.min, info.max, (37, 1031), dtype=dt,
                                                     endpoint=True)
        # odd factors: their wrapping products never reach 0, so every bit shows
        inp[f"p_{np.dtype(dt).name}"] = inp[f"r_{np.dtype(dt).name}"] | 1
    # every float16 bit pattern (signaling NaNs too); floats: random bits, the
    # ties and the overflow edge around 65504, float16's subnormal range
    inp["h_all"] = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    inp["f_bits"] = np.concatenate([
        rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32),
        np.arange(0x477fd000, 0x47802000, dtype=np.uint32),
        np.arange(0x33000000, 0x38800000, 97, dtype=np.uint32),
        np.arange(0x7f800000, 0x7f800400, dtype=np.uint32) | np.uint32(0x80000000)])
    for dt in (np.int32, np.int64):
        info = np.iinfo(dt)
        inp[f"a_{np.dtype(dt).name}"] = rng.integers(info.min, info.max, 4099, dtype=dt)
        inp[f"b_{np.dtype(dt).name}"] = rng.integers(info.min, info.max, 4099, dtype=dt)
    np.savez(path, **inp)



def _env(disable: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    if disable:
        env["DISPATCH_DISABLE_CPU_FEATURES"] = disable
    return env


@pytest.fixture(scope="module")
def results(tmp_path_factory, sanitized):
    """Results of CHILD under every runnable target: target -> npz dict."""
    res = {}
    inputs = tmp_path_factory.mktemp("inputs") / "in.npz"
    _inputs(inputs)
    for target, disable in TARGETS.items():
        if not runnable(target):
            continue
        path = tmp_path_factory.mktemp(target) / "out.npz"
        # cwd outside the checkout: `python -c` puts cwd first on sys.path, and
        # from the repository root that is the source dispatch/, not the build.
        proc = subprocess.run([sys.executable, "-c", CHILD, str(inputs), str(path)],
                              check=False, env=_env(disable),
                              capture_output=True, text=True, timeout=300, cwd=path.parent)
        assert proc.returncode == 0, proc.stderr
        with np.load(path) as z:
            res[target] = {k: z[k] for k in z.files}
    qemu = shutil.which("qemu-x86_64")
    for target, cpu in QEMU.items():
        if qemu is None or sanitized:  # see runs_package_under_qemu in tests/conftest.py
            break
        path = tmp_path_factory.mktemp(f"qemu-{cpu}") / "out.npz"
        proc = subprocess.run([qemu, "-cpu", cpu, sys.executable, "-c", CHILD, str(inputs),
                               str(path)], check=False, env=_env(""), capture_output=True,
                              text=True, timeout=600, cwd=path.parent)
        assert proc.returncode == 0, proc.stderr[-2000:]
        with np.load(path) as z:
            res[f"{target}@qemu-{cpu}"] = {k: z[k] for k in z.files}
    return res


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_forced_target_is_chosen_for_every_kernel_source(results, target):
    if target not in results:
        pytest.skip(f"this CPU cannot run {target}")
    chosen = dict(zip(dispatch.kernels.SOURCES, results[target]["chosen"].tolist()))
    assert chosen == {s: expected_choice(s, target) for s in dispatch.kernels.SOURCES}


@pytest.mark.parametrize("target", list(TARGETS))
def test_kernel_tests_pass_under_each_target(target):
    if not runnable(target):
        pytest.skip(f"this CPU cannot run {target}")
    proc = subprocess.run(  # noqa: PLW1510 - the assertion reports the failure
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
         "-c", str(HERE.parent / "pyproject.toml"), "--rootdir", str(HERE.parent),
         str(HERE / "test_kernels_accuracy.py"), str(HERE / "test_kernels_layout.py"),
         str(HERE / "test_kernels_int.py"), str(HERE / "test_casts_float_to_int.py")],
        env=_env(TARGETS[target]), capture_output=True, text=True, timeout=600, cwd=HERE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


@pytest.mark.runs_package_under_qemu
@pytest.mark.parametrize("target", list(QEMU))
def test_emulated_cpu_without_the_higher_isas_chooses_and_runs_the_target(results, target):
    key = f"{target}@qemu-{QEMU[target]}"
    if key not in results:
        pytest.skip("qemu-x86_64 is not installed")
    chosen = dict(zip(dispatch.kernels.SOURCES, results[key]["chosen"].tolist()))
    assert chosen == {s: expected_choice(s, target) for s in dispatch.kernels.SOURCES}


EXACT = ["add", "sub", "mul", "div", "maximum", "minimum", "addcmul", "sqrt", "sum", "max", "min"]


EXACT_PAIRS = [(op, dt) for dt in ("float32", "float64") for op in EXACT] + [
    (op, "float16") for op in ("add", "sub", "mul", "div", "maximum", "minimum", "sqrt",
                               "add_alpha", "mul_strided", "cast_f16_f32",
                               "cast_f16_f32_strided", "cast_f32_f16",
                               "cast_f32_f16_strided", "sum_f16", "ext_f16")] + [
    (op, dt) for dt in ("int32", "int64") for op in ("add", "sub", "mul", "maximum", "minimum")] + [
    ("int_reduce", dt) for dt in ("int8", "int32", "int64", "uint8", "int16")]


@pytest.mark.parametrize("op,dtype", EXACT_PAIRS)
def test_exact_kernels_are_bit_identical_across_targets(results, op, dtype):
    if len(results) < 2:
        pytest.skip("fewer than two targets run here")
    key = f"{op}_{dtype}"
    first, *others = results
    for t in others:
        assert results[t][key].tobytes() == results[first][key].tobytes(), (first, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["exp", "log"])
def test_exp_log_targets_agree_within_one_ulp(results, op, dtype):
    if len(results) < 2:
        pytest.skip("fewer than two targets run here")
    key = f"{op}_{dtype}"
    itype = np.int32 if dtype == "float32" else np.int64
    first, *others = results
    a = results[first][key]
    for t in others:
        b = results[t][key]
        both = np.isfinite(a) & np.isfinite(b)
        assert np.array_equal(np.isfinite(a), np.isfinite(b))
        diff = np.abs(a[both].view(itype).astype(np.int64) - b[both].view(itype).astype(np.int64))
        assert diff.max() <= 1, (first, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_rows_match_numpy_under_each_target(results, tmp_path, op, dtype):
    """NaN anywhere in a row (vector block, single vector, scalar tail) gives
    NaN; sums that overflow to infinities of both signs change nothing."""
    if not results:
        pytest.skip("no target runs here")
    _inputs(tmp_path / "in.npz")  # the values CHILD read
    with np.load(tmp_path / "in.npz") as z:
        m = z[f"m_{dtype}"]
    want = getattr(np, op)(m, axis=1)
    for t, res in results.items():
        np.testing.assert_array_equal(res[f"{op}_{dtype}"], want, err_msg=t)
