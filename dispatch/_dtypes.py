"""dtypes: one ``dispatch.dtype`` object per dtype of C's list.

>>> import dispatch
>>> dispatch.float32.itemsize, dispatch.int64.is_floating_point
(4, False)
"""

from __future__ import annotations

import builtins
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from . import _tables
from ._values import _loaded_numpy, _numpy

__all__ = ["dtype"]


class dtype:  # noqa: N801  (named like torch.dtype)
    """An element type: ``dispatch.float32`` and friends."""

    __slots__ = ("name", "num", "itemsize", "format", "typestr", "is_floating_point")

    def __init__(self, num: int) -> None:
        """The dtype of id ``num``: everything about it comes from C's one list."""
        self.name = _tables.DTYPE_NAMES[num]
        self.num = num
        self.itemsize = _tables.DTYPE_ITEMSIZES[num]
        self.format = _tables.DTYPE_FORMATS[num]  # the struct / buffer-protocol format
        self.typestr = _tables.DTYPE_TYPESTRS[num]
        self.is_floating_point = _tables.DTYPE_CATEGORIES[num] == _tables.CAT_FLOAT

    @property
    def numpy(self) -> Any:
        """The NumPy dtype (imports NumPy); TypeError for bfloat16, which NumPy lacks."""
        if not self.typestr:
            raise TypeError(_no_numpy_message(self))
        return _numpy().dtype(self.typestr)

    def __repr__(self) -> str:
        return f"dispatch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


# One dtype object per dtype of C's list (Note [One dtype list] in
# sources/include/dispatch/dtype.h), by id, each a module attribute named as
# in C (dispatch.float32 and friends; `bool`, `int64`, ... below are these).
_DTYPES = tuple(dtype(num) for num in range(_tables.NUM_DTYPES))
_BY_NAME = {d.name: d for d in _DTYPES}
globals().update(_BY_NAME)
__all__ += [d.name for d in _DTYPES]
_BY_PYTHON_TYPE = {builtins.bool: _BY_NAME["bool"], int: _BY_NAME["int64"],
                   float: _BY_NAME["float64"]}  # as np.dtype(int) etc.


def _no_numpy_message(d: dtype) -> str:
    """Why a dtype NumPy lacks (bfloat16) has no NumPy export (docs/semantics.md, "bfloat16")."""
    return (f"NumPy has no {d.name} dtype: convert with .to(dispatch.float32) (torch's "
            f".float()) before .numpy(), and back with .to(dispatch.{d.name})")


# NumPy dtypes already matched, by the dtype object: NumPy computes a dtype's
# .name in Python (about 2 us), and from_numpy, tensor() of an array and an
# array operand of + - * / ask for every call. Only matches are kept, so the
# table holds one entry per NumPy dtype that equals one of ours (a dtype
# that compares equal has our dtype's name and byte order: NumPy's == of
# dtypes compares kind, size and byte order, and a datetime or structured
# dtype never equals a number's).
_BY_NUMPY_DTYPE: dict[Any, dtype] = {}


def _by_numpy(np_dtype: Any) -> Any:
    """Our dtype of a NumPy dtype (native byte order), else None (also for a
    NumPy extension dtype named like one NumPy lacks, e.g. ml_dtypes' bfloat16)."""
    d = _BY_NUMPY_DTYPE.get(np_dtype)
    if d is not None:
        return d
    if not np_dtype.isnative:
        return None
    d = _BY_NAME.get(np_dtype.name)
    if d is None or not d.typestr:
        return None
    _BY_NUMPY_DTYPE[np_dtype] = d  # one dict store: atomic, runs no Python code
    return d


def _as_dtype(d: Any) -> dtype:
    if isinstance(d, dtype):
        return d
    found = _BY_NAME.get(d) if isinstance(d, str) else _BY_PYTHON_TYPE.get(d)
    if found is not None:
        return found
    np = _loaded_numpy()
    if np is None and isinstance(d, str):
        try:  # a NumPy spelling ("f4", "<i8", "double"): ask NumPy when it is installed
            np = _numpy()
        except ImportError:
            np = None
    if np is not None:
        try:
            found = _by_numpy(np.dtype(d))
        except TypeError:
            found = None
        if found is not None:
            return found
    raise TypeError(f"unsupported dtype {d!r}; expected one of "
                    f"{', '.join(x.name for x in _DTYPES)}")


def _overflow(d: dtype, v: Any) -> ValueError:
    """The error for a value that dtype d cannot hold (torch's words)."""
    return ValueError(f"value cannot be converted to type {d.name} without overflow: {v}")
