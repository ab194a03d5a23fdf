"""The rows of the matrix benchmark (bench_matrix.py), read from the operator
table: every operator of ``dispatch.ops.OPERATORS`` x every dtype of
``dispatch`` x the layouts its form takes, and each row's three callables
(ours, torch's, NumPy's) on the same values.

An operator's form comes from its schemas, not from a list of names, so a
new operator gets rows by itself:
- a name ending in ``_``: in place (``add_``, ``copy_``; ``fill_`` takes a
  Scalar, the others a Tensor operand of ones, so repeated calls keep their
  values);
- an overload with a ``dim`` argument: a reduction (all, dim 0, dim 1, each
  also of every other column);
- a non-optional ScalarType argument: a cast (``x.to(dtype)``, every pair);
- otherwise by its Tensor arguments: one (unary), two (binary; one that
  takes only 1-D tensors, as ``dot``, gets 1-D layouts), three (ternary; a
  first one named ``condition`` is a bool mask, as ``where``'s).
A schema of any other shape is a row too, named "no form".

torch's callable is torch's function of the same name (a cast: ``.to``);
NumPy's comes from NUMPY_NAMES (an operator missing there is named, not
dropped); ``max``/``min`` over a dim return the values and their indices
(as torch's do), so NumPy's row there is ``np.max`` and ``np.argmax`` both,
the same work. Every row of one (op, dtype, layout) uses the same values in all
three libraries: NumPy arrays from one seed, or, without NumPy, a
pseudo-random list built by Python itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

# One label per size; the matrices are (n // COLS, COLS).
SIZES = {"4K": 1 << 12, "64K": 1 << 16, "256K": 1 << 18, "1M": 1 << 20, "16M": 1 << 24}
COLS = 512

LAYOUTS = {  # form -> its layouts
    "unary": ("contig", "strided"),
    "binary": ("contig", "strided", "bcast_col", "bcast_row", "scalar"),
    "binary_1d": ("contig", "strided"),
    "ternary": ("contig", "strided", "bcast_col", "bcast_row", "scalar"),
    "select": ("contig", "strided", "bcast_col", "bcast_row", "scalar"),
    "inplace": ("contig", "strided", "bcast_col", "bcast_row", "scalar"),
    "inplace_scalar": ("contig", "strided"),
    "reduction": ("all", "dim0", "dim1", "all_strided", "dim0_strided", "dim1_strided"),
    "cast": ("contig",),
}
LAYOUT_DOC = {
    "contig": "contiguous (n/512, 512)",
    "strided": "every other column, x[:, ::2] of an (n/512, 1024) matrix, for every tensor operand",
    "bcast_col": "the last tensor operand an (n/512, 1) column",
    "bcast_row": "the last tensor operand a (1, 512) row",
    "scalar": "the last operand a Python number",
    "all": "over all elements", "dim0": "over dim 0 (the outer dim)", "dim1": "over dim 1",
    "all_strided": "over all elements of every other column, x[:, ::2] of an (n/512, 1024) matrix",
    "dim0_strided": "over dim 0 of every other column", "dim1_strided": "over dim 1 of every other column",
}


def reduced_dim(layout: str) -> int | None:
    """A reduction layout's dim (None: all elements)."""
    head = layout.removesuffix("_strided")
    return None if head == "all" else int(head[-1])


def is_strided(layout: str) -> bool:
    """Every other column of a twice-as-wide matrix (any form's strided layout)."""
    return layout == "strided" or layout.endswith("_strided")

# Our operator name -> NumPy's function (None: NumPy has no such function).
NUMPY_NAMES = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide",
    "maximum": "maximum", "minimum": "minimum", "eq": "equal", "ne": "not_equal",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "neg": "negative", "abs": "absolute", "sqrt": "sqrt", "exp": "exp", "log": "log",
    "expm1": "expm1", "log1p": "log1p", "tanh": "tanh", "addcmul": None, "where": "where",
    "sum": "sum", "prod": "prod", "mean": "mean", "max": "max", "min": "min",
    "amax": "amax", "amin": "amin", "argmax": "argmax", "argmin": "argmin", "dot": "dot",
    "add_": "add", "sub_": "subtract", "mul_": "multiply", "div_": "true_divide",
    "copy_": "copyto", "fill_": "fill", "cast": "astype",
}


def operator_forms(dispatch: Any) -> dict:
    """Every operator of the table -> its form (None when no form fits)."""
    from dispatch._core import lib

    tensor, scalar, scalartype = (lib.DISPATCH_TYPE_TENSOR, lib.DISPATCH_TYPE_SCALAR,
                                  lib.DISPATCH_TYPE_SCALARTYPE)
    forms = {}
    for name in dispatch.ops.OPERATORS:
        packet = getattr(dispatch.ops, name)
        first = packet.overloads[0]
        pos = [a for a in first.args if not a.kwarg_only]
        tensors = [a for a in pos if a.kind == tensor and not a.is_list]
        if name.endswith("_") and len(pos) == 2 and pos[0].kind == tensor:
            forms[name] = "inplace" if pos[1].kind == tensor else \
                "inplace_scalar" if pos[1].kind == scalar else None
        elif any(a.name == "dim" for o in packet.overloads for a in o.args):
            forms[name] = "reduction"
        elif any(a.kind == scalartype and not a.optional for a in first.args):
            forms[name] = "cast"
        elif len(tensors) != len([a for a in pos if not a.has_default]):
            forms[name] = None
        elif len(tensors) == 3 and tensors[0].name == "condition":
            forms[name] = "select"
        else:
            forms[name] = {1: "unary", 2: "binary", 3: "ternary"}.get(len(tensors))
        if forms[name] == "binary" and not _takes_2d(dispatch, packet):
            forms[name] = "binary_1d"
    return forms


def _takes_2d(dispatch: Any, packet: Any) -> bool:
    """Does a binary operator take 2-D float32 tensors? (dot takes 1-D only.)"""
    x = dispatch.ones((2, 2), dtype=dispatch.float32)
    try:
        packet(x, x)
    except Exception:  # noqa: BLE001 - any refusal: the operator is 1-D only
        return False
    return True


def dtype_names(dispatch: Any) -> list[str]:
    """The dtypes of dispatch, in its own order (bool, int8, ..., bfloat16)."""
    import dispatch._dtypes as d

    return [n for n in d.__all__ if n != "dtype"]


def rows_of(forms: dict, dtypes: list[str]) -> list[dict]:
    """Every (op, form, dtype, layout[, to]) of the matrix, in table order."""
    rows = []
    for op, form in forms.items():
        for dt in dtypes:
            if form is None:
                rows.append({"op": op, "form": "none", "dtype": dt, "layout": "-"})
            elif form == "cast":
                rows += [{"op": op, "form": form, "dtype": dt, "layout": "contig", "to": to}
                         for to in dtypes if to != dt]
            else:
                rows += [{"op": op, "form": form, "dtype": dt, "layout": lay}
                         for lay in LAYOUTS[form]]
    return rows


# ------------------------------------------------------------------ values
class Values:
    """The inputs of every row, made once per (dtype, shape) and shared by
    the rows: NumPy arrays when NumPy is there, else Python lists."""

    def __init__(self, np: Any, n: int) -> None:
        self.np, self.n = np, n
        self._cache: dict = {}

    def base(self, kind: str, shape: tuple, seed: int) -> Any:
        """float64 values in [0.5, 2) ("float"), integers 1..100 ("int") or
        random bools ("bool"), as a NumPy array of that shape or a flat list."""
        key = (kind, shape, seed)
        if key not in self._cache:
            count = 1
            for s in shape:
                count *= s
            if self.np is not None:
                rng = self.np.random.default_rng(seed)
                v = rng.uniform(0.5, 2.0, shape) if kind == "float" else \
                    rng.integers(1, 101, shape) if kind == "int" else rng.random(shape) < 0.5
            else:
                r = random.Random(seed)
                v = [r.uniform(0.5, 2.0) if kind == "float" else r.randint(1, 100)
                     if kind == "int" else r.random() < 0.5 for _ in range(count)]
            self._cache[key] = v
        return self._cache[key]


def _kind(dtype: str) -> str:
    return "bool" if dtype == "bool" else "float" if "float" in dtype else "int"


class Library:
    """One library's way to make tensors and call an operator; its tensors
    live on `device` ("cpu", or "cuda" for ours and torch's: made on the
    host from the same values, then copied there once)."""

    name = ""
    device = "cpu"

    def tensor(self, values: Any, shape: tuple, dtype: str) -> Any:
        raise NotImplementedError

    def call(self, row: dict, ts: list, scalar: Any) -> Callable[[], Any]:
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for the work the calls queued (a device's; the CPU's is done)."""


class Ours(Library):
    name = "ours"

    def __init__(self, dispatch: Any, np: Any, device: str = "cpu") -> None:
        self.d, self.np, self.device = dispatch, np, device

    def tensor(self, values: Any, shape: tuple, dtype: str) -> Any:
        d = self.d
        if self.np is not None:
            src = values.astype("float32" if dtype == "bfloat16" else dtype)
            t = d.from_numpy(self.np.ascontiguousarray(src))
        else:
            t = d.tensor(values, dtype=d.float64 if dtype != "bool" else d.bool).reshape(shape)
        t = t.to(getattr(d, dtype)) if str(t.dtype) != f"dispatch.{dtype}" else t
        return t if self.device == "cpu" else t.to(self.device)

    def synchronize(self) -> None:
        if self.device != "cpu":
            self.d.cuda.synchronize()

    def call(self, row: dict, ts: list, scalar: Any) -> Callable[[], Any]:
        op = getattr(self.d.ops, row["op"])
        if row["form"] == "cast":
            return partial(ts[0].to, getattr(self.d, row["to"]))
        return _generic_call(op, row, ts, scalar, self.d)


class Torch(Library):
    name = "torch"

    def __init__(self, torch: Any, np: Any, device: str = "cpu") -> None:
        self.t, self.np, self.device = torch, np, device

    def tensor(self, values: Any, shape: tuple, dtype: str) -> Any:
        t = self.t
        if self.np is not None:
            src = values.astype("float32" if dtype == "bfloat16" else dtype)
            x = t.from_numpy(self.np.ascontiguousarray(src))
        else:
            x = t.tensor(values, dtype=t.bool if dtype == "bool" else t.float64).reshape(shape)
        return x.to(getattr(t, dtype)).to(self.device)

    def synchronize(self) -> None:
        if self.device != "cpu":
            self.t.cuda.synchronize()

    def call(self, row: dict, ts: list, scalar: Any) -> Callable[[], Any]:
        t = self.t
        if row["form"] == "cast":
            return partial(ts[0].to, getattr(t, row["to"]))
        op = row["op"]
        if op.endswith("_"):
            fn = getattr(t.Tensor, op, None)
        else:
            fn = getattr(t, op, None)
        if fn is None:
            raise LookupError(f"torch has no {op}")
        return _generic_call(fn, row, ts, scalar, t)


class NumPy(Library):
    name = "numpy"

    def __init__(self, np: Any) -> None:
        self.np = np

    def tensor(self, values: Any, shape: tuple, dtype: str) -> Any:
        if dtype == "bfloat16":
            raise LookupError("NumPy has no bfloat16")
        return self.np.ascontiguousarray(values.astype(dtype))

    def call(self, row: dict, ts: list, scalar: Any) -> Callable[[], Any]:
        np, op, form = self.np, row["op"], row["form"]
        name = NUMPY_NAMES.get(op)
        if name is None:
            raise LookupError(f"NumPy has no {op}")
        if form == "cast":
            if row["to"] == "bfloat16":
                raise LookupError("NumPy has no bfloat16")
            return partial(ts[0].astype, row["to"])
        if op == "fill_":
            return partial(ts[0].fill, scalar)
        fn = getattr(np, name)
        if op == "copy_":
            return partial(fn, ts[0], ts[1] if len(ts) > 1 else scalar)
        if form == "inplace":
            return partial(fn, ts[0], ts[1] if len(ts) > 1 else scalar, out=ts[0])
        if form == "reduction":
            axis = reduced_dim(row["layout"])
            if axis is None:
                return partial(fn, ts[0])
            if op in ("max", "min"):  # values and indices, as torch's and ours
                arg = np.argmax if op == "max" else np.argmin
                return lambda: (fn(ts[0], axis=axis), arg(ts[0], axis=axis))
            return partial(fn, ts[0], axis=axis)
        return partial(fn, *ts, *(() if scalar is None else (scalar,)))


def _generic_call(fn: Any, row: dict, ts: list, scalar: Any, lib: Any) -> Callable[[], Any]:
    """fn called as dispatch.ops / torch spell it (the same for both)."""
    form, lay = row["form"], row["layout"]
    if form == "reduction":
        dim = reduced_dim(lay)
        return partial(fn, ts[0]) if dim is None else partial(fn, ts[0], dim)
    if form == "inplace_scalar":
        return partial(fn, ts[0], scalar)
    return partial(fn, *ts, *(() if scalar is None else (scalar,)))


def make_inputs(lib: Library, vals: Values, row: dict) -> tuple:
    """(tensors, scalar) of one row for one library; scalar is None unless
    the row's last operand is a Python number."""
    form, lay, dt, n = row["form"], row["layout"], row["dtype"], vals.n
    rows_, cols = n // COLS, COLS
    one_d = form == "binary_1d"
    kind = _kind(dt)
    # in place, the operand is 1 (a tensor of ones, or the number): repeated
    # calls keep the values, never drifting into subnormals
    neutral = form == "inplace"
    scalar = {"bool": True, "int": 1 if neutral else 3, "float": 1.0 if neutral else 0.5}[kind]

    def make(seed: int, shape: tuple, dtype: str = dt, k: str = kind, ones: bool = False) -> Any:
        strided = is_strided(lay)
        full = (shape[0], shape[1] * 2) if strided and len(shape) == 2 else \
            (shape[0] * 2,) if strided else shape
        values = vals.base(k, full, seed)
        if ones:
            values = _ones_like(vals, values, full)
        t = lib.tensor(values, full, dtype)
        if not strided:
            return t
        return t[:, ::2] if len(shape) == 2 else t[::2]

    shape = (n,) if one_d else (rows_, cols)
    if form in ("unary", "reduction", "cast", "binary_1d"):
        ts = [make(1, shape)] + ([make(2, shape)] if one_d else [])
        return ts, None
    if form == "inplace_scalar":
        return [make(1, shape)], scalar
    nt = {"binary": 2, "ternary": 3, "select": 3, "inplace": 2}[form]
    ts = []
    for i in range(nt):
        last = i == nt - 1
        if form == "select" and i == 0:
            ts.append(make(10, shape, "bool", "bool"))
            continue
        if last and lay == "scalar":
            return ts, scalar
        s = (rows_, 1) if last and lay == "bcast_col" else (1, cols) if last and \
            lay == "bcast_row" else shape
        if form == "inplace" and last and lay == "strided":
            s_lay = shape  # the operand contiguous: the strided one is self
            ts.append(lib.tensor(_ones_like(vals, vals.base(kind, s_lay, 2), s_lay), s_lay, dt))
            continue
        ts.append(make(i + 1, s, ones=form == "inplace" and last))
    return ts, None


def _ones_like(vals: Values, values: Any, shape: tuple) -> Any:
    if vals.np is not None:
        return vals.np.ones(shape, dtype=values.dtype)
    return [True if isinstance(v, bool) else type(v)(1) for v in values]
