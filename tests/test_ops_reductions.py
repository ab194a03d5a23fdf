"""Reductions through the public API (issue 16): sum/mean/max/min over every
layout the engine picks a loop for (inner-dim rows, outer-dim columns,
gathered), against NumPy and an exact math.fsum; max/min(dim) and
argmax/argmin with PyTorch's NaN and tie rules; the same bits for 1, 2, 3
and 8 threads; and the thread pool across fork() and concurrent callers.
No timing here: speed is tools/bench/run.py --api's job."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import dispatch
from dispatch import ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bits import assert_same_bits, same_bits  # noqa: E402

FLOATS = ["float32", "float64"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]


def _layouts(a: np.ndarray) -> dict:
    """Views of (a copy of) a: contiguous, transposed, sliced with a step,
    starting at an offset; each as a NumPy array and the dispatch tensor over its memory."""
    base = dispatch.from_numpy(np.ascontiguousarray(a))
    out = {"contiguous": (np.ascontiguousarray(a), base)}
    if a.ndim >= 2:
        tbase = dispatch.from_numpy(np.ascontiguousarray(a.T))
        out["transposed"] = (a, tbase.permute(*reversed(range(a.ndim))))
        wide = np.concatenate([a, a], axis=-1)
        out["strided"] = (wide[..., ::2], dispatch.from_numpy(wide)[..., ::2])
    if a.ndim >= 1:  # a view starting one row in (a storage offset)
        padded = np.concatenate([a[:1], a], axis=0)
        out["offset"] = (a, dispatch.from_numpy(padded)[1:])
    return out


def _bound(x: np.ndarray, n: int, dtype: str) -> float:
    """The documented pairwise error bound h * u * sum|x| (Note [Sum order
    independent of the vector width], Note [Column reductions]), with a
    generous h covering both trees."""
    u = 2.0 ** (-24 if dtype == "float32" else -53)
    h = 40 + math.ceil(math.log2(max(n, 2)))
    return h * u * float(np.sum(np.abs(x.astype(np.float64)))) + 1e-300


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2048, 512), (300, 37), (7, 1000), (5, 33, 70), (1, 513)])
def test_sum_over_each_dim_and_layout_is_within_the_pairwise_bound_of_fsum(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
    for name, (x, t) in _layouts(a).items():
        for dim in [None] + list(range(a.ndim)):
            got = (t.sum() if dim is None else t.sum(dim)).numpy().astype(np.float64)
            moved = x.reshape(1, -1) if dim is None else np.moveaxis(x, dim, -1)
            flat = moved.reshape(-1, moved.shape[-1]).astype(np.float64)
            exact = np.array([math.fsum(r) for r in flat]).reshape(got.shape)
            bounds = np.array([_bound(r, r.size, dtype) for r in flat]).reshape(got.shape)
            # the result is rounded to dtype once more: half an ulp of it
            bounds = bounds + np.abs(exact) * np.finfo(dtype).eps
            assert (np.abs(got - exact) <= bounds).all(), (name, dim)


@pytest.mark.parametrize("dtype", FLOATS + ["float16"] + INTS)
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_reductions_match_numpy_over_dims_layouts_and_keepdim(op, dtype):
    if op == "mean" and dtype in INTS:
        return
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (6, 130, 5)).astype(dtype)
    if dtype in FLOATS + ["float16"]:
        a = (a / 7).astype(dtype)
    for name, (x, t) in _layouts(a).items():
        for dim in [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)]:
            for keepdim in (False, True):
                if dim is None:
                    got = getattr(t, op)()
                    ref = getattr(np, op)(x.astype(np.float64) if dtype != "int64" else x)
                else:
                    dims = [dim] if isinstance(dim, int) else list(dim)
                    got = getattr(ops, op)(t, dims, keepdim)
                    ref = getattr(np, op)(x.astype(np.float64) if dtype != "int64" else x,
                                          axis=tuple(dims), keepdims=keepdim)
                g = got.numpy()
                assert g.shape == np.shape(ref), (name, dim, keepdim)
                if dtype == "float16":
                    np.testing.assert_allclose(g.astype(np.float64), ref, rtol=2e-3, atol=1e-2)
                elif dtype in FLOATS and op in ("sum", "mean"):
                    tol = 1e-5 if dtype == "float32" else 1e-12
                    np.testing.assert_allclose(g, ref, rtol=tol, atol=tol)
                else:
                    np.testing.assert_array_equal(g, np.asarray(ref).astype(g.dtype))


def test_float16_sum_accumulates_in_float32():
    """2048 ones plus 1: a float16 running sum sticks at 2048; in float32 the
    result is 2049, rounded once to float16 (2048, the nearest), and a sum
    of 4096 x 0.5 + 0.25 gives 2048.25 -> 2048 rather than losing the halves."""
    x = np.full(4096, 0.5, np.float16)
    assert float(dispatch.from_numpy(x).sum().numpy()) == 2048.0
    y = np.full((3000, 2), 1.0, np.float16)
    assert dispatch.from_numpy(y).sum(0).numpy().tolist() == [3000.0, 3000.0]
    assert dispatch.from_numpy(y).mean(0).dtype == dispatch.float16


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_min_propagate_nan_on_every_layout(dtype):
    a = np.arange(40 * 300, dtype=dtype).reshape(40, 300)
    a[17, 3] = np.nan
    a[2, 250] = np.nan
    for name, (x, t) in _layouts(a).items():
        for op in ("max", "min"):
            assert np.isnan(getattr(t, op)().numpy()), name
            for dim in (0, 1):
                got = getattr(ops, op)(t, [dim])
                ref = getattr(np, op)(x, axis=dim)
                assert_same_bits(got, ref, name)  # NumPy's NaN, its bits too


@pytest.mark.parametrize("dtype", FLOATS + ["float16", "int32", "int64", "uint8"])
def test_max_min_dim_return_values_and_first_indices_like_torch(dtype):
    """(values, indices): ties give the first index, NaN the first NaN's index
    (np.argmax follows the same rules)."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, (33, 70)).astype(dtype)  # many ties
    if dtype in FLOATS:
        a[5, 7] = a[9, 7] = np.nan
        a[3, 40] = np.nan
    for name, (x, t) in _layouts(a).items():
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                vmax, imax = ops.max(t, dim, keepdim)
                vmin, imin = ops.min(t, dim, keepdim)
                np.testing.assert_array_equal(imax.numpy(), np.argmax(x, dim, keepdims=keepdim))
                np.testing.assert_array_equal(imin.numpy(), np.argmin(x, dim, keepdims=keepdim))
                assert_same_bits(vmax, np.max(x, dim, keepdims=keepdim), name)
                assert_same_bits(vmin, np.min(x, dim, keepdims=keepdim), name)
                assert imax.dtype == dispatch.int64
                np.testing.assert_array_equal(
                    t.argmax(dim, keepdim).numpy(), np.argmax(x, dim, keepdims=keepdim))
        assert int(t.argmax().numpy()) == int(np.argmax(x)), name
        assert int(t.argmin().numpy()) == int(np.argmin(x)), name


def test_max_dim_tie_of_signed_zeros_reports_the_first():
    v, i = ops.max(dispatch.tensor([-0.0, 0.0, -1.0]), 0)
    assert int(i.numpy()) == 0 and math.copysign(1.0, float(v.numpy())) == -1.0


def test_reduction_edges_empty_and_one_element():
    e = dispatch.from_numpy(np.zeros((0, 5), np.float32))
    assert e.sum(0).numpy().tolist() == [0.0] * 5
    assert e.sum(1).numpy().shape == (0,)
    assert float(e.sum().numpy()) == 0.0
    assert np.isnan(e.mean().numpy())
    assert ops.max(e, [1]).numpy().shape == (0,)
    v, i = ops.max(e, 1)
    assert v.numpy().shape == (0,) and i.numpy().shape == (0,)
    with pytest.raises(IndexError, match="non-zero size"):
        ops.max(e, [0])
    with pytest.raises(IndexError, match="non-zero size"):
        ops.max(e, 0)
    with pytest.raises(IndexError, match="numel"):
        ops.argmax(e)
    one = dispatch.from_numpy(np.array([[2.5]], np.float64))
    for op in ("sum", "mean", "max", "min"):
        assert getattr(one, op)().numpy() == 2.5
        assert getattr(ops, op)(one, [0], True).numpy().tolist() == [[2.5]]
    v, i = ops.max(one, 1, True)
    assert v.numpy().tolist() == [[2.5]] and i.numpy().tolist() == [[0]]
    s = dispatch.tensor(3.0)
    v, i = ops.max(s, 0)
    assert float(v.numpy()) == 3.0 and int(i.numpy()) == 0


# (call, torch's exception type, its message): an empty dim that was named is
# an IndexError for every max/min-like reduction; no dim on an empty input a
# RuntimeError for max/amax, an IndexError for argmax (issue 27: amax and
# argmax raised RuntimeError where max(x, dim) raised IndexError).
EMPTY_REDUCTION_ERRORS = [
    ("amax", (0,), IndexError, "amax(): Expected reduction dim 0 to have non-zero size."),
    ("amin", ([0, 1],), IndexError, "amin(): Expected reduction dim 0 to have non-zero size."),
    ("amax", (-2,), IndexError, "amax(): Expected reduction dim -2 to have non-zero size."),
    ("argmax", (0,), IndexError, "argmax(): Expected reduction dim 0 to have non-zero size."),
    ("argmin", (-2,), IndexError, "argmin(): Expected reduction dim 0 to have non-zero size."),
    ("max", (0,), IndexError, "max(): Expected reduction dim 0 to have non-zero size."),
    ("min", (0,), IndexError, "min(): Expected reduction dim 0 to have non-zero size."),
    ("amax", (), RuntimeError, "amax(): Expected reduction dim to be specified for "
                               "input.numel() == 0."),
    ("max", (), RuntimeError, "max(): Expected reduction dim to be specified for "
                              "input.numel() == 0."),
    ("argmax", (), IndexError, "argmax(): Expected reduction dim to be specified for "
                               "input.numel() == 0."),
]


@pytest.mark.parametrize("name,args,exc,message", EMPTY_REDUCTION_ERRORS,
                         ids=[f"{n}{a}" for n, a, _, _ in EMPTY_REDUCTION_ERRORS])
def test_max_min_reductions_of_an_empty_dim_raise_torchs_exception_type(name, args, exc,
                                                                        message):
    with pytest.raises(exc) as got:
        getattr(dispatch, name)(dispatch.empty(0, 3), *args)
    assert message in str(got.value)
    torch = pytest.importorskip("torch")
    with pytest.raises(exc) as want:
        getattr(torch, name)(torch.empty(0, 3), *args)
    assert message in str(want.value)


def _all_reductions(a: np.ndarray) -> list:
    t = dispatch.from_numpy(a)
    tt = dispatch.from_numpy(np.ascontiguousarray(a.T)).permute(1, 0)
    outs = []
    for x in (t, tt, t[:, ::3]):
        for op in ("sum", "mean"):
            outs += [getattr(x, op)(), getattr(x, op)(0), getattr(x, op)(1)]
        for op in ("max", "min"):
            outs += [getattr(x, op)(), getattr(ops, op)(x, [0]), getattr(ops, op)(x, [1])]
            outs += list(getattr(ops, op)(x, 0)) + [x.argmax(1), x.argmin()]
    return [o.numpy().tobytes() for o in outs]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1024, 300), (70000, 3), (5, 140000)])
def test_reductions_are_bit_identical_for_1_2_3_and_8_threads(threads, dtype, shape):
    a = np.random.default_rng(7).standard_normal(shape).astype(dtype) * 1e3
    a[3, 1] = 1e12  # cancellation makes any change of order visible
    a[4, 1] = -1e12
    threads(1)
    one = _all_reductions(a)
    for n in (2, 3, 8):
        threads(n)
        assert _all_reductions(a) == one, n


def _fork_child_sums() -> None:
    x = dispatch.from_numpy(np.ones((4096, 64), np.float32))
    ok = float(x.sum().numpy()) == 4096 * 64 and x.sum(0).numpy().tolist() == [4096.0] * 64
    os._exit(0 if ok else 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_thread_pool_survives_fork(threads):
    threads(2)
    x = dispatch.from_numpy(np.ones(1 << 20, np.float32))
    assert float((x + x).sum().numpy()) == 2.0 * (1 << 20)  # the workers exist now
    pid = os.fork()
    if pid == 0:  # the child: its first parallel call starts its own workers
        try:
            _fork_child_sums()
        finally:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert float((x + x).sum().numpy()) == 2.0 * (1 << 20)  # the parent's pool still works


def test_set_num_threads_from_many_threads_while_eight_threads_call_operators(threads):
    a = np.random.default_rng(9).standard_normal((600, 300)).astype(np.float32)
    t = dispatch.from_numpy(a)
    threads(1)
    want = [(t + t).numpy().tobytes(), t.sum().numpy().tobytes(), t.sum(0).numpy().tobytes(),
            ops.exp(t).numpy().tobytes()]
    stop = threading.Event()
    errors = []

    def setter(k: int) -> None:
        while not stop.is_set():
            dispatch.set_num_threads(1 + (k + dispatch.get_num_threads()) % 8)

    def caller() -> None:
        try:
            for _ in range(30):
                got = [(t + t).numpy().tobytes(), t.sum().numpy().tobytes(),
                       t.sum(0).numpy().tobytes(), ops.exp(t).numpy().tobytes()]
                if got != want:
                    errors.append("different bits")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    setters = [threading.Thread(target=setter, args=(k,)) for k in range(3)]
    callers = [threading.Thread(target=caller) for _ in range(8)]
    for th in setters + callers:
        th.start()
    for th in callers:
        th.join()
    stop.set()
    for th in setters:
        th.join()
    assert errors == []
    assert 1 <= dispatch.get_num_threads() <= 8


@pytest.mark.parametrize("value,want", [("3", 3), ("1", 1), (" +2", 2), ("0", 1), ("abc", 1),
                                        ("257", 1), ("0x10", 1), ("4 ", 1), ("", 1)])
def test_dispatch_num_threads_env_var_is_read_at_first_use(value, want, tmp_path):
    """A value that is not 1 to 256 is ignored, and import says so once
    (a RuntimeWarning naming it; it was silent)."""
    env = dict(os.environ, DISPATCH_NUM_THREADS=value)
    code = "import dispatch; print(dispatch.get_num_threads())"
    # cwd outside the checkout, whose source dispatch/ `python -c` would import first
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.strip() == str(want)
    bad = value != "" and not (value.strip().lstrip("+").isdigit() and value == value.rstrip()
                               and 1 <= int(value) <= 256)
    warned = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == bad, out.stderr
    if bad:
        assert f"DISPATCH_NUM_THREADS={value!r}" in warned[0]


@pytest.mark.parametrize("value,want,warns", [("9" * 5000, 1, True), ("-" + "1" * 4400, 1, True),
                                              ("0" * 5000 + "3", 3, False)])
def test_a_thread_count_of_thousands_of_digits_is_read_like_any_other(value, want, warns,
                                                                      tmp_path):
    """Past 4300 digits Python's int() refuses a string (it broke `import
    dispatch`, issue 27): such a value is ignored with the warning, which
    names a prefix of it; leading zeros are only zeros, as strtol reads them."""
    env = dict(os.environ, DISPATCH_NUM_THREADS=value)
    code = "import dispatch; print(dispatch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(want)
    warned = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == warns, out.stderr
    if warns:
        assert f"DISPATCH_NUM_THREADS={value[:40]!r}... ({len(value)} characters)" in warned[0]
        assert len(warned[0]) < 300


def test_explicit_set_num_threads_wins_over_the_env_var(tmp_path):
    env = dict(os.environ, DISPATCH_NUM_THREADS="4")
    code = "import dispatch; dispatch.set_num_threads(2); print(dispatch.get_num_threads())"
    # cwd outside the checkout, whose source dispatch/ `python -c` would import first
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.strip() == "2"


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_min_with_infinities_and_signed_zeros_match_numpy(dtype):
    """Rows long enough for the vector pass; infinities send a row through
    the exact pass again, zeros of both signs compare equal."""
    rng = np.random.default_rng(13)
    a = rng.standard_normal((9, 1000)).astype(dtype)
    a[1, 500] = np.inf
    a[2, 3] = -np.inf
    a[3, 999] = np.inf
    a[3, 10] = np.nan
    a[4] = 0.0
    a[4, ::3] = -0.0
    a[5] = -np.inf
    t = dispatch.from_numpy(a)
    for op in ("max", "min"):
        np.testing.assert_array_equal(getattr(ops, op)(t, [1]).numpy(), getattr(np, op)(a, axis=1))
        np.testing.assert_array_equal(getattr(ops, op)(t, [0]).numpy(), getattr(np, op)(a, axis=0))
        assert np.isnan(getattr(t, op)().numpy())
        b = np.delete(a, 3, axis=0)
        assert getattr(dispatch.from_numpy(b), op)().numpy() == getattr(np, op)(b)


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="needs Linux schedstat")
def test_idle_workers_take_no_cpu_between_calls(threads):
    """Note [Short spin]: workers spin at most 1 ms after a call, then
    sleep; over an idle half second they use (almost) no CPU."""
    x = dispatch.from_numpy(np.ones(1 << 22, np.float32))
    threads(2)
    ops.exp(x)
    me = str(threading.get_native_id())

    def cpu_ns() -> dict:
        out = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                out[tid] = int(open(f"/proc/self/task/{tid}/schedstat").read().split()[0])
            except OSError:
                pass
        return out

    threading.Event().wait(0.05)  # past the spin
    start = cpu_ns()
    threading.Event().wait(0.5)
    end = cpu_ns()
    used = {t: end[t] - start.get(t, 0) for t in end if t != me}
    assert all(ns < 20_000_000 for ns in used.values()), used  # < 4% of the half second


def test_max_min_over_a_dim_return_named_values_and_indices_like_torch():
    """torch.max(x, 1) is a torch.return_types.max: .values, .indices, and a
    2-tuple when unpacked or indexed."""
    x = dispatch.from_numpy(np.array([[1.0, 5.0, 3.0], [7.0, 2.0, np.nan]], np.float32))
    for op, want_v, want_i in (("max", [5.0, np.nan], [1, 2]), ("min", [1.0, np.nan], [0, 2])):
        for r in (getattr(x, op)(dim=1), getattr(dispatch, op)(x, 1),
                  getattr(ops, op)(x, 1, keepdim=False)):
            assert type(r) is getattr(dispatch.return_types, op)
            assert type(r).__name__ == op and r._fields == ("values", "indices")
            np.testing.assert_array_equal(r.values.numpy(), want_v)
            assert r.indices.tolist() == want_i
            values, indices = r
            assert values is r[0] and indices is r[1] and len(r) == 2
    assert not isinstance(x.max(), tuple)  # the full max is one tensor


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "uint8"])
def test_amax_amin_are_values_only_over_any_dims_like_torch(dtype):
    """dispatch.amax(x, dim=(), keepdim=False) as torch.amax: all dims when dim
    is empty, a list or one int, keepdim, the Tensor method, out=; NaN
    propagates."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 50, (4, 5, 6)).astype(dtype)
    if dtype in FLOATS:
        a[1, 2, 3] = np.nan
    t = dispatch.from_numpy(a)
    for name, ref in (("amax", np.max), ("amin", np.min)):
        fn = getattr(dispatch, name)
        assert_same_bits(fn(t), ref(a), name)
        for dims in (0, [2], (0, 2), [-1, 1]):
            axis = tuple(d % 3 for d in ([dims] if isinstance(dims, int) else dims))
            for keep in (False, True):
                want = ref(a, axis=axis, keepdims=keep)
                got = fn(t, dims, keepdim=keep)
                assert got.shape == want.shape and got.dtype == t.dtype
                assert_same_bits(got, want, f"{name} {dims}")
                assert_same_bits(getattr(t, name)(dims, keep), want, f"{name} {dims}")
        o = dispatch.empty(4, 6, dtype=t.dtype)
        assert fn(t, 1, out=o) is o
        np.testing.assert_array_equal(o.numpy(), ref(a, axis=1))
    with pytest.raises(RuntimeError, match=r"amax\(\)"):
        dispatch.amax(dispatch.empty(0))


def test_amax_amin_agree_with_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal((6, 7)).astype(np.float32)
    a[2, 3] = np.nan
    for name in ("amax", "amin"):
        for dims in ((), 0, (0, 1), [1]):
            want = getattr(torch, name)(torch.from_numpy(a), dims)
            got = getattr(dispatch, name)(dispatch.from_numpy(a), dims)
            assert_same_bits(got, want, f"{name} {dims}")  # torch's NaN, its bits too


# Integer and bool reductions (Note [Integer reductions] in int_reduce.dispatch.c) -------------

@pytest.mark.parametrize("dtype", INTS + ["bool"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 127, 128, 129, 1000, 4099])
def test_integer_sum_max_min_at_the_type_extremes_and_every_tail(dtype, n):
    """Lengths around the kernel's lane blocks (16 sums, 128 / itemsize for
    max/min), the extremes anywhere in the run, sums that wrap int64 as
    NumPy's and torch's do."""
    rng = np.random.default_rng(n)
    if dtype == "bool":
        x = rng.integers(0, 2, n).astype(bool)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        x[rng.integers(n)] = info.max
        x[rng.integers(n)] = info.min
    for name, (v, t) in _layouts(np.stack([x, x[::-1]])).items():
        for dim in (None, 0, 1):
            with np.errstate(over="ignore"):
                want_sum = np.sum(v, axis=dim, dtype=np.int64)
            got_sum = t.sum() if dim is None else t.sum(dim)
            assert got_sum.dtype == dispatch.int64
            np.testing.assert_array_equal(got_sum.numpy(), want_sum, err_msg=f"{name} {dim}")
            for op in ("max", "min"):
                got = dispatch.amax(t, dim=() if dim is None else dim) if op == "max" else \
                    dispatch.amin(t, dim=() if dim is None else dim)
                assert got.dtype == t.dtype
                np.testing.assert_array_equal(got.numpy(), getattr(np, op)(v, axis=dim),
                                              err_msg=f"{op} {name} {dim}")


def _column_tree(x: np.ndarray) -> np.ndarray:
    """Note [Column reductions]: leaves of 16 rows added in row order from
    -0.0, a longer run split at ((n // 16 + 1) // 2) * 16 rows, halves added."""
    n = x.shape[0]
    if n <= 16:
        a = np.full(x.shape[1:], -0.0, x.dtype)
        for r in range(n):
            a = a + x[r]
        return a
    h = ((n // 16 + 1) // 2) * 16
    return _column_tree(x[:h]) + _column_tree(x[h:])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows,cols", [(17, 5), (100, 37), (1000, 130), (4099, 33), (300, 1031)])
def test_column_sum_is_the_documented_tree(dtype, rows, cols):
    """sum(dim=0) gives exactly the bits of the documented tree, whatever
    the register blocking of the leaf and the threads: values of mixed
    magnitude and sign, so that another order shows."""
    rng = np.random.default_rng(rows * cols)
    x = rng.uniform(0, 0.01, (rows, cols)) * np.where(rng.random((rows, cols)) < 0.1, 3e6, 1)
    x = (x * np.where(rng.random((rows, cols)) < 0.5, -1, 1)).astype(dtype)
    want = _column_tree(x).view(np.uint8)
    old = dispatch.get_num_threads()
    try:
        for threads in (1, 2):
            dispatch.set_num_threads(threads)
            got = dispatch.from_numpy(x).sum(0).numpy()
            np.testing.assert_array_equal(got.view(np.uint8), want, err_msg=f"{threads} threads")
    finally:
        dispatch.set_num_threads(old)


@pytest.mark.parametrize("n", [1, 7, 64, 65, 1023, 1024, 1025, 3000, 70_000])
def test_float16_sum_is_the_float32_copys_sum_rounded_once(n):
    """A contiguous float16 sum over its trailing dims widens each leaf as it
    sums (no float32 copy): the bits must be those of the float32 copy's
    sum rounded to float16, as every other layout computes it."""
    rng = np.random.default_rng(n)
    # small values and large ones that cancel in pairs: the float32 partial
    # sums round, so the order of the additions shows in the float16 result
    x = rng.uniform(0, 0.01, n).astype(np.float16)
    big = rng.permutation(n)[: 2 * (n // 16)]
    x[big[::2]], x[big[1::2]] = 30000, -30000
    h, f = dispatch.from_numpy(x), dispatch.from_numpy(x.astype(np.float32))
    assert h.sum().dtype == dispatch.float16
    assert bits16(h.sum()) == bits16(f.sum().to(dispatch.float16))
    strided = dispatch.from_numpy(np.stack([x, x], 1))[:, 0]  # the general path: a copy
    assert bits16(strided.sum()) == bits16(h.sum())
    assert bits16(h.mean()) == bits16(f.mean().to(dispatch.float16))
    assert bits16(strided.mean()) == bits16(h.mean())
    if n % 5 == 0:  # rows of a matrix and of a 3-D tensor, keepdim
        m = x.reshape(5, -1)
        got = dispatch.from_numpy(m).sum(1)
        want = dispatch.from_numpy(m.astype(np.float32)).sum(1).to(dispatch.float16)
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.numpy().view(np.uint16))
        c = dispatch.from_numpy(x.reshape(5, 1, -1))
        assert c.sum((1, 2), keepdim=True).shape == (5, 1, 1)
        np.testing.assert_array_equal(c.sum((1, 2)).numpy().view(np.uint16),
                                      want.numpy().view(np.uint16))
    for special in (np.nan, np.inf, -np.inf):  # NaN and infinities anywhere
        y = x.copy()
        y[rng.integers(n)] = special
        assert bits16(dispatch.from_numpy(y).sum()) == \
            bits16(dispatch.from_numpy(y.astype(np.float32)).sum().to(dispatch.float16))


@pytest.mark.parametrize("rows,cols", [(2, 3), (17, 8), (33, 100), (300, 1031), (1000, 2500)])
def test_float16_column_reductions_are_the_float32_copys_rounded_once(rows, cols):
    """sum/mean/amax/amin over the leading dims of a contiguous float16
    tensor read the halves in the float32 column kernel's order and tree:
    the bits of the same reduction of a float32 copy, rounded once; NaN
    propagates; a 3-D tensor over its first two dims, keepdim."""
    rng = np.random.default_rng(rows * cols)
    x = rng.uniform(0, 0.01, (rows, cols)).astype(np.float16)  # cancelling pairs: order shows
    big = rng.permutation(x.size)[: 2 * (x.size // 16)]
    x.flat[big[::2]], x.flat[big[1::2]] = 30000, -30000
    x[rng.integers(rows), rng.integers(cols)] = np.nan
    h, f = dispatch.from_numpy(x), dispatch.from_numpy(x.astype(np.float32))
    for op in ("sum", "mean", "amax", "amin"):
        got = getattr(dispatch, op)(h, 0)
        want = getattr(dispatch, op)(f, 0).to(dispatch.float16)
        assert got.dtype == dispatch.float16 and got.shape == (cols,)
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.numpy().view(np.uint16),
                                      err_msg=op)
    if rows % 2 == 0 or rows % 3 == 0:
        k = 2 if rows % 2 == 0 else 3
        c = dispatch.from_numpy(x.reshape(k, rows // k, cols))
        cf = dispatch.from_numpy(x.astype(np.float32).reshape(k, rows // k, cols))
        got = dispatch.sum(c, (0, 1), keepdim=True)
        assert got.shape == (1, 1, cols)
        np.testing.assert_array_equal(
            got.numpy().view(np.uint16),
            dispatch.sum(cf, (0, 1), keepdim=True).to(dispatch.float16).numpy().view(np.uint16))


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 1000, 4097, 1 << 17])
def test_float16_max_min_are_exact_elements_and_the_first_zero(n):
    """max/min (and amax/amin over the trailing dims) of contiguous float16
    compare the halves as integers (Note [float16 max and min as integers]):
    the result is the extreme element's own bits, every half's order kept
    (subnormals, the largest finite, the infinities), and of the two zeros
    the first one (Note [Which zero, which NaN]; it was +0 for max and -0
    for min); a NaN anywhere (a 64-lane block, the tail, one row of many)
    gives NaN."""
    rng = np.random.default_rng(n)
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    bits[(bits & 0x7C00) == 0x7C00] &= 0xFC00  # NaN patterns become infinities
    x = bits.view(np.float16)
    h = dispatch.from_numpy(x)
    for op, want in (("amax", x.max()), ("amin", x.min())):
        got = bits16(getattr(dispatch, op)(h))
        if want == 0:
            assert got == int(bits[np.flatnonzero(x == 0)[0]]), (op, hex(got))  # the first zero
        else:
            assert got == int(np.array(want, np.float16).view(np.uint16)), (op, hex(got))
    zeros = np.array([0.0, -0.0] * max(1, n // 2), np.float16)
    z = dispatch.from_numpy(zeros)
    assert bits16(z.max()) == 0x0000 and bits16(z.min()) == 0x0000
    assert bits16(dispatch.from_numpy(-zeros).max()) == 0x8000
    if n % 8 == 0:
        rows = x.reshape(8, n // 8)
        r = dispatch.from_numpy(rows)
        np.testing.assert_array_equal(dispatch.amax(r, 1).numpy(), rows.max(1))
        np.testing.assert_array_equal(dispatch.amin(r, -1, keepdim=True).numpy(),
                                      rows.min(1, keepdims=True))
        values, idx = dispatch.max(r, 1)
        np.testing.assert_array_equal(idx.numpy(), rows.argmax(1))
    for where in {0, n // 2, n - 1}:
        y = x.copy()
        y[where] = np.nan
        assert math.isnan(dispatch.from_numpy(y).max().item())
        assert math.isnan(dispatch.from_numpy(y).min().item())
        if n % 8 == 0:
            got = dispatch.amax(dispatch.from_numpy(y.reshape(8, n // 8)), 1).numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(y.reshape(8, n // 8)).any(1))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool"])
def test_integer_reductions_split_across_threads_match_numpy(threads, dtype):
    """Note [Threaded integer reductions]: a full reduce cut into parts, the
    rows of sum(dim=1) and the columns of sum(dim=0) shared out, or, for
    short rows, the rows of sum(dim=0) cut into parts with a row of
    accumulators each; every thread count gives NumPy's answer (sums wrap
    in int64), sizes on both sides of the grain, odd part boundaries, the
    extremes in the last part."""
    rng = np.random.default_rng(len(dtype))
    info = np.iinfo(dtype) if dtype != "bool" else None
    for shape in [(70001,), (3, 65537), (1000, 131), (131, 1000), (2, 40000), (40000, 2),
                  (4097, 37), (7, 9363)]:
        if dtype == "bool":
            x = rng.integers(0, 2, shape).astype(bool)
        else:
            x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
            x.flat[-1], x.flat[-2] = info.max, info.min
        t = dispatch.from_numpy(x)
        for n in (1, 2, 3, 8):
            threads(n)
            for dim in [None] + list(range(x.ndim)):
                kw = {} if dim is None else {"dim": dim}
                got = t.sum(**kw).numpy()
                want = x.sum(axis=dim, dtype=np.int64)
                np.testing.assert_array_equal(got, want, err_msg=f"{shape} sum {dim} {n}")
                for op in ("amax", "amin"):
                    got = getattr(dispatch, op)(t, *([] if dim is None else [dim])).numpy()
                    want = getattr(np, op)(x, axis=dim)
                    assert got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want, err_msg=f"{shape} {op} {dim} {n}")


@pytest.mark.parametrize("dtype", INTS + ["bool", "float32"])
def test_sums_over_empty_dims_of_three_dim_tensors_are_zeros(threads, dtype):
    """An integer or bool sum of a tensor with a zero-size dim walked an
    empty plan of three or more dims and divided by its zero size (SIGFPE,
    the process killed; found by fuzzing). The reduced shape's zeros, as
    NumPy and torch give; dtype= with an integer accumulator too."""
    for shape, dim in [((2, 0, 3), 1), ((2, 0, 0), None), ((0, 0, 0), None),
                       ((2, 0, 3), (0, 1)), ((0, 4, 5), 0), ((3, 4, 0), (0, 1))]:
        x = np.zeros(shape, dtype)
        t = dispatch.from_numpy(x)
        got = t.sum() if dim is None else t.sum(dim=dim)
        want = x.sum(axis=dim, dtype=np.int64 if dtype != "float32" else None)
        assert got.shape == want.shape and got.numpy().dtype == want.dtype, (shape, dim)
        np.testing.assert_array_equal(got.numpy(), want)
        assert dispatch.from_numpy(x).sum(dtype=dispatch.int32).item() == 0
        for th in (1, 2):
            threads(th)
            np.testing.assert_array_equal(
                (t.sum() if dim is None else t.sum(dim=dim)).numpy(), want)


def test_float16_reductions_are_the_same_bits_at_any_thread_count(threads):
    """The float16 loops use the threads (Note [Threaded integer reductions]'s
    float16 neighbours in sources/iterator/reduce_half.c): rows shared out, one long row's sum
    split along its own tree, its max/min cut into parts, columns shared
    out. Every thread count gives the 1-thread bits, which are the float32
    copy's rounded once; NaN still propagates from any part."""
    rng = np.random.default_rng(16)
    x = rng.uniform(-0.01, 0.01, 300_007).astype(np.float16)  # a small total: order shows
    big = rng.permutation(x.size)[:8000]  # cancelling pairs far apart: the tree shows
    x[big[:4000]], x[big[4000:]] = 30000, -30000
    m = x[: 256 * 1024].reshape(256, 1024)
    wide = x[: 96 * 3000].reshape(96, 3000)
    h, hm, hw = (dispatch.from_numpy(a) for a in (x, m, wide))
    cases = {
        "sum": lambda: h.sum(), "mean": lambda: h.mean(), "amax": lambda: dispatch.amax(h),
        "amin": lambda: dispatch.amin(h), "sum1": lambda: hm.sum(1), "amax1": lambda: dispatch.amax(hm, 1),
        "sum0": lambda: hw.sum(0), "mean0": lambda: hw.mean(0), "amin0": lambda: dispatch.amin(hw, 0),
    }
    threads(1)
    want = {k: f().numpy().view(np.uint16).copy() for k, f in cases.items()}
    f32 = dispatch.from_numpy(x.astype(np.float32))
    assert want["sum"] == np.array(f32.sum().item(), np.float16).view(np.uint16)
    for n in (2, 3, 8):
        threads(n)
        for k, f in cases.items():
            np.testing.assert_array_equal(f().numpy().view(np.uint16), want[k], err_msg=f"{k} {n}")
    for where in (0, x.size // 2, x.size - 1):
        y = x.copy()
        y[where] = np.nan
        hy = dispatch.from_numpy(y)
        for n in (1, 2, 3):
            threads(n)
            assert math.isnan(dispatch.amax(hy).item()) and math.isnan(dispatch.amin(hy).item())
            assert math.isnan(hy.sum().item())


def bits16(t) -> int:
    return int(np.asarray(t.numpy()).astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_integer_reductions_of_matrices_over_rows_and_columns(dtype):
    """Whole matrices in one kernel call (rows folded, or column blocks of
    128 bytes held down leaves of 32 rows): row counts around the leaf,
    column counts around the blocks, rows further apart than their length
    (a slice of a wider matrix), transposed, and a 3-D reduce over the
    middle dim; the extremes at random places, sums that wrap."""
    rng = np.random.default_rng(len(dtype) * 131 + ord(dtype[-1]))
    for rows, cols in [(1, 129), (31, 16), (32, 17), (33, 128), (97, 300), (64, 1), (5, 1031)]:
        if dtype == "bool":
            x = rng.integers(0, 2, (rows, cols + 3)).astype(bool)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, (rows, cols + 3), dtype=dtype, endpoint=True)
            x[rng.integers(rows), rng.integers(cols)] = info.max
            x[rng.integers(rows), rng.integers(cols)] = info.min
        views = {"contiguous": (x[:, :cols].copy(), dispatch.from_numpy(x[:, :cols].copy())),
                 "rows apart": (x[:, :cols], dispatch.from_numpy(x)[:, :cols]),
                 "transposed": (x[:, :cols].T, dispatch.from_numpy(x[:, :cols].copy()).permute(1, 0))}
        for name, (v, t) in views.items():
            for dim in (0, 1):
                with np.errstate(over="ignore"):
                    want = np.sum(v, axis=dim, dtype=np.int64)
                np.testing.assert_array_equal(t.sum(dim).numpy(), want,
                                              err_msg=f"sum {rows}x{cols} {name} {dim}")
                np.testing.assert_array_equal(dispatch.amax(t, dim=dim).numpy(), v.max(axis=dim),
                                              err_msg=f"max {rows}x{cols} {name} {dim}")
                np.testing.assert_array_equal(dispatch.amin(t, dim=dim).numpy(), v.min(axis=dim),
                                              err_msg=f"min {rows}x{cols} {name} {dim}")
        cube = x[:, :cols].reshape(rows, 1, cols) if cols % 3 else x[:, :cols].reshape(rows, 3, -1)
        t = dispatch.from_numpy(cube.copy())
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(t.sum(1).numpy(), np.sum(cube, axis=1, dtype=np.int64))
        np.testing.assert_array_equal(dispatch.amax(t, dim=1).numpy(), cube.max(axis=1))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "bool"])
def test_narrow_integer_sums_at_the_extremes_across_int32_blocks(dtype):
    """8 and 16-bit sums go through int32 lanes in blocks of 2**16 elements
    (leaves of 32 rows for columns): long runs of the most negative or the
    largest values, enough that int32 lanes holding more than a block's
    share would overflow (2**22 int16 of -2**15 is -2**37)."""
    n = 2**22 + 7
    for v in ((0, 1) if dtype == "bool" else (np.iinfo(dtype).min, np.iinfo(dtype).max)):
        x = np.full(n, v, dtype=dtype)
        t = dispatch.from_numpy(x)
        assert t.sum().item() == int(v) * n
        m = dispatch.from_numpy(np.full((n // 64, 64), v, dtype=dtype))
        assert m.sum(0).tolist() == [int(v) * (n // 64)] * 64
        assert m.sum(1).tolist() == [int(v) * 64] * (n // 64)


def test_int64_sum_wraps_like_numpy_and_a_broadcast_input_reduces_in_place():
    x = np.full(1000, 2**62, dtype=np.int64)
    with np.errstate(over="ignore"):
        assert dispatch.from_numpy(x).sum().item() == int(np.sum(x))
    t = dispatch.from_numpy(np.arange(5, dtype=np.int8)).expand(100_000, 5)  # stride 0
    assert t.sum(0).tolist() == [0, 100_000, 200_000, 300_000, 400_000]
    assert t.sum().item() == 1_000_000 and dispatch.amax(t).item() == 4


def _row_sums_alone(a: np.ndarray, mean: bool) -> bytes:
    """Each row's sum (or mean) as a full reduction of that row by itself:
    one row, one stream (Note [Two streams] in sources/kernels/sum.dispatch.c)."""
    rows = [dispatch.from_numpy(np.ascontiguousarray(r)) for r in a]
    return b"".join((r.mean() if mean else r.sum()).numpy().tobytes() for r in rows)


@pytest.mark.parametrize("dtype", FLOATS + ["float16"])
@pytest.mark.parametrize("shape", [(101, 512), (64, 1024), (33, 1500), (40, 77), (2, 4096)])
@pytest.mark.parametrize("mean", [False, True])
def test_row_sums_read_two_rows_at_a_time_keep_each_rows_own_bits(threads, dtype, shape, mean):
    """sum(dim=1) reads row r beside row r + nrows/2 when they are far apart;
    every row must still get the bits of its own sum, at 1 and 2 threads."""
    a = np.random.default_rng(11).standard_normal(shape).astype(dtype)
    a[:, 3] *= 1e4 if dtype != "float16" else 1e2  # cancellation shows any change of order
    t = dispatch.from_numpy(a)
    want = _row_sums_alone(a, mean)
    for n in (1, 2):
        threads(n)
        got = t.mean(dim=1) if mean else t.sum(dim=1)
        assert got.numpy().tobytes() == want, n


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("where", ["none", "first_half", "second_half", "last", "infs"])
def test_max_min_read_as_two_streams_find_every_extreme_and_nan(dtype, where):
    """A long max/min reads its two halves at once, and max/min over rows read
    row r beside row r + nrows/2 (Note [Two streams]); the extreme or the NaN
    may sit in either stream or in the odd last element."""
    flat = np.random.default_rng(5).standard_normal(100_003).astype(dtype)
    rows = np.random.default_rng(6).standard_normal((65, 1000)).astype(dtype)
    for a, at in ((flat, [(10,), (60_000,), (100_002,)]), (rows, [(3, 10), (40, 999), (64, 999)])):
        a = a.copy()
        if where == "first_half":
            a[at[0]] = np.nan
        elif where == "second_half":
            a[at[1]] = np.nan
        elif where == "last":  # the odd element / row no pair reads
            a[at[2]] = 1e30
            a[at[2][:-1] + (0,)] = -1e30
        elif where == "infs":  # a sum of inf and -inf is NaN: the exact pass, no NaN
            a[at[0]], a[at[1]] = np.inf, -np.inf
        t = dispatch.from_numpy(a)
        assert _same(t.max(), a.max()) and _same(t.min(), a.min())
        if a.ndim == 2:
            assert _same(dispatch.amax(t, 1), a.max(1)) and _same(dispatch.amin(t, 1), a.min(1))


@pytest.mark.parametrize("dtype,rows", [("float32", 8195), ("float64", 4099), ("float16", 16389)])
def test_column_reductions_past_the_caches_keep_their_bits(threads, dtype, rows):
    """An outer-dim reduction over 16 MiB or more reads whole rows, two
    ranges of rows at once (Note [Column streams]): sum and mean keep the
    documented tree's bits (a float16 input: its float32 copy's, rounded
    once), max/min the first NaN and the first zero, at 1 and 2 threads."""
    rng = np.random.default_rng(rows)
    x = rng.uniform(0, 0.01, (rows, 520)) * np.where(rng.random((rows, 520)) < 0.1, 300, 1)
    x = (x * np.where(rng.random((rows, 520)) < 0.5, -1, 1)).astype(dtype)
    assert x.nbytes >= 16 << 20
    x[:, 7] = 0.0
    x[rows // 3, 7], x[rows - 1, 7] = -0.0, 0.0  # the first zero of column 7 is +0.0
    x[:, 8] = -0.0
    x[rows // 2 + 5, 8] = 0.0  # in the second stream: max is still -0.0, the first zero
    x[rows - 2, 9] = np.nan  # a NaN late in the second half
    x[3, 10], x[rows // 2 + 1, 10] = np.nan, -np.nan
    wide = x.astype(np.float32) if dtype == "float16" else x
    want_sum = _column_tree(wide).astype(dtype)
    t = dispatch.from_numpy(x)
    for n in (1, 2):
        threads(n)
        assert_same_bits(t.sum(0).numpy(), want_sum)
        if dtype != "float16":
            assert_same_bits(t.mean(0).numpy(), (_column_tree(x) / x.dtype.type(rows)).astype(dtype))
        for op in ("amax", "amin"):
            got = getattr(dispatch, op)(t, 0).numpy()
            want = getattr(np, op)(x, axis=0)
            assert_same_bits(got, want)
            assert np.signbit(got[7]) == False and np.signbit(got[8]) == True, op


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_products_past_the_caches_keep_their_bits(threads, dtype):
    """prod(dim=0) over 16 MiB or more reads whole rows, its rows cut along
    the fold's own split for the threads, the float64 parts multiplied
    (Note [Product columns from whole rows]): each column's bits are those
    of its own product (the same order, Note [Product order], rounded once),
    a NaN's and a zero's sign included, at 1 and 2 threads, with more
    columns than one 512-column pass."""
    rows = 3 * 4096 + 77 if dtype == "float64" else 6 * 4096 + 77
    rng = np.random.default_rng(44)
    x = 1.0 + rng.uniform(-1, 1, (rows, 540)) * 2.0**-9
    x = (x * np.where(rng.random((rows, 540)) < 0.5, -1, 1)).astype(dtype)
    assert x.nbytes >= 16 << 20
    x[rows - 2, 3] = np.nan
    x[5, 4], x[rows // 2, 4] = -0.0, np.inf  # inf * 0: NaN
    x[4096 * 2 + 1, 520] = -0.0
    t = dispatch.from_numpy(x)
    want = np.array([dispatch.from_numpy(np.ascontiguousarray(x[:, c])).prod().item()
                     for c in range(x.shape[1])], dtype)
    for n in (1, 2):
        threads(n)
        assert_same_bits(t.prod(0).numpy(), want)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32"])
def test_integer_column_extremes_past_the_caches(threads, dtype):
    """amax/amin(dim=0) over 16 MiB or more of 1- and 2-byte columns fold
    the two halves of the rows apart and join them (Note [Integer column
    streams]), 4-byte columns past 32 MiB a row at a time (Note [Wide
    integer rows]); the extreme may sit in either half, in a column past the
    first 4 KB of a row, at 1 and 2 threads; sum and prod (wrapping int64)
    alike."""
    size = (32 << 20) if dtype == "int32" else (16 << 20)  # int32: INT_ONE_ROW_MIN
    rows = size // (2100 * np.dtype(dtype).itemsize) + 3
    rng = np.random.default_rng(rows)
    if dtype == "bool":
        x = rng.random((rows, 2100)) < 0.5
        x[:, 5], x[:, 2099] = False, True
        x[rows - 1, 5], x[rows // 3, 2099] = True, False  # decided in one half only
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min // 2, info.max // 2, (rows, 2100), endpoint=True).astype(dtype)
        x[rows - 1, 5], x[3, 6] = info.max, info.min  # the second half's last row, the first's
        x[rows // 2 + 1, 2099], x[rows // 2 - 1, 2098] = info.min, info.max
    assert x.nbytes >= 16 << 20
    t = dispatch.from_numpy(x)
    for n in (1, 2):
        threads(n)
        for op in ("amax", "amin"):
            np.testing.assert_array_equal(getattr(dispatch, op)(t, 0).numpy(),
                                          getattr(np, op)(x, axis=0), err_msg=f"{op} {n}")
        np.testing.assert_array_equal(t.sum(0).numpy(), x.sum(0, dtype=np.int64))
        np.testing.assert_array_equal(t.prod(0).numpy(), x.prod(0, dtype=np.int64))


def _same(got, want) -> bool:
    return same_bits(got, np.asarray(want))  # NumPy's NaN, its bits too


@pytest.mark.parametrize("n", [1, 4095, 4096, 4097, 3 * 4096 + 5, 100_000])
def test_bool_max_min_settle_at_the_first_deciding_element(threads, n):
    """Note [Bool extremes stop early]: max of bool is True at its first
    True and min False at its first False, wherever that element sits
    (block edges of 4096 among them), whole, by rows and at 1-3 threads."""
    for nthreads in (1, 2, 3):
        threads(nthreads)
        for at in sorted({0, n // 2, max(0, n - 1), min(n - 1, 4095), min(n - 1, 4096)}):
            for fill, odd in ((False, True), (True, False)):
                x = np.full(n, fill)
                x[at] = odd
                t = dispatch.from_numpy(x)
                for op in ("amax", "amin", "max", "min"):
                    assert bool(getattr(dispatch, op)(t)) == bool(getattr(np, op)(x)), (op, n, at)
                rows = np.stack([x, np.full(n, fill)])
                tr = dispatch.from_numpy(rows)
                for op in ("amax", "amin"):
                    got = getattr(dispatch, op)(tr, 1).numpy()
                    assert got.tolist() == getattr(np, op)(rows, axis=1).tolist(), (op, n, at)
