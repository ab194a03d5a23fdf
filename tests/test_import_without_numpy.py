"""NumPy is optional (Note [NumPy is optional] in dispatch/_values.py).

`import dispatch` imports no NumPy; tensors from lists and factories, every
registered operator, tolist() and repr work without it. Checked three ways:

- here, in a fresh interpreter of this environment (NumPy installed): the
  whole script below runs and `numpy` is never in sys.modules;
- in a venv that has no NumPy at all (no system site packages): the wheel
  built from this checkout, installed there with only the cffi runtime
  beside it, runs the same script (one wheel build per session);
- under `qemu-x86_64 -cpu qemu64` (the oldest x86-64 QEMU models: SSE3 is
  its last SSE level, which the default baseline `min` needs): the package
  imports and runs operators there.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter: factories, every operator (each overload,
# arguments made from its schema), printing; checks values against plain
# Python, and that nothing imported NumPy. Prints "ok <count>" at the end.
SCRIPT = r'''
import math, sys
import dispatch as d
assert "numpy" not in sys.modules, "import dispatch imported numpy"
from dispatch import ops
from dispatch._ops_generated import OPERATORS

def close(got, want, tol=1e-5):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            close(g, w, tol)
    elif isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), (got, want)
    else:
        assert got == want or abs(got - want) <= tol * max(1.0, abs(want)), (got, want)

# Factories: nested lists of bools, ints, floats; empty/zeros/ones/full/arange.
t = d.tensor([[1, 2, 3], [4, 5, 6]])
assert t.dtype is d.int64 and t.shape == (2, 3) and t.tolist() == [[1, 2, 3], [4, 5, 6]]
b = d.tensor([[True, False], [False, True]])
assert b.dtype is d.bool and b.tolist() == [[True, False], [False, True]]
f = d.tensor([[0.5, -1.25], [2.0, 3.0]])
assert f.dtype is d.float32 and f.tolist() == [[0.5, -1.25], [2.0, 3.0]]
assert d.tensor([1, 2.5]).dtype is d.float32 and d.tensor([True, 2]).dtype is d.int64
assert d.tensor(7).shape == () and d.tensor(7).item() == 7
assert d.tensor([]).shape == (0,) and d.tensor([[], []]).shape == (2, 0)
assert d.tensor([0.1], dtype=d.float64).item() == 0.1
assert d.tensor([1.7, -1.7], dtype=d.int32).tolist() == [1, -1]
assert d.tensor([-1], dtype=d.uint8).tolist() == [255]
assert d.tensor([1e300]).tolist() == [math.inf]
for bad, exc in (([300], ValueError), ([[1, 2], [3]], ValueError), ([1j], TypeError),
                 (["a"], TypeError)):
    try:
        d.tensor(bad, dtype=d.int8 if bad == [300] else None)
    except exc:
        pass
    else:
        raise AssertionError(f"tensor({bad!r}) did not raise {exc.__name__}")
for name in ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
             "float64"):
    dt = getattr(d, name)
    z = d.zeros(2, 3, dtype=dt)
    assert z.dtype is dt and z.tolist() == [[0] * 3] * 2, name
    assert d.ones(3, dtype=dt).tolist() == [1] * 3, name
    assert d.full((2,), 1, dtype=dt).tolist() == [1, 1], name
    assert d.empty(4, dtype=dt).shape == (4,), name
    assert d.tensor([[1, 0], [0, 1]], dtype=dt).tolist() == [[1, 0], [0, 1]], name
    assert repr(d.ones(2, dtype=dt)).startswith("tensor(["), name
assert d.arange(5).tolist() == [0, 1, 2, 3, 4] and d.arange(5).dtype is d.int64
assert d.arange(1, 10, 3).tolist() == [1, 4, 7]
assert d.arange(5, 0, -2).tolist() == [5, 3, 1]
assert d.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
assert d.arange(0.5, 3, dtype=d.int64).tolist() == [0, 1, 2]
big = d.arange(10000)
assert big.tolist() == list(range(10000))
assert d.arange(0, 1, 0.1, dtype=d.float64).tolist() == [i * 0.1 for i in range(10)]
assert d.arange(0, 1, 0.1).numel() == 10

# Every operator, every overload: arguments from the schema.
x = d.tensor([[0.5, 1.0, 2.0], [3.0, 4.0, 0.25]])
y = d.tensor([[2.0, 0.5, 1.0], [1.5, 8.0, 4.0]])
xs, ys = x.tolist(), y.tolist()
cond = d.tensor([[True, False, True], [False, True, False]])

def ew(fn, *rows):
    return [[fn(*v) for v in zip(*r)] for r in zip(*rows)]

EXPECT = {
    "add": ew(lambda a, b: a + b, xs, ys), "sub": ew(lambda a, b: a - b, xs, ys),
    "mul": ew(lambda a, b: a * b, xs, ys), "div": ew(lambda a, b: a / b, xs, ys),
    "maximum": ew(max, xs, ys), "minimum": ew(min, xs, ys),
    "eq": ew(lambda a, b: a == b, xs, ys), "ne": ew(lambda a, b: a != b, xs, ys),
    "lt": ew(lambda a, b: a < b, xs, ys), "le": ew(lambda a, b: a <= b, xs, ys),
    "gt": ew(lambda a, b: a > b, xs, ys), "ge": ew(lambda a, b: a >= b, xs, ys),
    "neg": ew(lambda a: -a, xs), "abs": ew(abs, xs), "sqrt": ew(math.sqrt, xs),
    "exp": ew(math.exp, xs), "log": ew(math.log, xs),
    "expm1": ew(math.expm1, xs), "log1p": ew(math.log1p, xs), "tanh": ew(math.tanh, xs),
    "addcmul": ew(lambda a, b, c: a + b * c, xs, xs, ys),
    "where": ew(lambda c, a, b: a if c else b, cond.tolist(), xs, ys),
    "sum": sum(map(sum, xs)), "mean": sum(map(sum, xs)) / 6,
    "max": max(map(max, xs)), "min": min(map(min, xs)),
    "amax": max(map(max, xs)), "amin": min(map(min, xs)),  # dim=[]: all dims
    "prod": math.prod(v for r in xs for v in r),
    "add_": ew(lambda a, b: a + b, xs, ys), "sub_": ew(lambda a, b: a - b, xs, ys),
    "mul_": ew(lambda a, b: a * b, xs, ys), "div_": ew(lambda a, b: a / b, xs, ys),
    "copy_": ys, "cast": xs,
    "argmax": [v for r in xs for v in r].index(max(map(max, xs))),
    "argmin": [v for r in xs for v in r].index(min(map(min, xs))),
}
from dispatch._core import lib  # the schema's type kinds, read from C
TENSOR, SCALAR, INT, FLOAT, BOOL, STR, SCALARTYPE = (
    lib.DISPATCH_TYPE_TENSOR, lib.DISPATCH_TYPE_SCALAR, lib.DISPATCH_TYPE_INT,
    lib.DISPATCH_TYPE_FLOAT, lib.DISPATCH_TYPE_BOOL, lib.DISPATCH_TYPE_STR,
    lib.DISPATCH_TYPE_SCALARTYPE)
called = 0
for name in OPERATORS:
    packet = getattr(ops, name)
    for o in packet.overloads:
        args = []
        for i, a in enumerate(o.args):
            if a.kwarg_only or (a.has_default and a.kind != TENSOR):
                continue
            if a.kind == TENSOR:
                if name == "dot":
                    args.append(d.tensor([1.0, 2.0, 3.0]) if i == 0 else d.tensor([4.0, 5.0, 6.0]))
                elif name.endswith("_") and i == 0:
                    args.append(x.clone())
                else:
                    args.append((x, x, y)[i] if name == "addcmul" else
                                (cond, x, y)[i] if name == "where" else (x, y)[min(i, 1)])
            elif a.is_list:
                args.append([1])
            elif a.kind == SCALARTYPE:
                args.append(d.float64)
            elif a.kind == SCALAR:
                args.append(2)
            elif a.kind == INT:
                args.append(0)
            elif a.kind == BOOL:
                args.append(False)
            else:
                raise AssertionError(f"no argument for {o.schema}")
        out = None
        if any(a.kwarg_only and a.kind == TENSOR and a.name == "out" for a in o.args):
            ref = packet(*args)  # the functional overload: out's shape and dtype
            out = d.zeros(ref.shape, dtype=ref.dtype)
            got = o(*args, out=out)
            assert got is out, (o.schema, got)
        else:
            got = o(*args)
        called += 1
        if o.name in ("max.dim", "min.dim"):  # (values, indices) over dim 0, as torch
            red = {"max": max, "min": min}[name]
            cols = [list(c) for c in zip(*xs)]
            values, indices = got
            close(values.tolist(), [red(c) for c in cols])
            assert indices.tolist() == [c.index(red(c)) for c in cols], (o.schema, got)
            assert repr(values).startswith("tensor(") and repr(indices).startswith("tensor(")
            continue
        assert isinstance(got, d.Tensor), (o.schema, got)
        text = repr(got)
        assert text.startswith("tensor(") and str(got) == text, text
        value = got.tolist()
        if name == "fill_":
            close(value, [[2.0] * 3] * 2)
        elif name == "dot":
            close(value, 32.0)
        elif o.name in ("sum.dim_IntList", "mean.dim", "max.dim_IntList", "min.dim_IntList",
                        "sum.IntList_out", "mean.out", "max.IntList_out", "min.IntList_out"):
            red = {"sum": sum, "mean": lambda r: sum(r) / 3, "max": max, "min": min}[name]
            close(value, [red(r) for r in xs])
        elif o.name == "prod.dim_int":  # dim 0, the INT argument
            close(value, [math.prod(c) for c in zip(*xs)])
        else:
            try:
                close(value, EXPECT[name])
            except AssertionError as e:
                raise AssertionError(f"{o.schema}: {e}") from None
    # the packet itself (overload resolution) with the first overload's arguments
assert called >= len(OPERATORS), called
missing = set(OPERATORS) - set(EXPECT) - {"fill_", "dot"}
assert not missing, missing

# Operators through Tensor methods and Python operators, mixed with Python numbers.
close((x + 1).tolist(), ew(lambda a: a + 1, xs))
close((2 * x - y / 4).tolist(), ew(lambda a, b: 2 * a - b / 4, xs, ys))
close((x > 1).tolist(), ew(lambda a: a > 1, xs))
close(x.sum(dim=[0]).tolist(), [a + b for a, b in zip(*xs)])
close((-t).tolist(), [[-1, -2, -3], [-4, -5, -6]])
i = d.arange(6)
i += 3
assert i.tolist() == [3, 4, 5, 6, 7, 8]
assert (d.arange(4, dtype=d.int32) * 2).tolist() == [0, 2, 4, 6]
assert (d.ones(3, dtype=d.float16) / 3).dtype is d.float16

# Printing.
assert repr(d.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
assert repr(d.tensor([[1.5, 2.25], [3.0, -4.0]])) == (
    "tensor([[ 1.5 ,  2.25],\n        [ 3.  , -4.  ]])")
assert repr(d.tensor([True, False])) == "tensor([ True, False])"
assert repr(d.tensor(3.0)) == "tensor(3.)"
assert repr(d.tensor([1e-5, 1.0, 1e10])) == "tensor([1.e-05, 1.e+00, 1.e+10])"
assert repr(d.tensor([1, 2], dtype=d.int8)) == "tensor([1, 2], dtype=dispatch.int8)"
assert repr(d.arange(100000)) == "tensor([    0,     1,     2, ..., 99997, 99998, 99999])"
assert repr(d.tensor([0.1, float("nan"), float("inf")])) == "tensor([0.1, nan, inf])"
assert repr(d.zeros(2, 0)) == "tensor([])"
print(d.arange(24).view(2, 3, 4) / 7)

assert "numpy" not in sys.modules, "running dispatch imported numpy"
print("ok", called)
'''


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DISPATCH_") and k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def _run(python: str, code: str, cwd: Path, prefix: tuple = (), args: tuple = ("-I",),
         timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, python, *args, "-c", code], cwd=cwd, env=_clean_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_import_dispatch_leaves_numpy_out_of_sys_modules(tmp_path):
    code = "import sys, dispatch; print('numpy' in sys.modules)"
    proc = _run(sys.executable, code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"]


def test_factories_every_operator_and_printing_import_no_numpy(tmp_path):
    """The no-NumPy script with NumPy installed: nothing in it imports NumPy."""
    proc = _run(sys.executable, SCRIPT, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.splitlines()[-1].startswith("ok ")


def test_interop_imports_numpy_only_when_used(tmp_path):
    np = pytest.importorskip("numpy")
    code = ("import sys, dispatch as d\n"
            "t = d.tensor([1.5, 2.5]); repr(t); t.tolist(); d.ops.exp(t)\n"
            "assert 'numpy' not in sys.modules\n"
            "a = t.numpy(); assert 'numpy' in sys.modules\n"
            "import numpy as np\n"
            "assert d.from_numpy(np.arange(3)).tolist() == [0, 1, 2]\n"
            "assert d.tensor(np.float32(2.5)).dtype is d.float32\n"
            "assert d.tensor([np.int16(3)]).dtype is d.int64\n"
            "assert (np.float64(2) * t).tolist() == [3.0, 5.0]\n"
            "assert d.zeros(2, dtype=np.float64).dtype is d.float64\n"
            "assert d.zeros(2, dtype='f4').dtype is d.float32\n"
            "assert d.float16.numpy == np.float16\n"
            "print('ok')")
    proc = _run(sys.executable, code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert np is not None


def test_repr_matches_numpy_array2string_layout():
    """repr's formatter (dispatch/_format.py) writes what NumPy's
    array2string(separator=', ', prefix='tensor(') writes (NumPy 2's rules)."""
    np = pytest.importorskip("numpy")
    if int(np.__version__.split(".")[0]) < 2:
        pytest.skip("NumPy 1 chose scientific notation for float16/float32 differently")
    import random

    import dispatch as d
    from dispatch import _format, _tensor

    rng = random.Random(12)
    gens = [lambda: rng.uniform(-10, 10), lambda: rng.choice([0.0, 1.0, -2.0, 0.5]),
            lambda: 10 ** rng.uniform(-9, 12) * rng.choice([1, -1]), rng.random,
            lambda: rng.choice([float("nan"), float("inf"), -float("inf"), 1.25, 0.0, -0.0]),
            lambda: round(rng.uniform(-1000, 1000), rng.randint(0, 4))]
    shapes = [(), (1,), (5,), (12,), (3, 4), (2, 3, 2), (40,), (1200,), (30, 40), (2, 0)]
    for _ in range(300):
        shape = rng.choice(shapes)
        n = int(np.prod(shape))
        gen = rng.choice(gens)
        with np.errstate(all="ignore"):
            arrays = [np.array([gen() for _ in range(n)], dtype=dt).reshape(shape)
                      for dt in ("float16", "float32", "float64")]
        arrays.append(np.array([rng.randint(-100, 100) for _ in range(n)]).astype(
            rng.choice(["int8", "int64", "uint8"])).reshape(shape))
        arrays.append(np.array([rng.random() < .5 for _ in range(n)], bool).reshape(shape))
        for arr in arrays:
            t = d.from_numpy(arr.copy())
            got = _format.format_nested(_tensor._summarized(t), t.dtype.name, "tensor(", t.ndim)
            assert got == np.array2string(arr, separator=", ", prefix="tensor("), (arr.dtype,
                                                                                   arr.shape)


# In a venv without NumPy ----------------------------------------------------------------

# The tests below run the wheel this file builds (plain flags), never the
# installed package: the sanitizer job skips them (tests/conftest.py).
NUMPY_FREE_WHEEL = pytest.mark.runs_own_plain_build


@pytest.fixture(scope="session")
def numpy_free_python(tmp_path_factory) -> str:
    """A venv without NumPy (no system site packages) holding the wheel built
    from this checkout and the cffi runtime copied from this environment."""
    work = tmp_path_factory.mktemp("no-numpy")
    wheels, venv = work / "wheels", work / "venv"
    # Without the CUDA module: nothing here loads it (import dispatch never
    # does), and nvcc would add minutes to every test run.
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
                            "--no-deps", "-q", "-Csetup-args=-Dcuda=disabled", str(REPO),
                            "-w", str(wheels)],
                           cwd=work, env=_clean_env(), capture_output=True, text=True,
                           timeout=1800, check=False)
    assert build.returncode == 0, (build.stdout[-3000:], build.stderr[-3000:])
    wheel = next(wheels.glob("dispatch_tensor-*.whl"))  # the distribution dispatch-tensor
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=300, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot make a venv with pip here: {made.stderr.strip()[-300:]}")
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['platlib'])"], capture_output=True, text=True, check=True)
    site_dir = Path(site.stdout.strip())
    # The cffi runtime (what the compiled modules import), copied: a path to
    # this environment's site-packages would bring its NumPy along.
    import _cffi_backend
    import cffi

    shutil.copy2(_cffi_backend.__file__, site_dir)
    shutil.copytree(Path(cffi.__file__).parent, site_dir / "cffi")
    try:
        import pycparser
    except ImportError:
        pass
    else:
        shutil.copytree(Path(pycparser.__file__).parent, site_dir / "pycparser")
    inst = subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                           str(wheel)], env=_clean_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    assert inst.returncode == 0, inst.stderr[-3000:]
    check = _run(python, "import numpy", work)
    assert check.returncode != 0 and "No module named 'numpy'" in check.stderr, \
        "the venv must not see NumPy"
    return python


@NUMPY_FREE_WHEEL
def test_without_numpy_installed_import_factories_operators_and_printing_work(
        numpy_free_python, tmp_path):
    proc = _run(numpy_free_python, SCRIPT, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.splitlines()[-1].startswith("ok ")


@NUMPY_FREE_WHEEL
def test_without_numpy_installed_import_loads_no_numpy_typing_or_dataclasses(
        numpy_free_python, tmp_path):
    """Note [Import time] in dispatch/__init__.py: in a fresh interpreter of an
    installed (not editable) package, `import dispatch` loads none of these."""
    code = ("import sys, dispatch\n"
            "print(' '.join(m for m in ('numpy', 'typing', 'dataclasses', 're', 'inspect')"
            " if m in sys.modules))")
    proc = _run(numpy_free_python, code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == []


@NUMPY_FREE_WHEEL
def test_without_numpy_installed_python_m_dispatch_reports(numpy_free_python, tmp_path):
    proc = subprocess.run([numpy_free_python, "-I", "-m", "dispatch"], cwd=tmp_path,
                          env=_clean_env(), capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "kernel sources" in proc.stdout and "CUDA" in proc.stdout


@NUMPY_FREE_WHEEL
def test_without_numpy_installed_interop_says_numpy_is_needed(numpy_free_python, tmp_path):
    code = ("import dispatch as d\n"
            "try:\n    d.ones(2).numpy()\n"
            "except ImportError as e:\n    print(e)\n")
    proc = _run(numpy_free_python, code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "needs NumPy, which is not installed" in proc.stdout


# Under qemu64 ---------------------------------------------------------------------------

QEMU = shutil.which("qemu-x86_64")
TCG_NOISE = "TCG doesn't support requested feature"


@pytest.mark.runs_package_under_qemu
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="qemu-x86_64 checks need an x86_64 host")
@pytest.mark.skipif(QEMU is None, reason="qemu-x86_64 not found (apt-get install qemu-user)")
def test_qemu64_imports_and_runs_operators_or_refuses_by_the_guard(tmp_path):
    """qemu64 (SSE3, no SSSE3): the default baseline (min: SSE SSE2 SSE3)
    imports and runs every operator at its baseline targets; a baseline
    above what the CPU has must fail with the guard's error, never a signal
    (the avx2 build under Nehalem and qemu64: tests/test_cpu_qemu.py)."""
    proc = subprocess.run([QEMU, "-cpu", "qemu64", sys.executable, "-I", "-c",
                           "import dispatch; print(' '.join(dispatch.__cpu_baseline__)); "
                           "print(' '.join(f for f, on in dispatch.__cpu_features__.items() "
                           "if on))\n" + SCRIPT],
                          cwd=tmp_path, env=_clean_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    stderr = "\n".join(ln for ln in proc.stderr.splitlines() if TCG_NOISE not in ln)
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {stderr[-2000:]}"
    lines = proc.stdout.splitlines()
    if proc.returncode != 0:  # a build whose baseline qemu64 lacks: the guard's message
        assert "ImportError: dispatch cannot be imported: this CPU lacks" in stderr \
            and "which this build of dispatch requires" in stderr, \
            stderr[-3000:]
        return
    baseline, found = lines[0].split(), lines[1].split()
    assert set(baseline) <= set(found)
    assert "SSSE3" not in found and "AVX" not in found  # it is the old CPU
    assert lines[-1].startswith("ok ")
