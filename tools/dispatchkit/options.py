"""The cpu-baseline / cpu-dispatch grammar (NumPy's, made precise).

A value is a list of tokens separated by spaces or commas, read left to
right, case-insensitive:

    NAME      add a feature, or every member of a group (X86_V3)
    +NAME     the same
    -NAME     remove NAME and every feature that implies it, transitively;
              See Note [Minus removes successors]
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
from typing import Callable, Dict, List

from .errors import DispatchError, shown
from .features import ALL_NAMES, Arch

_SPLIT = re.compile(r"[\s,]+")
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
    groups = arch.group_by_name
    for token in _SPLIT.split(value.strip()):
        if not token:
            continue
        if token[0] in "$#":
            kind = "policies" if token[0] == "$" else "target groups"
            raise DispatchError(
                f"'{shown(token)}' is not allowed in an option value: {kind} belong in "
                "/*@targets ... */ statements", option)
        op, name = ("-", token[1:]) if token[0] == "-" else (
            ("+", token[1:]) if token[0] == "+" else ("+", token))
        name = name.upper()
        if not name:
            raise DispatchError(f"'{shown(token)}' is an operator without a feature name",
                                option)
        if not re.fullmatch(r"[A-Z0-9_.]+", name):
            raise DispatchError(f"'{shown(token)}' is not a feature name", option)
        if name in KEYWORDS:
            if op == "-" or token[0] == "+":
                raise DispatchError(f"'{shown(token)}': '{name.lower()}' takes no '+' or '-'",
                                    option)
            _apply_keyword(name, arch, sel, native, token)
        elif name in arch.by_name or name in groups:
            members = groups[name].members if name in groups else (name,)
            for member in members:
                if op == "+":
                    sel.origin.setdefault(member, token)
                else:
                    for gone in arch.successors(member):
                        sel.origin.pop(gone, None)
        elif name in ALL_NAMES:
            sel.notes.append(f"{option}: skipped '{shown(token)}': not a feature of {arch.name}")
        else:
            known = " ".join([*arch.by_name, *groups, *(k.lower() for k in KEYWORDS)])
            raise DispatchError(
                f"unknown CPU feature '{shown(token)}'; {arch.name} knows: {known}", option)
    return sel


def _apply_keyword(name: str, arch: Arch, sel: Selection,
                   native: Callable[[], List[str]], token: str) -> None:
    if name == "NONE":
        sel.origin.clear()
        return
    if name == "MIN":
        added = list(arch.minimum)
    elif name == "MAX":
        added = [f.name for f in arch.features]
    else:
        added = native()
    for member in added:
        sel.origin.setdefault(member, token)
