"""Issue 10, item 3: the raw-buffer modules (dispatch.kernels, dispatch.iterator)
check every argument, and read-only memory is never written through a tensor.

Each of these once read or wrote past a buffer, dereferenced NULL or wrote
into read-only memory (ASan: heap-buffer-overflow in triad.dispatch.c and
arith.dispatch.c, SEGV in the fill/addcmul loops and on read-only memmaps).
Now each is one clear ValueError or TypeError, and the memory is untouched.
"""

from __future__ import annotations

import array
import math

import numpy as np
import pytest

import dispatch as d
from dispatch import iterator, kernels


def readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@pytest.fixture
def memmap_ro(tmp_path):
    path = tmp_path / "data.f64"
    np.arange(8.0).tofile(path)
    m = np.memmap(path, dtype=np.float64, mode="r")
    yield m
    del m


# dispatch.kernels --------------------------------------------------------------------------

def test_triad_with_buffers_of_unequal_length_raises_not_overflows():
    a, b, c = np.zeros(4), np.ones(1000), np.ones(2)
    with pytest.raises(ValueError, match="length mismatch: a has 4 elements, b has 1000"):
        kernels.triad(a, b, c, 2.0)
    with pytest.raises(ValueError, match="length mismatch: a has 4 elements, c has 2"):
        kernels.triad(a, np.ones(4), c, 2.0)
    assert not a.any()


def test_triad_still_computes_b_plus_s_c():
    a, b, c = np.zeros(5), np.arange(5.0), np.full(5, 2.0)
    kernels.triad(a, b, c, 3.0)
    assert a.tolist() == [6.0, 7.0, 8.0, 9.0, 10.0]


def test_triad_refuses_non_float64_and_strided_buffers():
    with pytest.raises(TypeError, match="float64"):
        kernels.triad(np.zeros(4, np.float32), np.zeros(4, np.float32),
                      np.zeros(4, np.float32), 1.0)
    with pytest.raises(ValueError, match="contiguous"):
        kernels.triad(np.zeros(8)[::2], np.zeros(4), np.zeros(4), 1.0)


def test_bytearray_is_counted_in_elements_not_bytes():
    raw = bytearray(32)  # 4 float64, not 32
    with pytest.raises(TypeError, match=r"counts bytes.*cast\('d'\)"):
        kernels.triad(raw, np.ones(32), np.ones(32), 1.0)
    with pytest.raises(TypeError, match="format 'B'"):
        kernels.run("add", raw, np.ones(32), np.ones(32))
    with pytest.raises(TypeError, match="format 'B'"):
        kernels.sum(raw)
    # the cast view has 4 elements: a length mismatch against 32, 4 works
    with pytest.raises(ValueError, match="length mismatch"):
        kernels.triad(memoryview(raw).cast("d"), np.ones(32), np.ones(32), 1.0)
    kernels.triad(memoryview(raw).cast("d"), np.ones(4), np.ones(4), 1.0)
    assert np.frombuffer(raw).tolist() == [2.0] * 4


def test_run_with_inputs_missing_raises_not_crashes():
    out = np.zeros(4)
    with pytest.raises(ValueError, match="add takes 2 input"):
        kernels.run("add", out)
    with pytest.raises(ValueError, match="add takes 2 input"):
        kernels.run("add", out, np.ones(4))
    with pytest.raises(ValueError, match="addcmul takes 3 input"):
        kernels.run("addcmul", out, np.ones(4), np.ones(4), ctx=1.0)
    with pytest.raises(ValueError, match="sqrt takes 1 input"):
        kernels.run("sqrt", out, np.ones(4), np.ones(4))


def test_run_with_inputs_of_unequal_length_raises():
    with pytest.raises(ValueError, match="length mismatch: out has 4 elements, input 2 has 3"):
        kernels.run("add", np.zeros(4), np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="length mismatch"):
        kernels.run("exp", np.zeros(2), np.ones(1000))


def test_run_addcmul_without_ctx_raises_not_dereferences_null():
    with pytest.raises(TypeError, match="addcmul needs ctx"):
        kernels.run("addcmul", np.zeros(4), np.ones(4), np.ones(4), np.ones(4))


def test_run_ctx_on_a_loop_that_ignores_it_raises():
    with pytest.raises(TypeError, match="mul takes no ctx"):
        kernels.run("mul", np.zeros(4), np.ones(4), np.ones(4), ctx=2.0)
    with pytest.raises(TypeError, match="ctx must be a real number, got str"):
        kernels.run("add", np.zeros(4), np.ones(4), np.ones(4), ctx="2")
    out = np.zeros(2, np.float32)
    kernels.run("add", out, np.ones(2, np.float32), np.ones(2, np.float32), ctx=np.float32(2))
    assert out.tolist() == [3.0, 3.0]


def test_unknown_op_names_are_a_clear_error():
    with pytest.raises(ValueError, match="no SIMD kernel 'cosh'; known: add"):
        kernels.run("cosh", np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="no SIMD kernel 'cosh'"):
        kernels.time_loop("cosh", np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="unknown loop 'cosh'; known: add"):
        iterator.elementwise("cosh", np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="unknown reduction 'cosh'; known: sum"):
        iterator.reduce("cosh", np.ones(4), np.zeros(()))


def test_sum_of_float16_raises_not_reads_it_as_float64():
    with pytest.raises(TypeError, match="float32 or float64 buffer, got float16"):
        kernels.sum(np.ones(4, np.float16))
    with pytest.raises(TypeError, match="float32 or float64 buffer, got float16"):
        kernels.time_loop("sum", np.zeros(1, np.float16), np.ones(4, np.float16))
    assert kernels.sum(np.ones(4, np.float32)) == 4.0


def test_kernels_never_write_into_bytes():
    b = bytes(32)
    before = bytes(b)
    with pytest.raises(ValueError, match="out is read-only"):
        kernels.run("add", memoryview(b).cast("d"), np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="a is read-only"):
        kernels.triad(memoryview(b).cast("d"), np.ones(4), np.ones(4), 1.0)
    with pytest.raises(ValueError, match="out is read-only"):
        kernels.time_loop("add", memoryview(b).cast("d"), np.ones(4), np.ones(4))
    assert b == before
    # a code constant: the same refusal
    with pytest.raises(ValueError, match="read-only"):
        kernels.run("exp", memoryview(b"\0" * 8).cast("d"), np.zeros(1))
    assert b"\0" * 8 == bytes(8)


def test_kernels_honour_numpys_readonly_flag():
    out = readonly(np.zeros(4))
    with pytest.raises(ValueError, match="out is read-only"):
        kernels.run("add", out, np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="a is read-only"):
        kernels.triad(out, np.ones(4), np.ones(4), 1.0)
    assert not out.any()
    # read-only inputs are fine
    res = np.zeros(4)
    kernels.run("add", res, readonly(np.ones(4)), np.broadcast_to(np.float64(2), (4,)))
    assert res.tolist() == [3.0] * 4


def test_kernels_refuse_a_readonly_memmap_output(memmap_ro):
    with pytest.raises(ValueError, match="read-only"):
        kernels.run("add", memmap_ro, np.ones(8), np.ones(8))
    with pytest.raises(ValueError, match="read-only"):
        kernels.triad(memmap_ro, np.ones(8), np.ones(8), 1.0)
    with pytest.raises(ValueError, match="read-only"):
        iterator.elementwise("add", memmap_ro, np.ones(8), np.ones(8))
    assert memmap_ro.tolist() == list(np.arange(8.0))
    assert kernels.sum(memmap_ro) == 28.0  # reading is fine


def test_kernels_output_that_overlaps_itself_or_an_input_partially_raises():
    x = np.arange(8.0)
    with pytest.raises(ValueError, match="stride 0"):
        kernels.run("add", np.lib.stride_tricks.as_strided(x, (4,), (0,)), x[:4], x[:4])
    with pytest.raises(ValueError, match="partially overlaps input 1"):
        kernels.run("add", x[1:5], x[:4], x[4:])
    kernels.run("add", x[:4], x[:4], x[4:])  # exactly in place is fine
    assert x[:4].tolist() == [4.0, 6.0, 8.0, 10.0]


def test_kernels_refuse_objects_without_a_buffer():
    with pytest.raises(TypeError, match="kernels take buffers.*list"):
        kernels.run("exp", [0.0, 0.0], np.ones(2))
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        kernels.sum(array.array("i", [1, 2]))
    with pytest.raises(ValueError, match="1-d"):
        kernels.sum(np.ones((2, 2)))


def test_time_loop_triad_without_ctx_raises_not_dereferences_null():
    a, b, c = np.zeros(4), np.ones(4), np.ones(4)
    with pytest.raises(TypeError, match="triad needs ctx"):
        kernels.time_loop("triad", a, b, c)
    best, median = kernels.time_loop("triad", a, b, c, ctx=2.0, reps=2, rounds=3)
    assert 0 < best <= median and a.tolist() == [3.0] * 4


def test_time_loop_with_buffers_of_unequal_length_raises_not_overflows():
    with pytest.raises(ValueError, match="length mismatch"):
        kernels.time_loop("add", np.zeros(4), np.ones(1000), np.ones(1000))
    with pytest.raises(ValueError, match="length mismatch"):
        kernels.time_loop("triad", np.zeros(4), np.ones(1000), np.ones(2), ctx=1.0)
    with pytest.raises(ValueError, match="add takes 2 input"):
        kernels.time_loop("add", np.zeros(4))
    with pytest.raises(TypeError, match="sum's out must be a 1-element float64"):
        kernels.time_loop("sum", np.zeros(0), np.ones(4))
    with pytest.raises(ValueError, match="rounds must be"):
        kernels.time_loop("add", np.zeros(4), np.ones(4), np.ones(4), rounds=65)
    with pytest.raises(ValueError, match="reps must be"):
        kernels.time_loop("add", np.zeros(4), np.ones(4), np.ones(4), reps=0)
    out = np.zeros(1)
    kernels.time_loop("sum", out, np.ones(10), reps=1, rounds=1)
    assert out[0] == 10.0


def test_c_entry_points_refuse_null_ctx_for_loops_that_read_it():
    from dispatch._core import ffi, lib

    a = np.zeros(4)
    data = ffi.new("char *[]", [ffi.cast("char *", a.ctypes.data)] * 4)
    steps = ffi.new("intptr_t[]", [8] * 4)
    res = ffi.new("double[2]")
    assert lib.dispatch_kernels_run(kernels.LOOPS["addcmul"], 8, data, steps, 4, ffi.NULL) == -1
    assert lib.dispatch_kernels_time(-2, 8, data, steps, 4, ffi.NULL, 1, 1, res) == -1
    assert lib.dispatch_kernels_time(-1, 6, data, steps, 4, ffi.NULL, 1, 1, res) == -1
    assert lib.dispatch_kernels_run(0, 8, data, steps, -1, ffi.NULL) == -1


# dispatch.iterator -------------------------------------------------------------------------

def test_elementwise_fill_without_ctx_raises_not_dereferences_null():
    a = np.zeros(4)
    with pytest.raises(TypeError, match="fill needs ctx"):
        iterator.elementwise("fill", a)
    with pytest.raises(TypeError, match="addcmul needs ctx"):
        iterator.elementwise("addcmul", a, a, a, a)
    iterator.elementwise("fill", a, ctx=2.5)
    assert a.tolist() == [2.5] * 4


def test_elementwise_op_in_c_refuses_null_ctx_for_fill():
    from dispatch._core import ffi, lib

    a = np.zeros(4)
    shp, std = ffi.new("int64_t[]", [4]), ffi.new("int64_t[]", [8])
    ops = ffi.new("dispatch_iter_operand[]", 1)
    ops[0].data, ops[0].ndim, ops[0].shape, ops[0].strides, ops[0].dtype = (
        ffi.cast("char *", a.ctypes.data), 1, shp, std, 8)
    assert lib.dispatch_iter_elementwise_op(iterator.LOOPS["fill"], 8, 1, ops, ffi.NULL) == -1
    assert b"fill needs its scalar value" in ffi.string(lib.dispatch_error_message())


def test_elementwise_ctx_in_every_dtype_and_out_of_range():
    for name in ("int8", "int16", "int32", "int64", "float16", "float32", "float64"):
        a = np.zeros(3, np.dtype(name))
        iterator.elementwise("fill", a, ctx=3)
        assert a.tolist() == [3] * 3
    with pytest.raises(OverflowError, match="does not fit the loop's dtype int8"):
        iterator.elementwise("fill", np.zeros(3, np.int8), ctx=300)
    with pytest.raises(TypeError, match="sqrt takes no ctx"):
        iterator.elementwise("sqrt", np.zeros(3), np.ones(3), ctx=1.0)


def test_elementwise_refuses_readonly_output_and_bytes():
    out = readonly(np.zeros(4))
    with pytest.raises(ValueError, match="out is read-only"):
        iterator.elementwise("add", out, np.ones(4), np.ones(4))
    b = bytes(16)
    with pytest.raises(ValueError, match="out is read-only"):
        iterator.elementwise("fill", b, ctx=1)
    with pytest.raises(ValueError, match="out is read-only"):
        iterator.reduce("sum", np.ones(4), readonly(np.zeros(())))
    assert b == bytes(16) and not out.any()


def test_elementwise_counts_buffer_elements_not_bytes():
    raw = bytearray(8)  # 8 uint8 elements
    iterator.elementwise("fill", raw, ctx=7)
    assert raw == bytearray([7] * 8)
    d64 = bytearray(16)
    iterator.elementwise("fill", memoryview(d64).cast("d"), ctx=1.5)
    assert np.frombuffer(d64).tolist() == [1.5, 1.5]
    with pytest.raises(ValueError, match=r"shapes \[2\] and \[16\] cannot be broadcast"):
        iterator.elementwise("add", memoryview(d64).cast("d"), np.ones(16), np.ones(16))


def test_elementwise_unknown_dtype_and_non_buffers_are_clear_errors():
    with pytest.raises(ValueError, match="unknown dtype 'float128'"):
        iterator.elementwise("add", np.zeros(2), np.ones(2), np.ones(2), dtype="float128")
    with pytest.raises(TypeError, match="input 1 must be a NumPy array or a buffer"):
        iterator.elementwise("exp", np.zeros(2), object())


def test_reduce_dims_out_of_range_or_repeated_raise_not_wrap():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="dim 5 out of range for 2 dims"):
        iterator.reduce("sum", x, np.zeros(3), dims=(5,))
    with pytest.raises(ValueError, match="dim 0 appears more than once"):
        iterator.reduce("sum", x, np.zeros(3), dims=(0, 0))
    with pytest.raises(ValueError, match="appears more than once"):
        iterator.reduce("sum", x, np.zeros(3), dims=(0, -2))
    out = np.zeros(3)
    iterator.reduce("sum", x, out, dims=(-2,))
    assert out.tolist() == [3.0, 5.0, 7.0]


# read-only tensors ---------------------------------------------------------------------------

def _every_write(t: d.Tensor) -> list:
    return [
        ("add_", lambda: t.add_(1)),
        ("sub_", lambda: t.sub_(d.ones(*t.shape, dtype=t.dtype))),
        ("mul_", lambda: t.mul_(2)),
        ("div_", lambda: t.div_(2)),
        ("+=", lambda: t.__iadd__(1)),
        ("*=", lambda: t.__imul__(2)),
        ("fill_", lambda: t.fill_(0)),
        ("copy_", lambda: t.copy_(d.zeros(*t.shape, dtype=t.dtype))),
        ("setitem", lambda: t.__setitem__(0, 5)),
        ("setitem tensor", lambda: t.__setitem__(slice(None), d.zeros(*t.shape, dtype=t.dtype))),
        ("view add_", lambda: t[1:].add_(1)),
        ("expand view", lambda: t[:1].expand(3).add_(0) if t.ndim == 1 else None),
        ("ops.add_", lambda: d.ops.add_(t, 1)),
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.float16])
def test_from_numpy_of_a_readonly_array_is_readonly_and_every_write_raises(dtype):
    a = readonly(np.arange(4).astype(dtype))
    t = d.from_numpy(a)
    for what, write in _every_write(t):
        with pytest.raises(ValueError, match="read-only"):
            write()
            pytest.fail(f"{what} wrote into a read-only tensor")
    assert a.tolist() == [0, 1, 2, 3]
    # reading works, and the results are ordinary writable tensors
    r = t + 1
    r.add_(1)
    assert r.tolist() == [2, 3, 4, 5]
    c = t.clone()
    c.add_(1)
    assert c.tolist() == [1, 2, 3, 4]


def test_from_numpy_of_a_readonly_memmap_add_raises_not_crashes(memmap_ro):
    t = d.from_numpy(memmap_ro)
    with pytest.raises(ValueError, match=r"add_.*read-only"):
        t.add_(1)
    with pytest.raises(ValueError, match="read-only"):
        t += 1
    assert float(t.sum()) == 28.0


def test_from_numpy_of_bytes_is_readonly():
    b = bytes(16)
    t = d.from_numpy(np.frombuffer(b, dtype=np.float64))
    with pytest.raises(ValueError, match="read-only"):
        t.fill_(1.0)
    with pytest.raises(ValueError, match="read-only"):
        t[0] = 1.0
    assert b == bytes(16)


def test_readonly_tensor_is_readonly_as_an_input_only_when_written():
    t = d.from_numpy(readonly(np.ones(3)))
    out = d.zeros(3, dtype=d.float64)
    out.copy_(t)
    out.add_(t)
    assert out.tolist() == [2.0] * 3


def test_numpy_export_of_a_readonly_tensor_is_readonly():
    t = d.from_numpy(readonly(np.ones(3)))
    for arr in (t.numpy(), np.asarray(t), np.asarray(t[1:]), t.T.numpy() if t.ndim > 1
                else t[::2].numpy()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 5
    assert d.from_numpy(np.ones(3)).numpy().flags.writeable
    assert d.ones(3).numpy().flags.writeable


def test_writable_from_numpy_still_writes_through():
    a = np.zeros(3)
    t = d.from_numpy(a)
    t.add_(1)
    t[0] = 5
    assert a.tolist() == [5.0, 1.0, 1.0]


def test_readonly_flag_on_a_python_defined_inplace_op():
    from dispatch import library

    library.define("hostile_lowlevel_touch_(Tensor(a!) self) -> Tensor(a!)")

    @library.impl("hostile_lowlevel_touch_", "CPU")
    def _touch(self):
        return self.fill_(1)

    t = d.from_numpy(readonly(np.zeros(2)))
    with pytest.raises(ValueError, match="hostile_lowlevel_touch_.*read-only"):
        d.ops.hostile_lowlevel_touch_(t)
    w = d.zeros(2, dtype=d.float64)
    assert d.ops.hostile_lowlevel_touch_(w).tolist() == [1.0, 1.0]


def test_readonly_sum_and_math_functions_still_work():
    t = d.from_numpy(readonly(np.array([1.0, 4.0, 9.0])))
    assert t.sqrt().tolist() == [1.0, 2.0, 3.0]
    assert math.isclose(float(t.mean()), 14 / 3)
