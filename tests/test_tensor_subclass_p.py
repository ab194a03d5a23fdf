"""A Tensor subclass that defines `_p` cannot choose the memory C reads.

`_p` is the base class's C slot (dispatch/_fastpath.c); the Python code reads it
through that slot's own descriptor (`_cptr` in dispatch/_tensor.py), never by
attribute lookup. Each subclass here points `_p` at another tensor (a freed
one would be a use-after-free); every public path must still read its own
memory and leave the other tensor alone (issue 45).
"""

import pytest

import dispatch

OTHER = None  # the tensor a lying `_p` points at


def _other_p(self):
    return dispatch.Tensor.__mro__[1].__dict__["_p"].__get__(OTHER)


class ByProperty(dispatch.Tensor):
    __slots__ = ()
    _p = property(_other_p)


class ByClassAttribute(dispatch.Tensor):
    __slots__ = ()


class ByGetattr(dispatch.Tensor):
    __slots__ = ()

    def __getattribute__(self, name):
        if name == "_p":
            return _other_p(self)
        return object.__getattribute__(self, name)


LIARS = [ByProperty, ByClassAttribute, ByGetattr]


@pytest.fixture(params=LIARS, ids=lambda c: c.__name__)
def liar(request):
    global OTHER
    OTHER = dispatch.tensor([100.0, 200.0, 300.0])
    ByClassAttribute._p = _other_p(None)
    t = dispatch.tensor([1.0, 2.0, 3.0])
    t.__class__ = request.param
    yield t
    assert OTHER.tolist() == [100.0, 200.0, 300.0]  # never written through the lie
    OTHER = None


def test_metadata_and_values_are_its_own(liar):
    assert liar.tolist() == [1.0, 2.0, 3.0]
    assert liar.shape == (3,)
    assert liar.data_ptr() != OTHER.data_ptr()


def test_operators_and_methods_read_its_own_memory(liar):
    assert (liar + 1).tolist() == [2.0, 3.0, 4.0]
    assert (liar * liar).tolist() == [1.0, 4.0, 9.0]
    assert liar.sum().item() == 6.0
    assert liar.clone().tolist() == [1.0, 2.0, 3.0]
    assert liar.reshape(3, 1).tolist() == [[1.0], [2.0], [3.0]]
    assert dispatch.add(liar, liar).tolist() == [2.0, 4.0, 6.0]


def test_out_and_in_place_write_its_own_memory(liar):
    dispatch.add(dispatch.tensor([1.0, 1.0, 1.0]), dispatch.tensor([0.0, 0.0, 1.0]), out=liar)
    assert liar.tolist() == [1.0, 1.0, 2.0]
    liar += 1
    assert liar.tolist() == [2.0, 2.0, 3.0]


def test_interop_exports_its_own_memory(liar):
    np = pytest.importorskip("numpy")
    assert np.asarray(liar).tolist() == [1.0, 2.0, 3.0]
    assert np.from_dlpack(liar).tolist() == [1.0, 2.0, 3.0]
    assert liar.numpy().tolist() == [1.0, 2.0, 3.0]
