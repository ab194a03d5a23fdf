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


def test_cuda_initialization_re_entered_by_its_own_thread_answers_not_deadlocks():
    """Code run inside dispatch.cuda's first-use initialization (here a trace
    function at each of its lines, as a signal handler or a GC-run __del__ would)
    that asks about CUDA is told it is being initialized; the answer is not kept."""
    out = run_child("""
        import linecache, sys, json, dispatch as d
        from dispatch import cuda
        seen = []
        def local(frame, event, arg):  # on the line that loads, under the lock
            if event == "line" and "_load()" in linecache.getline(frame.f_code.co_filename,
                                                                  frame.f_lineno):
                seen.append((cuda.is_available(), cuda.unavailable_reason(), cuda.device_count()))
            return local
        def tracer(frame, event, arg):
            if frame.f_code.co_filename.endswith("cuda.py") and frame.f_code.co_name == "_init":
                return local
            return None
        sys.settrace(tracer)
        first = cuda.unavailable_reason()
        sys.settrace(None)
        print(json.dumps({"seen": seen, "first": first, "again": cuda.unavailable_reason(),
                          "busy": cuda._busy}))
    """, timeout=60)
    r = json.loads(out)
    assert len(r["seen"]) == 1 and "being initialized" in r["seen"][0][1], r
    assert r["seen"][0][0] is False and r["seen"][0][2] == 0, r
    assert "being initialized" not in r["first"] and r["again"] == r["first"] and not r["busy"]
    assert r["first"] == d.cuda.unavailable_reason()


def test_library_impl_re_entered_while_registering_does_not_deadlock():
    """A signal handler (here a trace function) that registers a kernel while
    library.impl adds one to its list."""
    out = run_child("""
        import linecache, sys, dispatch as d
        from dispatch import library
        library.define("hostile_interop_a(Tensor self) -> Tensor")
        library.define("hostile_interop_b(Tensor self) -> Tensor")
        done = []
        def local(frame, event, arg):  # where the kernel list grows (under the lock it had)
            if event == "line" and not done and "_kernels.append" in linecache.getline(
                    frame.f_code.co_filename, frame.f_lineno):
                done.append(1)
                library.impl("hostile_interop_b", "CPU")(lambda self: self * 3)
            return local
        def tracer(frame, event, arg):
            code = frame.f_code
            if code.co_filename.endswith("library.py") and code.co_name == "register":
                return local
            return None
        sys.settrace(tracer)
        library.impl("hostile_interop_a", "CPU")(lambda self: self * 2)
        sys.settrace(None)
        x = d.arange(3)
        print(d.ops.hostile_interop_a(x).tolist(), d.ops.hostile_interop_b(x).tolist())
    """, timeout=30)
    assert out.strip() == "[0, 2, 4] [0, 3, 6]"


# 2. Arrays that lie ---------------------------------------------------------------------

# Each lie is a class attribute of an ndarray subclass; the child applies it to
# np.arange(16, float32) (writable) and to np.frombuffer of a bytes object
# (immutable), then checks every way in.
_LIES = {
    "shape": "property(lambda s: (1 << 28,))",
    "shape_2d": "property(lambda s: (4, 1 << 26))",
    "strides": "property(lambda s: (1 << 24,))",
    "strides_negative": "property(lambda s: (-4,))",
    "ndim": "property(lambda s: 9)",
    "size": "property(lambda s: 1 << 30)",
    "itemsize": "property(lambda s: 1)",
    "nbytes": "property(lambda s: 1 << 30)",
    "dtype": "property(lambda s: np.dtype(np.float64))",
    "flags": "property(lambda s: types.SimpleNamespace(writeable=True, c_contiguous=True, "
             "f_contiguous=True, owndata=True, aligned=True))",
    "__array_interface__": "property(lambda s: {'version': 3, 'shape': (1 << 28,), "
                           "'typestr': '<f8', 'strides': None, 'data': (4096, False)})",
    "__array_struct__": "property(lambda s: np.zeros(1 << 20).__array_struct__)",
    "__array__": "lambda s, *a, **k: np.zeros(1 << 20, np.float64)",
    "ctypes": "property(lambda s: types.SimpleNamespace(data=4096, shape=(1 << 28,), "
              "strides=(8,)))",
    "data": "property(lambda s: memoryview(bytearray(1 << 20)))",
    "base": "property(lambda s: None)",
    "T": "property(lambda s: np.zeros((1 << 20,)))",
    "view": "lambda s, *a, **k: np.zeros(1 << 20)",
    "reshape": "lambda s, *a, **k: np.zeros(1 << 20)",
    "astype": "lambda s, *a, **k: np.zeros(1 << 20)",
    "copy": "lambda s, *a, **k: np.zeros(1 << 20)",
    "__len__": "lambda s: 1 << 28",
    "__getitem__": "lambda s, i: np.float32(99)",
    "__iter__": "lambda s: iter(range(1 << 10))",
    "__array_finalize__": "lambda s, obj: None",
    "__array_function__": "lambda s, func, types, args, kwargs: None",
    "__array_ufunc__": "lambda s, *a, **k: None",
    "__array_priority__": "1e9",
    "__dlpack__": "lambda s, **k: np.zeros(1 << 20).__dlpack__(**k)",
    "__dlpack_device__": "lambda s: (2, 0)",
}

_LIAR_CHILD = """
    import json, sys, types, numpy as np, dispatch as d
    name, lie = sys.argv[1], sys.argv[2]
    L = type("L", (np.ndarray,), {name.split("_")[0] if name.startswith(("shape_", "strides_"))
                                  else name: eval(lie)})
    real = np.arange(16, dtype=np.float32)
    want = [float(v) for v in range(16)]
    x = real.view(L)
    res = {}

    def check(key, f, ok):
        try:
            v = f()
        except (TypeError, ValueError, BufferError, RuntimeError) as e:
            res[key] = "error: " + type(e).__name__ + ": " + str(e)[:200]
            return
        res[key] = "ok" if ok(v) else "WRONG: " + repr(v)[:200]

    def shares(t):  # the tensor views real's memory
        if not (t.shape == (16,) and t.tolist() == want and t[-1].item() == 15.0):
            return False
        t[3] = 42.0
        seen = float(np.ndarray.__getitem__(real, 3))
        t[3] = 3.0
        return seen == 42.0
    check("from_numpy", lambda: d.from_numpy(x), shares)
    check("from_dlpack", lambda: d.from_dlpack(x), shares)
    check("tensor", lambda: d.tensor(x), lambda t: t.shape == (16,) and t.tolist() == want
          and t.dtype == d.float32)
    check("tensor_list", lambda: d.tensor([x, x]), lambda t: t.tolist() == [want, want])
    check("add", lambda: d.zeros(16) + x, lambda t: t.tolist() == want)
    check("radd", lambda: x + d.zeros(16), lambda t: t.tolist() == want)

    def iadd():
        t = d.zeros(16)
        t += x
        return t
    check("iadd", iadd, lambda t: t.tolist() == want)

    frozen = bytes(np.arange(16, dtype=np.float32).tobytes())
    y = np.frombuffer(frozen, dtype=np.float32).view(L)

    def readonly(t):
        if not (t.shape == (16,) and t.tolist() == want):
            return False
        try:
            t.fill_(7.0)
        except ValueError:
            return frozen == np.arange(16, dtype=np.float32).tobytes()
        return False
    check("from_numpy_readonly", lambda: d.from_numpy(y), readonly)
    check("from_dlpack_readonly", lambda: d.from_dlpack(y), readonly)
    print(json.dumps(res))
"""


@pytest.mark.parametrize("name", sorted(_LIES))
def test_an_ndarray_subclass_that_lies_gives_its_real_memory_or_a_clean_error(name):
    res = json.loads(run_child(_LIAR_CHILD, name, _LIES[name]))
    # from_numpy, tensor() and the operators never ask the subclass: always right
    for key in ("from_numpy", "from_numpy_readonly", "tensor", "tensor_list", "add", "radd",
                "iadd"):
        assert res[key] == "ok", (key, res)
    # from_dlpack asks the producer's __dlpack__/__dlpack_device__, by definition:
    # a lie there may give another array's memory or a clean error, never a crash
    for key in ("from_dlpack", "from_dlpack_readonly"):
        if name in ("__dlpack__", "__dlpack_device__"):
            assert res[key] == "ok" or res[key].startswith(("error", "WRONG")), (key, res)
        else:
            assert res[key] == "ok", (key, res)


def test_a_dlpack_device_that_lies_is_a_clean_buffer_error():
    class L(np.ndarray):
        def __dlpack_device__(self):
            return (2, 0)
    x = np.arange(4, dtype=np.float32).view(L)
    if not d.cuda.is_available():
        with pytest.raises(BufferError, match="CUDA is not available"):
            d.from_dlpack(x)


def test_an_object_whose_class_says_ndarray_is_not_read_as_one():
    """isinstance() believes a __class__ property: from_numpy read the liar's
    pointer and shape as an array's (a tensor over address 4096)."""
    out = run_child("""
        import numpy as np, dispatch as d
        class Fake:
            __class__ = property(lambda s: np.ndarray)
            dtype = np.dtype(np.float32)
            shape = (1 << 20,)
            strides = (4,)
            itemsize = 4
            size = 1 << 20
            ndim = 1
            flags = type("F", (), {"writeable": True})()
            __array_interface__ = {"version": 3, "shape": (1 << 20,), "typestr": "<f4",
                                   "data": (4096, False)}
        f = Fake()
        assert isinstance(f, np.ndarray)
        try:
            d.from_numpy(f)
        except TypeError as e:
            print("refused", e)
        else:
            raise SystemExit("accepted")
    """, timeout=30)
    assert out.startswith("refused expected np.ndarray (got Fake)")


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_subclasses_still_convert_as_before():
    """Masked arrays and matrices: their data, as NumPy holds it in C."""
    m = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    assert d.tensor(m).tolist() == [1.0, 2.0, 3.0]
    assert d.from_numpy(m).tolist() == [1.0, 2.0, 3.0]
    mm = np.matrix([[1, 2], [3, 4]])
    assert d.tensor(mm).tolist() == [[1, 2], [3, 4]]
    t = d.from_numpy(mm)
    t[0, 0] = 9
    assert mm[0, 0] == 9


def test_from_numpy_keeps_a_subclass_instance_alive():
    import gc
    import weakref

    class A(np.ndarray):
        pass
    a = np.arange(4.0).view(A)
    ref = weakref.ref(a)
    t = d.from_numpy(a)
    del a
    gc.collect()
    assert ref() is not None and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert ref() is None


# Sequences that lie (tensor() of nested lists) -------------------------------------------

def test_list_and_tuple_subclasses_that_lie_give_what_they_hold():
    """tensor() of a list whose __len__ said 1 over 100000 items made a 1-element
    tensor and wrote 100000 values into it (SIGSEGV); one whose __iter__ or
    __getitem__ lied gave other values than it holds."""
    out = run_child("""
        import json, dispatch as d
        class Short(list):
            def __len__(s): return 1
        class Long(list):
            def __len__(s): return 1000
        class Iter(list):
            def __iter__(s): return iter(range(100000))
        class Item(list):
            def __getitem__(s, i):
                return [7] * 100000 if isinstance(i, int) else list.__getitem__(s, i)
        class TShort(tuple):
            def __len__(s): return 1
        res = {}
        cases = {
            "short": (Short(range(100000)), [100000], 100000),
            "long": (Long([1, 2, 3]), [3], 3),
            "iter": (Iter([1, 2, 3]), [3], 3),
            "item": (Item([[1, 2], [3, 4]]), [2, 2], 4),
            "tuple": (TShort(range(50000)), [50000], 50000),
            "nested": ([Short(range(50000)), Short(range(50000))], [2, 50000], 100000),
            "outer": (Short([[1.0, 2.0], [3.0, 4.0]]), [2, 2], 4),
        }
        for k, (data, shape, n) in cases.items():
            t = d.tensor(data)
            flat = t.reshape(-1).tolist()
            res[k] = [list(t.shape), len(flat), flat[:4] if k != "item" else t.tolist()]
        print(json.dumps(res))
    """, timeout=60)
    res = json.loads(out)
    assert res["short"] == [[100000], 100000, [0, 1, 2, 3]]
    assert res["long"] == [[3], 3, [1, 2, 3]]
    assert res["iter"] == [[3], 3, [1, 2, 3]]
    assert res["item"] == [[2, 2], 4, [[1, 2], [3, 4]]]
    assert res["tuple"] == [[50000], 50000, [0, 1, 2, 3]]
    assert res["nested"] == [[2, 50000], 100000, [0, 1, 2, 3]]
    assert res["outer"] == [[2, 2], 4, [1.0, 2.0, 3.0, 4.0]]


def test_values_whose_comparisons_grow_the_list_do_not_grow_the_tensor():
    """tensor(data, dtype=int8) range-checks the values with Python comparisons;
    an int subclass whose __lt__ appended to data made the values (data itself)
    longer than the tensor they were then written into."""
    out = run_child("""
        import dispatch as d
        def make():
            data = []
            def grow():  # values in range, so the check passes; a bounded growth
                if len(data) < 300000:
                    data.extend([0] * 100000)
            class I(int):
                def __lt__(s, o):
                    grow()
                    return int.__lt__(s, o)
                def __gt__(s, o):
                    grow()
                    return int.__gt__(s, o)
            data += [I(1), I(2), I(3)]
            return data
        for dt in (d.int8, d.uint8, d.int16, d.int32):
            print(d.tensor(make(), dtype=dt).tolist())
    """, timeout=60)
    assert out.split("\n")[:4] == ["[1, 2, 3]"] * 4
