"""The chosen SIMD loops replace the reference loops in the loop table, so
the tensor operators run them: their results carry the kernels' bits. exp
and log are not correctly rounded everywhere, while the C library's expf and
logf (the reference loops) nearly are, so a reference loop would be caught;
+ - * / sqrt could not tell the two apart."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch
from dispatch import kernels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["exp", "log"])
def test_tensor_unary_ops_run_the_simd_kernels(op, dtype):
    x = np.random.default_rng(0).uniform(0.1, 50, 100_003).astype(dtype)
    got = getattr(dispatch.ops, op)(dispatch.from_numpy(x)).numpy()
    want = np.empty_like(x)
    kernels.run(op, want, x)
    assert got.tobytes() == want.tobytes()


def test_tensor_exp_differs_from_the_c_library_somewhere():
    """The premise of the test above: the SIMD exp is not correctly rounded everywhere."""
    x = np.random.default_rng(0).uniform(-80, 80, 100_003).astype(np.float32)
    simd = np.empty_like(x)
    kernels.run("exp", simd, x)
    libm = np.exp(x.astype(np.float64)).astype(np.float32)  # correctly rounded here
    assert (simd != libm).any()


def test_plain_import_registers_the_simd_kernels():
    """`import dispatch` alone (no `dispatch.kernels`) chooses the SIMD loops:
    show_runtime lists every kernel source, and a tensor op gives the
    kernels' bits."""
    import subprocess
    import sys
    import tempfile

    code = (
        "import io, contextlib, sys, numpy as np, dispatch\n"
        "assert 'dispatch.kernels' not in sys.modules\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf): dispatch.show_runtime()\n"
        "print(buf.getvalue()); sys.stdout.flush()\n"
        "x = np.linspace(-20, 20, 4099, dtype=np.float32)\n"
        "sys.stdout.buffer.write(b'BITS' + dispatch.ops.exp(dispatch.from_numpy(x)).numpy().tobytes())\n"
    )
    # No -I: isolated mode drops PYTHONPATH, so where this interpreter finds
    # cffi, numpy or dispatch through it (a GPU job's `pip install --target`
    # folder) the child could not import dispatch at all. The child gets this
    # process's environment instead and runs in an empty directory (its
    # sys.path[0]), so the checkout's source dispatch/ cannot shadow the
    # installed package; "dispatch.kernels" is checked in the child itself.
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                             cwd=cwd).stdout
    report, bits = out.split(b"BITS", 1)
    for fn in ("add_f32", "exp_f32", "addcmul_f64", "sum_f64", "add_i64"):
        assert b"dispatch_kernel_" + fn.encode() in report, report.decode()
    x = np.linspace(-20, 20, 4099, dtype=np.float32)
    want = np.empty_like(x)
    kernels.run("exp", want, x)
    assert bits == want.tobytes()
