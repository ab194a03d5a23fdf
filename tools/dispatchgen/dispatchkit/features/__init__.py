"""Feature tables, one module per architecture. Adding a feature is three
files: its entry in its table here, its check source under ../checks/
(cpu_<name>.c), and its runtime detection in ../cpu/cpu_detect.c, without
which it is never detected (docs/contributing.md, "Adding a CPU feature to
the toolkit")."""

from __future__ import annotations

from typing import Dict, FrozenSet, Mapping, Optional

from .arm import AARCH64, ARMHF
from .base import Arch, Feature, Group
from .loongarch64 import LOONGARCH64
from .ppc64 import PPC64, PPC64LE
from .riscv64 import RISCV64
from .s390x import S390X
from .x86 import X86, X86_64

ARCHES: Dict[str, Arch] = {a.name: a for a in (X86_64, X86, AARCH64, ARMHF, PPC64LE, PPC64,
                                                S390X, RISCV64, LOONGARCH64)}

# Every name any table knows, for telling "another arch's feature" from a typo.
ALL_NAMES: FrozenSet[str] = frozenset(
    name for arch in ARCHES.values() for name in (*arch.by_name, *arch.group_by_name)
)


def arch_from_macros(macros: Mapping[str, str]) -> Optional[Arch]:
    """The table whose identifying macros the compiler predefines."""
    for arch in ARCHES.values():
        if all(m in macros for m in arch.macros) and not any(m in macros for m in arch.not_macros):
            return arch
    return None


__all__ = ["ARCHES", "ALL_NAMES", "Arch", "Feature", "Group", "arch_from_macros"]
