"""Issue 35 ("Hostile input"), items 1 and 2, and their kin.

1. Locks that Python code re-enters. A signal handler runs between any two
   bytecodes; a __del__ or weakref callback runs wherever a reference drops
   (and the cyclic GC on any allocation). Code that holds a plain Lock while
   either can happen, and that the code run there takes again, deadlocks:
   from_numpy's owner table (its release callback dropped the NumPy array,
   with its __del__s, under the lock), dispatch.cuda's first-use
   initialization and library.impl's kernel list.
2. Objects whose Python attributes lie. from_numpy read shape, strides,
   __array_interface__ and flags.writeable as attributes an ndarray subclass
   overrides (a tensor of 2**28 elements over 16 floats: SIGSEGV; a "writeable"
   view of an immutable bytes object: fill_ wrote into it), and
   tensor() of a list subclass whose __len__ lies sized the tensor by the lie
   and wrote every real item into it (a heap overflow).

Every reproducer runs in a child interpreter with a timeout: a deadlock or
a crash fails its test instead of hanging or killing pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import dispatch as d


def run_child(code: str, *args: str, timeout: float = 60) -> str:
    """stdout of code run by a fresh interpreter; a hang (deadlock) or a crash fails."""
    try:
        # an empty cwd keeps the checkout's source dispatch/ off the child's sys.path
        r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code),
                            *args], capture_output=True, text=True, timeout=timeout,
                           cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child did not finish in {timeout} s (a deadlock?)\nstdout: "
                    f"{e.stdout!r}\nstderr: {e.stderr!r}")
    assert r.returncode == 0, (f"the child exited with {r.returncode} (a crash when "
                               f"negative)\nstdout: {r.stdout}\nstderr: {r.stderr}")
    return r.stdout


# 1. Re-entered locks ---------------------------------------------------------------------

def test_del_run_by_the_release_callback_may_drop_another_numpy_tensor():
    """The issue's reproducer: dropping t drops b, whose owner's __del__ drops k."""
    out = run_child("""
        import numpy as np, dispatch as d
        class A(np.ndarray): pass
        class O:
            def __del__(s):
                global k; k = None
        k = d.from_numpy(np.ones(4, np.float32))
        b = np.ones(4, np.float32).view(A); b.owner = O()
        t = d.from_numpy(b); del b; del t
        assert k is None
        print("ok", d._interop._owners == {})
    """, timeout=30)
    assert out.split() == ["ok", "True"]


def test_del_run_by_the_release_callback_may_call_from_numpy():
    out = run_child("""
        import numpy as np, dispatch as d
        made = []
        class A(np.ndarray): pass
        class O:
            def __del__(s):
                made.append(d.from_numpy(np.arange(3, dtype=np.float32)))
        b = np.ones(4, np.float32).view(A); b.owner = O()
        t = d.from_numpy(b); del b; del t
        print(made[0].tolist(), len(d._interop._owners))
    """, timeout=30)
    assert out.split("]")[0] + "]" == "[0.0, 1.0, 2.0]" and out.split()[-1] == "1"


def test_a_signal_handler_calling_from_numpy_never_deadlocks():
    """The issue's second reproducer: SIGALRM every 200 us whose handler makes a
    tensor from NumPy, while the main loop makes and drops them."""
    out = run_child("""
        import signal, time, numpy as np, dispatch as d
        buf = np.arange(8, dtype=np.float32)
        hits = [0]
        def handler(signum, frame):
            t = d.from_numpy(buf)
            hits[0] += 1
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
        end = time.monotonic() + 1.5
        n = 0
        while time.monotonic() < end:
            t = d.from_numpy(buf); del t
            n += 1
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        print(n, hits[0], len(d._interop._owners))
    """, timeout=40)
    n, hits, owners = map(int, out.split())
    assert n > 100 and hits > 100 and owners == 0


_TRACE_EVERYWHERE = """
    import sys, numpy as np, dispatch as d
    buf = np.arange(8, dtype=np.float32)
    nested = [0]
    def local(frame, event, arg):
        if event == "line":  # as a signal handler would, at every line of the table code
            x = d.from_numpy(buf)
            assert x.tolist() == list(range(8))
            del x
            nested[0] += 1
        return local
    def tracer(frame, event, arg):
        if frame.f_code.co_filename.endswith("_interop.py") and frame.f_code.co_name in (
                "from_numpy", "dispatch_py_release_owner"):
            return local
        return None
    live = d.live_storages()
    sys.settrace(tracer)
    for _ in range(3):
        t = d.from_numpy(buf); del t
    sys.settrace(None)
    print(nested[0], len(d._interop._owners), d.live_storages() - live)
"""


def test_python_code_run_at_any_line_of_the_owner_table_may_use_it():
    """Deterministic: a trace function that makes and drops a tensor at every line of
    from_numpy and of the release callback (where a signal handler could run)."""
    nested, owners, leaked = map(int, run_child(_TRACE_EVERYWHERE, timeout=30).split())
    assert nested > 20 and owners == 0 and leaked == 0
