"""``dispatch.ops.<name>``: every registered operator, callable from Python.

Each attribute is an :class:`OpOverloadPacket` holding the overloads of one
name (``ops.sum`` -> ``sum``, ``sum.dim_IntList``); a call binds the arguments
to each overload's schema in order and runs the first that fits. The binding
rules live once, in C (Note [Binding in C] in dispatch/_fastpath_binder.c). The C
handle of each overload is looked up once, when the packet is made, never per
call. This module also installs Tensor's operator methods (``t.sum()``).

>>> import dispatch
>>> dispatch.ops.add(dispatch.tensor([1, 2]), 3, alpha=2).tolist()
[7, 8]
"""

from __future__ import annotations

import builtins
import collections
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from ._core import ffi, lib
from ._fastpath import NO_MATCH as _NO_MATCH, bind_call as _bind_call, bind_init as _bind_init
from ._fastpath import OperatorMethod as _OperatorMethod, OperatorPacket as _OperatorPacket
from ._fastpath import resolve as _resolve
from ._ops_generated import OPERATORS
from ._errors import _raise
from ._interop import _tensor_from_numpy_data
from ._tensor import Tensor, _cptr, _wrap
from ._values import _is_bool, _is_int, _is_ndarray, _is_number, _loaded_numpy

__all__ = ["OpOverload", "OpOverloadPacket"]

# dispatch_type_kind and dispatch_ivalue_tag of the C headers (schema.h, dispatcher.h)
_TENSOR, _SCALAR, _INT, _FLOAT, _BOOL, _STR, _SCALARTYPE = (
    lib.DISPATCH_TYPE_TENSOR, lib.DISPATCH_TYPE_SCALAR, lib.DISPATCH_TYPE_INT,
    lib.DISPATCH_TYPE_FLOAT, lib.DISPATCH_TYPE_BOOL, lib.DISPATCH_TYPE_STR,
    lib.DISPATCH_TYPE_SCALARTYPE)
_IV_NONE, _IV_TENSOR, _IV_INT, _IV_DOUBLE, _IV_BOOL, _IV_INTLIST = (
    lib.DISPATCH_IV_NONE, lib.DISPATCH_IV_TENSOR, lib.DISPATCH_IV_INT, lib.DISPATCH_IV_DOUBLE,
    lib.DISPATCH_IV_BOOL, lib.DISPATCH_IV_INTLIST)


class _Arg:
    __slots__ = ("name", "kind", "is_list", "optional", "kwarg_only", "has_default")

    def __init__(self, a: Any) -> None:
        self.name = ffi.string(a.name).decode()
        self.kind = a.kind
        self.is_list = builtins.bool(a.is_list)
        self.optional = builtins.bool(a.is_optional)
        self.kwarg_only = builtins.bool(a.kwarg_only)
        self.has_default = builtins.bool(a.has_default)


def _set_number(iv: Any, v: Any) -> None:
    if _is_bool(v):
        iv.tag, iv.v.i = _IV_BOOL, int(v)
    elif _is_int(v):
        iv.tag, iv.v.i = _IV_INT, int(v)
    else:
        iv.tag, iv.v.d = _IV_DOUBLE, float(v)


def ivalue_to_python(iv: Any, owned: builtins.bool) -> Any:
    """The Python value of an ivalue; tensors are wrapped (a new reference when not owned)."""
    tag = iv.tag
    if tag == _IV_TENSOR:
        if not owned:
            lib.dispatch_tensor_incref(iv.v.t)
        return _wrap(iv.v.t)
    if tag == _IV_INT:
        return int(iv.v.i)
    if tag == _IV_DOUBLE:
        return float(iv.v.d)
    if tag == _IV_BOOL:
        return builtins.bool(iv.v.i)
    if tag == _IV_INTLIST:
        return [int(iv.list[i]) for i in range(iv.n)]
    return None


def python_to_ivalue(iv: Any, v: Any) -> None:
    """Store a kernel's Python return value into a ret slot (tensors: a new reference)."""
    if isinstance(v, Tensor):
        lib.dispatch_tensor_incref(_cptr(v))
        iv.tag, iv.v.t = _IV_TENSOR, _cptr(v)
    elif v is None:
        iv.tag = _IV_NONE
    elif _is_number(v):
        _set_number(iv, v)
    else:
        raise TypeError(f"a kernel returned {type(v).__name__}; expected Tensor, number or None")


class return_types:  # noqa: N801 - the namespace torch calls torch.return_types
    """Named results of the operators that return several tensors, as
    torch.return_types: ``max(x, 1)`` is a ``return_types.max`` with
    ``.values`` and ``.indices`` that also unpacks as a tuple."""


def _return_type(name: str, names: list[str]) -> Any:
    """The named tuple type of an overload's results (None for one result or
    unnamed ones); one per operator name, shared by its overloads."""
    if len(names) < 2 or not all(names):
        return None
    base = name.split(".")[0]
    t = getattr(return_types, base, None)
    if t is None or t._fields != tuple(names):
        t = collections.namedtuple(base, names, module=f"{__name__}.return_types")
        setattr(return_types, base, t)
    return t


class OpOverload:
    """One operator (one schema), bound to its C handle."""

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self.name = ffi.string(lib.dispatch_op_name(handle)).decode()
        s = lib.dispatch_op_schema(handle)
        self.args = tuple(_Arg(s.args[i]) for i in range(s.nargs))
        self.nrets = int(s.nrets)
        # one Tensor returned: the shortcuts call1/call2 can run it
        self._one_tensor = self.nrets == 1 and s.rets[0].kind == _TENSOR and not s.rets[0].is_list
        buf = ffi.new("char[4096]")
        lib.dispatch_schema_format(s, buf, 4096)
        self.schema = ffi.string(buf).decode(errors="backslashreplace")
        self._names = {a.name: i for i, a in enumerate(self.args)}
        # the binding plan of dispatch._fastpath.bind_call (Note [Binding in C]);
        # names interned, as a call's keywords are: they match by identity
        self._at = int(ffi.cast("uintptr_t", handle))
        self._plan = (self._at, bytes(a.kind | a.is_list << 3 | a.optional << 4 |
                                      a.kwarg_only << 5 | a.has_default << 6 for a in self.args),
                      tuple(sys.intern(a.name) for a in self.args), self.nrets,
                      _return_type(self.name, [ffi.string(s.rets[i].name).decode()
                                               for i in range(self.nrets)]))
        self._plans = (self._plan,)

    def __repr__(self) -> str:
        return f"<OpOverload {self.schema}>"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # self=... is the schema's
        r = _bind_call(self._plans, args, kwargs or None)
        if r is _NO_MATCH:
            raise TypeError(f"{self.name}() received an invalid combination of arguments; "
                            f"expected {self.schema}")
        return r

    def dump_table(self) -> str:
        """Each dispatch key's kernel and where it was registered."""
        p = lib.dispatch_op_dump_table(self._h)
        if p == ffi.NULL:
            _raise()
        try:
            return ffi.string(p).decode(errors="backslashreplace")
        finally:
            lib.dispatch_string_free(p)


# The binder makes 0-dim tensors of numbers given as Tensor arguments.
_bind_init(tuple(int(ffi.cast("uintptr_t", ffi.addressof(lib, f))) for f in (
    "dispatch_tensor_wrap_double", "dispatch_tensor_wrap_int", "dispatch_tensor_wrap_bool")))
# A tensor to resolve overloads with (binding looks at types only).
_PROBE = _wrap(lib.dispatch_tensor_wrap_double(0.0))


class OpOverloadPacket(_OperatorPacket):
    """All overloads of one operator name; calls resolve by argument types.

    The call is its C base's (Note [Operator packets] in
    dispatch/_fastpath_packet.c): the shortcuts below, then the binder."""

    def __init__(self, name: str, overloads: list[OpOverload], doc: str = "") -> None:
        self.name = name
        self.overloads = overloads
        self.__doc__ = doc + "\n\nOverloads:\n" + "\n".join(
            f"  {o.schema}" for o in overloads)
        self._plans = tuple(o._plan for o in overloads)
        # Fast paths (dispatch._fastpath.call1/call2 take the handle's address):
        # the overload (Tensor) / (Tensor, Tensor) bind to, when it returns one Tensor.
        self._fast1_at = self._fast(1)
        self._fast2_at = self._fast(2)
        # out=None is the functional call, as torch's (its .out overloads
        # take a Tensor out, never None): dropped before binding.
        self._out_none = any(a.name == "out" and not a.optional for o in overloads for a in o.args)

    def _fast(self, n: int) -> int | None:
        i = _resolve(self._plans, (_PROBE,) * n, None)  # binding looks at types only
        return self.overloads[i]._at if i >= 0 and self.overloads[i]._one_tensor else None

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self.name}: {len(self.overloads)} overload(s)>"

    def __getattr__(self, overload: str) -> OpOverload:
        for o in self.overloads:
            if o.name == self.name + "." + overload or (overload == "default" and o.name == self.name):
                return o
        raise AttributeError(f"operator '{self.name}' has no overload '{overload}'")

    def _no_overload(self, args: tuple, kwargs: dict) -> None:
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"{self.name}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n" +
                        "\n".join(f" * {o.schema}" for o in self.overloads))

    def dump_table(self) -> str:
        """The dispatch table of every overload."""
        return "\n".join(o.dump_table() for o in self.overloads)


_packets: dict[str, OpOverloadPacket] = {}


def _registered_overloads(name: str) -> list[OpOverload]:
    out = []
    for i in range(lib.dispatch_num_ops()):
        h = lib.dispatch_op_at(i)
        full = ffi.string(lib.dispatch_op_name(h)).decode()
        if full == name or full.startswith(name + "."):
            out.append(OpOverload(h))
    return out


def _invalidate(name: str) -> None:
    """Forget the packet of name (library.define added an overload)."""
    base = name.split(".")[0]
    _packets.pop(base, None)
    globals().pop(base, None)
    pkg = sys.modules.get(__package__)  # dispatch.<name>, cached by dispatch.__getattr__
    if pkg is not None and base in OPERATORS:
        vars(pkg).pop(base, None)


def __getattr__(name: str) -> OpOverloadPacket:
    packet = _packets.get(name)
    if packet is not None:
        return packet
    if name.startswith("__"):
        raise AttributeError(name)
    overloads = _registered_overloads(name)
    if not overloads:
        raise AttributeError(f"dispatch.ops has no operator named '{name}'")
    if name in OPERATORS:  # keep the table's resolution order
        order = {n: i for i, n in enumerate(OPERATORS[name][0])}
        overloads.sort(key=lambda o: order.get(o.name, len(order)))
    packet = OpOverloadPacket(name, overloads, OPERATORS.get(name, ((), ""))[1])
    _packets[name] = packet
    if name in OPERATORS and name not in _MODULE_NAMES:
        globals()[name] = packet  # later lookups are plain module attributes
    return packet


def __dir__() -> list[str]:
    names = set(OPERATORS)
    for i in range(lib.dispatch_num_ops()):
        names.add(ffi.string(lib.dispatch_op_name(lib.dispatch_op_at(i))).decode().split(".")[0])
    return sorted(names | set(__all__))


# Tensor's operator methods ----------------------------------------------------------------
# t.<name>(...) is dispatch.ops.<name>(t, ...) for every operator of the table
# whose overloads all take `Tensor self` first (torch's method variants). They
# are installed on the class here, on the operator side, so dispatch._tensor
# never imports this module (issue 13), and as real methods, so a call is no
# attribute miss. Each is a C descriptor (_fastpath.OperatorMethod, Note
# [Operator methods]): no Python frame, no *args/**kwargs repack, and the
# packet looked up in this module at each call (an overload library.define
# adds is seen at once).
_module = sys.modules[__name__]


def _method_names() -> list[str]:
    takes_self: dict[str, builtins.bool] = {}
    for i in range(lib.dispatch_num_ops()):
        h = lib.dispatch_op_at(i)
        name = ffi.string(lib.dispatch_op_name(h)).decode().split(".")[0]
        if name in OPERATORS:
            s = lib.dispatch_op_schema(h)
            first = s.args[0] if s.nargs > 0 else None
            takes_self[name] = takes_self.get(name, True) and first is not None and (
                first.kind == _TENSOR and not first.is_list and ffi.string(first.name) == b"self")
    return [name for name, ok in takes_self.items() if ok]


_METHODS = frozenset(_method_names())
for _name in _METHODS:  # __doc__ "dispatch.ops.<name>(self, ...)", __module__ this module
    setattr(Tensor, _name, _OperatorMethod(_module, _name))
del _name


# In place, like PyTorch: t += x writes the result into t (views see it),
# through the add_/sub_/mul_/div_ methods installed above.
def _inplace(name: str, self: Tensor, other: Any) -> Any:
    if _is_ndarray(other):
        other = _tensor_from_numpy_data(other, None, None)  # as dispatch.tensor(other)
    np = _loaded_numpy()
    if not isinstance(other, (Tensor, builtins.bool, int, float)) and not (
            np is not None and isinstance(other, (np.bool_, np.number))):
        return NotImplemented
    return getattr(Tensor, name)(self, other)


def _inplace_operator(dunder: str, name: str) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        return _inplace(name, self, other)

    method.__name__ = method.__qualname__ = dunder
    return method


for _dunder, _name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                       ("__itruediv__", "div_")):
    setattr(Tensor, _dunder, _inplace_operator(_dunder, _name))
del _dunder, _name

# Names this module defines itself: an operator of the same name is never
# cached over them (it stays reachable through __getattr__ only if absent).
_MODULE_NAMES = frozenset(globals())
