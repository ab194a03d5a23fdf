"""The cpu-baseline / cpu-dispatch grammar (NumPy's, made precise).

A value is a list of tokens separated by spaces or commas, read left to
right, case-insensitive. `+` and `-` are operators on the name after them,
attached or not (`-avx2`, `- avx2`, `sse41+avx2`); the last one written wins:

    NAME      add a feature, or every member of a group (X86_V3)
    +NAME     the same
    -NAME     remove NAME and every feature that implies it, transitively;
              See Note [Minus removes successors]
    min       add the architecture's minimum (x86_64: SSE SSE2 SSE3)
    max       add every feature of the architecture
    native    add what the compiler enables with -march=native
    -min, -max, -native  remove those features (and their successors)
    none      clear everything added so far (`+none` too; `-none` removes nothing)

An operator with no name after it (`avx2 -`) is an error.

Note [Minus removes successors]
    min       add the architecture's minimum (x86_64: SSE SSE2 SSE3)
    max       add every feature of the architecture
    native    add what the compiler enables with -march=native
    none      clear everything added so far

Note [Minus removes successors]: `max -avx512f` must leave no AVX512 target.
Removing only AVX512F would leave AVX512_SKX, whose flags re-enable AVX512F,
so `-` also removes every feature whose implication closure contains the
named one. Order matters: `-avx512f max` adds them all back.

Names of another architecture's features are skipped with a note (one option
value can serve several architectures); unknown names, policies (`$x`) and
target groups (`#x`) are errors that quote the token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

from .errors import DispatchError, shown
from .features import ALL_NAMES, Arch

_SEPARATORS = re.compile(r"[\s,]+")
_OPERATOR = re.compile(r"([+-])")
KEYWORDS = ("MIN", "MAX", "NATIVE", "NONE")


@dataclass
class Selection:
    """The features an option value selects, and why each is there."""

    origin: Dict[str, str] = field(default_factory=dict)  # name -> token that added it
    notes: List[str] = field(default_factory=list)

    @property
    def names(self) -> List[str]:
        return list(self.origin)


def parse_option(value: str, arch: Arch, option: str,
                 native: Callable[[], List[str]]) -> Selection:
    """Evaluate one option value for ``arch``.

    ``native`` returns the features -march=native enables (called only when
    the value says `native`, since it asks the compiler).

    >>> from .features import X86_64
    >>> sorted(parse_option("max -avx512f", X86_64, "cpu-dispatch", list).names)[:3]
    ['AVX', 'AVX2', 'F16C']
    """
    if not isinstance(value, str):
        raise DispatchError(f"expected a string, got {type(value).__name__}", option)
    sel = Selection()
    for op, word in _tokens(value, option):
        _apply(op, word, arch, sel, option, native)
    return sel


def _tokens(value: str, option: str) -> List[Tuple[str, str]]:
    """(operator, token as written) pairs: NumPy's split on spaces, commas, and
    around every `+` and `-`; ``token`` keeps the operators written before it."""
    out: List[Tuple[str, str]] = []
    op, ops = "+", []  # the operators since the last name (a list: `+ + + ...` was
    for part in _OPERATOR.split(value):  # a string grown by copying, quadratic)
        if not part or _SEPARATORS.fullmatch(part):
            continue
        if part in "+-":
            op = part
            ops.append(part)
            continue
        for word in _SEPARATORS.split(part.strip()):
            if word:
                out.append((op, "".join(ops) + word))
                op, ops = "+", []
    if ops:
        raise DispatchError(f"'{shown(''.join(ops))}' is an operator without a feature name",
                            option)
    return out


def _apply(op: str, token: str, arch: Arch, sel: Selection, option: str,
           native: Callable[[], List[str]]) -> None:
    groups = arch.group_by_name
    name = token.lstrip("+-")
    if name[0] in "$#":
        kind = "policies" if name[0] == "$" else "target groups"
        raise DispatchError(
            f"'{shown(token)}' is not allowed in an option value: {kind} belong in "
            "/*@targets ... */ statements", option)
    name = name.upper()
    if not re.fullmatch(r"[A-Z0-9_.]+", name):
        raise DispatchError(f"'{shown(token)}' is not a feature name", option)
    origin = token.lstrip("+")
    if name in KEYWORDS:
        added = _keyword_features(name, arch, native)
        if name == "NONE" and op == "+":
            sel.origin.clear()
    elif name in arch.by_name or name in groups:
        added = list(groups[name].members) if name in groups else [name]
    elif name in ALL_NAMES:
        sel.notes.append(f"{option}: skipped '{shown(token)}': not a feature of {arch.name}")
        return
    else:
        known = " ".join([*arch.by_name, *groups, *(k.lower() for k in KEYWORDS)])
        raise DispatchError(
            f"unknown CPU feature '{shown(token)}'; {arch.name} knows: {known}", option)
    for member in added:
        if op == "+":
            sel.origin.setdefault(member, origin)
        else:
            for gone in arch.successors(member):
                sel.origin.pop(gone, None)


def _keyword_features(name: str, arch: Arch, native: Callable[[], List[str]]) -> List[str]:
    if name == "NONE":
        return []
    if name == "MIN":
        return list(arch.minimum)
    if name == "MAX":
        return [f.name for f in arch.features]
    return list(native())
