"""The cpu-baseline / cpu-dispatch grammar (dispatchkit.options), table level:
no compiler involved."""

from __future__ import annotations

from typing import List

import pytest
from dispatchkit.errors import DispatchError
from dispatchkit.features import AARCH64, PPC64LE, X86, X86_64
from dispatchkit.options import parse_option

ALL_X86 = [f.name for f in X86_64.features]
AVX512 = [n for n in ALL_X86 if n.startswith("AVX512")]


def no_native() -> List[str]:
    raise AssertionError("native() must only be called for the 'native' keyword")


def names(value: str, arch=X86_64, native=no_native) -> set:
    return set(parse_option(value, arch, "cpu-dispatch", native).names)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, {"SSE", "SSE2", "SSE3"}),
    (X86, {"SSE", "SSE2"}),
    (AARCH64, {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}),
    (PPC64LE, {"VSX", "VSX2"}),
])
def test_min_is_the_arch_minimum(arch, expected):
    assert names("min", arch) == expected


@pytest.mark.parametrize("arch", [X86_64, AARCH64, PPC64LE])
def test_max_is_every_feature_of_the_arch(arch):
    assert names("max", arch) == {f.name for f in arch.features}


def test_none_clears_what_came_before():
    assert names("max none") == set()


def test_none_then_more_keeps_only_what_follows():
    assert names("max none avx2") == {"AVX2"}


def test_empty_value_selects_nothing():
    assert names("") == set()
    assert names("  , ,  ") == set()


def test_native_adds_what_native_reports():
    assert names("native", native=lambda: ["SSE", "AVX2"]) == {"SSE", "AVX2"}


def test_a_name_adds_only_itself_implications_come_later():
    # the closure is applied by configure (implied features join the baseline)
    assert names("avx2") == {"AVX2"}


def test_plus_name_is_the_same_as_name():
    assert names("+avx2 +sse41") == names("avx2 sse41")


@pytest.mark.parametrize("value", ["AVX2 SSE41", "avx2 sse41", "Avx2 sSe41", "avx2,sse41",
                                   "avx2 , sse41", "avx2,,sse41", "\tavx2\n sse41 "])
def test_names_are_case_insensitive_and_comma_or_space_separated(value):
    assert names(value) == {"AVX2", "SSE41"}


def test_keywords_are_case_insensitive():
    assert names("MAX") == names("max") == names("Max")


def test_minus_removes_the_feature():
    assert "AVX2" not in names("max -avx2")


def test_minus_removes_every_successor():
    # See Note [Minus removes successors]: AVX512F's flags would come back with
    # any AVX512 compound feature, so those go too.
    selected = names("max -avx512f")
    assert not [n for n in selected if n.startswith("AVX512")]
    assert {"AVX2", "FMA3", "F16C", "AVX"} <= selected


def test_minus_is_transitive():
    # AVX2 -> AVX512F -> AVX512CD -> AVX512_SKX ...: removing AVX2 removes them all
    selected = names("max -avx2")
    assert selected.isdisjoint({"AVX2", *AVX512})
    assert "FMA3" in selected  # FMA3 does not imply AVX2


def test_minus_leaves_what_the_feature_implies():
    assert names("max -avx512_skx") >= {"AVX512F", "AVX512CD", "AVX512_KNL", "AVX512_KNM"}


def test_minus_before_max_is_undone_by_max():
    assert names("-avx512f max") == set(ALL_X86)


def test_minus_of_an_absent_feature_is_harmless():
    assert names("sse41 -avx2") == {"SSE41"}


def test_default_dispatch_value_drops_xop_and_fma4_only():
    assert names("max -xop -fma4") == set(ALL_X86) - {"XOP", "FMA4"}


@pytest.mark.parametrize("group, members", [
    ("x86_v2", {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "LAHF", "CX16"}),
    ("X86_V3", {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "LAHF", "CX16",
                "AVX", "F16C", "FMA3", "AVX2", "BMI", "BMI2", "LZCNT", "MOVBE"}),
    ("x86_V4", {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "LAHF", "CX16",
                "AVX", "F16C", "FMA3", "AVX2", "BMI", "BMI2", "LZCNT", "MOVBE",
                "AVX512F", "AVX512CD", "AVX512_SKX"}),
])
def test_a_group_adds_all_its_members(group, members):
    assert names(group) == members


def test_minus_group_removes_members_and_their_successors():
    assert names("max -x86_v4") == set()  # every x86 feature implies SSE


def test_the_token_that_added_a_feature_is_recorded():
    sel = parse_option("min avx2", X86_64, "cpu-baseline", no_native)
    assert sel.origin == {"SSE": "min", "SSE2": "min", "SSE3": "min", "AVX2": "avx2"}


def test_the_first_token_that_added_a_feature_is_kept_as_origin():
    sel = parse_option("max avx2", X86_64, "cpu-baseline", no_native)
    assert sel.origin["AVX2"] == "max"


@pytest.mark.parametrize("token", ["vsx", "NEON", "+asimd", "-vx", "sve"])
def test_another_archs_name_is_skipped_with_a_note(token):
    sel = parse_option(f"sse41 {token}", X86_64, "cpu-dispatch", no_native)
    assert sel.names == ["SSE41"]
    assert sel.notes == [f"cpu-dispatch: skipped '{token}': not a feature of x86_64"]


def test_an_x86_name_on_aarch64_is_skipped_with_a_note():
    sel = parse_option("asimd avx512_skx", AARCH64, "cpu-baseline", no_native)
    assert sel.names == ["ASIMD"]
    assert "skipped 'avx512_skx': not a feature of aarch64" in sel.notes[0]


def test_x86_groups_are_another_archs_names_on_ppc64le():
    sel = parse_option("x86_v3 vsx3", PPC64LE, "cpu-dispatch", no_native)
    assert sel.names == ["VSX3"]
    assert len(sel.notes) == 1


@pytest.mark.parametrize("value, token, words", [
    ("avx3", "avx3", "unknown CPU feature"),
    ("sse41 avx2 avx1024", "avx1024", "unknown CPU feature"),
    ("-avx3", "-avx3", "unknown CPU feature"),
    ("$maxopt", "$maxopt", "policies belong in /*@targets"),
    ("avx2 $keep_baseline", "$keep_baseline", "policies belong in /*@targets"),
    ("#simd", "#simd", "target groups belong in /*@targets"),
    ("+", "+", "operator without a feature name"),
    ("avx2 -", "-", "operator without a feature name"),
    ("sse4.1", "sse4.1", "unknown CPU feature"),
    ("avx2;", "avx2;", "is not a feature name"),
    ("(avx2 fma3)", "(avx2", "is not a feature name"),
    ("max -", "-", "operator without a feature name"),
    ("max - ,", "-", "operator without a feature name"),
    ("max +-", "+-", "operator without a feature name"),
    ("- $maxopt", "-$maxopt", "policies belong in /*@targets"),
    ("baseline", "baseline", "unknown CPU feature"),
])
def test_bad_tokens_are_errors_quoting_the_token(value, token, words):
    with pytest.raises(DispatchError) as info:
        parse_option(value, X86_64, "cpu-dispatch", no_native)
    assert f"'{token}'" in info.value.message
    assert words in info.value.message
    assert info.value.where == "cpu-dispatch"
    assert str(info.value).startswith("cpu-dispatch: ")


def test_keywords_take_operators_like_names():
    # NumPy's meaning (its tests write `-max`, `- min`, `+none`); `-` still
    # removes successors, see Note [Minus removes successors].
    assert names("max -max") == set()
    assert names("+max") == set(ALL_X86)
    assert names("max -min") == set()  # every x86 feature implies SSE
    assert names("min -min +avx2") == {"AVX2"}
    assert names("avx2 +native", native=lambda: ["SSE41"]) == {"AVX2", "SSE41"}
    assert names("max -native", native=lambda: ["AVX512F"]) == set(ALL_X86) - set(AVX512)


def test_plus_none_clears_and_minus_none_removes_nothing():
    assert names("max +none avx2") == {"AVX2"}
    assert names("avx2 -none") == {"AVX2"}


def test_unknown_name_error_lists_what_the_arch_knows():
    with pytest.raises(DispatchError) as info:
        parse_option("avx3", X86_64, "cpu-baseline", no_native)
    message = info.value.message
    assert "x86_64 knows:" in message
    for known in ("AVX512_SKX", "X86_V3", "min", "max", "native", "none"):
        assert known in message.split()


def test_a_non_string_value_is_an_error():
    with pytest.raises(DispatchError, match="expected a string"):
        parse_option(["avx2"], X86_64, "cpu-dispatch", no_native)  # type: ignore[arg-type]
