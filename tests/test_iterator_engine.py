"""The elementwise engine (sources/iterator) on NumPy buffers, NumPy as the
oracle: broadcasting, layouts, casting, out= overlap, threads, reductions.
"""

from __future__ import annotations

import numpy as np
import pytest

from dispatch import iterator, kernels


@pytest.fixture
def threads():
    """Restore the thread count after a test that changes it."""
    before = iterator.get_num_threads()
    yield
    iterator.set_num_threads(before)


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(dtype)


@pytest.mark.parametrize("sa,sb", [
    ((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((1,), (7, 6)), ((), (2, 2)), ((3, 1, 2), (1, 4, 1)),
    ((0, 3), (3,)),
])
def test_inputs_broadcast_right_aligned(sa, sb):
    a, b = rand(sa), rand(sb, seed=1)
    out = np.empty(np.broadcast_shapes(sa, sb), np.float32)
    iterator.elementwise("mul", out, a, b)
    np.testing.assert_array_equal(out, a * b)


def test_incompatible_shapes_name_both_and_the_dimension():
    out = np.empty((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"shapes \[2, 3\] and \[4\] cannot be broadcast.*"
                                         r"dimension -1 is 3 in one and 4"):
        iterator.elementwise("add", out, rand((2, 3)), rand((4,)))


def test_output_must_have_the_broadcast_shape():
    with pytest.raises(ValueError, match=r"output with shape \[3\] doesn't match the "
                                         r"broadcast shape \[2, 3\]"):
        iterator.elementwise("add", np.empty(3, np.float32), rand((2, 3)), rand((3,)))


@pytest.mark.parametrize("layout", ["F", "transposed", "negative", "sliced"])
def test_any_layout_gives_numpy_result(layout):
    a, b = rand((64, 48)), rand((64, 48), seed=1)
    if layout == "F":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "transposed":
        a, b = rand((48, 64)).T, rand((48, 64), seed=1).T
    elif layout == "negative":
        a, b = a[::-1, ::-1], b[:, ::-1]
    else:
        a, b = rand((128, 96))[::2, 1::2], rand((64, 96), seed=1)[:, ::2]
    out = np.empty((64, 48), np.float32, order="F" if layout == "F" else "C")
    iterator.elementwise("add", out, a, b)
    np.testing.assert_array_equal(out, a + b)


def test_zero_dim_scalar_input_broadcasts():
    a = rand((1000,))
    out = np.empty_like(a)
    iterator.elementwise("sub", out, a, np.array(0.25, np.float32))
    np.testing.assert_array_equal(out, a - np.float32(0.25))


def test_inputs_of_another_dtype_are_cast_in_chunks():
    a = np.arange(5000, dtype=np.int32).reshape(50, 100)
    b = rand((100,))
    out = np.empty((50, 100), np.float32)
    iterator.elementwise("add", out, a, b)
    np.testing.assert_array_equal(out, a.astype(np.float32) + b)


@pytest.mark.parametrize("sa,sb", [
    ((64, 100), (100,)),          # a row over every row
    ((64, 100), (64, 1)),         # a column
    ((8, 5, 40), (1, 5, 1)),      # repeated along two dims around a kept one
    ((3, 4, 50), (4, 1)),
    ((1000,), (1,)),
    ((6, 7), (7,)),               # repeated fewer than 4 times: left to the chunks
])
@pytest.mark.parametrize("btype", [np.int64, np.int8, np.float64, np.bool_])
def test_broadcast_inputs_of_another_dtype_give_numpy_result(sa, sb, btype):
    """Note [Broadcast inputs cast once] (sources/iterator/iterator.c)."""
    a = rand(sa)
    b = (np.random.default_rng(2).integers(-100, 100, sb) * 0.75).astype(btype)
    out = np.empty(np.broadcast_shapes(sa, sb), np.float32)
    iterator.elementwise("add", out, a, b)
    np.testing.assert_array_equal(out, a + b.astype(np.float32))
    iterator.elementwise("mul", out, b, a)  # the broadcast input first
    np.testing.assert_array_equal(out, b.astype(np.float32) * a)


def test_a_broadcast_row_of_another_dtype_in_views_gives_numpy_result():
    a = rand((40, 300))[:, ::3]                   # strided, 100 columns
    row = np.arange(-150, 150, dtype=np.int64)[::-3]  # negative stride, 100 elements
    out = np.empty((40, 100), np.float32)
    iterator.elementwise("sub", out, a, row)
    np.testing.assert_array_equal(out, a - row.astype(np.float32))
    expected = a + row.astype(np.float32)
    a = a.copy()
    iterator.elementwise("add", a, a, row)        # in place
    np.testing.assert_array_equal(a, expected)


def test_a_broadcast_input_that_aliases_the_output_is_read_first():
    out = rand((50, 64))
    row = out[0].view(np.int32)                   # the output's own first row, as int32
    expected = out + row.astype(np.float32)
    iterator.elementwise("add", out, out, row)
    np.testing.assert_array_equal(out, expected)


def test_output_of_another_dtype_is_cast_out():
    a, b = rand((3000,)), rand((3000,), seed=1)
    out = np.empty(3000, np.float64)
    iterator.elementwise("mul", out, a, b, dtype="float32")
    np.testing.assert_array_equal(out, (a * b).astype(np.float64))


def test_in_place_update_is_allowed():
    a, b = rand((1000,)), rand((1000,), seed=1)
    expected = a + b
    iterator.elementwise("add", a, a, b)
    np.testing.assert_array_equal(a, expected)


def test_partially_overlapping_input_is_read_before_it_is_overwritten():
    a = np.arange(100_000, dtype=np.float64)
    expected = a[:-1] + 1.0
    iterator.elementwise("add", a[1:], a[:-1], np.array(1.0))
    np.testing.assert_array_equal(a[1:], expected)


def test_reversed_view_of_the_output_is_read_before_it_is_overwritten():
    a = np.arange(1000, dtype=np.float32)
    expected = a + a[::-1]
    iterator.elementwise("add", a, a, a[::-1])
    np.testing.assert_array_equal(a, expected)


def test_self_overlapping_output_is_rejected():
    base = np.zeros(4, np.float32)
    out = np.lib.stride_tricks.as_strided(base, shape=(3, 4), strides=(0, 4))
    with pytest.raises(ValueError, match="output overlaps itself"):
        iterator.elementwise("add", out, rand((3, 4)), rand((3, 4)))


def test_loop_without_a_kernel_for_the_dtype_is_a_type_error():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(TypeError, match="sqrt has no loop for dtype int32"):
        iterator.elementwise("sqrt", x, x)


def test_wrong_number_of_inputs_is_reported():
    with pytest.raises(ValueError, match="add takes 2 inputs, got 1"):
        iterator.elementwise("add", rand((3,)), rand((3,)))


@pytest.mark.parametrize("op", ["add", "exp"])
def test_elementwise_results_do_not_depend_on_thread_count(threads, op):
    a, b = rand((300_001,)), rand((300_001,), seed=1)
    res = []
    for t in (1, 2, 3):
        iterator.set_num_threads(t)
        out = np.empty_like(a)
        iterator.elementwise(op, out, *([a, b] if op == "add" else [a]))
        res.append(out.tobytes())
    assert res[0] == res[1] == res[2]


def test_set_num_threads_rejects_zero(threads):
    with pytest.raises(ValueError, match="expected 1 to 256 threads, got 0"):
        iterator.set_num_threads(0)


@pytest.mark.parametrize("value, error, message", [
    (2**40, ValueError, "expected 1 to 256 threads, got 1099511627776"),  # not truncated to 0
    (2**32 + 2, ValueError, "got 4294967298"),
    (2**70, ValueError, "1180591620717411303424 is not a thread count"),
    (1.5, TypeError, "expected an int, got float"),
    ("2", TypeError, "expected an int, got str"),
])
def test_set_num_threads_names_a_bad_value(threads, value, error, message):
    with pytest.raises(error, match=message):
        iterator.set_num_threads(value)
    assert iterator.get_num_threads() == 1  # the setting is unchanged


def test_get_num_threads_reports_the_setting(threads):
    iterator.set_num_threads(2)
    assert iterator.get_num_threads() == 2


# ------------------------------------------------------------------ reductions

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dims,keepdim", [(None, False), ((0,), False), ((1,), True),
                                          ((0, 2), False), ((2,), True), ((0, 1, 2), True)])
def test_reductions_match_numpy(op, dtype, dims, keepdim):
    x = rand((6, 70, 9), dtype) - 1.0
    ref = getattr(np, {"max": "amax", "min": "amin"}.get(op, op))(x, axis=dims, keepdims=keepdim)
    out = np.empty(np.shape(ref), dtype)
    iterator.reduce(op, x, out, dims=dims, keepdim=keepdim)
    if op in ("max", "min"):
        np.testing.assert_array_equal(out, ref)
    else:
        np.testing.assert_allclose(out, ref, rtol=4 * np.finfo(dtype).eps * 70 * 9, atol=1e-6)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_propagate_nan(op):
    x = rand((4, 5), np.float64)
    x[2, 3] = np.nan
    out = np.empty(4)
    iterator.reduce(op, x, out, dims=(1,))
    assert np.isnan(out[2]) and not np.isnan(out[[0, 1, 3]]).any()


def test_max_of_empty_dim_is_an_error():
    with pytest.raises(ValueError, match="max of an empty set"):
        iterator.reduce("max", np.empty((3, 0)), np.empty(3), dims=(1,))


def test_reduction_output_shape_is_checked():
    with pytest.raises(ValueError, match=r"reduction output has shape \[3\], expected \[3, 1\]"):
        iterator.reduce("sum", np.ones((3, 4)), np.empty(3), dims=(1,), keepdim=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_full_sum_is_the_same_bits_for_any_thread_count(threads, dtype):
    x = np.random.default_rng(3).standard_normal(1_000_003).astype(dtype)
    got = set()
    for t in (1, 2, 3, 4):
        iterator.set_num_threads(t)
        out = np.empty((), dtype)
        iterator.reduce("sum", x, out)
        got.add(out.tobytes())
    assert got == {np.array(kernels.sum(x), dtype).tobytes()}


def test_sum_over_dims_does_not_depend_on_layout():
    x = rand((40, 30, 20), np.float32) - 1.0
    y = np.asfortranarray(x)
    a, b = np.empty(30, np.float32), np.empty(30, np.float32)
    iterator.reduce("sum", x, a, dims=(0, 2))
    iterator.reduce("sum", y, b, dims=(0, 2))
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("nd", [17, 20, 40])
def test_reduce_of_more_dims_than_a_tensor_has_names_the_limit(nd):
    """17-20 dims said "reduction dims out of range", 40 an OverflowError of
    the dim mask (found by fuzzing); elementwise already named the limit."""
    with pytest.raises(ValueError, match=f"operand x has {nd} dims; at most 16"):
        iterator.reduce("sum", np.ones((1,) * nd), np.zeros(()))
