"""Parse the `/*@targets ... */` statement of a dispatchable source.

Grammar: from the first `@targets` inside a C comment up to the comment's
`*/` (NumPy's rule: `/*@targets ...*/`, or a comment decorated with leading
`*` or `/` on its lines). Tokens are split on whitespace, `*`, `,` and `/`;
parentheses stand alone.

    NAME          one target for a feature (or a group such as x86_v3)
    (A B ...)     one target built for all members, named after the members
                  left once implied ones are dropped: (avx2 fma3) -> FMA3__AVX2
    baseline      also compile the source as it is, with the baseline flags
    #name         the targets of a group from the project's dispatch
                  configuration (an INI file, section [groups]); groups may
                  use groups, see Note [Group expansion is bounded]; an
                  empty group is allowed (a note says so); a $policy in a
                  group applies to the whole statement
    $keep_baseline  keep targets the baseline already covers
    $keep_sort      keep the written order instead of highest interest first
    $maxopt         compile the targets at -O3
    $werror         compile the targets with -Werror
    $autovec        turn the compiler's auto-vectorizer fully on (and 512-bit
                    vectors for AVX-512 targets); implies $maxopt

A name or closure written again is one target (the first spelling wins);
features that imply each other are one target named after the highest, see
Note [Tied features]. NumPy's test cases of this grammar are
tests/toolkit/test_numpy_parity.py.

Names of another architecture are skipped with a note, so one statement can
list the targets of every architecture. Everything else that is wrong is a
DispatchError naming file:line and the token.

Note [Group expansion is bounded]: a group may name other groups, so a few
lines of INI can describe a huge statement (40 groups each naming the next
twice is 2**40 names) or one nested thousands deep. Expansion stops with an
error on a cycle, past MAX_GROUP_DEPTH nested groups, or once the groups of a
statement have produced MAX_GROUP_NAMES names in all: far beyond any real
use, small enough to fail at once.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from .build_config import BuildConfig
from .errors import DispatchError, shown
from .features import ALL_NAMES, Arch
from .inputs import read_input

POLICIES = ("$keep_baseline", "$keep_sort", "$maxopt", "$werror", "$autovec")
_TOKEN = re.compile(r"[()]|[^\s*,/()]+")
_NAME = re.compile(r"[A-Z0-9_]+")
_MARK = "@targets"
MAX_GROUP_DEPTH = 16
MAX_GROUP_NAMES = 10_000


@dataclass
class Token:
    text: str
    line: int


@dataclass
class TargetSpec:
    """One target as written (before the build configuration is applied)."""

    name: str
    features: Tuple[str, ...]
    line: int


@dataclass
class Statement:
    file: str
    line: int
    targets: List[TargetSpec] = field(default_factory=list)
    baseline: bool = False
    policies: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


def load_groups(path: Optional[Path]) -> Dict[str, str]:
    """Target groups (`#name`) from an INI file's [groups] section."""
    if path is None:
        return {}
    # No interpolation: '%' means nothing in @targets, and `%(name)s` references
    # would be a second, unbounded expansion (see Note [Group expansion is bounded]).
    parser = configparser.ConfigParser(interpolation=None)
    text = read_input(Path(path), "target groups")
    try:
        parser.read_string(text, str(path))
    except configparser.Error as exc:
        raise DispatchError(f"cannot read target groups: {exc}", str(path)) from None
    if not parser.has_section("groups"):
        return {}
    return {k.lower(): v for k, v in parser.items("groups")}


def find_statement(text: str, filename: str) -> Tuple[str, int]:
    """The body of the first @targets statement and the line it starts on.

    The statement is the text from the first `@targets` inside a C comment up
    to that comment's `*/`, so decorated comments work as in NumPy:
    `/*\n ** @targets\n ** avx2\n */`, `/*****@targets***...`. One pass over
    ``text``: each comment is searched once.
    """
    pos = 0
    while True:
        opened = text.find("/*", pos)
        if opened < 0:
            break
        closed = text.find("*/", opened + 2)
        mark = text.find(_MARK, opened + 2, len(text) if closed < 0 else closed)
        if mark >= 0:
            line = text.count("\n", 0, mark) + 1
            if closed < 0:
                raise DispatchError("@targets statement has no closing '*/'",
                                    f"{filename}:{line}")
            return text[mark + len(_MARK):closed], line
        if closed < 0:
            break
        pos = closed + 2
    raise DispatchError("no /*@targets ... */ statement; a dispatchable source starts "
                        "with one, e.g. /*@targets baseline avx2 */", f"{filename}:1")


def tokenize(body: str, line: int) -> List[Token]:
    """Tokens of ``body``, whose first line is ``line``; linear in its length."""
    return [Token(text, number) for number, chunk in enumerate(body.split("\n"), line)
            for text in _TOKEN.findall(chunk)]


@dataclass
class _Groups:
    """The user's target groups, and how much a statement may still expand."""

    bodies: Dict[str, str]
    tokens: Dict[str, List[str]] = field(default_factory=dict)  # tokenized once
    left: int = MAX_GROUP_NAMES
    multi_names: Dict[FrozenSet[str], str] = field(default_factory=dict)  # (a b) written again

    def expand(self, name: str, text: str, expanding: Tuple[str, ...], loc: str) -> List[str]:
        """The names group ``name`` (written ``text``) stands for, one level down."""
        if name not in self.bodies:
            known = " ".join("#" + shown(g, 30) for g in sorted(self.bodies)) or "none defined"
            raise DispatchError(f"unknown target group '{shown(text)}'; known: {known}", loc)
        if name in expanding:
            chain = " -> ".join("#" + shown(g, 30) for g in (*expanding, name))
            raise DispatchError(f"target group '{shown(text)}' includes itself ({chain})", loc)
        if len(expanding) >= MAX_GROUP_DEPTH:
            raise DispatchError(f"target group '{shown(text)}' is nested more than "
                                f"{MAX_GROUP_DEPTH} groups deep (in #{shown(expanding[0], 30)})",
                                loc)
        if name not in self.tokens:
            self.tokens[name] = [t.text for t in tokenize(self.bodies[name], 0)]
        self.left -= len(self.tokens[name])
        if self.left < 0:
            raise DispatchError(f"target groups expand to more than {MAX_GROUP_NAMES} names "
                                f"(at '{shown(text)}'): do groups name other groups "
                                "several times?", loc)
        return self.tokens[name]


def parse(text: str, filename: str, arch: Arch,
          groups: Optional[Dict[str, str]] = None, first_line: int = 1) -> Statement:
    """Parse the statement of one source for ``arch``; ``text`` starts on
    line ``first_line`` of ``filename`` (a variants file's section name is a
    statement written on its own line: no padding of newlines to reach it)."""
    body, line = find_statement(text, filename)
    line += first_line - 1
    tokens = tokenize(body, line)
    if not tokens:
        raise DispatchError("empty @targets statement: name at least one target or "
                            "'baseline'", f"{filename}:{line}")
    stmt = Statement(filename, line)
    _parse_tokens(tokens, stmt, arch, _Groups(groups or {}), ())
    # Only another architecture's names: nothing to build here, which is fine.
    if not stmt.targets and not stmt.baseline and not stmt.notes:
        raise DispatchError("@targets statement names no target", f"{filename}:{line}")
    return stmt


def _parse_tokens(tokens: Sequence[Token], stmt: Statement, arch: Arch,
                  groups: _Groups, expanding: Tuple[str, ...]) -> None:
    where = stmt.file
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        loc = f"{where}:{tok.line}"
        text = tok.text
        if text == "(":
            close = next((j for j in range(i + 1, len(tokens)) if tokens[j].text in "()"), None)
            if close is None or tokens[close].text == "(":
                raise DispatchError("unbalanced '(': missing ')'" if close is None else
                                    "nested '(' inside a multi-target group", loc)
            members = tokens[i + 1:close]
            if not members:
                raise DispatchError("empty parentheses '()'", loc)
            _add_multi(members, stmt, arch, loc, groups.multi_names)
            i = close + 1
            continue
        if text == ")":
            raise DispatchError("unbalanced ')': no '(' before it", loc)
        if text[0] in "+-":
            raise DispatchError(f"'{shown(text)}': '+' and '-' belong in option values, not in "
                                "@targets", loc)
        if text[0] == "$":
            if text.lower() not in POLICIES:
                raise DispatchError(f"unknown policy '{shown(text)}'; known: "
                                    f"{' '.join(POLICIES)}", loc)
            if text.lower() not in stmt.policies:
                stmt.policies.append(text.lower())
        elif text[0] == "#":
            name = text[1:].lower()
            body = groups.expand(name, text, expanding, loc)
            if not body:  # NumPy allows an empty group: a way to switch one off
                stmt.notes.append(f"{loc}: target group '{shown(text)}' is empty")
            _parse_tokens([Token(t, tok.line) for t in body], stmt, arch, groups,
                          expanding + (name,))
        elif text.lower() == "baseline":
            stmt.baseline = True
        else:
            _add_single(text, stmt, arch, loc)
        i += 1


def _known(arch: Arch) -> str:
    return " ".join([*arch.by_name, *arch.group_by_name, "baseline"])


def _resolve_name(text: str, arch: Arch, loc: str) -> Optional[Tuple[str, ...]]:
    """Features of one name, or None when it belongs to another architecture."""
    name = text.upper()
    if not _NAME.fullmatch(name):
        raise DispatchError(f"'{shown(text)}' is not a target name", loc)
    if name in arch.by_name:
        return (name,)
    if name in arch.group_by_name:
        return arch.group_by_name[name].members
    if name in ALL_NAMES:
        return None
    raise DispatchError(f"unknown target '{shown(text)}'; {arch.name} knows: {_known(arch)}",
                        loc)


def _add_single(text: str, stmt: Statement, arch: Arch, loc: str) -> None:
    features = _resolve_name(text, arch, loc)
    if features is None:
        stmt.notes.append(f"{loc}: skipped '{text}': not a feature of {arch.name}")
        return
    name = text.upper() if text.upper() in arch.group_by_name else features[0]
    stmt.targets.append(TargetSpec(name, features, int(loc.rsplit(":", 1)[1])))


def _add_multi(members: Sequence[Token], stmt: Statement, arch: Arch, loc: str,
               names: Dict[FrozenSet[str], str]) -> None:
    features: List[str] = []
    foreign: List[str] = []
    for tok in members:
        mloc = f"{stmt.file}:{tok.line}"
        if tok.text[0] in "$#" or tok.text.lower() == "baseline" or tok.text[0] in "+-":
            raise DispatchError(f"'{shown(tok.text)}' is not allowed inside parentheses: only "
                                "feature names", mloc)
        resolved = _resolve_name(tok.text, arch, mloc)
        if resolved is None:
            foreign.append(tok.text)
        else:
            features += [f for f in resolved if f not in features]
    if foreign:
        stmt.notes.append(f"{loc}: skipped '({' '.join(t.text for t in members)})': "
                          f"{' '.join(foreign)} not a feature of {arch.name}")
        return
    key = frozenset(features)
    if key not in names:
        names[key] = multi_name(features, arch)
    stmt.targets.append(TargetSpec(names[key], tuple(features), int(loc.rsplit(":", 1)[1])))


def multi_name(features: Sequence[str], arch: Arch) -> str:
    """Members not implied by another member, lowest interest first, joined by '__'."""
    keep = []
    for f in arch.sort(features, reverse=True):  # highest first wins implication cycles
        if not any(f in arch.closure([k]) for k in keep):
            keep.append(f)
    return "__".join(arch.sort(keep))


# -- applying the build configuration ---------------------------------------

@dataclass
class Target:
    """A target this build compiles."""

    name: str
    features: List[str]          # as written, sorted by interest
    enables: List[str]           # everything the wrapper defines (closure)
    checks: List[str]            # runtime detections, beyond the baseline
    flags: List[str]


@dataclass
class Resolved:
    file: str
    line: int
    targets: List[Target]
    baseline: bool
    policies: List[str]
    skipped: List[Dict[str, str]]
    notes: List[str]
    # the line of each skipped target's token, for file:line notes
    skipped_lines: Dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "file": self.file, "line": self.line, "baseline": self.baseline,
            "policies": self.policies, "notes": self.notes, "skipped": self.skipped,
            "targets": [dict(t.__dict__) for t in self.targets],
        }


def resolve(stmt: Statement, config: BuildConfig, disable_optimization: bool = False) -> Resolved:
    """Which targets of ``stmt`` this build compiles, highest interest first."""
    arch = config.table
    base = set(config.baseline)
    dispatch = set(config.dispatch)
    skipped: List[Dict[str, str]] = []
    skipped_lines: Dict[str, int] = {}
    targets: List[Target] = []
    for spec, closure in _distinct(stmt.targets, arch):
        reason = _skip_reason(spec, config, base, dispatch, "$keep_baseline" in stmt.policies)
        if disable_optimization and not reason:
            reason = "disable-optimization is on"
        if reason:
            skipped.append({"target": spec.name, "reason": reason})
            skipped_lines[spec.name] = spec.line
            continue
        flags = config.target_flags(spec.features)
        flags += [f for f in config.policy_flags(stmt.policies, spec.features) if f not in flags]
        targets.append(Target(spec.name, arch.sort(spec.features), arch.sort(closure),
                              arch.sort(closure - base), flags))
    if "$keep_sort" not in stmt.policies:
        rank = {t.name: max(arch.by_name[f].interest for f in t.features) for t in targets}
        targets.sort(key=lambda t: (rank[t.name], len(t.enables)), reverse=True)
    baseline = stmt.baseline or disable_optimization
    return Resolved(stmt.file, stmt.line, targets, baseline, stmt.policies, skipped,
                    list(stmt.notes), skipped_lines)


def _distinct(specs: Sequence[TargetSpec],
              arch: Arch) -> List[Tuple[TargetSpec, FrozenSet[str]]]:
    """One spec per target: a name or a closure written again is dropped (the
    first spelling wins), except for features that imply each other (aarch64's
    NEON ... ASIMD): see Note [Tied features]."""
    kept: List[Optional[Tuple[TargetSpec, FrozenSet[str]]]] = []
    names = set()
    at: Dict[FrozenSet[str], int] = {}
    for spec in specs:
        closure = arch.closure(spec.features)
        if spec.name in names:
            continue
        names.add(spec.name)
        if closure in at:
            prev = kept[at[closure]]
            assert prev is not None
            if _outranks(spec.name, prev[0].name, arch):
                kept[at[closure]] = None
                at[closure] = len(kept)
                kept.append((spec, closure))
            continue
        at[closure] = len(kept)
        kept.append((spec, closure))
    return [k for k in kept if k is not None]


def _outranks(name: str, other: str, arch: Arch) -> bool:
    """Note [Tied features]: features that imply each other are one target,
    named after the one of highest interest and placed where that one is
    written, as NumPy's `feature_untied` does: `neon asimd` is ASIMD."""
    if name not in arch.by_name or other not in arch.by_name:
        return False
    return arch.by_name[name].interest > arch.by_name[other].interest


def _skip_reason(spec: TargetSpec, config: BuildConfig, base: set, dispatch: set,
                 keep_baseline: bool) -> str:
    arch = config.table
    beyond = [f for f in spec.features if f not in base]
    if not beyond and not keep_baseline:
        return "already in the baseline (add $keep_baseline to build it anyway)"
    for f in arch.sort(spec.features):
        if f in base or f in dispatch:
            continue
        if config.unsupported.get(f):
            return f"{f}: {config.unsupported[f]}"
        return f"{f} is not in cpu-dispatch ({config.requested_dispatch!r})"
    return ""
