"""copy_, fill_, clone, contiguous and to run on the pool's threads too
(Note [Copies across threads] in sources/dispatcher/host_copy.c): above the
grain a second thread does part of the work, and the bits are those of one
thread."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import dispatch

N = 5 * 32768 + 29  # above the grain, with a ragged tail


def _copies(x):
    """Every host copy a user calls, of one float64 (N,) input."""
    m = x[: 4 * 32768].reshape(256, 512)
    row = x[:512]
    filled = x.clone()
    filled.fill_(2.5)
    into = m.clone()
    into.copy_(row)  # a broadcast row
    return [x.to(dispatch.float16), x.to(dispatch.bfloat16), x.to(dispatch.int32),
            x.to(dispatch.uint8), m.T.contiguous(), m.T.clone(), m[:, ::2].contiguous(),
            filled, into, m.to(dispatch.float32).T.to(dispatch.int16)]


def _host(t):
    """t as a NumPy array; bfloat16 widened to float32 (exact: NumPy has no bfloat16)."""
    return (t.to(dispatch.float32) if t.dtype == dispatch.bfloat16 else t).numpy()


def test_copies_do_not_depend_on_the_thread_count(threads):
    rng = np.random.default_rng(5)
    x = dispatch.from_numpy(rng.standard_normal(N) * 300)
    threads(1)
    one = [_host(t) for t in _copies(x)]
    threads(2)
    many = [_host(t) for t in _copies(x)]
    for a, b in zip(one, many):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    assert one[4].tobytes() == np.ascontiguousarray(x.numpy()[: 4 * 32768]
                                                    .reshape(256, 512).T).tobytes()


# In a fresh process: the pool's worker threads are the ones its first
# parallel call starts; each copy, repeated, must take CPU time on one of
# them (a worker asleep since the last call takes none).
_WORKER_TIME = textwrap.dedent(r"""
    import os, sys, threading, time
    import numpy as np
    import dispatch

    def tasks():
        return set(os.listdir("/proc/self/task"))

    def cpu_ticks(tids):
        total = 0
        for t in tids:
            try:
                with open(f"/proc/self/task/{t}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except FileNotFoundError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime + stime
        return total

    x = dispatch.from_numpy(np.random.default_rng(0).standard_normal(1 << 22))
    m = x.reshape(2048, 2048)
    dst = dispatch.from_numpy(np.zeros((2048, 2048)))
    row = x[:2048]
    before = tasks()
    dispatch.set_num_threads(2)
    (x + x)  # starts the pool
    workers = tasks() - before
    assert workers, "no worker thread started"
    calls = {
        "to": lambda: x.to(dispatch.float16),
        "clone": lambda: m.T.clone(),
        "contiguous": lambda: m[:, ::2].contiguous(),
        "copy_": lambda: dst.copy_(row),
        "fill_": lambda: dst.fill_(1.5),
    }
    for name, call in calls.items():
        time.sleep(0.05)  # the worker stops spinning and sleeps
        t0 = cpu_ticks(workers)
        start = time.perf_counter()
        while time.perf_counter() - start < 0.6:
            call()
        print(name, cpu_ticks(workers) - t0)
""")


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="needs Linux's /proc/self/task and 2 CPUs")
def test_each_copy_runs_on_a_worker_thread_too():
    env = {k: v for k, v in os.environ.items() if k != "DISPATCH_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", _WORKER_TIME], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stderr
    ticks = dict(line.split() for line in proc.stdout.splitlines())
    assert set(ticks) == {"to", "clone", "contiguous", "copy_", "fill_"}
    idle = [name for name, t in ticks.items() if int(t) == 0]
    assert not idle, f"no CPU time on the pool's workers during {idle}: {ticks}"
