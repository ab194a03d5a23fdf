"""A CUDA tensor's values on the host (issue 26, part 1): item(), float(),
int(), bool(), tolist(), repr() and str() copy what they need to the host
(the device-to-host copy, which waits for the device's queued work) and give
what the CPU tensor gives; repr names the device as torch does
(device='cuda:0', before dtype=); numpy() refuses with torch's words. Run on
the fake device of tests/fake_cuda_host.py (host memory tagged "cuda"), so
they skip where a real GPU is present; test_cuda_runtime.py checks the same
on a GPU."""

from __future__ import annotations

import math

import pytest

import dispatch
from dispatch import cuda

DTYPES = (dispatch.bool, dispatch.uint8, dispatch.int8, dispatch.int16, dispatch.int32,
          dispatch.int64, dispatch.float16, dispatch.bfloat16, dispatch.float32,
          dispatch.float64)
ids = pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)


def _values(d):
    """A 2x3 CPU tensor of d whose values survive d (fractions for floats)."""
    if d is dispatch.bool:
        return dispatch.tensor([[True, False, True], [False, False, True]])
    if d.is_floating_point:
        return dispatch.tensor([[-1.5, 0.25, 3.0], [100.5, -0.0, 7.75]], dtype=d)
    return dispatch.tensor([[1, -2, 3], [4, 5, -6]] if d is not dispatch.uint8 else
                           [[1, 2, 3], [4, 5, 255]], dtype=d)


@ids
def test_item_of_a_0dim_cuda_tensor_is_the_cpu_value_and_type(fake_cuda, d):
    c = _values(d)[1, 2].clone()
    assert c.ndim == 0
    got = c.cuda().item()
    assert got == c.item() and type(got) is type(c.item())


@ids
def test_item_of_a_one_element_cuda_tensor_of_any_shape_is_the_cpu_value(fake_cuda, d):
    c = _values(d)[1:, :1]  # shape (1, 1)
    assert c.cuda().item() == c.item()


@ids
def test_float_int_and_bool_of_a_cuda_tensor_are_the_cpu_ones(fake_cuda, d):
    c = _values(d)[0, 2].clone()
    g = c.cuda()
    assert (float(g), int(g), bool(g)) == (float(c), int(c), bool(c))


def test_float_of_a_nan_cuda_tensor_is_nan(fake_cuda):
    assert math.isnan(float(dispatch.tensor(float("nan")).cuda()))


@ids
def test_tolist_of_a_cuda_tensor_is_the_cpu_list(fake_cuda, d):
    c = _values(d)
    got = c.cuda().tolist()
    assert got == c.tolist()
    assert [type(v) for v in got[0]] == [type(v) for v in c.tolist()[0]]


def test_tolist_of_a_0dim_cuda_tensor_is_the_value(fake_cuda):
    assert dispatch.tensor(2.5).cuda().tolist() == 2.5


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 1)])
def test_tolist_of_an_empty_cuda_tensor_is_the_cpu_nesting(fake_cuda, shape):
    c = dispatch.empty(*shape)
    assert c.cuda().tolist() == c.tolist()


VIEWS = {"T": lambda t: t.T, "every_other_column": lambda t: t[:, ::2],
         "one_column": lambda t: t[:, 1], "row": lambda t: t[1],
         "corner": lambda t: t[1:, 1:], "expanded": lambda t: t[:1].expand(3, 6)}


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_non_contiguous_cuda_views_give_the_cpu_views_values(fake_cuda, view):
    c = dispatch.arange(24, dtype=dispatch.float32).reshape(4, 6)
    cv, gv = view(c), view(c.cuda())
    assert gv.tolist() == cv.tolist()
    assert repr(gv) == repr(cv)[:-1] + ", device='cuda:0')"


def test_item_of_an_element_of_a_strided_cuda_view_is_that_element(fake_cuda):
    c = dispatch.arange(24, dtype=dispatch.int32).reshape(4, 6)
    assert c.cuda().T[5, 3].item() == c.T[5, 3].item() == 23


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)])
def test_item_of_a_cuda_tensor_not_of_one_element_is_the_cpu_error(fake_cuda, shape):
    n = math.prod(shape)
    with pytest.raises(ValueError, match=f"a Tensor with {n} elements cannot be converted to "
                                         "Scalar"):
        dispatch.zeros(*shape).item()  # the CPU's error ...
    with pytest.raises(ValueError, match=f"a Tensor with {n} elements cannot be converted to "
                                         "Scalar"):
        dispatch.zeros(*shape, device="cuda").item()  # ... word for word


def test_item_of_a_cuda_tensor_copies_one_element_device_to_host(fake_cuda):
    """The value comes through the device-to-host copy (cudaMemcpy, which
    waits for the device's queued work), never a host read of device memory."""
    g = dispatch.arange(6, dtype=dispatch.float64).cuda()[4]
    copies = []
    host_memcpy = cuda.memcpy

    def counting(dst, src, n, kind):
        copies.append((n, kind))
        host_memcpy(dst, src, n, kind)

    fake_cuda.setattr(cuda, "memcpy", counting)
    assert g.item() == 4.0
    assert copies == [(8, cuda.D2H)]


def test_repr_of_a_cuda_tensor_names_cuda_0_as_torch_does(fake_cuda):
    assert repr(dispatch.tensor([1.0, 2.0]).cuda()) == "tensor([1., 2.], device='cuda:0')"


def test_repr_of_a_cuda_tensor_puts_the_device_before_the_dtype(fake_cuda):
    g = dispatch.tensor([1, 2], dtype=dispatch.int8).cuda()
    assert repr(g) == "tensor([1, 2], device='cuda:0', dtype=dispatch.int8)"


@ids
def test_repr_and_str_of_a_cuda_tensor_are_the_cpu_ones_plus_the_device(fake_cuda, d):
    c = _values(d)
    want = repr(c).replace(", dtype=", ", device='cuda:0', dtype=") if ", dtype=" in repr(c) \
        else repr(c)[:-1] + ", device='cuda:0')"
    assert repr(c.cuda()) == want
    assert str(c.cuda()) == want


@pytest.mark.parametrize("d", [dispatch.float16, dispatch.bfloat16], ids=lambda d: d.name)
def test_repr_of_a_0dim_half_cuda_tensor(fake_cuda, d):
    c = dispatch.tensor(0.1, dtype=d)
    assert repr(c.cuda()) == repr(c).replace(", dtype=", ", device='cuda:0', dtype=")


def test_repr_of_an_empty_cuda_tensor(fake_cuda):
    assert repr(dispatch.empty(0).cuda()) == "tensor([], device='cuda:0')"


def test_repr_of_a_large_cuda_tensor_is_the_cpu_summary(fake_cuda):
    c = dispatch.arange(5000, dtype=dispatch.float64).reshape(50, 100)
    assert repr(c.cuda()) == repr(c).replace(", dtype=", ", device='cuda:0', dtype=")
    assert "..." in repr(c)


def test_numpy_of_a_cuda_tensor_says_to_call_cpu_first_as_torch(fake_cuda):
    g = dispatch.ones(2).cuda()
    msg = (r"can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\) to copy "
           r"the tensor to host memory first\.")
    with pytest.raises(TypeError, match=msg):
        g.numpy()


def test_numpy_asarray_of_a_cuda_tensor_says_to_call_cpu_first(fake_cuda):
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"Use Tensor\.cpu\(\) to copy the tensor to host"):
        np.asarray(dispatch.ones(2).cuda())


def test_numpy_of_cpu_copy_of_a_cuda_tensor_works(fake_cuda):
    assert dispatch.arange(3).cuda().cpu().numpy().tolist() == [0, 1, 2]


# meta tensors hold shapes only: nothing to copy ---------------------------------------------

def test_item_of_a_meta_tensor_is_refused_as_torch():
    m = dispatch.empty(1, device="meta")
    for get in (m.item, lambda: float(m), lambda: int(m), lambda: bool(m)):
        with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta "
                                               "tensors"):
            get()


def test_tolist_of_a_meta_tensor_is_refused_as_torch():
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        dispatch.empty(2, device="meta").tolist()


def test_repr_of_a_meta_tensor_gives_device_then_size_as_torch():
    m = dispatch.empty(3, 2, device="meta", dtype=dispatch.int8)
    assert repr(m) == "tensor(..., device='meta', size=(3, 2), dtype=dispatch.int8)"


def test_repr_of_a_large_cuda_tensor_copies_only_the_edges(fake_cuda):
    """Past the summary threshold repr reads the shown rows' edges, two copies
    per shown row, not the whole tensor nor one copy per element."""
    g = dispatch.arange(100_000, dtype=dispatch.float64).reshape(1000, 100).cuda()
    copies = []
    host_memcpy = cuda.memcpy

    def counting(dst, src, n, kind):
        copies.append(n)
        host_memcpy(dst, src, n, kind)

    fake_cuda.setattr(cuda, "memcpy", counting)
    repr(g)
    assert len(copies) == 2 * 6 and sum(copies) == 6 * 6 * 8  # 6 rows, 3 + 3 values each
