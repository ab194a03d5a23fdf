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
