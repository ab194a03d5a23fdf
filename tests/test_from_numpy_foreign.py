"""from_numpy's tensor made in one C call, and released in C (Note [Foreign
tensors in C] in dispatch/_fastpath_foreign.c): the array is kept exactly as
long as a tensor or view over it lives, whatever thread drops the last one,
every layout reads the array's own memory, and a shape the C call does not
take still gets the runtime's error with nothing left behind."""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import dispatch as d
from dispatch import _interop


def _settled() -> tuple[int, int]:
    gc.collect()
    return len(_interop._owners), d.live_storages()


def test_the_array_lives_exactly_as_long_as_its_tensors():
    owners, live = _settled()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    gone = weakref.ref(a)
    t = d.from_numpy(a)
    view = t[1:]
    del a
    assert gone() is not None and len(_interop._owners) == owners + 1
    del t
    assert gone() is not None, "a view still reads the array"
    assert view.tolist() == [[4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    del view
    assert gone() is None, "the last tensor went: the array must go with it"
    assert _settled() == (owners, live)


def test_the_last_tensor_dropped_on_another_thread_releases_the_array():
    owners, live = _settled()
    a = np.ones(1000, np.float64)
    gone = weakref.ref(a)
    box = [d.from_numpy(a)]
    del a

    def drop():
        box.pop()  # the release takes the GIL state of this thread

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    assert gone() is None and _settled() == (owners, live)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "every other column",
                                    "a row of a column", "0-d", "empty", "one element wide"])
def test_every_layout_is_the_arrays_own_memory(layout):
    base = np.arange(48, dtype=np.int32).reshape(6, 8)
    a = {"contiguous": base, "transposed": base.T, "every other column": base[:, ::2],
         "a row of a column": base[2:3, 5:6], "0-d": base[1, 1, ...], "empty": base[:0, 2:],
         "one element wide": base[:, 3:4]}[layout]
    t = d.from_numpy(a)
    assert t.shape == a.shape and t.tolist() == a.tolist()
    assert t.stride() == tuple(s // a.itemsize for s in a.strides)
    t.fill_(-1)  # a write through the tensor lands in the array
    assert (a == -1).all()


def test_a_read_only_array_gives_a_read_only_tensor():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = d.from_numpy(a)
    with pytest.raises(ValueError, match="read-only"):
        t.add_(1)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_the_release_runs_in_c_and_a_shape_c_refuses_takes_the_cffi_path():
    """The cffi callback is not called for a tensor C made; an array of more
    dims than the runtime has goes the cffi way, to the runtime's error, and
    leaves no owner and no storage behind."""
    owners, live = _settled()
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "dispatch_py_release_owner":
            calls.append(1)

    sys.setprofile(profile)
    try:
        t = d.from_numpy(np.ones((2, 3), np.float32))
        del t
        made = len(calls)
        with pytest.raises(ValueError, match="at most 16 dims, got 17"):
            d.from_numpy(np.ones((1,) * 17, np.float32))
    finally:
        sys.setprofile(None)
    assert made == 0, "a tensor the C call made was released through the cffi callback"
    assert len(calls) == 1, "the refused shape's storage is released by the cffi path"
    assert _settled() == (owners, live)


def test_a_release_keeps_the_error_being_raised():
    """A tensor dropped while an exception propagates (its frame unwinding)
    releases its array without clearing or replacing that exception."""
    a = np.ones(3, np.float32)
    gone = weakref.ref(a)

    def fails(x):
        t = d.from_numpy(x)  # noqa: F841 - dropped as the frame unwinds
        raise KeyError("the error raised")

    with pytest.raises(KeyError, match="the error raised"):
        fails(a)
    del a
    assert gone() is None


@pytest.mark.parametrize("case", ["negative", "not whole elements"])
def test_strides_c_refuses_get_their_words_and_leave_nothing(case):
    owners, live = _settled()
    if case == "negative":
        a, match = np.arange(6.0)[::-1], r"At least one stride .* is negative; .*a\.copy\(\)"
    else:
        a = np.lib.stride_tricks.as_strided(np.zeros(16, np.int32), (3,), (6,))
        match = r"strides \(6,\) of the given numpy array are not multiples of its itemsize 4"
    with pytest.raises(ValueError, match=match):
        d.from_numpy(a)
    assert _settled() == (owners, live)


@pytest.mark.parametrize("read_only", [False, True])
def test_tensor_of_an_array_is_a_writable_copy_that_keeps_nothing(read_only):
    """tensor() of a C-contiguous array of its own dtype goes through
    from_numpy and a clone: the copy shares nothing, is writable whatever the
    array's flag, and leaves no owner behind."""
    owners, _ = _settled()
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    a.flags.writeable = not read_only
    gone = weakref.ref(a)
    t = d.tensor(a)
    assert t.dtype == d.int16 and t.tolist() == a.tolist() and t.is_contiguous()
    t.add_(1)
    assert a[0, 0] == 0 and t[0, 0].item() == 1
    del a
    assert gone() is None and len(_interop._owners) == owners
