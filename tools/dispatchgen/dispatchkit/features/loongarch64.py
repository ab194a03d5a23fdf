"""loongarch64: the 128-bit SIMD extension LSX, as NumPy has it.

LSX is part of the LA64 v1.0 base that compilers target by default (clang
19 predefines __loongarch_sx without a flag), so it is the minimum here, as
in NumPy; -mlsx names it for compilers whose default is lower. The 256-bit
LASX is not in NumPy's table and not here.
"""

from __future__ import annotations

from .base import Arch, Feature, merge_keep_last

FEATURES = (
    Feature("LSX", 1, (), ("-mlsx",), ("lsxintrin.h",), cpuinfo=("lsx",),
            macros=("__loongarch_sx",), cid=390),
)

LOONGARCH64 = Arch("loongarch64", ("__loongarch64",), FEATURES, ("LSX",),
                   merge_keep_last(()))
