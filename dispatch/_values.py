"""Python and NumPy numbers, told apart without importing NumPy.

Note [NumPy is optional]
~~~~~~~~~~~~~~~~~~~~~~~~
`import dispatch` imports no NumPy, and tensors, factories, every operator
and repr work without it installed: dtypes carry their own name, item size
and struct format; tensor() of nested lists, tolist(), repr (dispatch/
_format.py) and arange are plain Python over the C core. NumPy is imported
only by interop: from_numpy, .numpy(), tensor() of an array or of NumPy
scalars, a dtype given as a NumPy dtype. A NumPy value can only exist once
NumPy is imported, so the scalar checks below look in sys.modules instead
of importing it (np.bool_ is no numbers.Integral, hence the explicit types).
"""

from __future__ import annotations

import builtins
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any


def _numpy() -> Any:
    """NumPy, imported for interop (ImportError saying what to install when absent)."""
    try:
        import numpy  # lazy: Note [NumPy is optional]
    except ImportError as e:
        # not `dispatch[numpy]`: the name `dispatch` on the public index is another project's
        raise ImportError("this needs NumPy, which is not installed: pip install numpy "
                          "(or, from this package's checkout, pip install '.[numpy]')") from e
    return numpy


def _loaded_numpy() -> Any:
    """NumPy when something imported it already, else None (then no value is NumPy's)."""
    return sys.modules.get("numpy")


def _is_bool(v: Any) -> builtins.bool:
    """A Python or NumPy bool."""
    if isinstance(v, builtins.bool):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.bool_)


def _is_int(v: Any) -> builtins.bool:
    """A Python int (bool included, as isinstance says) or a NumPy integer."""
    if isinstance(v, int):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, np.integer)


def _is_number(v: Any) -> builtins.bool:
    """A real number: Python bool/int/float or a NumPy bool/integer/floating."""
    if isinstance(v, (int, float)):
        return True
    np = _loaded_numpy()
    return np is not None and isinstance(v, (np.integer, np.floating, np.bool_))


def _is_ndarray(v: Any) -> builtins.bool:
    """A NumPy array or subclass, by its real type (isinstance believes a
    ``__class__`` property: Note [Arrays that lie] in dispatch/_interop.py)."""
    np = _loaded_numpy()
    return np is not None and issubclass(type(v), np.ndarray)
