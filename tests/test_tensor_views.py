"""Tensor views: they share storage, and their shapes/strides follow PyTorch."""

import numpy as np
import pytest

import dispatch


def grid(*shape):
    return dispatch.arange(int(np.prod(shape))).view(*shape)


def test_view_shares_memory_with_its_base():
    t = grid(2, 3)
    v = t.view(3, 2)
    v[0, 0] = 100
    assert t[0, 0].item() == 100
    assert v._storage_ptr() == t._storage_ptr()


def test_view_infers_one_minus_one():
    assert grid(2, 3, 4).view(-1, 4).shape == (6, 4)


def test_view_rejects_two_minus_ones():
    with pytest.raises(ValueError, match="only one dimension can be inferred"):
        grid(2, 3).view(-1, -1)


def test_view_rejects_wrong_numel_naming_shape_and_size():
    with pytest.raises(ValueError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        grid(2, 3).view(4, 2)


def test_view_of_transposed_tensor_fails_when_strides_forbid_it():
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        grid(2, 3).T.view(6)


def test_reshape_copies_only_when_a_view_is_impossible():
    t = grid(2, 3)
    assert t.reshape(3, 2)._storage_ptr() == t._storage_ptr()
    r = t.T.reshape(6)
    assert r._storage_ptr() != t._storage_ptr()
    assert r.tolist() == [0, 3, 1, 4, 2, 5]


def test_transpose_swaps_sizes_and_strides():
    t = grid(2, 3, 4).transpose(0, 2)
    assert t.shape == (4, 3, 2)
    assert t.stride() == (1, 4, 12)


def test_permute_and_T_match_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    t = dispatch.from_numpy(a)
    np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.T.numpy(), a.T)


def test_permute_rejects_repeated_dims():
    with pytest.raises(ValueError, match="appears more than once"):
        grid(2, 3).permute(0, 0)


def test_dim_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        grid(2, 3).transpose(0, 2)


@pytest.mark.parametrize("index", [
    1, -1, (1, 2), (slice(None), 1), (Ellipsis, 1), (None, 0), (slice(1, None, 2),),
    (slice(None, None, 3), Ellipsis, None), (0, slice(-2, None)), (slice(5, 1),),
])
def test_getitem_matches_numpy(index):
    a = np.arange(60).reshape(5, 3, 4)
    t = dispatch.from_numpy(a)
    np.testing.assert_array_equal(t[index].numpy(), a[index])


def test_getitem_out_of_bounds_names_dim_and_size():
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        grid(3)[3]


def test_getitem_rejects_negative_step():
    with pytest.raises(ValueError, match="step must be positive"):
        grid(3)[::-1]


def test_getitem_rejects_too_many_indices():
    with pytest.raises(IndexError, match="too many indices"):
        grid(3)[0, 0]


def test_getitem_rejects_other_index_types():
    with pytest.raises(TypeError, match="valid indices"):
        grid(3)["a"]


def test_expand_broadcasts_with_zero_strides():
    t = dispatch.tensor([1, 2, 3]).expand(2, 3)
    assert t.stride() == (0, 1)
    assert t.tolist() == [[1, 2, 3], [1, 2, 3]]


def test_expand_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"Target sizes: \[2, 4\].*Tensor sizes: \[3\]"):
        grid(3).expand(2, 4)


def test_as_strided_reads_overlapping_windows():
    t = grid(5)
    w = t.as_strided((3, 3), (1, 1))
    assert w.tolist() == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_as_strided_is_bounds_checked_against_the_storage():
    with pytest.raises(ValueError, match="storage of at least 48 bytes, but the storage has 40"):
        grid(5).as_strided((2, 3), (3, 1))


@pytest.mark.parametrize("shape,strides,expected", [
    ((2, 3), (3, 1), True),
    ((2, 3), (1, 2), False),
    ((1, 3), (99, 1), True),   # size-1 dims are ignored
    ((0, 3), (1, 7), True),    # numel 0 is contiguous
    ((3, 1), (1, 5), True),
])
def test_contiguity_follows_pytorch(shape, strides, expected):
    base = dispatch.zeros(64)
    assert base.as_strided(shape, strides).is_contiguous() is expected


def test_contiguous_returns_self_storage_when_already_contiguous():
    t = grid(2, 3)
    assert t.contiguous()._storage_ptr() == t._storage_ptr()
    c = t.T.contiguous()
    assert c.is_contiguous() and c.tolist() == [[0, 3], [1, 4], [2, 5]]


def test_clone_does_not_share_memory():
    t = grid(3)
    c = t.clone()
    c[0] = 7
    assert t[0].item() == 0


def test_to_converts_dtype():
    t = dispatch.tensor([1.7, -2.2]).to(dispatch.int32)
    assert t.dtype is dispatch.int32 and t.tolist() == [1, -2]
