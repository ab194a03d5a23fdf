"""DLPack both ways, zero-copy, for CPU tensors (Note [DLPack] in sources/core/dlpack.c)."""

import gc
import weakref

import numpy as np
import pytest

import dispatch

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _sample(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    return (a % 2 == 1) if dtype == "bool" else a.astype(dtype)


def _capsule_name(c):
    return repr(c).split('"')[1]


class _Spy:
    """A producer recording how it was asked (and delegating to a real one)."""

    def __init__(self, inner, legacy=False):
        self.inner, self.legacy, self.calls = inner, legacy, []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.legacy and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


# Export: dispatch -> NumPy ---------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_numpy_from_dlpack_of_every_dtype_shares_memory(name):
    src = _sample(name)
    t = dispatch.tensor(src)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(name) and a.shape == (3, 4)
    np.testing.assert_array_equal(a, src)
    assert a.__array_interface__["data"][0] == t.data_ptr()
    a[0, 0] = a[1, 1]  # a write through NumPy is seen by the tensor
    assert t[0, 0].item() == t[1, 1].item()


def test_write_through_the_tensor_is_seen_by_numpy():
    t = dispatch.zeros(5)
    a = np.from_dlpack(t)
    t[2] = 7.0
    assert a.tolist() == [0, 0, 7, 0, 0]


@pytest.mark.parametrize("view", [
    lambda t: t.T,
    lambda t: t[:, ::2],
    lambda t: t[1:, 2:],
    lambda t: t[::2, 1::3],
    lambda t: t.T[1:3],
    lambda t: t[1],
    lambda t: t[1, 2],
    lambda t: t[:0],
])
def test_views_keep_strides_and_offsets_on_export(view):
    t = view(dispatch.arange(30).view(5, 6))
    a = np.from_dlpack(t)
    assert a.shape == t.shape
    for n, st, ast in zip(a.shape, t.stride(), a.strides):
        if n > 1:
            assert st * 8 == ast
    np.testing.assert_array_equal(a, view(np.arange(30).reshape(5, 6)))
    if t.numel():
        assert a.__array_interface__["data"][0] == t.data_ptr()
        a[...] = -1
        assert all(v == -1 for v in t.contiguous().view(-1).tolist())


def test_dlpack_device_is_cpu():
    assert dispatch.zeros(2).__dlpack_device__() == (1, 0)


def test_stream_other_than_none_is_refused_on_cpu():
    t = dispatch.zeros(2)
    for stream in (0, 1, -1, 2):
        with pytest.raises(ValueError, match="stream must be None"):
            t.__dlpack__(stream=stream)
    assert _capsule_name(t.__dlpack__(stream=None)) == "dltensor"


def test_dl_device_other_than_cpu_is_refused():
    t = dispatch.zeros(2)
    with pytest.raises(BufferError, match="DLPack device"):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    assert _capsule_name(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0))) == \
        "dltensor_versioned"


def test_max_version_picks_versioned_or_legacy_capsule():
    t = dispatch.zeros(2)
    assert _capsule_name(t.__dlpack__()) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(t.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"


def test_meta_tensor_is_refused():
    t = dispatch.empty(2, device="meta")
    with pytest.raises(BufferError, match="meta"):
        t.__dlpack__()
    with pytest.raises(BufferError, match="meta"):
        t.__dlpack_device__()


def test_read_only_tensor_exports_read_only_or_is_refused_unversioned():
    src = np.arange(4.0)
    src.flags.writeable = False
    t = dispatch.from_numpy(src)
    a = np.from_dlpack(t)  # NumPy asks for the versioned protocol
    assert not a.flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()  # a legacy capsule cannot say "read-only"
    c = np.from_dlpack(t, copy=True)
    assert c.flags.writeable and c.tolist() == [0, 1, 2, 3]


def test_copy_true_exports_a_copy():
    t = dispatch.arange(4)
    a = np.from_dlpack(t, copy=True)
    a[0] = 9
    assert t.tolist() == [0, 1, 2, 3]


def test_exported_memory_outlives_the_tensor_and_is_freed_after_both():
    gc.collect()
    before = dispatch.live_storages()
    t = dispatch.arange(6).view(2, 3)
    a = np.from_dlpack(t.T)
    del t
    gc.collect()
    assert dispatch.live_storages() == before + 1  # the consumer keeps the storage
    assert a.tolist() == [[0, 3], [1, 4], [2, 5]]
    del a
    gc.collect()
    assert dispatch.live_storages() == before


@pytest.mark.parametrize("versioned", [False, True])
def test_unconsumed_capsule_releases_the_storage(versioned):
    gc.collect()
    before = dispatch.live_storages()
    t = dispatch.arange(6)
    c = t.__dlpack__(max_version=(1, 0) if versioned else None)
    del t
    gc.collect()
    assert dispatch.live_storages() == before + 1
    del c
    gc.collect()
    assert dispatch.live_storages() == before


# Import: NumPy -> dispatch ---------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_from_dlpack_of_every_numpy_dtype_shares_memory(name):
    src = _sample(name)
    t = dispatch.from_dlpack(src)
    assert t.dtype.name == name and t.shape == (3, 4)
    assert t.data_ptr() == src.__array_interface__["data"][0]
    np.testing.assert_array_equal(t.numpy(), src)
    t[0, 0] = t[1, 1]  # a write through the tensor is seen by NumPy
    assert src[0, 0] == src[1, 1]
    src[2, 3] = src[0, 1]
    assert t[2, 3].item() == t[0, 1].item()


@pytest.mark.parametrize("view", [
    lambda a: a.T,
    lambda a: a[:, ::2],
    lambda a: a[1:, 2:],
    lambda a: a[::2, 1::3],
    lambda a: a.transpose(1, 0)[1:3],
    lambda a: a[1],
    lambda a: a[1, 2, ...],
    lambda a: a[:0],
    lambda a: a[:, None, 1:2],
])
def test_numpy_views_keep_strides_and_offsets_on_import(view):
    base = np.arange(30, dtype=np.int32).reshape(5, 6)
    a = view(base)
    t = dispatch.from_dlpack(a)
    assert t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    for n, st, ast in zip(a.shape, t.stride(), a.strides):
        if n > 1:
            assert st * 4 == ast
    if a.size:
        assert t.data_ptr() == a.__array_interface__["data"][0]
        t.fill_(-1)
        assert (a == -1).all()


def test_dispatch_round_trip_through_itself():
    t = dispatch.arange(12).view(3, 4)[:, 1::2]
    u = dispatch.from_dlpack(t)
    assert u.shape == t.shape and u.stride() == t.stride() and u.data_ptr() == t.data_ptr()
    u.fill_(0)
    assert t.tolist() == [[0, 0], [0, 0], [0, 0]]


def test_read_only_numpy_array_gives_read_only_tensor():
    src = np.arange(4.0)
    src.flags.writeable = False
    t = dispatch.from_dlpack(src)
    assert t.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        t.fill_(1)
    with pytest.raises(ValueError):
        t[1:].add_(1)
    assert src.tolist() == [0, 1, 2, 3]
    assert not t.numpy().flags.writeable


def test_versioned_protocol_is_asked_first():
    spy = _Spy(np.arange(3.0))
    t = dispatch.from_dlpack(spy)
    assert spy.calls == [{"max_version": (1, 0)}]
    assert t.tolist() == [0, 1, 2]


def test_legacy_producer_without_max_version_falls_back():
    src = np.arange(3.0)
    spy = _Spy(src, legacy=True)
    t = dispatch.from_dlpack(spy)
    assert spy.calls == [{"max_version": (1, 0)}, {}]
    t[0] = 5
    assert src[0] == 5


def test_raw_capsule_is_accepted_and_consumed_once():
    src = np.arange(3.0)
    for capsule in (src.__dlpack__(), src.__dlpack__(max_version=(1, 0))):
        t = dispatch.from_dlpack(capsule)
        assert _capsule_name(capsule).startswith("used_")
        assert t.data_ptr() == src.__array_interface__["data"][0]
        with pytest.raises(ValueError, match="consumed already"):
            dispatch.from_dlpack(capsule)


def test_capsule_consumed_by_another_library_is_refused():
    c = dispatch.arange(3).__dlpack__()
    np.from_dlpack(_CapsuleHolder(c))
    with pytest.raises(ValueError, match="consumed already"):
        dispatch.from_dlpack(c)


class _CapsuleHolder:
    def __init__(self, c):
        self.c = c

    def __dlpack__(self, **kwargs):
        return self.c

    def __dlpack_device__(self):
        return (1, 0)


def test_non_dlpack_objects_are_refused():
    with pytest.raises(TypeError, match="__dlpack__"):
        dispatch.from_dlpack([1, 2, 3])


def test_unsupported_dtype_is_refused_and_released():
    src = np.arange(3, dtype=np.complex64)
    ref = weakref.ref(src)
    capsule = src.__dlpack__()
    del src
    with pytest.raises(TypeError, match="complex, 64 bits"):
        dispatch.from_dlpack(capsule)
    del capsule
    gc.collect()
    assert ref() is None  # the deleter ran


@pytest.mark.skipif(dispatch.cuda.is_available(),
                    reason="a GPU is present: CUDA producers are imported (test_dlpack_cuda.py)")
def test_non_cpu_producer_is_refused_clearly():
    class OnCuda:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not asked for a capsule")

    with pytest.raises(BufferError, match="CUDA device"):
        dispatch.from_dlpack(OnCuda())


def test_device_argument_other_than_cpu_is_refused():
    with pytest.raises(ValueError, match="device"):
        dispatch.from_dlpack(np.arange(2.0), device="meta")


def test_copy_true_import_is_a_copy():
    src = np.arange(3.0)
    t = dispatch.from_dlpack(src, copy=True)
    t.fill_(1)
    assert src.tolist() == [0, 1, 2]


def test_imported_memory_outlives_the_producer_and_is_released_after():
    gc.collect()
    before = dispatch.live_storages()
    src = np.arange(6.0)
    ref = weakref.ref(src)
    t = dispatch.from_dlpack(src)[1::2]
    del src
    gc.collect()
    assert ref() is not None and t.tolist() == [1, 3, 5]  # the tensor keeps NumPy's array
    assert dispatch.live_storages() == before + 1
    del t
    gc.collect()
    assert ref() is None
    assert dispatch.live_storages() == before


def test_zero_dim_and_empty_import():
    t = dispatch.from_dlpack(np.array(2.5, dtype=np.float32))
    assert t.shape == () and t.item() == 2.5
    e = dispatch.from_dlpack(np.zeros((0, 3)))
    assert e.shape == (0, 3) and e.numel() == 0


# PyTorch ---------------------------------------------------------------------------------

def test_torch_round_trips_share_memory():
    torch = pytest.importorskip("torch")
    t = dispatch.arange(12, dtype=dispatch.float32).view(3, 4)
    p = torch.from_dlpack(t.T)
    assert p.shape == (4, 3) and p.stride() == t.T.stride()
    p[0, 1] = 100
    assert t[1, 0].item() == 100
    q = torch.arange(20, dtype=torch.int64).view(4, 5)[1:, ::2]
    u = dispatch.from_dlpack(q)
    assert u.shape == tuple(q.shape) and u.stride() == q.stride()
    assert u.data_ptr() == q.data_ptr()
    u.fill_(-3)
    assert (q == -3).all()


@pytest.mark.parametrize("name", DTYPES)
def test_torch_every_dtype_both_ways(name):
    torch = pytest.importorskip("torch")
    src = _sample(name)
    p = torch.from_dlpack(dispatch.tensor(src))
    assert str(p.dtype) == f"torch.{name}"
    np.testing.assert_array_equal(p.numpy(), src)
    u = dispatch.from_dlpack(torch.from_numpy(src.copy()))
    assert u.dtype.name == name
    np.testing.assert_array_equal(u.numpy(), src)


def test_torch_bfloat16_comes_in_without_a_copy():
    """bfloat16 is a dtype here since issue 13's dtype work (it was refused
    before): kDLBfloat 16 maps to it, sharing torch's memory."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, dtype=torch.bfloat16)
    t = dispatch.from_dlpack(x)
    assert t.dtype is dispatch.bfloat16 and t.data_ptr() == x.data_ptr()
    x[1] = 1.5
    assert t.tolist() == [0.0, 1.5]


def test_torch_tensor_outlives_its_producer():
    torch = pytest.importorskip("torch")
    gc.collect()
    before = dispatch.live_storages()
    t = dispatch.arange(4)
    p = torch.from_dlpack(t)
    del t
    gc.collect()
    assert p.tolist() == [0, 1, 2, 3]
    del p
    gc.collect()
    assert dispatch.live_storages() == before


def test_negative_strides_are_refused_and_released():
    src = np.arange(6.0)
    ref = weakref.ref(src)
    view = src[::-1]
    del src
    with pytest.raises(ValueError, match="negative"):
        dispatch.from_dlpack(view)
    del view
    gc.collect()
    assert ref() is None


def test_newer_major_version_is_refused_and_released():
    import ctypes

    gc.collect()
    before = dispatch.live_storages()
    capsule = dispatch.arange(3).__dlpack__(max_version=(1, 0))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    version = ctypes.cast(get(capsule, b"dltensor_versioned"), ctypes.POINTER(ctypes.c_uint32))
    assert (version[0], version[1]) == (1, 1)
    version[0] = 2  # DLPackVersion.major
    with pytest.raises(RuntimeError, match="version 2.1 is not supported"):
        dispatch.from_dlpack(capsule)
    del capsule
    gc.collect()
    assert dispatch.live_storages() == before  # consumed, and the deleter ran


def test_versioned_export_flags():
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

    def flags(capsule):
        # DLManagedTensorVersioned: version (8 bytes), manager_ctx, deleter, flags
        p = get(capsule, b"dltensor_versioned")
        return ctypes.c_uint64.from_address(p + 8 + 2 * ctypes.sizeof(ctypes.c_void_p)).value

    t = dispatch.arange(3)
    assert flags(t.__dlpack__(max_version=(1, 0))) == 0
    assert flags(t.__dlpack__(max_version=(1, 0), copy=True)) == 2  # IS_COPIED
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert flags(dispatch.from_numpy(ro).__dlpack__(max_version=(1, 0))) == 1  # READ_ONLY


def test_torch_capsule_is_consumed_once():
    torch = pytest.importorskip("torch")
    p = torch.arange(3)
    c = torch.utils.dlpack.to_dlpack(p)
    u = dispatch.from_dlpack(c)
    with pytest.raises(ValueError, match="consumed already"):
        dispatch.from_dlpack(c)
    u.fill_(4)
    assert p.tolist() == [4, 4, 4]


@pytest.mark.parametrize("bad", [(), (1,), "ab", (1, "0"), (1.0, 0), None.__class__])
def test_a_malformed_max_version_is_a_type_error_naming_it(bad):
    """max_version=() raised a bare IndexError, 'ab' an int() ValueError
    (found by fuzzing): a (major, minor) pair of ints or None, said so."""
    with pytest.raises(TypeError, match=r"max_version=\.\.\.\) takes None or a \(major, minor\)"):
        dispatch.zeros(2).__dlpack__(max_version=bad)


@pytest.mark.parametrize("dev", [(1,), ("a", "b"), None, (1, 0, 3), [1, 0]])
def test_a_producer_with_a_malformed_dlpack_device_is_named(dev):
    class Producer:
        def __dlpack_device__(self):
            return dev

        def __dlpack__(self, **kw):
            return np.ones(3).__dlpack__(**kw)

    with pytest.raises(TypeError, match=r"Producer.__dlpack_device__\(\) returned .*expected a "
                                        r"\(device_type, device_id\) tuple of ints"):
        dispatch.from_dlpack(Producer())
