"""The feature model: one ``Feature`` per CPU feature, one ``Arch`` per table.

All logic over the tables (implication closure, sorting, flag merging) is
generic and lives here; the per-architecture modules only declare data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, List, Sequence, Tuple


@dataclass(frozen=True)
class Feature:
    """One CPU feature as the toolkit knows it.

    name      upper-case table name, also the C enum suffix (DISPATCH_CPU_FEATURE_<name>)
    interest  sort rank: a higher interest is tried first at runtime
    implies   features this one needs; cycles are allowed (on aarch64 NEON,
              NEON_FP16, NEON_VFPV4 and ASIMD imply each other)
    flags     gcc/clang flags that enable it (merged by the arch's merge rule)
    headers   intrinsic headers a target with this feature includes
    detect    runtime C enum names checked before a variant runs
    cpuinfo   the Linux kernel's /proc/cpuinfo names (tests and fallbacks)
    macros    macros the compiler predefines when the feature is enabled
              (how `native` and flags in CFLAGS are recognised)
    check     test source under checks/, compiled with the flags of the
              feature and all it implies, warnings as errors
    autovec   extra flags for the `$autovec` policy
    disable   when non-empty, the feature is never enabled, for this reason
    cid       its C id, DISPATCH_CPU_FEATURE_<name> = cid (see Note [Stable C ids]
              in ctable.py): fixed forever, the same in every table that has
              the name
    """

    name: str
    interest: int
    implies: Tuple[str, ...] = ()
    flags: Tuple[str, ...] = ()
    headers: Tuple[str, ...] = ()
    detect: Tuple[str, ...] = ()
    cpuinfo: Tuple[str, ...] = ()
    macros: Tuple[str, ...] = ()
    check: str = ""
    autovec: Tuple[str, ...] = ()
    disable: str = ""
    cid: int = 0

    @property
    def check_source(self) -> str:
        return self.check or f"cpu_{self.name.lower()}.c"

    @property
    def detect_names(self) -> Tuple[str, ...]:
        return self.detect or (self.name,)


@dataclass(frozen=True)
class Group:
    """A named set of features (the x86-64 psABI levels): in options it adds
    all members; in @targets it is one target built for all members; at
    runtime it is present when every member is. ``cid`` as for Feature."""

    name: str
    members: Tuple[str, ...]
    cid: int = 0


FlagMerger = Callable[[Sequence[str]], List[str]]


def merge_keep_last(prefixes: Sequence[str]) -> FlagMerger:
    """Flags starting with one of ``prefixes`` override each other: keep the
    last (highest interest) one, at the position of its first occurrence."""

    def merge(flags: Sequence[str]) -> List[str]:
        out: List[str] = []
        for flag in flags:
            prefix = next((p for p in prefixes if flag.startswith(p)), None)
            slot = next((i for i, f in enumerate(out) if prefix and f.startswith(prefix)), None)
            if slot is not None:
                out[slot] = flag
            elif flag not in out:
                out.append(flag)
        return out

    return merge


def merge_march_extensions(flags: Sequence[str]) -> List[str]:
    """Arm-style ``-march=<base>+ext1+ext2``: the highest base wins and the
    extensions accumulate, so ``-march=armv8.2-a+fp16`` and
    ``-march=armv8.2-a+dotprod`` become ``-march=armv8.2-a+fp16+dotprod``."""
    out: List[str] = []
    base, exts, pos = "", [], -1
    for flag in flags:
        if flag.startswith("-march="):
            head, *plus = flag[len("-march="):].split("+")
            if _arm_arch_rank(head) >= _arm_arch_rank(base):
                base = head
            exts += [e for e in plus if e not in exts]
            if pos < 0:
                pos = len(out)
                out.append("")
        elif flag not in out:
            out.append(flag)
    if pos >= 0:
        out[pos] = "-march=" + "+".join([base] + exts)
    return out


def _arm_arch_rank(arch: str) -> Tuple[int, ...]:
    digits = arch.replace("armv", "").split("-")[0]
    try:
        return tuple(int(p) for p in digits.split("."))
    except ValueError:
        return ()


@dataclass(frozen=True)
class Arch:
    """One architecture's table.

    name      canonical name (x86_64, x86, aarch64, armhf, ppc64le, s390x)
    macros    predefined compiler macros that identify it (all must be set)
    features  the table, in declaration order
    groups    named groups of features
    minimum   what `min` means here
    merge     the flag merge rule
    """

    name: str
    macros: Tuple[str, ...]
    features: Tuple[Feature, ...]
    minimum: Tuple[str, ...]
    merge: FlagMerger
    groups: Tuple[Group, ...] = ()
    not_macros: Tuple[str, ...] = ()
    by_name: Dict[str, Feature] = field(init=False, repr=False, compare=False)
    _successors: Dict[str, FrozenSet[str]] = field(init=False, repr=False, compare=False)
    _order: Dict[str, int] = field(init=False, repr=False, compare=False)
    _groups: Dict[str, Group] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.features})
        for f in self.features:
            for dep in f.implies:
                if dep not in self.by_name:
                    raise ValueError(f"{self.name}: {f.name} implies unknown {dep}")
        for g in self.groups:
            for m in g.members:
                if m not in self.by_name:
                    raise ValueError(f"{self.name}: group {g.name} has unknown {m}")
        # Computed once: `-name` in an option value asks for them per token, so a
        # long value must not redo the closure of every feature each time.
        closures = {f.name: self.closure([f.name]) for f in self.features}
        object.__setattr__(self, "_order", {f.name: i for i, f in enumerate(self.features)})
        object.__setattr__(self, "_groups", {g.name: g for g in self.groups})
        object.__setattr__(self, "_successors", {
            name: frozenset(f for f, c in closures.items() if name in c) for name in closures})

    @property
    def group_by_name(self) -> Dict[str, Group]:
        return self._groups

    def closure(self, names: Iterable[str]) -> FrozenSet[str]:
        """``names`` and everything they imply, transitively (cycles allowed)."""
        seen = set()
        stack = list(names)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(self.by_name[name].implies)
        return frozenset(seen)

    def successors(self, name: str) -> FrozenSet[str]:
        """Every feature that implies ``name`` (directly or not), and ``name``."""
        return self._successors.get(name, frozenset())

    def sort(self, names: Iterable[str], reverse: bool = False) -> List[str]:
        """By interest (then table order), lowest first unless ``reverse``."""
        order = self._order
        return sorted(
            set(names),
            key=lambda n: (self.by_name[n].interest, order[n]),
            reverse=reverse,
        )

    def flags_for(self, names: Iterable[str]) -> List[str]:
        """Merged flags enabling ``names`` and all they imply."""
        flat: List[str] = []
        for name in self.sort(self.closure(names)):
            flat.extend(self.by_name[name].flags)
        return self.merge(flat)

    def headers_for(self, names: Iterable[str]) -> List[str]:
        out: List[str] = []
        for name in self.sort(self.closure(names)):
            out += [h for h in self.by_name[name].headers if h not in out]
        return out
