"""riscv64: the vector extension V (RVV 1.0), as NumPy 2.x has it.

The kernels written for it are vector-length agnostic (vsetvl strip-mining),
so one target serves every VLEN. GCC 12 accepts `-march=rv64gcv` but has no
riscv_vector.h: with it RVV is skipped as a feature the compiler lacks;
clang >= 16 builds it.
"""

from __future__ import annotations

from .base import Arch, Feature, merge_keep_last

FEATURES = (
    Feature("RVV", 1, (), ("-march=rv64gcv",), ("riscv_vector.h",), cpuinfo=("v",),
            macros=("__riscv_vector",), cid=380),
)

RISCV64 = Arch("riscv64", ("__riscv", "__LP64__"), FEATURES, (), merge_keep_last(("-march=",)))
