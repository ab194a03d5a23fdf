"""The `/*@targets ... */` statement (dispatchkit.targets): what the parser
accepts and rejects, and which targets a build configuration compiles."""

from __future__ import annotations

import pytest
from dispatchkit.errors import DispatchError
from dispatchkit.features import AARCH64, X86_64
from dispatchkit.targets import load_groups, multi_name, parse, resolve


def stmt(body: str, groups=None, arch=X86_64):
    return parse(f"/*@targets {body} */\nint x;\n", "k.dispatch.c", arch, groups)


def names(body: str, config, groups=None, **kw):
    res = resolve(stmt(body, groups), config, **kw)
    return [t.name for t in res.targets]


# -- accepted ----------------------------------------------------------------

def test_names_are_case_insensitive_and_split_on_space_star_comma_slash():
    s = stmt("sse41,AVX2*avx512_skx/Fma3\n\tbaseline")
    assert [t.name for t in s.targets] == ["SSE41", "AVX2", "AVX512_SKX", "FMA3"]
    assert s.baseline


def test_the_statement_may_span_lines_with_leading_stars():
    s = parse("/*@targets\n * sse42\n * avx2\n */", "f.c", X86_64)
    assert [(t.name, t.line) for t in s.targets] == [("SSE42", 2), ("AVX2", 3)]


def test_only_the_first_statement_counts():
    s = parse("/*@targets avx2 */\n/*@targets bogus */", "f.c", X86_64)
    assert [t.name for t in s.targets] == ["AVX2"]


@pytest.mark.parametrize("body, name", [
    ("(avx2 fma3)", "FMA3__AVX2"),
    ("(fma3 avx2)", "FMA3__AVX2"),
    ("(avx512_skx avx2)", "AVX512_SKX"),
    ("(sse41 sse42 avx)", "AVX"),
    ("(AVX512_CNL avx512_clx)", "AVX512_CLX__AVX512_CNL"),
    # x86-64-v3 is AVX2 and FMA3 plus the scalar extensions the psABI lists (issue 37)
    ("(x86_v3)", "FMA3__AVX2__CX16__LAHF__MOVBE__LZCNT__BMI2"),
])
def test_a_multi_target_is_named_after_members_not_implied_by_another(body, name):
    assert [t.name for t in stmt(body).targets] == [name]


def test_a_multi_target_keeps_all_its_members_as_features():
    (t,) = stmt("(avx512_skx avx2)").targets
    assert set(t.features) == {"AVX512_SKX", "AVX2"}


def test_a_multi_target_in_an_implication_cycle_is_named_after_the_highest():
    assert multi_name(["NEON", "ASIMD", "NEON_FP16"], AARCH64) == "ASIMD"


def test_a_group_name_is_one_target_with_all_members():
    (t,) = stmt("x86_v2").targets
    assert t.name == "X86_V2" and "SSE42" in t.features and "SSE" in t.features


@pytest.mark.parametrize("policy", ["$keep_baseline", "$keep_sort", "$maxopt", "$werror",
                                    "$autovec", "$MAXOPT"])
def test_the_five_policies_are_accepted(policy):
    assert stmt(f"{policy} avx2").policies == [policy.lower()]


def test_a_repeated_policy_is_recorded_once():
    assert stmt("$maxopt avx2 $maxopt").policies == ["$maxopt"]


def test_a_target_group_expands_from_the_ini_file(tmp_path):
    ini = tmp_path / "dispatch.ini"
    ini.write_text("[groups]\nsimd = sse42 (avx2 fma3)\nwide = #SIMD avx512_skx\n")
    groups = load_groups(ini)
    s = stmt("#wide baseline", groups)
    assert [t.name for t in s.targets] == ["SSE42", "FMA3__AVX2", "AVX512_SKX"]
    assert s.baseline


def test_no_groups_file_means_no_groups():
    assert load_groups(None) == {}


def test_a_groups_file_without_a_groups_section_defines_none(tmp_path):
    ini = tmp_path / "d.ini"
    ini.write_text("[other]\nx = avx2\n")
    assert load_groups(ini) == {}


def test_another_archs_names_are_skipped_with_a_note():
    s = stmt("vsx2 asimd (neon asimdhp) avx2")
    assert [t.name for t in s.targets] == ["AVX2"]
    assert s.notes[0] == "k.dispatch.c:1: skipped 'vsx2': not a feature of x86_64"
    assert len(s.notes) == 3


def test_a_statement_only_for_other_archs_is_accepted():
    s = stmt("vsx2 asimd")
    assert s.targets == [] and not s.baseline and len(s.notes) == 2


def test_the_same_statement_serves_aarch64():
    s = stmt("baseline avx2 (avx2 fma3) asimdhp asimddp", arch=AARCH64)
    assert [t.name for t in s.targets] == ["ASIMDHP", "ASIMDDP"]


# -- rejected: file:line and the token ------------------------------------------

@pytest.mark.parametrize("text, line, words", [
    ("int x;\n/*@targets avx2\nint y;\n", 2, "no closing '*/'"),
    ("\n\n/*@targets */", 3, "empty @targets statement"),
    ("/*@targets \n\n */", 1, "empty @targets statement"),
    ("/*@targets $maxopt */", 1, "names no target"),
    ("/*@targets\n avx2\n   avx3 */", 3, "unknown target 'avx3'"),
    ("/*@targets avx2\n\n $bogus */", 3, "unknown policy '$bogus'"),
    ("/*@targets avx2\n #nope */", 2, "unknown target group '#nope'"),
    ("/*@targets avx2 +sse41 */", 1, "'+sse41'"),
    ("/*@targets avx2\n -avx512f */", 2, "'-avx512f'"),
    ("/*@targets baseline\n\n (avx2 fma3 */", 3, "unbalanced '('"),
    ("/*@targets avx2 fma3)\n */", 1, "unbalanced ')'"),
    ("/*@targets avx2\n () */", 2, "empty parentheses"),
    ("/*@targets (avx2 (fma3)) */", 1, "nested '('"),
    ("/*@targets (avx2\n $maxopt) */", 2, "'$maxopt' is not allowed inside parentheses"),
    ("/*@targets (avx2 #g) */", 1, "'#g' is not allowed inside parentheses"),
    ("/*@targets (avx2\n\n  baseline) */", 3, "'baseline' is not allowed inside parentheses"),
    ("/*@targets (avx2 -fma3) */", 1, "'-fma3' is not allowed inside parentheses"),
    ("/*@targets (avx2 avx3) */", 1, "unknown target 'avx3'"),
    ("/*@targets avx2;sse41 */", 1, "'avx2;sse41' is not a target name"),
    ("int main(void);\n", 1, "no /*@targets"),
])
def test_bad_statements_are_errors_with_file_line_and_token(text, line, words):
    with pytest.raises(DispatchError) as info:
        parse(text, "src/k.dispatch.c", X86_64, {"g": "avx2"})
    assert info.value.where == f"src/k.dispatch.c:{line}"
    assert words in info.value.message
    assert str(info.value).startswith(f"src/k.dispatch.c:{line}: ")


def test_unknown_target_error_lists_what_the_arch_knows():
    with pytest.raises(DispatchError) as info:
        stmt("avx3")
    assert "x86_64 knows:" in info.value.message
    assert {"AVX2", "X86_V4", "baseline"} <= set(info.value.message.split())


def test_unknown_group_error_lists_the_defined_groups():
    with pytest.raises(DispatchError, match="known: #a #b"):
        stmt("#c", {"a": "avx2", "b": "sse42"})


def test_a_group_that_includes_itself_is_an_error():
    with pytest.raises(DispatchError, match="includes itself"):
        stmt("#a", {"a": "avx2 #b", "b": "#a"})


def test_a_bad_token_inside_a_group_is_reported_at_the_groups_use():
    with pytest.raises(DispatchError) as info:
        parse("/*@targets\n\n #g */", "f.c", X86_64, {"g": "avx2 avx3"})
    assert info.value.where == "f.c:3" and "'avx3'" in info.value.message


def test_an_unreadable_groups_file_is_an_error(tmp_path):
    with pytest.raises(DispatchError, match="cannot read target groups"):
        load_groups(tmp_path / "missing.ini")
    bad = tmp_path / "bad.ini"
    bad.write_text("no section header\n")
    with pytest.raises(DispatchError, match="cannot read target groups"):
        load_groups(bad)


# -- resolving against the build configuration ----------------------------------

def test_targets_are_sorted_highest_interest_first(gcc_config):
    assert names("sse42 avx512_skx avx2 sse41", gcc_config) == [
        "AVX512_SKX", "AVX2", "SSE42", "SSE41"]


def test_a_multi_target_sorts_above_its_highest_member_alone(gcc_config):
    # same top interest: the one that enables more comes first
    assert names("avx2 (avx2 fma3)", gcc_config) == ["FMA3__AVX2", "AVX2"]


def test_keep_sort_keeps_the_written_order(gcc_config):
    assert names("$keep_sort sse42 avx512_skx avx2", gcc_config) == [
        "SSE42", "AVX512_SKX", "AVX2"]


def test_duplicates_collapse(gcc_config):
    assert names("avx2 AVX2 (avx2 fma3) (fma3 avx2) (avx2 avx) x86_v3 (x86_v3)",
                 gcc_config) == ["X86_V3", "FMA3__AVX2", "AVX2"]  # the first spelling wins


def test_targets_in_the_baseline_are_skipped_with_the_reason(gcc_configure):
    cfg = gcc_configure(baseline="avx2", dispatch="max")
    res = resolve(stmt("sse41 avx2 avx512_skx baseline"), cfg)
    assert [t.name for t in res.targets] == ["AVX512_SKX"]
    assert res.skipped == [
        {"target": "SSE41", "reason": "already in the baseline (add $keep_baseline to build "
                                      "it anyway)"},
        {"target": "AVX2", "reason": "already in the baseline (add $keep_baseline to build "
                                     "it anyway)"}]


def test_keep_baseline_builds_them_anyway(gcc_configure):
    cfg = gcc_configure(baseline="avx2", dispatch="max")
    res = resolve(stmt("$keep_baseline sse41 avx2 avx512_skx"), cfg)
    assert [t.name for t in res.targets] == ["AVX512_SKX", "AVX2", "SSE41"]
    assert res.targets[1].checks == []  # nothing to check at runtime


def test_targets_not_in_cpu_dispatch_are_skipped_with_the_reason(gcc_configure):
    cfg = gcc_configure(dispatch="max -avx512f")
    res = resolve(stmt("avx2 avx512_skx (avx512f avx2)"), cfg)
    assert [t.name for t in res.targets] == ["AVX2"]
    assert res.skipped[0] == {"target": "AVX512_SKX",
                              "reason": "AVX512_SKX is not in cpu-dispatch ('max -avx512f')"}
    assert res.skipped[1]["target"] == "AVX512F"


def test_targets_the_compiler_lacks_are_skipped_with_its_reason(fake_config):
    res = resolve(stmt("avx512_spr avx512_icl avx512_cnl"), fake_config)
    assert [t.name for t in res.targets] == ["AVX512_CNL"]
    assert res.skipped[0]["reason"] == "AVX512_SPR: " + fake_config.unsupported["AVX512_SPR"]
    assert res.skipped[1]["reason"] == ("AVX512_ICL: implies AVX512_CLX, which the compiler "
                                        "lacks")


def test_a_target_knows_its_flags_enables_and_runtime_checks(gcc_config):
    (t,) = resolve(stmt("(avx2 fma3)"), gcc_config).targets
    assert t.features == ["FMA3", "AVX2"]
    assert t.enables == X86_64.sort(X86_64.closure(["FMA3", "AVX2"]))
    assert t.checks == [n for n in t.enables if n not in gcc_config.baseline]
    assert t.flags == ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-mpopcnt",
                       "-msse4.2", "-mavx", "-mf16c", "-mfma", "-mavx2"]


def test_a_single_avx512_extension_is_a_target_without_a_generation(gcc_config):
    # issue 25: `(avx512f avx512vl)`; AVX512VL implies AVX512F, so it names the target
    (t,) = resolve(stmt("(avx512f avx512vl)"), gcc_config).targets
    assert t.name == "AVX512VL"
    assert t.flags[-2:] == ["-mavx512f", "-mavx512vl"] and "-mavx512cd" not in t.flags
    assert {"AVX512F", "AVX512VL"} <= set(t.checks) and "AVX512_SKX" not in t.checks


def test_a_variants_section_may_name_a_single_extension(gcc_config, tmp_path):
    from dispatchkit import variants

    ini = tmp_path / "lib.variants.ini"
    ini.write_text("[library]\nname = lib\n\n[(avx512f avx512bw)]\nsources = lib_bw.c\n"
                   "sum = lib_sum_bw\n")
    _, (v,), _ = variants.load(ini, gcc_config)
    assert v.target == "AVX512BW" and "-mavx512bw" in v.flags and "-mavx512vl" not in v.flags


def test_a_generation_target_enables_its_single_extensions(gcc_config):
    (t,) = resolve(stmt("avx512_skx"), gcc_config).targets
    assert {"AVX512VL", "AVX512BW", "AVX512DQ", "AVX512CD"} <= set(t.enables)


@pytest.mark.parametrize("policy, flags", [("$maxopt", ["-O3"]), ("$werror", ["-Werror"]),
                                           ("$autovec", ["-ftree-vectorize",
                                                         "-mprefer-vector-width=512"])])
def test_policies_add_their_flags(gcc_config, policy, flags):
    (t,) = resolve(stmt(f"{policy} avx512_skx"), gcc_config).targets
    for flag in flags:
        assert flag in t.flags


def test_autovec_asks_for_512_bit_vectors_only_on_avx512_targets(gcc_config):
    (t,) = resolve(stmt("$autovec avx2"), gcc_config).targets
    assert "-mprefer-vector-width=512" not in t.flags


def test_disable_optimization_builds_only_the_baseline(gcc_config):
    res = resolve(stmt("avx2 avx512_skx"), gcc_config, disable_optimization=True)
    assert res.targets == [] and res.baseline
    assert {s["reason"] for s in res.skipped} == {"disable-optimization is on"}


def test_baseline_is_built_only_when_listed(gcc_config):
    assert resolve(stmt("avx2 baseline"), gcc_config).baseline
    assert not resolve(stmt("avx2"), gcc_config).baseline
