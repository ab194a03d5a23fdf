"""ppc64le and ppc64 (big-endian): VSX levels by POWER generation; each
level is one -mcpu.

Both byte orders share the table; they differ in the minimum. Little-endian
POWER started with POWER8, so ppc64le's minimum is VSX2; big-endian runs on
CPUs from before VSX (POWER5, 970), so ppc64's minimum is empty, as NumPy's.
"""

from __future__ import annotations

from .base import Arch, Feature, merge_keep_last

_H = ("altivec.h",)

FEATURES = (
    Feature("VSX", 1, (), ("-mvsx",), _H, cpuinfo=("vsx",), macros=("__VSX__",), cid=200),
    Feature("VSX2", 2, ("VSX",), ("-mcpu=power8",), _H, cpuinfo=("arch_2_07",),
            macros=("__POWER8_VECTOR__",), cid=201),
    Feature("VSX3", 3, ("VSX2",), ("-mcpu=power9",), _H, cpuinfo=("arch_3_00",),
            macros=("__POWER9_VECTOR__",), cid=202),
    Feature("VSX4", 4, ("VSX3",), ("-mcpu=power10",), _H, cpuinfo=("arch_3_1",),
            macros=("__POWER10_VECTOR__",), cid=203),
)

PPC64LE = Arch("ppc64le", ("__powerpc64__", "__LITTLE_ENDIAN__"), FEATURES, ("VSX", "VSX2"),
               merge_keep_last(("-mcpu=",)))
PPC64 = Arch("ppc64", ("__powerpc64__", "__BIG_ENDIAN__"), FEATURES, (),
             merge_keep_last(("-mcpu=",)))
