"""The pool's workers stay off the CPU their caller runs on while the call's
threads fit the CPUs, and get the caller's whole mask back when they do not
(Note [Workers kept off the caller's CPU] in sources/iterator/parallel.c).
Run in a fresh process, so the pool's threads are the ones it starts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and at least two CPUs this process may use")

CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import dispatch

    def caller_cpu():  # field 39 of the calling thread's stat: the CPU it last ran on
        return int(open("/proc/thread-self/stat").read().rsplit(")", 1)[1].split()[36])

    allowed = os.sched_getaffinity(0)
    before = set(os.listdir("/proc/self/task"))
    x = dispatch.from_numpy(np.ones(1 << 20))
    dispatch.set_num_threads(2)
    (x + x).numpy()
    workers = [int(t) for t in set(os.listdir("/proc/self/task")) - before]
    assert workers, "the pool started no worker"

    def masks_after_a_call():
        time.sleep(0.003)  # the masks are set at most once a millisecond
        x + x
        return caller_cpu(), [os.sched_getaffinity(t) for t in workers]

    # the caller may move between its call and the look: one of a few tries
    kept_off = False
    for _ in range(20):
        cpu, masks = masks_after_a_call()
        if all(m == allowed - {cpu} for m in masks):
            kept_off = True
            break
    dispatch.set_num_threads(len(allowed) + 1)  # more threads than CPUs
    cpu, masks = masks_after_a_call()
    whole = all(m == allowed for m in masks)
    print(kept_off, whole)
""")


def test_workers_are_kept_off_the_callers_cpu_while_the_threads_fit(tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("DISPATCH_NUM_THREADS", None)
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)  # not the source tree's dispatch/
    assert r.returncode == 0, r.stderr
    kept_off, whole = r.stdout.split()
    assert kept_off == "True", "no worker's mask left out the caller's CPU"
    assert whole == "True", "with more threads than CPUs the workers kept a narrowed mask"
