"""aarch64 and armhf (32-bit ARM with hard float).

On aarch64 NEON, half-precision conversion, VFPv4 fused multiply-add and
ASIMD are all part of the architecture: they imply each other (a cycle) and
need no flags. On armhf each is an -mfpu level.
"""

from __future__ import annotations

from typing import List, Sequence

from .base import Arch, Feature, merge_keep_last, merge_march_extensions

_NEON = ("arm_neon.h",)
_BASE64 = ("NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD")


def _others(name: str) -> tuple:
    return tuple(n for n in _BASE64 if n != name)


AARCH64_FEATURES = (
    Feature("NEON", 1, _others("NEON"), (), _NEON, cpuinfo=("asimd",), macros=("__ARM_NEON",),
            cid=300),
    Feature("NEON_FP16", 2, _others("NEON_FP16"), (), _NEON, cpuinfo=("asimd",),
            macros=("__ARM_NEON",), cid=301),
    Feature("NEON_VFPV4", 3, _others("NEON_VFPV4"), (), _NEON, cpuinfo=("asimd",),
            macros=("__ARM_FEATURE_FMA",), cid=302),
    Feature("ASIMD", 4, _others("ASIMD"), (), _NEON, cpuinfo=("asimd",), macros=("__ARM_NEON",),
            cid=303),
    Feature("ASIMDHP", 5, ("ASIMD",), ("-march=armv8.2-a+fp16",), _NEON, cpuinfo=("asimdhp",),
            macros=("__ARM_FEATURE_FP16_VECTOR_ARITHMETIC",), cid=304),
    Feature("ASIMDDP", 6, ("ASIMD",), ("-march=armv8.2-a+dotprod",), _NEON,
            cpuinfo=("asimddp",), macros=("__ARM_FEATURE_DOTPROD",), cid=305),
    Feature("ASIMDFHM", 7, ("ASIMDHP",), ("-march=armv8.2-a+fp16fml",), _NEON,
            cpuinfo=("asimdfhm",), macros=("__ARM_FEATURE_FP16_FML",), cid=306),
    # Note [SVE implies ASIMDHP only]: the architecture makes FP16 a
    # requirement of SVE, nothing more of Advanced SIMD; A64FX (SVE,
    # 512-bit) has neither DotProd nor FHM, and neither has qemu's a64fx
    # model (tests/test_cross_matrix.py), so SVE implies ASIMDHP, as NumPy's.
    Feature("SVE", 8, ("ASIMDHP",), ("-march=armv8.2-a+sve",), ("arm_sve.h",),
            cpuinfo=("sve",), macros=("__ARM_FEATURE_SVE",), cid=307),
    # Beyond NumPy's table (docs/cpu-features.md). Each implies what every
    # core that has it has: Int8 matrix multiply (Armv8.6) comes with the
    # dot product, BFloat16 (Armv8.6) with FP16 arithmetic, SVE2 (Armv9)
    # with SVE.
    Feature("I8MM", 9, ("ASIMDDP",), ("-march=armv8.2-a+i8mm",), _NEON, cpuinfo=("i8mm",),
            macros=("__ARM_FEATURE_MATMUL_INT8",), cid=308),
    Feature("BF16", 10, ("ASIMDHP",), ("-march=armv8.2-a+bf16",), _NEON, cpuinfo=("bf16",),
            macros=("__ARM_FEATURE_BF16_VECTOR_ARITHMETIC",), cid=309),
    Feature("SVE2", 11, ("SVE",), ("-march=armv8.2-a+sve2",), ("arm_sve.h",),
            cpuinfo=("sve2",), macros=("__ARM_FEATURE_SVE2",), cid=310),
)

ARMHF_FEATURES = (
    Feature("NEON", 1, (), ("-mfpu=neon",), _NEON, cpuinfo=("neon",), macros=("__ARM_NEON__",),
            cid=300),
    Feature("NEON_FP16", 2, ("NEON",), ("-mfpu=neon-fp16", "-mfp16-format=ieee"), _NEON,
            cpuinfo=("half",), macros=("__ARM_FP16_FORMAT_IEEE",), cid=301),
    Feature("NEON_VFPV4", 3, ("NEON_FP16",), ("-mfpu=neon-vfpv4",), _NEON,
            cpuinfo=("vfpv4",), macros=("__ARM_FEATURE_FMA",), cid=302),
    Feature("ASIMD", 4, ("NEON_FP16", "NEON_VFPV4"),
            ("-mfpu=neon-fp-armv8", "-march=armv8-a+simd"), _NEON, cpuinfo=("asimd",),
            macros=("__ARM_FEATURE_DIRECTED_ROUNDING",), cid=303),
    Feature("ASIMDHP", 5, ("ASIMD",), ("-march=armv8.2-a+fp16",), _NEON, cpuinfo=("asimdhp",),
            macros=("__ARM_FEATURE_FP16_VECTOR_ARITHMETIC",), cid=304),
    Feature("ASIMDDP", 6, ("ASIMD",), ("-march=armv8.2-a+dotprod",), _NEON,
            cpuinfo=("asimddp",), macros=("__ARM_FEATURE_DOTPROD",), cid=305),
    Feature("ASIMDFHM", 7, ("ASIMDHP",), ("-march=armv8.2-a+fp16fml",), _NEON,
            cpuinfo=("asimdfhm",), macros=("__ARM_FEATURE_FP16_FML",), cid=306),
)

_mfpu_last = merge_keep_last(("-mfpu=",))


def _merge_armhf(flags: Sequence[str]) -> List[str]:
    return merge_march_extensions(_mfpu_last(flags))


AARCH64 = Arch("aarch64", ("__aarch64__",), AARCH64_FEATURES, _BASE64, merge_march_extensions)
ARMHF = Arch("armhf", ("__arm__",), ARMHF_FEATURES, (), _merge_armhf, not_macros=("__aarch64__",))
