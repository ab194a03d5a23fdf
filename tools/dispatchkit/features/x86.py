"""x86 and x86_64: SSE up to AVX-512 FP16, plus the x86-64 psABI levels.

Compound AVX-512 features follow the CPU generations that introduced them
(KNL, KNM, SKX, CLX, CNL, ICL, SPR), so one name enables exactly what a
generation guarantees.
"""

from __future__ import annotations

from .base import Arch, Feature, Group, merge_keep_last

_IMM = ("immintrin.h",)
_AVX512_AUTOVEC = ("-mprefer-vector-width=512",)

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
    Feature("AVX", 8, ("SSE42",), ("-mavx",), _IMM, cpuinfo=("avx",), macros=("__AVX__",), cid=8),
    Feature("XOP", 9, ("AVX",), ("-mxop",), ("x86intrin.h",), cpuinfo=("xop",),
            macros=("__XOP__",), cid=10),
    Feature("FMA4", 10, ("AVX",), ("-mfma4",), ("x86intrin.h",), cpuinfo=("fma4",),
            macros=("__FMA4__",), cid=11),
    Feature("F16C", 11, ("AVX",), ("-mf16c",), _IMM, cpuinfo=("f16c",), macros=("__F16C__",),
            cid=9),
    Feature("FMA3", 12, ("F16C",), ("-mfma",), _IMM, cpuinfo=("fma",), macros=("__FMA__",), cid=12),
    Feature("AVX2", 13, ("F16C",), ("-mavx2",), _IMM, cpuinfo=("avx2",), macros=("__AVX2__",),
            cid=13),
    Feature("AVX512F", 20, ("FMA3", "AVX2"), ("-mavx512f",), _IMM, cpuinfo=("avx512f",),
            macros=("__AVX512F__",), autovec=_AVX512_AUTOVEC, cid=30),
    Feature("AVX512CD", 21, ("AVX512F",), ("-mavx512cd",), _IMM, cpuinfo=("avx512cd",),
            macros=("__AVX512CD__",), autovec=_AVX512_AUTOVEC, cid=31),
    Feature("AVX512_KNL", 40, ("AVX512CD",), ("-mavx512er", "-mavx512pf"), _IMM,
            cpuinfo=("avx512er", "avx512pf"), macros=("__AVX512ER__", "__AVX512PF__"),
            autovec=_AVX512_AUTOVEC, cid=40),
    Feature("AVX512_KNM", 41, ("AVX512_KNL",),
            ("-mavx5124fmaps", "-mavx5124vnniw", "-mavx512vpopcntdq"), _IMM,
            cpuinfo=("avx512_4fmaps", "avx512_4vnniw", "avx512_vpopcntdq"),
            macros=("__AVX5124FMAPS__", "__AVX5124VNNIW__", "__AVX512VPOPCNTDQ__"),
            autovec=_AVX512_AUTOVEC, cid=41),
    Feature("AVX512_SKX", 42, ("AVX512CD",), ("-mavx512vl", "-mavx512bw", "-mavx512dq"), _IMM,
            cpuinfo=("avx512vl", "avx512bw", "avx512dq"),
            macros=("__AVX512VL__", "__AVX512BW__", "__AVX512DQ__"), autovec=_AVX512_AUTOVEC,
            cid=42),
    Feature("AVX512_CLX", 43, ("AVX512_SKX",), ("-mavx512vnni",), _IMM,
            cpuinfo=("avx512_vnni",), macros=("__AVX512VNNI__",), autovec=_AVX512_AUTOVEC, cid=43),
    Feature("AVX512_CNL", 44, ("AVX512_SKX",), ("-mavx512ifma", "-mavx512vbmi"), _IMM,
            cpuinfo=("avx512ifma", "avx512vbmi"),
            macros=("__AVX512IFMA__", "__AVX512VBMI__"), autovec=_AVX512_AUTOVEC, cid=44),
    Feature("AVX512_ICL", 45, ("AVX512_CLX", "AVX512_CNL"),
            ("-mavx512vbmi2", "-mavx512bitalg", "-mavx512vpopcntdq"), _IMM,
            cpuinfo=("avx512_vbmi2", "avx512_bitalg", "avx512_vpopcntdq"),
            macros=("__AVX512VBMI2__", "__AVX512BITALG__", "__AVX512VPOPCNTDQ__"),
            autovec=_AVX512_AUTOVEC, cid=45),
    Feature("AVX512_SPR", 46, ("AVX512_ICL",), ("-mavx512fp16",), _IMM,
            cpuinfo=("avx512_fp16",), macros=("__AVX512FP16__",), autovec=_AVX512_AUTOVEC, cid=46),
)

# The psABI levels as far as this table models them (x86-64-v3 also needs
# BMI1/2, LZCNT and MOVBE, which no dispatch target here uses).
GROUPS = (
    Group("X86_V2", ("SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42"), cid=60),
    Group("X86_V3", ("SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42",
                     "AVX", "F16C", "FMA3", "AVX2"), cid=61),
    Group("X86_V4", ("SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42",
                     "AVX", "F16C", "FMA3", "AVX2", "AVX512F", "AVX512CD", "AVX512_SKX"),
          cid=62),
)

X86_64 = Arch("x86_64", ("__x86_64__",), FEATURES, ("SSE", "SSE2", "SSE3"),
              merge_keep_last(()), GROUPS)
X86 = Arch("x86", ("__i386__",), FEATURES, ("SSE", "SSE2"), merge_keep_last(()), GROUPS)
