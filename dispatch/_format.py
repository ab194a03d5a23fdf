"""The text of ``repr(tensor)``, in Python alone (no NumPy).

The layout is NumPy's ``array2string(a, separator=", ", prefix="tensor(")``,
which the tensor repr used before NumPy became optional, and which PyTorch's
repr resembles: the same text for the same values. Floats print with the
fewest digits that read back to the same value of their own dtype (float32
0.1 is ``0.1``), at most 8 after the point, all padded to one width;
scientific notation when the largest magnitude is >= 1e8 (float32: 1e6,
float16: 1e3, as NumPy 2), the smallest
non-zero one < 1e-4, or their ratio > 1000. More than 1000 elements print
the first and last 3 of each long dimension around ``...``. Lines wrap at
75 columns.

>>> format_nested([[1.5, 2.25], [3.0, -4.0]], "float32", "tensor(")
'[[ 1.5 ,  2.25],\\n        [ 3.  , -4.  ]]'
"""

from __future__ import annotations

import math
import struct
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (Note [Import time] in dispatch/__init__.py)
    from typing import Any, Callable

__all__ = ["SUMMARY", "THRESHOLD", "EDGE_ITEMS", "format_nested"]

THRESHOLD = 1000   # more elements than this: summarized
EDGE_ITEMS = 3     # items kept at each end of a summarized dimension
LINE_WIDTH = 75
PRECISION = 8
SUMMARY = ...      # the marker a summarized nested list holds in place of the middle

# struct format, most significant digits needed, scientific from this magnitude
# (NumPy 2: 10 ** min(8, decimal precision of the dtype))
# (a float struct lacks, such as bfloat16, is printed as its float32 values)
_FLOAT_FORMATS = {"float16": ("e", 5, 1e3), "float32": ("f", 9, 1e6), "float64": ("d", 17, 1e8)}


def _round_to(x: float, fmt: str) -> float:
    """x rounded to the float type of struct format fmt (inf beyond its range)."""
    try:
        return struct.unpack(fmt, struct.pack(fmt, x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _shortest(x: float, fmt: str, max_digits: int) -> tuple[str, int]:
    """(digits, exponent) of the fewest significant digits that read back to
    x in the float type of fmt: x == 0.<digits> * 10**exponent (rounded)."""
    ax = abs(x)
    for n in range(1, max_digits + 1):
        text = f"{ax:.{n - 1}e}"
        back = float(text) if fmt == "d" else _round_to(float(text), fmt)
        if back == ax:
            break
    mantissa, exp = text.split("e")
    return mantissa.replace(".", ""), int(exp) + 1


def _positional(x: float, fmt: str, max_digits: int) -> str:
    """x with its shortest digits, at most PRECISION after the point, trailing
    zeros dropped but the point kept ("1.", "0.25")."""
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0."
    digits, exp = _shortest(x, fmt, max_digits)
    frac_digits = len(digits) - exp
    if frac_digits > PRECISION:  # cut at PRECISION digits, rounding the exact value
        text = f"{abs(x):.{PRECISION}f}".rstrip("0")
        return sign + text
    if exp <= 0:
        return f"{sign}0.{'0' * -exp}{digits}"
    if exp >= len(digits):
        return f"{sign}{digits}{'0' * (exp - len(digits))}."
    return f"{sign}{digits[:exp]}.{digits[exp:]}"


def _scientific_parts(x: float, fmt: str, max_digits: int) -> tuple[str, str, int]:
    """(sign + integer digit, fraction digits, exponent) of x in scientific
    notation with its shortest digits, at most PRECISION after the point."""
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0", "", 0
    digits, exp = _shortest(x, fmt, max_digits)
    if len(digits) - 1 > PRECISION:
        mantissa, e = f"{abs(x):.{PRECISION}e}".split("e")
        digits, exp = mantissa.replace(".", "").rstrip("0") or "0", int(e) + 1
    digits = digits.rstrip("0") or "0"
    return sign + digits[0], digits[1:], exp - 1


def _float_formatter(values: list, dtype_name: str) -> Callable[[float], str]:
    fmt, max_digits, exp_cutoff = _FLOAT_FORMATS[dtype_name]
    finite = [v for v in values if math.isfinite(v)]
    nonzero = [abs(v) for v in finite if v != 0]
    exp_format = False
    if nonzero:
        hi, lo = max(nonzero), min(nonzero)
        # NumPy compares in the array's own dtype
        ratio = _round_to(hi / lo, fmt) if lo else math.inf
        exp_format = (hi >= exp_cutoff or lo < _round_to(1e-4, fmt)
                      or ratio > 1000.0)
    if not finite:
        pad_left = pad_right = 0
    elif exp_format:
        parts = [_scientific_parts(v, fmt, max_digits) for v in finite]
        precision = max(len(f) for _, f, _ in parts)
        exp_size = max(max(len(str(abs(e))) for _, _, e in parts), 2)
        pad_left = max(len(i) for i, _, _ in parts)
        pad_right = exp_size + 2 + precision
    else:
        strs = [_positional(v, fmt, max_digits) for v in finite]
        pad_left = max(len(s.split(".")[0]) for s in strs)
        pad_right = max(len(s.split(".")[1]) for s in strs)
    if len(finite) != len(values):
        neginf = any(v == -math.inf for v in values)
        offset = pad_right + 1
        pad_left = max(pad_left, 3 - offset, 3 + neginf - offset)

    def format_one(v: float) -> str:
        if not math.isfinite(v):
            text = "nan" if math.isnan(v) else ("-inf" if v < 0 else "inf")
            return " " * (pad_left + pad_right + 1 - len(text)) + text
        if exp_format:
            ipart, frac, e = _scientific_parts(v, fmt, max_digits)
            if len(frac) < precision:  # more digits of the exact value (NumPy's min_digits)
                mantissa, exp = f"{v:.{precision}e}".split("e")
                (ipart, frac), e = mantissa.split("."), int(exp)
            body = f"{ipart.rjust(pad_left)}.{frac}"
            return f"{body}e{'-' if e < 0 else '+'}{str(abs(e)).zfill(exp_size)}"
        ipart, frac = _positional(v, fmt, max_digits).split(".")
        return f"{ipart.rjust(pad_left)}.{frac.ljust(pad_right)}"

    return format_one


def _leaves(nested: Any, ndim: int) -> list:
    if ndim == 0:
        return [nested]
    out: list = []
    for item in nested:
        if item is not SUMMARY:
            out.extend(_leaves(item, ndim - 1))
    return out


def _formatter(values: list, dtype_name: str, ndim: int) -> Callable[[Any], str]:
    if dtype_name == "bool":
        true = " True" if ndim else "True"
        return lambda v: true if v else "False"
    if dtype_name in _FLOAT_FORMATS:
        return _float_formatter(values, dtype_name)
    width = max((len(str(v)) for v in values), default=0)
    return lambda v: str(v).rjust(width)


def _extend_line(s: str, line: str, word: str, width: int, prefix: str) -> tuple[str, str]:
    if len(line) + len(word) > width and len(line) > len(prefix):
        s += line.rstrip() + "\n"
        line = prefix
    return s, line + word


def format_nested(nested: Any, dtype_name: str, prefix: str, ndim: int | None = None) -> str:
    """The text of a nested list of Python values (as tolist() gives, with
    SUMMARY where a summarized dimension skips its middle) of ndim
    dimensions and dtype dtype_name, laid out to follow prefix."""
    if ndim is None:
        ndim, probe = 0, nested
        while isinstance(probe, list):
            ndim += 1
            if not probe:
                break
            probe = probe[0]
    values = _leaves(nested, ndim)
    if not values:
        return "[]"
    fmt = _formatter(values, dtype_name, ndim)
    separator = ", "

    def recurse(item: Any, depth: int, indent: str, width: int) -> str:
        left = ndim - depth
        if left == 0:
            return fmt(item)
        if left == 1:
            s, line = "", indent
            elem_width = width - 1
            for i, v in enumerate(item):
                word = "..." if v is SUMMARY else fmt(v)
                s, line = _extend_line(s, line, word, elem_width, indent)
                if i != len(item) - 1:
                    line += separator
            s += line
        else:
            line_sep = separator.rstrip() + "\n" * (left - 1)
            rows = [indent + ("..." if v is SUMMARY else
                              recurse(v, depth + 1, indent + " ", width - 1))
                    for v in item]
            s = line_sep.join(rows)
        return "[" + s[len(indent):] + "]"

    return recurse(nested, 0, " " * (len(prefix) + 1), LINE_WIDTH)
