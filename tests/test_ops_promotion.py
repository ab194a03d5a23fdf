"""Type promotion follows PyTorch; broadcasting follows NumPy."""

import numpy as np
import pytest

import dispatch as d


def t(values, dtype):
    return d.tensor(values, dtype=dtype)


@pytest.mark.parametrize("a,b,expected", [
    (t([1], d.int32), t([1.0], d.float32), d.float32),
    (t([1], d.uint8), t([1], d.int8), d.int16),
    (t([1], d.int64), t([1.0], d.float16), d.float16),
    (t([True], d.bool), t([1], d.int16), d.int16),
    (t([1.0], d.float16), t([1.0], d.float64), d.float64),
    (t([1], d.int8), t(1, d.int64), d.int8),          # 0-dim of the same category: ignored
    (t([1], d.int32), t(1.5, d.float64), d.float64),  # 0-dim of a higher category counts
    (t([1.0], d.float16), t(1.0, d.float64), d.float16),
    (t([1.0], d.bfloat16), t([1.0], d.float16), d.float32),  # neither holds the other
    (t([1.0], d.bfloat16), t([1], d.int64), d.bfloat16),
    (t([1.0], d.bfloat16), t([True], d.bool), d.bfloat16),
    (t([1.0], d.bfloat16), t([1.0], d.float32), d.float32),
    (t([1.0], d.bfloat16), t([1.0], d.float64), d.float64),
    (t([1], d.int32), t(1.0, d.bfloat16), d.bfloat16),  # 0-dim of a higher category counts
    (t([1.0], d.bfloat16), t(1.0, d.float64), d.bfloat16),
])
def test_tensor_tensor_promotion(a, b, expected):
    assert (a + b).dtype is expected
    assert (b + a).dtype is expected


@pytest.mark.parametrize("a,scalar,expected", [
    (t([1], d.int64), 2.5, d.float32),   # a float number counts as the default float32
    (t([1], d.int8), 1000, d.int8),      # an int number never widens an int tensor
    (t([True], d.bool), 1, d.int64),
    (t([True], d.bool), True, d.bool),
    (t([1.0], d.float16), 2.5, d.float16),
    (t([1.0], d.bfloat16), 2.5, d.bfloat16),
    (t([1.0], d.bfloat16), 3, d.bfloat16),
    (t([1], d.int32), True, d.int32),
])
def test_tensor_number_promotion(a, scalar, expected):
    assert (a + scalar).dtype is expected
    assert (scalar + a).dtype is expected


def test_true_division_of_integers_gives_float32():
    r = t([1, 2], d.int32) / t([2, 4], d.int32)
    assert r.dtype is d.float32 and r.tolist() == [0.5, 0.5]


def test_comparisons_give_bool():
    r = t([1, 5], d.int32) < 2.5
    assert r.dtype is d.bool and r.tolist() == [True, False]


def test_integer_alpha_must_not_be_float():
    with pytest.raises(TypeError, match="alpha must not be a floating point number"):
        d.ops.add(t([1], d.int32), t([1], d.int32), alpha=0.5)


def test_sub_of_bools_is_rejected():
    with pytest.raises(TypeError, match="Subtraction, the `-` operator, with two bool tensors"):
        t([True], d.bool) - t([False], d.bool)


def test_neg_of_bool_is_rejected():
    with pytest.raises(TypeError, match="Negation, the `-` operator, on a bool tensor"):
        -t([True], d.bool)


def test_broadcast_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"shapes \[2, 3\] and \[4\] cannot be broadcast"):
        d.zeros(2, 3) + d.zeros(4)


def test_broadcasting_follows_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    b = np.arange(4, dtype=np.float32).reshape(4, 1)
    np.testing.assert_array_equal((d.from_numpy(a) * d.from_numpy(b)).numpy(), a * b)


def test_mean_of_integers_is_rejected():
    with pytest.raises(TypeError, match="mean\\(\\): could not infer output dtype"):
        d.ops.mean(t([1, 2], d.int32))


def test_max_of_empty_is_an_error():
    with pytest.raises(RuntimeError, match="max\\(\\): Expected reduction dim to be specified"):
        d.ops.max(d.empty(0))


def test_where_needs_a_bool_condition():
    with pytest.raises(TypeError, match="where expected condition to be a boolean tensor"):
        d.ops.where(t([1], d.int32), t([1.0], d.float32), 0.0)


def test_dot_needs_equal_dtypes():
    with pytest.raises(TypeError, match="expected both vectors to have same dtype"):
        d.ops.dot(t([1], d.int32), t([1.0], d.float32))


def test_dot_needs_equal_lengths():
    with pytest.raises(ValueError, match="inconsistent tensor size"):
        d.ops.dot(t([1, 2], d.int32), t([1], d.int32))


def test_copy_into_expanded_tensor_is_rejected():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        d.zeros(1).expand(3).copy_(d.ones(3))


def test_different_devices_are_rejected():
    with pytest.raises(RuntimeError, match="same device"):
        d.ops.where(d.empty(2, dtype=d.bool, device="meta"), d.zeros(2), d.zeros(2))
