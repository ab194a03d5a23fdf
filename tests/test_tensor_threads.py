"""Tensor operators run on the elementwise engine: dispatch.set_num_threads()
splits them across threads above the grain size, and results are the same
bits for any thread count (elementwise ops and reductions alike)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import threading

import numpy as np
import pytest

import dispatch

N = 3 * 32768 + 17  # above the grain (32768), with a ragged tail


def _run_all(a, b, c):
    t = [dispatch.from_numpy(v) for v in (a, b, c)]
    return [
        (t[0] + t[1]).numpy(), (t[0] * t[1]).numpy(), dispatch.ops.exp(t[0]).numpy(),
        dispatch.ops.addcmul(t[0], t[1], t[2], value=0.5).numpy(),
        t[0].sum().numpy(), t[0][: 3 * 32768].reshape(3, -1).sum(1).numpy(),
        t[0].mean().numpy(), t[0].max().numpy(),
        (t[0] < t[1]).numpy(),
    ]


# 2 and 3 fit most machines; four per CPU is more threads than CPUs, the
# pool's short-spin path (Note [Short spin] in sources/iterator/parallel.c)
@pytest.mark.parametrize("count", [2, 3, 4 * (os.cpu_count() or 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(threads, dtype, count):
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(N).astype(dtype) for _ in range(3))
    threads(1)
    one = _run_all(a, b, c)
    threads(count)
    assert dispatch.get_num_threads() == count
    many = _run_all(a, b, c)
    for x, y in zip(one, many):
        assert x.tobytes() == y.tobytes()


def test_python_threads_calling_at_once_get_their_own_results(threads):
    """Calls from several Python threads at once: one runs on the pool, the
    others on their own thread (Note [Thread pool]); every result is right."""
    threads(2)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(N).astype(np.float32) for _ in range(4)]
    expected = [_run_all(x, x[::-1].copy(), x * 2) for x in inputs]
    errors: list[str] = []

    def work(k: int) -> None:
        x = inputs[k]
        for _ in range(20):
            got = _run_all(x, x[::-1].copy(), x * 2)
            if any(g.tobytes() != e.tobytes() for g, e in zip(got, expected[k])):
                errors.append(f"thread {k} got other bits")
                return

    pool = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert errors == []


def test_thread_count_is_validated():
    with pytest.raises(ValueError, match="0"):
        dispatch.set_num_threads(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tensor_sum_is_pairwise_accurate(dtype):
    """The float sum of a tensor is the SIMD pairwise sum: its error grows
    like log2(n) ulps, where a naive running sum in the same precision
    drifts like n."""
    x = np.random.default_rng(2).uniform(0, 1, 1 << 20).astype(dtype)
    got = float(dispatch.from_numpy(x).sum().numpy())
    exact = float(np.sum(x.astype(np.longdouble)))
    eps = np.finfo(dtype).eps
    assert abs(got - exact) <= 20 * np.log2(x.size) * eps * exact


# Note [Following the affinity mask] in sources/iterator/parallel.c. In a child
# process: workers started while it is pinned keep the pin for good. The
# pause before each call is the pool's documented recount interval (1 ms),
# not a measurement: nothing here is timed.
_FOLLOW_MASK = textwrap.dedent("""
    import os, time
    import numpy as np
    import dispatch
    from dispatch._core import lib
    x = np.arange(1 << 20, dtype=np.float32)
    a = dispatch.from_numpy(x)
    want = (x + x).tobytes()

    def call():
        time.sleep(0.01)
        assert (a + a).numpy().tobytes() == want

    every = sorted(os.sched_getaffinity(0))
    dispatch.set_num_threads(2)
    call()  # the pool's first use: the workers start, the CPUs are counted
    assert lib.dispatch_pool_usable_cpus() == len(every)
    assert lib.dispatch_pool_worker_spin_ns() == 1000000  # 2 threads fit: the long spin
    os.sched_setaffinity(0, {every[0]})
    call()
    assert lib.dispatch_pool_usable_cpus() == 1
    assert lib.dispatch_pool_worker_spin_ns() == 0  # more threads than CPUs: no spin
    os.sched_setaffinity(0, set(every))
    call()
    assert lib.dispatch_pool_usable_cpus() == len(every)
    assert lib.dispatch_pool_worker_spin_ns() == 1000000
    print("followed")
""")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs sched_setaffinity and at least 2 CPUs")
def test_pool_follows_the_affinity_mask_after_first_use():
    """A process pinned to one CPU after the pool's first use: the pool
    counts one CPU and its workers stop spinning (2 threads on one CPU ran
    at 4.2-4.6x the 1-thread time when the count was taken once); unpinned,
    the long spin comes back. Results keep their bits throughout."""
    env = {k: v for k, v in os.environ.items() if k != "DISPATCH_NUM_THREADS"}
    # cwd outside the checkout: `python -c` puts cwd first on sys.path
    proc = subprocess.run([sys.executable, "-c", _FOLLOW_MASK], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "followed"


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "float32"])
def test_indices_of_max_and_min_are_the_first_on_any_thread_count(threads, dtype):
    """max(dim)/min(dim)/argmax/argmin search each output's first equal element
    on the pool's threads (sources/iterator/reduce_indices.c): few distinct
    values, so every row has many ties, and NumPy's first index is the answer."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2 if dtype == "bool" else 4, (600, 700)).astype(dtype)
    t = dispatch.from_numpy(a)
    for n in (1, 2, 3):
        threads(n)
        for d in (0, 1):
            for view, arr in ((t, a), (t[:, ::3], a[:, ::3]), (t.T, a.T)):
                values, idx = dispatch.ops.max(view, d)
                assert idx.numpy().tolist() == np.argmax(arr, axis=d).tolist(), (n, d)
                assert values.numpy().tolist() == np.max(arr, axis=d).tolist(), (n, d)
                if dtype != "bool":  # torch's argmin refuses bool, so does ours
                    got = dispatch.ops.argmin(view, d).numpy().tolist()
                    assert got == np.argmin(arr, axis=d).tolist(), (n, d)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_searches_keep_the_first_nan_and_the_first_zero(threads, dtype):
    """max(dim=0) searches its columns together (Note [Column searches] in
    sources/iterator/reduce_indices.c): the first NaN of a column, else its
    first element equal to the max, whose sign a tie of -0.0 and 0.0 keeps."""
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 3, (300, 200)).astype(dtype)
    a[:, 5] = -1.0
    a[17, 5], a[40, 5], a[41, 5] = -0.0, 0.0, -0.0  # max 0: the first zero's sign
    a[250, 7] = a[260, 7] = np.nan
    a[0, 8] = np.nan
    a[299, 199] = np.nan
    want_idx = [int(np.argmax(np.isnan(a[:, c]))) if np.isnan(a[:, c]).any()
                else int(np.argmax(a[:, c] == a[:, c].max())) for c in range(a.shape[1])]
    want_vals = a[want_idx, np.arange(a.shape[1])]
    for n in (1, 2, 3):
        threads(n)
        values, idx = dispatch.ops.max(dispatch.from_numpy(a), 0)
        assert idx.numpy().tolist() == want_idx, n
        assert values.numpy().tobytes() == want_vals.tobytes(), n
        assert dispatch.ops.argmax(dispatch.from_numpy(a), 0).numpy().tolist() == want_idx
