"""s390x: the z/Architecture vector facility and its enhancements."""

from __future__ import annotations

from .base import Arch, Feature, merge_keep_last

_H = ("vecintrin.h",)

FEATURES = (
    # VXE and VXE2 have no feature macro of their own (only __ARCH__'s value),
    # so `native` cannot see them; they are still validated by compiling.
    Feature("VX", 1, (), ("-mzvector", "-march=arch11"), _H, cpuinfo=("vx",),
            macros=("__VX__",), cid=350),
    Feature("VXE", 2, ("VX",), ("-march=arch12",), _H, cpuinfo=("vxe",), cid=351),
    Feature("VXE2", 3, ("VXE",), ("-march=arch13",), _H, cpuinfo=("vxe2",), cid=352),
)

S390X = Arch("s390x", ("__s390x__",), FEATURES, (), merge_keep_last(("-march=",)))
