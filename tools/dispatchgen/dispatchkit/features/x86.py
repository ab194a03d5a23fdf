"""x86 and x86_64: SSE up to AVX-512 FP16, plus the x86-64 psABI levels.

The scalar extensions the psABI levels name (CX16 and LAHF in x86-64-v2;
BMI, BMI2, LZCNT and MOVBE in x86-64-v3) are features of their own, so the
groups hold what the levels require; as do VAES, GFNI and VPCLMULQDQ, which
AVX512_ICL requires with NumPy (docs/cpu-features.md lists every difference
from NumPy's tables).

Each AVX-512 extension is a feature of its own (AVX512VL, AVX512BW, ...);
the compound features follow the CPU generations that introduced them (KNL,
KNM, SKX, CLX, CNL, ICL, SPR, as NumPy names them) and are built from those,
so one name enables exactly what a generation guarantees.
"""

from __future__ import annotations

from typing import Tuple

from .base import Arch, Feature, Group, merge_keep_last

_IMM = ("immintrin.h",)
_AVX512_AUTOVEC = ("-mprefer-vector-width=512",)


def _single(name: str, interest: int, cid: int, cpuinfo: str,
            implies: str = "AVX512F") -> Feature:
    """One AVX-512 extension: named after its flag (-mavx512vl -> AVX512VL),
    as are its macro (__AVX512VL__) and check source (checks/cpu_avx512vl.c)."""
    flag = name.lower()
    return Feature(name, interest, (implies,), (f"-m{flag}",), _IMM, cpuinfo=(cpuinfo,),
                   macros=(f"__{name}__",), autovec=_AVX512_AUTOVEC, cid=cid)


# The AVX-512 extensions one by one, for libraries that need exactly one
# (`@targets (avx512f avx512vl)`). Each implies what gcc's flag enables with
# it (-mavx512vbmi also turns on -mavx512bw). Interest orders them after
# AVX512CD and before the generations, the Xeon Phi ones lowest; within the
# generations it keeps each one's flags in the order they always had.
_SINGLES = (
    _single("AVX512ER", 22, 70, "avx512er"),
    _single("AVX512PF", 23, 71, "avx512pf"),
    _single("AVX5124FMAPS", 24, 72, "avx512_4fmaps"),
    _single("AVX5124VNNIW", 25, 73, "avx512_4vnniw"),
    _single("AVX512VL", 26, 74, "avx512vl"),
    _single("AVX512BW", 27, 75, "avx512bw"),
    _single("AVX512DQ", 28, 76, "avx512dq"),
    _single("AVX512VNNI", 29, 77, "avx512_vnni"),
    _single("AVX512IFMA", 30, 78, "avx512ifma"),
    _single("AVX512VBMI", 31, 79, "avx512vbmi", implies="AVX512BW"),
    _single("AVX512VBMI2", 32, 80, "avx512_vbmi2"),
    _single("AVX512BITALG", 33, 81, "avx512_bitalg"),
    _single("AVX512VPOPCNTDQ", 34, 82, "avx512_vpopcntdq"),
    _single("AVX512BF16", 35, 83, "avx512_bf16", implies="AVX512BW"),
    _single("AVX512FP16", 36, 84, "avx512_fp16", implies="AVX512BW"),
)

# Vector crypto and Galois-field instructions: in 256-bit (VEX) form on CPUs
# without AVX-512 too (Zen 3), so each implies AVX2, not AVX512F; GFNI also
# has an SSE form (Tremont has it without AVX).
_VECTOR_CRYPTO = (
    Feature("VAES", 37, ("AVX2",), ("-mvaes",), _IMM, cpuinfo=("vaes",), macros=("__VAES__",),
            cid=85),
    Feature("VPCLMULQDQ", 38, ("AVX2",), ("-mvpclmulqdq",), _IMM, cpuinfo=("vpclmulqdq",),
            macros=("__VPCLMULQDQ__",), cid=87),
    Feature("GFNI", 39, ("SSE42",), ("-mgfni",), _IMM, cpuinfo=("gfni",), macros=("__GFNI__",),
            cid=86),
)
_BY_NAME = {f.name: f for f in (*_SINGLES, *_VECTOR_CRYPTO)}


def _generation(name: str, interest: int, base: Tuple[str, ...], parts: Tuple[str, ...],
                cid: int) -> Feature:
    """A NumPy compound: an earlier generation (or AVX512CD) plus the
    extensions ``parts``. It has no flags of its own (its parts bring them);
    its macros and cpuinfo names are its parts', so `native` and the
    /proc/cpuinfo cross-checks see it exactly when they see them."""
    own = [_BY_NAME[p] for p in parts]
    return Feature(name, interest, (*base, *parts), (), _IMM,
                   cpuinfo=tuple(c for f in own for c in f.cpuinfo),
                   macros=tuple(m for f in own for m in f.macros),
                   autovec=_AVX512_AUTOVEC, cid=cid)


FEATURES = (
    Feature("SSE", 1, (), ("-msse",), ("xmmintrin.h",), cpuinfo=("sse",), macros=("__SSE__",),
            cid=1),
    Feature("SSE2", 2, ("SSE",), ("-msse2",), ("emmintrin.h",), cpuinfo=("sse2",),
            macros=("__SSE2__",), cid=2),
    Feature("SSE3", 3, ("SSE2",), ("-msse3",), ("pmmintrin.h",), cpuinfo=("pni",),
            macros=("__SSE3__",), cid=3),
    Feature("SSSE3", 4, ("SSE3",), ("-mssse3",), ("tmmintrin.h",), cpuinfo=("ssse3",),
            macros=("__SSSE3__",), cid=4),
    Feature("SSE41", 5, ("SSSE3",), ("-msse4.1",), ("smmintrin.h",), cpuinfo=("sse4_1",),
            macros=("__SSE4_1__",), cid=5),
    Feature("POPCNT", 6, ("SSE41",), ("-mpopcnt",), ("popcntintrin.h",), cpuinfo=("popcnt",),
            macros=("__POPCNT__",), cid=6),
    Feature("SSE42", 7, ("POPCNT",), ("-msse4.2",), ("nmmintrin.h",), cpuinfo=("sse4_2",),
            macros=("__SSE4_2__",), cid=7),
    Feature("AVX", 8, ("SSE42",), ("-mavx",), _IMM, cpuinfo=("avx",), macros=("__AVX__",),
            cid=8),
    Feature("XOP", 9, ("AVX",), ("-mxop",), ("x86intrin.h",), cpuinfo=("xop",),
            macros=("__XOP__",), cid=10),
    Feature("FMA4", 10, ("AVX",), ("-mfma4",), ("x86intrin.h",), cpuinfo=("fma4",),
            macros=("__FMA4__",), cid=11),
    Feature("F16C", 11, ("AVX",), ("-mf16c",), _IMM, cpuinfo=("f16c",), macros=("__F16C__",),
            cid=9),
    Feature("FMA3", 12, ("F16C",), ("-mfma",), _IMM, cpuinfo=("fma",), macros=("__FMA__",),
            cid=12),
    Feature("AVX2", 13, ("F16C",), ("-mavx2",), _IMM, cpuinfo=("avx2",), macros=("__AVX2__",),
            cid=13),
    # Scalar extensions of the psABI levels: each implies SSE3 (every CPU
    # with one has it; and so every x86 feature implies the minimum, as in
    # NumPy's chain: `max -min` is empty) and no vector feature beyond it
    # (Atom has MOVBE without AVX, Piledriver BMI without AVX2).
    Feature("LAHF", 15, ("SSE3",), ("-msahf",), _IMM, cpuinfo=("lahf_lm",), macros=("__LAHF_SAHF__",),
            cid=15),
    Feature("MOVBE", 16, ("SSE3",), ("-mmovbe",), _IMM, cpuinfo=("movbe",), macros=("__MOVBE__",),
            cid=16),
    Feature("LZCNT", 17, ("SSE3",), ("-mlzcnt",), _IMM, cpuinfo=("abm",), macros=("__LZCNT__",),
            cid=17),
    Feature("BMI", 18, ("SSE3",), ("-mbmi",), _IMM, cpuinfo=("bmi1",), macros=("__BMI__",), cid=18),
    Feature("BMI2", 19, ("BMI",), ("-mbmi2",), _IMM, cpuinfo=("bmi2",), macros=("__BMI2__",),
            cid=19),
    Feature("AVX512F", 20, ("FMA3", "AVX2"), ("-mavx512f",), _IMM, cpuinfo=("avx512f",),
            macros=("__AVX512F__",), autovec=_AVX512_AUTOVEC, cid=30),
    Feature("AVX512CD", 21, ("AVX512F",), ("-mavx512cd",), _IMM, cpuinfo=("avx512cd",),
            macros=("__AVX512CD__",), autovec=_AVX512_AUTOVEC, cid=31),
    *_SINGLES,
    *_VECTOR_CRYPTO,
    _generation("AVX512_KNL", 40, ("AVX512CD",), ("AVX512ER", "AVX512PF"), cid=40),
    _generation("AVX512_KNM", 41, ("AVX512_KNL",),
                ("AVX5124FMAPS", "AVX5124VNNIW", "AVX512VPOPCNTDQ"), cid=41),
    _generation("AVX512_SKX", 42, ("AVX512CD",), ("AVX512VL", "AVX512BW", "AVX512DQ"),
                cid=42),
    _generation("AVX512_CLX", 43, ("AVX512_SKX",), ("AVX512VNNI",), cid=43),
    _generation("AVX512_CNL", 44, ("AVX512_SKX",), ("AVX512IFMA", "AVX512VBMI"), cid=44),
    _generation("AVX512_ICL", 45, ("AVX512_CLX", "AVX512_CNL"),
                ("AVX512VBMI2", "AVX512BITALG", "AVX512VPOPCNTDQ", "VAES", "VPCLMULQDQ",
                 "GFNI"), cid=45),
    _generation("AVX512_SPR", 46, ("AVX512_ICL",), ("AVX512FP16", "AVX512BF16"), cid=46),
)

# cmpxchg16b exists in 64-bit mode only.
CX16 = Feature("CX16", 14, ("SSE3",), ("-mcx16",), _IMM, cpuinfo=("cx16",),
               macros=("__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16",), cid=14)

_V2 = ("SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "LAHF")
_V3 = ("AVX", "F16C", "FMA3", "AVX2", "BMI", "BMI2", "LZCNT", "MOVBE")
_V4 = ("AVX512F", "AVX512CD", "AVX512_SKX")


def _levels(v2: tuple) -> tuple:
    """The x86-64 psABI levels, each with every feature it requires."""
    return (Group("X86_V2", v2, cid=60), Group("X86_V3", v2 + _V3, cid=61),
            Group("X86_V4", v2 + _V3 + _V4, cid=62))


_AFTER_AVX2 = [f.name for f in FEATURES].index("AVX2") + 1  # CX16 in interest order
X86_64 = Arch("x86_64", ("__x86_64__",),
              FEATURES[:_AFTER_AVX2] + (CX16,) + FEATURES[_AFTER_AVX2:], ("SSE", "SSE2", "SSE3"),
              merge_keep_last(()), _levels(_V2 + ("CX16",)))
# 32-bit x86: no cmpxchg16b; the same levels less CX16, as NumPy's x86 build.
X86 = Arch("x86", ("__i386__",), FEATURES, ("SSE", "SSE2"), merge_keep_last(()), _levels(_V2))
