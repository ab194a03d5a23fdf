"""copy_ from a source broadcast along dst's outer dims (Note [Copies of a
repeated block] in sources/dispatcher/host_copy.c): the first block copied
(and cast), the rest doubled from dst, or one value of dst's dtype walked
as a fill; every element is NumPy's broadcast_to, whatever the shapes,
dtypes and block sizes."""

from __future__ import annotations

import numpy as np
import pytest

import dispatch as d

CASES = [  # (dst shape, src shape)
    ((512, 512), (512,)), ((3, 4, 5), (5,)), ((3, 4, 5), (4, 5)), ((3, 4, 5), (1, 4, 5)),
    ((3, 4, 5), (3, 1, 5)), ((2, 3, 1), (1,)), ((7, 1), (1, 1)), ((1000, 3), (3,)),
    ((5, 40000), (40000,)), ((3, 2, 9000), (1, 1, 9000)), ((6, 1, 7), (7,)), ((0, 5), (5,)),
    ((9, 5), ()), ((512, 512), ()), ((3, 4, 5), (1, 1, 1)),
]


@pytest.mark.parametrize("dst_shape, src_shape", CASES)
@pytest.mark.parametrize("src_dtype, dst_dtype", [("int16", "int16"), ("float64", "float64"),
                                                  ("float64", "int16"), ("uint8", "float32"),
                                                  ("bool", "bool")])
def test_copy_of_a_broadcast_source_is_numpys_broadcast(dst_shape, src_shape, src_dtype,
                                                        dst_dtype):
    rng = np.random.default_rng(len(dst_shape) * 7 + len(src_shape))
    src = (rng.standard_normal(src_shape) * 100).astype(src_dtype)
    dst = d.tensor(np.zeros(dst_shape, dtype=dst_dtype))
    dst.copy_(d.tensor(src))
    want = np.broadcast_to(src, dst_shape).astype(dst_dtype)
    assert dst.numpy().tobytes() == want.tobytes()


def test_a_repeated_source_into_a_strided_dst_and_an_expanded_clone():
    row = np.arange(300, dtype=np.float32)
    base = d.tensor(np.zeros((64, 600), dtype=np.float32))
    base[:, ::2].copy_(d.tensor(row))  # dst not contiguous: the walk
    assert np.array_equal(base.numpy()[:, ::2], np.broadcast_to(row, (64, 300)))
    assert np.all(base.numpy()[:, 1::2] == 0)
    e = d.tensor(row).expand(64, 300).contiguous()
    assert e.numpy().tobytes() == np.broadcast_to(row, (64, 300)).tobytes()
