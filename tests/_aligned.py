"""NumPy memory at a chosen offset from a 64-byte boundary, for tests of
loops whose paths depend on where their operands start."""

from __future__ import annotations

import numpy as np


def aligned(n: int, dtype, offset_elems: int = 0) -> np.ndarray:
    """A view of n elements starting offset_elems past a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(n * itemsize + 64 + offset_elems * itemsize + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_elems * itemsize
    return raw[start:start + n * itemsize].view(dtype)
