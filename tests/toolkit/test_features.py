"""The per-architecture feature tables and the generic logic over them
(implication closure, successors, sorting, flag merging)."""

from __future__ import annotations

import pytest
from dispatchkit.features import (AARCH64, ARCHES, ARMHF, PPC64LE, S390X, X86, X86_64,
                                  arch_from_macros)
from dispatchkit.features.base import Arch, Feature, merge_keep_last, merge_march_extensions
from dispatchkit.probe import CHECKS_DIR

EVERY_FEATURE = [pytest.param(arch, f, id=f"{arch.name}-{f.name}")
                 for arch in ARCHES.values() for f in arch.features]
AARCH64_BASE = {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}


AVX512_SINGLES = ["AVX512ER", "AVX512PF", "AVX5124FMAPS", "AVX5124VNNIW", "AVX512VL",
                  "AVX512BW", "AVX512DQ", "AVX512VNNI", "AVX512IFMA", "AVX512VBMI",
                  "AVX512VBMI2", "AVX512BITALG", "AVX512VPOPCNTDQ", "AVX512BF16", "AVX512FP16"]


def test_the_issues_list_exactly_these_x86_features():
    # issue 25 put the single AVX-512 extensions between AVX512CD and the generations;
    # issue 37 added the psABI levels' scalar extensions and ICL's vector crypto
    assert [f.name for f in X86_64.features] == [
        "SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "XOP", "FMA4",
        "F16C", "FMA3", "AVX2", "CX16", "LAHF", "MOVBE", "LZCNT", "BMI", "BMI2", "AVX512F",
        "AVX512CD", *AVX512_SINGLES, "VAES", "VPCLMULQDQ", "GFNI", "AVX512_KNL", "AVX512_KNM",
        "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR"]
    assert [f.name for f in X86.features] == [f.name for f in X86_64.features if f.name != "CX16"]
    assert [g.name for g in X86_64.groups] == ["X86_V2", "X86_V3", "X86_V4"]


# The x86-64 psABI levels (the psABI's table, as NumPy's X86_V2/V3/V4 groups)
_V2 = {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "SSE42", "POPCNT", "LAHF", "CX16"}
_V3 = _V2 | {"AVX", "AVX2", "FMA3", "F16C", "BMI", "BMI2", "LZCNT", "MOVBE"}
_V4 = _V3 | {"AVX512F", "AVX512CD", "AVX512VL", "AVX512BW", "AVX512DQ", "AVX512_SKX"}


@pytest.mark.parametrize("arch", [X86_64, X86], ids=["x86_64", "x86"])
def test_the_psabi_levels_hold_every_feature_they_require(arch):
    cx16 = set() if arch is X86 else {"CX16"}  # cmpxchg16b: 64-bit mode only
    groups = {g.name: arch.closure(g.members) for g in arch.groups}
    assert groups == {"X86_V2": frozenset(_V2 - {"CX16"} | cx16),
                      "X86_V3": frozenset(_V3 - {"CX16"} | cx16),
                      "X86_V4": frozenset(_V4 - {"CX16"} | cx16)}


def test_avx512_icl_and_spr_hold_what_numpy_requires():
    icl = {"AVX512VBMI", "AVX512VBMI2", "AVX512VNNI", "AVX512BITALG", "AVX512VPOPCNTDQ",
           "AVX512IFMA", "VAES", "GFNI", "VPCLMULQDQ"}
    assert X86_64.closure(["AVX512_ICL"]) >= icl | {"AVX512_SKX"}
    assert X86_64.closure(["AVX512_SPR"]) >= icl | {"AVX512FP16", "AVX512BF16"}


# The flags each NumPy generation enabled before it was built from the single
# extensions (issue 25): the same flags, in the same order; ICL and SPR have
# since gained what NumPy's tables require of them (issue 37).
_AVX512_BASE = ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-mpopcnt", "-msse4.2",
                "-mavx", "-mf16c", "-mfma", "-mavx2", "-mavx512f", "-mavx512cd"]
_SKX = ["-mavx512vl", "-mavx512bw", "-mavx512dq"]
_ICL = [*_SKX, "-mavx512vnni", "-mavx512ifma", "-mavx512vbmi", "-mavx512vbmi2",
        "-mavx512bitalg", "-mavx512vpopcntdq"]


@pytest.mark.parametrize("name, extra", [
    ("AVX512_KNL", ["-mavx512er", "-mavx512pf"]),
    ("AVX512_KNM", ["-mavx512er", "-mavx512pf", "-mavx5124fmaps", "-mavx5124vnniw",
                    "-mavx512vpopcntdq"]),
    ("AVX512_SKX", _SKX),
    ("AVX512_CLX", [*_SKX, "-mavx512vnni"]),
    ("AVX512_CNL", [*_SKX, "-mavx512ifma", "-mavx512vbmi"]),
    ("AVX512_ICL", [*_ICL, "-mvaes", "-mvpclmulqdq", "-mgfni"]),
    ("AVX512_SPR", [*_ICL, "-mavx512bf16", "-mavx512fp16", "-mvaes", "-mvpclmulqdq", "-mgfni"]),
])
def test_the_numpy_generations_keep_their_flags(name, extra):
    assert X86_64.flags_for([name]) == _AVX512_BASE + extra


@pytest.mark.parametrize("name, macros", [
    ("AVX512_SKX", {"__AVX512VL__", "__AVX512BW__", "__AVX512DQ__"}),
    ("AVX512_CLX", {"__AVX512VNNI__"}),
    ("AVX512_CNL", {"__AVX512IFMA__", "__AVX512VBMI__"}),
    ("AVX512_SPR", {"__AVX512FP16__", "__AVX512BF16__"}),
])
def test_a_generation_is_recognised_by_its_own_extensions_macros(name, macros):
    # what `native` and flags in CFLAGS are matched against
    assert set(X86_64.by_name[name].macros) == macros


def test_a_generation_is_built_from_the_single_extensions():
    skx = X86_64.by_name["AVX512_SKX"]
    assert skx.flags == ()
    assert set(skx.implies) == {"AVX512CD", "AVX512VL", "AVX512BW", "AVX512DQ"}
    assert X86_64.closure(["AVX512_ICL"]) >= {"AVX512VNNI", "AVX512IFMA", "AVX512VBMI",
                                             "AVX512VBMI2", "AVX512BITALG", "AVX512VPOPCNTDQ"}


@pytest.mark.parametrize("name", AVX512_SINGLES)
def test_a_single_extension_is_one_flag_named_after_it(name):
    feature = X86_64.by_name[name]
    assert feature.flags == (f"-m{name.lower()}",)
    assert feature.macros == (f"__{name}__",)


def test_a_single_extension_needs_no_generation():
    assert X86_64.flags_for(["AVX512F", "AVX512VL"]) == [*_AVX512_BASE[:-1], "-mavx512vl"]
    assert "AVX512CD" not in X86_64.closure(["AVX512VL"])


@pytest.mark.parametrize("name", ["AVX512VBMI", "AVX512BF16", "AVX512FP16"])
def test_extensions_gcc_builds_on_avx512bw_imply_it(name):
    # gcc's -mavx512vbmi, -mavx512bf16 and -mavx512fp16 turn on -mavx512bw
    assert X86_64.by_name[name].implies == ("AVX512BW",)


@pytest.mark.parametrize("arch, names", [
    (AARCH64, ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD", "ASIMDHP", "ASIMDDP", "ASIMDFHM",
               "SVE", "I8MM", "BF16", "SVE2"]),  # the last three beyond NumPy's (issue 37)
    (PPC64LE, ["VSX", "VSX2", "VSX3", "VSX4"]),
    (S390X, ["VX", "VXE", "VXE2"]),
])
def test_other_arch_tables_hold_the_issues_features(arch, names):
    assert [f.name for f in arch.features] == names


def test_sve_implies_fp16_arithmetic_only():
    """Note [SVE implies ASIMDHP only]: A64FX has SVE without DotProd or FHM."""
    assert AARCH64.closure(["SVE"]) == AARCH64.closure(["ASIMDHP"]) | {"SVE"}
    assert AARCH64.closure(["SVE2"]) == AARCH64.closure(["SVE"]) | {"SVE2"}
    assert "ASIMDDP" in AARCH64.closure(["I8MM"]) and "ASIMDHP" in AARCH64.closure(["BF16"])


@pytest.mark.parametrize("arch, feature", EVERY_FEATURE)
def test_every_feature_has_a_check_source(arch, feature):
    source = CHECKS_DIR / feature.check_source
    assert source.is_file()
    assert f"dispatch_check_{feature.name.lower()}(" in source.read_text()


@pytest.mark.parametrize("arch, feature", EVERY_FEATURE)
def test_every_feature_has_headers_and_detection(arch, feature):
    assert feature.headers
    assert feature.detect_names
    assert feature.cpuinfo


@pytest.mark.parametrize("arch, feature", EVERY_FEATURE)
def test_a_feature_outranks_everything_it_implies_outside_a_cycle(arch, feature):
    # keep-last flag merging and highest-first dispatch both rely on it
    for dep in arch.closure([feature.name]) - {feature.name}:
        if feature.name not in arch.closure([dep]):
            assert arch.by_name[dep].interest < feature.interest, dep


@pytest.mark.parametrize("arch", list(ARCHES.values()), ids=list(ARCHES))
def test_interest_is_unique_within_an_arch(arch):
    interests = [f.interest for f in arch.features]
    assert len(set(interests)) == len(interests)


def test_closure_is_transitive():
    assert X86_64.closure(["AVX2"]) == {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT",
                                        "SSE42", "AVX", "F16C", "AVX2"}


def test_closure_of_several_names_is_the_union():
    assert X86_64.closure(["XOP", "FMA3"]) == X86_64.closure(["XOP"]) | X86_64.closure(["FMA3"])


def test_closure_of_nothing_is_empty():
    assert X86_64.closure([]) == frozenset()


@pytest.mark.parametrize("name", sorted(AARCH64_BASE))
def test_closure_terminates_on_aarch64_implication_cycles(name):
    assert AARCH64.closure([name]) == AARCH64_BASE


def test_closure_through_a_cycle_reaches_the_whole_cycle():
    assert AARCH64.closure(["SVE"]) == AARCH64_BASE | {"ASIMDHP", "SVE"}


def test_armhf_has_no_cycle():
    assert ARMHF.closure(["NEON"]) == {"NEON"}
    assert ARMHF.closure(["ASIMD"]) == {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}


def test_successors_are_every_feature_implying_the_name_and_itself():
    assert X86_64.successors("AVX512F") == {f.name for f in X86_64.features
                                            if f.name.startswith("AVX512")}


def test_successors_of_a_single_extension_are_the_generations_built_on_it():
    assert X86_64.successors("AVX512VL") == {"AVX512VL", "AVX512_SKX", "AVX512_CLX",
                                             "AVX512_CNL", "AVX512_ICL", "AVX512_SPR"}


def test_successors_of_a_top_feature_is_itself():
    assert X86_64.successors("AVX512_SPR") == {"AVX512_SPR"}


def test_successors_include_the_whole_cycle_and_beyond():
    assert AARCH64.successors("NEON") == {f.name for f in AARCH64.features}


def test_sort_is_by_interest_lowest_first():
    assert X86_64.sort(["AVX512F", "SSE", "AVX2", "SSE41"]) == ["SSE", "SSE41", "AVX2", "AVX512F"]


def test_sort_reverse_is_highest_first():
    assert X86_64.sort(["SSE", "AVX512_SKX", "AVX2"], reverse=True) == [
        "AVX512_SKX", "AVX2", "SSE"]


def test_sort_drops_duplicates():
    assert X86_64.sort(["AVX", "AVX", "SSE"]) == ["SSE", "AVX"]


def test_x86_flags_are_the_closures_flags_in_interest_order():
    assert X86_64.flags_for(["SSE42"]) == ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1",
                                            "-mpopcnt", "-msse4.2"]


def test_x86_flag_merge_drops_duplicates_keeping_the_first():
    # AVX512_KNM and AVX512_ICL both enable -mavx512vpopcntdq
    flags = X86_64.flags_for(["AVX512_KNM", "AVX512_ICL"])
    assert flags.count("-mavx512vpopcntdq") == 1
    assert len(flags) == len(set(flags))
    assert X86_64.merge(["-mavx", "-msse", "-mavx"]) == ["-mavx", "-msse"]


def test_aarch64_march_extensions_accumulate_into_one_flag():
    assert AARCH64.flags_for(["ASIMDHP", "ASIMDDP"]) == ["-march=armv8.2-a+fp16+dotprod"]


def test_aarch64_implied_march_extensions_come_along():
    assert AARCH64.flags_for(["ASIMDFHM"]) == ["-march=armv8.2-a+fp16+fp16fml"]


def test_aarch64_base_features_need_no_flags():
    assert AARCH64.flags_for(sorted(AARCH64_BASE)) == []


def test_march_merge_keeps_the_highest_base():
    assert merge_march_extensions(["-march=armv8-a+simd", "-march=armv8.2-a+fp16"]) == [
        "-march=armv8.2-a+simd+fp16"]
    assert merge_march_extensions(["-march=armv8.2-a+fp16", "-march=armv8-a+crc"]) == [
        "-march=armv8.2-a+fp16+crc"]


def test_march_merge_keeps_other_flags_in_place():
    assert merge_march_extensions(["-mfoo", "-march=armv8.2-a+fp16", "-mbar",
                                   "-march=armv8.2-a+dotprod", "-mfoo"]) == [
        "-mfoo", "-march=armv8.2-a+fp16+dotprod", "-mbar"]


def test_ppc64le_keeps_the_last_mcpu():
    assert PPC64LE.flags_for(["VSX4"]) == ["-mvsx", "-mcpu=power10"]
    assert PPC64LE.flags_for(["VSX2", "VSX3"]) == ["-mvsx", "-mcpu=power9"]


def test_s390x_keeps_the_last_march():
    assert S390X.flags_for(["VXE2"]) == ["-mzvector", "-march=arch13"]


def test_armhf_keeps_the_last_mfpu():
    flags = ARMHF.flags_for(["NEON_VFPV4"])
    assert [f for f in flags if f.startswith("-mfpu=")] == ["-mfpu=neon-vfpv4"]
    assert "-mfp16-format=ieee" in flags


def test_armhf_merges_both_mfpu_and_march():
    flags = ARMHF.flags_for(["ASIMDHP", "ASIMDDP"])
    assert [f for f in flags if f.startswith("-mfpu=")] == ["-mfpu=neon-fp-armv8"]
    assert [f for f in flags if f.startswith("-march=")] == ["-march=armv8.2-a+simd+fp16+dotprod"]


def test_keep_last_puts_the_winner_where_its_prefix_first_appeared():
    merge = merge_keep_last(("-mcpu=",))
    assert merge(["-mcpu=power8", "-mvsx", "-mcpu=power9"]) == ["-mcpu=power9", "-mvsx"]


def test_headers_come_from_the_closure_without_duplicates():
    assert X86_64.headers_for(["SSE42"]) == ["xmmintrin.h", "emmintrin.h", "pmmintrin.h",
                                              "tmmintrin.h", "smmintrin.h", "popcntintrin.h",
                                              "nmmintrin.h"]
    assert X86_64.headers_for(["AVX512_SPR"]).count("immintrin.h") == 1


@pytest.mark.parametrize("macros, arch", [
    ({"__x86_64__": "1"}, X86_64),
    ({"__i386__": "1"}, X86),
    ({"__aarch64__": "1"}, AARCH64),
    ({"__arm__": "1"}, ARMHF),
    ({"__powerpc64__": "1", "__LITTLE_ENDIAN__": "1"}, PPC64LE),
    ({"__s390x__": "1"}, S390X),
    ({"__riscv": "1", "__LP64__": "1"}, ARCHES["riscv64"]),
])
def test_the_arch_is_told_by_predefined_macros(macros, arch):
    assert arch_from_macros(macros) is arch


@pytest.mark.parametrize("macros", [{}, {"__powerpc64__": "1"}, {"__riscv": "1"}])
def test_an_unknown_target_has_no_table(macros):
    assert arch_from_macros(macros) is None


def test_a_table_rejects_an_implication_of_an_unknown_feature():
    with pytest.raises(ValueError, match="implies unknown"):
        Arch("toy", (), (Feature("A", 1, ("B",)),), (), list)
