"""``dispatch.ops.<name>``: every registered operator, callable from Python.

Each attribute is an :class:`OpOverloadPacket` holding the overloads of one
name (``ops.sum`` -> ``sum``, ``sum.dim_IntList``); a call binds the arguments
to each overload's schema in order and runs the first that fits. The C handle
of each overload is looked up once, when the packet is made, never per call.

>>> import dispatch
>>> dispatch.ops.add(dispatch.tensor([1, 2]), 3, alpha=2).tolist()
[7, 8]
"""

from __future__ import annotations

import builtins
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any

from . import _tensor
from ._core import ffi, lib
from ._fastpath import FALLBACK as _FALLBACK, NO_MATCH as _NO_MATCH
from ._fastpath import bind_call as _bind_call, call1 as _call1, call2 as _call2
from ._fastpath import call_scalar as _call_scalar
from ._ops_generated import OPERATORS
from ._tensor import Tensor, _is_bool, _is_float, _is_int, _is_number, _raise, _wrap

__all__ = ["OpOverload", "OpOverloadPacket"]

# dispatch_type_kind and dispatch_ivalue_tag of the C headers
_TENSOR, _SCALAR, _INT, _FLOAT, _BOOL, _STR, _SCALARTYPE = range(7)
_IV_NONE, _IV_TENSOR, _IV_INT, _IV_DOUBLE, _IV_BOOL, _IV_INTLIST = range(6)
_TYPE_NAMES = ("Tensor", "Scalar", "int", "float", "bool", "str", "ScalarType")


class _NoMatch(Exception):
    """The arguments do not fit this overload's schema."""


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


def _wrap_number(v: Any) -> Tensor:
    if _is_bool(v):
        return _wrap(lib.dispatch_tensor_wrap_bool(int(v)))
    if _is_int(v):
        return _wrap(lib.dispatch_tensor_wrap_int(int(v)))
    return _wrap(lib.dispatch_tensor_wrap_double(float(v)))


def _convert(iv: Any, spec: _Arg, v: Any, keep: list) -> None:
    """Store v into the ivalue iv per spec, or raise _NoMatch."""
    if v is None:
        if not spec.optional:
            raise _NoMatch
        iv.tag = _IV_NONE
        return
    kind = spec.kind
    if spec.is_list:
        if _is_int(v) and not isinstance(v, builtins.bool):
            v = (int(v),)
        if not isinstance(v, (tuple, list)) or not all(
                _is_int(x) and not isinstance(x, builtins.bool) for x in v):
            raise _NoMatch
        if len(v) > 16:
            raise TypeError(f"argument '{spec.name}': at most 16 values")
        iv.tag, iv.n = _IV_INTLIST, len(v)
        for i, x in enumerate(v):
            iv.list[i] = int(x)
    elif kind == _TENSOR:
        if isinstance(v, Tensor):
            iv.tag, iv.v.t = _IV_TENSOR, v._p
        elif _is_number(v):
            w = _wrap_number(v)
            keep.append(w)
            iv.tag, iv.v.t = _IV_TENSOR, w._p
        else:
            raise _NoMatch
    elif kind == _SCALAR:
        if not _is_number(v):
            raise _NoMatch
        _set_number(iv, v)
    elif kind == _INT:
        if not _is_int(v) or isinstance(v, builtins.bool):
            raise _NoMatch
        iv.tag, iv.v.i = _IV_INT, int(v)
    elif kind == _FLOAT:
        if not (_is_int(v) or _is_float(v)) or isinstance(v, builtins.bool):
            raise _NoMatch
        iv.tag, iv.v.d = _IV_DOUBLE, float(v)
    elif kind == _BOOL:
        if not _is_bool(v):
            raise _NoMatch
        iv.tag, iv.v.i = _IV_BOOL, int(v)
    elif kind == _SCALARTYPE:
        if not isinstance(v, _tensor.dtype):
            raise _NoMatch
        iv.tag, iv.v.i = _IV_INT, v.num
    else:
        raise _NoMatch


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
        lib.dispatch_tensor_incref(v._p)
        iv.tag, iv.v.t = _IV_TENSOR, v._p
    elif v is None:
        iv.tag = _IV_NONE
    elif _is_number(v):
        _set_number(iv, v)
    else:
        raise TypeError(f"a kernel returned {type(v).__name__}; expected Tensor, number or None")


class OpOverload:
    """One operator (one schema), bound to its C handle."""

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self.name = ffi.string(lib.dispatch_op_name(handle)).decode()
        s = lib.dispatch_op_schema(handle)
        self.args = tuple(_Arg(s.args[i]) for i in range(s.nargs))
        self.nrets = int(s.nrets)
        buf = ffi.new("char[4096]")
        lib.dispatch_schema_format(s, buf, 4096)
        self.schema = ffi.string(buf).decode(errors="backslashreplace")
        self._names = {a.name: i for i, a in enumerate(self.args)}
        self._npos = builtins.sum(1 for a in self.args if not a.kwarg_only)
        # for dispatch._fastpath.bind_call (Note [Binding in C] in _fastpath.c)
        self._at = int(ffi.cast("uintptr_t", handle))
        self._spec = bytes(a.kind | a.is_list << 3 | a.optional << 4 | a.kwarg_only << 5 |
                           a.has_default << 6 for a in self.args)
        self._names_t = tuple(a.name for a in self.args)

    def __repr__(self) -> str:
        return f"<OpOverload {self.schema}>"

    def _bind(self, args: tuple, kwargs: dict, iv: Any, keep: list) -> int:
        params, names = self.args, self._names
        n = len(args)
        if n > self._npos or any(k not in names for k in kwargs):
            raise _NoMatch  # before any conversion: the next overload may fit
        for i, v in enumerate(args):
            _convert(iv[i], params[i], v, keep)
        given = set(range(n))
        for k, v in kwargs.items():
            i = names[k]
            if i in given:
                raise _NoMatch
            _convert(iv[i], params[i], v, keep)
            given.add(i)
        last = builtins.max(given) + 1 if given else 0
        for i in range(last):
            if i not in given:
                if not params[i].has_default:
                    raise _NoMatch
                lib.dispatch_op_default(self._h, i, ffi.addressof(iv, i))
        for i in range(last, len(params)):
            if not params[i].has_default:
                raise _NoMatch
        return last

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        iv = ffi.new("dispatch_ivalue[16]")
        keep: list = []
        try:
            n = self._bind(args, kwargs, iv, keep)
        except _NoMatch:
            raise TypeError(f"{self.name}() received an invalid combination of arguments; "
                            f"expected {self.schema}") from None
        return self._run(iv, n)

    def _run(self, iv: Any, n: int) -> Any:
        rets = ffi.new("dispatch_ivalue[4]")
        if lib.dispatch_call(self._h, iv, n, rets) < 0:
            _raise()
        out = [ivalue_to_python(rets[i], True) for i in range(self.nrets)]
        if self.nrets == 1:
            return out[0]
        return tuple(out) if out else None

    def dump_table(self) -> str:
        """Each dispatch key's kernel and where it was registered."""
        p = lib.dispatch_op_dump_table(self._h)
        if p == ffi.NULL:
            _raise()
        try:
            return ffi.string(p).decode(errors="backslashreplace")
        finally:
            lib.dispatch_string_free(p)


def _would_bind(o: OpOverload, n: int, key: str, vtype: type) -> builtins.bool:
    """Whether o._bind accepts n Tensors positionally and key=<a vtype value>
    (the same rules, on types only)."""
    a = o.args
    i = o._names.get(key)
    if i is None or i < n or n > o._npos:
        return False
    if not all(x.kind == _TENSOR and not x.is_list for x in a[:n]):
        return False
    if any(not x.has_default for j, x in enumerate(a) if j >= n and j != i):
        return False
    p, is_bool, is_int = a[i], vtype is builtins.bool, vtype is int
    if p.is_list:
        return is_int
    return (p.kind in (_TENSOR, _SCALAR) or (p.kind == _INT and is_int)
            or (p.kind == _FLOAT and not is_bool) or (p.kind == _BOOL and is_bool))


# Bind calls in C (Note [Binding in C] in dispatch/_fastpath.c); the tests
# turn it off to compare with the Python binder.
_C_BINDING = True


class OpOverloadPacket:
    """All overloads of one operator name; calls resolve by argument types."""

    def __init__(self, name: str, overloads: list[OpOverload], doc: str = "") -> None:
        self.name = name
        self.overloads = overloads
        self.__doc__ = doc + "\n\nOverloads:\n" + "\n".join(
            f"  {o.schema}" for o in overloads)
        # Fast paths (dispatch._fastpath.call1/call2 take the handle's address):
        # the first overload taking (Tensor) / (Tensor, Tensor) positionally,
        # everything else defaulted, one Tensor returned.
        self._fast1_at = self._fast(1)
        self._fast2_at = self._fast(2)
        self._kw_plans: dict = {}  # (n tensors, keyword, value type) -> (address, index)

    def _fast(self, n: int) -> int | None:
        for o in self.overloads:
            a = o.args
            if (len(a) >= n and o.nrets == 1
                    and all(x.kind == _TENSOR and not x.is_list and not x.kwarg_only
                            for x in a[:n])
                    and all(x.has_default for x in a[n:])):
                return o._at
            if len(a) >= n and all(not x.kwarg_only for x in a[:n]):
                return None  # an earlier overload would bind first: no shortcut
        return None

    def _kw_plan(self, n: int, key: str, vtype: type) -> Any:
        """(address, index) when the overload that (n tensors, key=<vtype>)
        binds to takes the tensors first and a Scalar at key, else None."""
        for o in self.overloads:
            if not _would_bind(o, n, key, vtype):
                continue
            a, i = o.args, o._names[key]
            if o.nrets == 1 and a[i].kind == _SCALAR and not a[i].is_list and all(
                    x.kind == _TENSOR and not x.is_list for x in a[:n]):
                return o._at, i
            return None
        return None

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self.name}: {len(self.overloads)} overload(s)>"

    def __getattr__(self, overload: str) -> OpOverload:
        for o in self.overloads:
            if o.name == self.name + "." + overload or (overload == "default" and o.name == self.name):
                return o
        raise AttributeError(f"operator '{self.name}' has no overload '{overload}'")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            n = len(args)
            if n == 2 and self._fast2_at is not None and type(args[0]) is Tensor \
                    and type(args[1]) is Tensor:
                return _call2(self._fast2_at, args[0], args[1])
            if n == 1 and self._fast1_at is not None and type(args[0]) is Tensor:
                return _call1(self._fast1_at, args[0])
        elif len(kwargs) == 1 and all(type(a) is Tensor for a in args):
            (key, value), = kwargs.items()
            vtype = type(value)
            if vtype in (int, float, builtins.bool):
                plan_key = (len(args), key, vtype)
                plan = self._kw_plans.get(plan_key, False)
                if plan is False:
                    plan = self._kw_plans[plan_key] = self._kw_plan(len(args), key, vtype)
                if plan is not None and (vtype is not int or -2**63 <= value < 2**63):
                    return _call_scalar(plan[0], plan[1], value, *args)
        for o in self.overloads if _C_BINDING else ():  # in C where it can: same rules
            r = _bind_call(o._at, o._spec, o._names_t, o.nrets, args, kwargs or None)
            if r is _NO_MATCH:
                continue
            if r is _FALLBACK:
                break
            return r
        else:
            if _C_BINDING:
                self._no_overload(args, kwargs)
        iv = ffi.new("dispatch_ivalue[16]")
        for o in self.overloads:
            keep: list = []
            try:
                n = o._bind(args, kwargs, iv, keep)
            except _NoMatch:
                continue
            return o._run(iv, n)
        self._no_overload(args, kwargs)

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


# Names this module defines itself: an operator of the same name is never
# cached over them (it stays reachable through __getattr__ only if absent).
_MODULE_NAMES = frozenset(globals())
