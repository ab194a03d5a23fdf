"""Bit-for-bit comparison of tensors, NaN payload and sign and the sign of
zero included, for dispatch tensors, NumPy arrays and torch tensors alike
(np.array_equal(..., equal_nan=True) takes any NaN for any other and -0.0
for 0.0; a rule about which NaN or which zero comes out needs its bits)."""

from __future__ import annotations

import ctypes

import numpy as np

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(x) -> np.ndarray:
    """The elements of x (in row-major order) as unsigned integers of their
    own width: a dispatch Tensor (bfloat16 included), a NumPy array or
    scalar, or a torch tensor."""
    mod = type(x).__module__.split(".")[0]
    if mod == "dispatch":
        c = x.contiguous()
        size = c.dtype.itemsize
        raw = ctypes.string_at(c.data_ptr(), c.numel() * size) if c.numel() else b""
        return np.frombuffer(raw, _UINT[size]).reshape(tuple(c.shape))
    if mod == "torch":
        import torch

        c = x.detach().cpu().contiguous()
        size = c.element_size()
        signed = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
        return c.view(signed).numpy().view(_UINT[size])
    a = np.array(np.asarray(x), order="C")  # 0-dim stays 0-dim
    return a.view(_UINT[a.dtype.itemsize])


def same_bits(got, want) -> bool:
    g, w = bits(got), bits(want)
    return g.shape == w.shape and g.dtype == w.dtype and bool(np.array_equal(g, w))


def assert_same_bits(got, want, what: str = "") -> None:
    g, w = bits(got), bits(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    bad = np.flatnonzero(g.reshape(-1) != w.reshape(-1))
    if bad.size:
        i = int(bad[0])
        width = 2 * g.dtype.itemsize
        raise AssertionError(f"{what}: {bad.size} element(s) differ, first at flat index {i}: "
                             f"got 0x{int(g.reshape(-1)[i]):0{width}x}, "
                             f"want 0x{int(w.reshape(-1)[i]):0{width}x}")
