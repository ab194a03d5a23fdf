"""NumPy's grammar is the reference (issue 11 item 4): what NumPy's
cpu-baseline/cpu-dispatch option parser and its `@targets` parser accept, we
accept with the same meaning.

Each test here is derived from a behaviour NumPy's own tests check
(numpy/distutils/tests/test_ccompiler_opt.py: test_args_empty,
test_args_validation, test_skip, test_implies, test_args_options,
test_targets_exceptions, test_targets_syntax, test_targets,
test_targets_policies, test_targets_groups, test_targets_multi), written
afresh against our API. Expected targets are written in NumPy's notation,
"avx512f (avx2 fma3) baseline", and converted with ``numpy_names``: our name
for a multi-target is its members joined by "__" (FMA3__AVX2).

Where we deliberately mean something else, the test says so and asserts our
documented meaning (docs/toolkit.md, "Choosing CPU features at build time"):

- `-name` removes the feature and every feature that implies it
  (Note [Minus removes successors]); NumPy removes only the name.
- `none` clears what came before; in NumPy it adds nothing (`max none` is
  max there, nothing here).
- An operator with no name after it (`avx2 -`) is an error; NumPy ignores it.
- `$maxopt`, `$werror`, `$autovec` flags go on the targets' compiles;
  `baseline` is compiled as it is (NumPy adds them to the baseline object too).
- A `$policy` inside a `#group` applies to the whole statement.

Differences of the feature tables (NumPy ties SSE with SSE2 on x86 and VSX
with VSX2 on ppc64le; ours do not) are not grammar and are marked where a
case meets them.

Most cases need no compiler: ``table_config`` evaluates the options against
a feature table the way configure does, with an optional set of features the
"compiler" lacks (NumPy's trap_files). Cases that need the real compiler use
the session's gcc fixtures.
"""

from __future__ import annotations

import re
import shutil
import stat
from typing import Dict, Iterable, List, Optional

import pytest
from dispatchkit import build_config as config_mod
from dispatchkit.build_config import BuildConfig
from dispatchkit.errors import DispatchError
from dispatchkit.features import AARCH64, ARMHF, PPC64LE, S390X, X86_64, Arch
from dispatchkit.options import parse_option
from dispatchkit.targets import load_groups, parse, resolve

ARCHS = {a.name: a for a in (X86_64, AARCH64, ARMHF, PPC64LE, S390X)}


def no_native() -> List[str]:
    raise AssertionError("native() must only be called for the 'native' keyword")


def table_config(arch: Arch, baseline: str = "min", dispatch: str = "max",
                 lacks: Iterable[str] = ()) -> BuildConfig:
    """configure() without a compiler: ``lacks`` are the features the compiler
    cannot build (and with them everything that implies them)."""
    lacks = set(lacks)
    unsupported = {f.name: "the compiler lacks it" for f in arch.features
                   if arch.closure([f.name]) & lacks}
    base_sel = parse_option(baseline, arch, "cpu-baseline", no_native)
    disp_sel = parse_option(dispatch, arch, "cpu-dispatch", no_native)
    base = arch.sort(arch.closure(base_sel.names))
    disp = [n for n in arch.sort(disp_sel.names) if n not in base and n not in unsupported]
    flags = arch.flags_for(base)
    return BuildConfig(arch=arch.name, compiler=["cc"], compiler_family="gcc",
                       compiler_version="0", cflags=[], requested_baseline=baseline,
                       requested_dispatch=dispatch, baseline=base, baseline_flags=flags,
                       dispatch=disp,
                       dispatch_flags={n: arch.merge(flags + arch.flags_for([n])) for n in disp},
                       unsupported=unsupported)


def numpy_names(expected: str) -> List[str]:
    """NumPy's notation to ours: "avx2 (asimdhp asimddp) baseline" ->
    ["AVX2", "ASIMDHP__ASIMDDP", "baseline"]."""
    out = []
    for multi, single in re.findall(r"\(([^)]*)\)|(\S+)", expected):
        if multi:
            out.append("__".join(m.upper() for m in multi.split()))
        else:
            out.append("baseline" if single == "baseline" else single.upper())
    return out


def built(text: str, config: BuildConfig, groups: Optional[Dict[str, str]] = None) -> List[str]:
    """What the source builds, highest first, then `baseline` (NumPy's
    sources_status order)."""
    res = resolve(parse(text, "k.dispatch.c", config.table, groups), config)
    return [t.name for t in res.targets] + (["baseline"] if res.baseline else [])


def dispatch_names(dispatch: str, arch: Arch, baseline: str = "") -> List[str]:
    return table_config(arch, baseline, dispatch).dispatch


def baseline_names(baseline: str, arch: Arch) -> List[str]:
    return table_config(arch, baseline, "").baseline


# == the option values ============================================================

# NumPy test_args_empty: every pair selects nothing, on every architecture.
EMPTY_PAIRS = [
    ("", "none"),
    ("", ""),
    ("none +none", "none - none"),
    ("none -max", "min - max"),
    ("+vsx2 -VSX2", "vsx avx2 avx512f -max"),
    ("max -vsx - avx + avx512f neon -MAX ", "min -min + max -max -vsx + avx2 -avx2 +NONE"),
]


@pytest.mark.parametrize("arch", ARCHS.values(), ids=ARCHS)
@pytest.mark.parametrize("baseline, dispatch", EMPTY_PAIRS)
def test_numpy_empty_option_values_select_nothing(arch, baseline, dispatch):
    cfg = table_config(arch, baseline, dispatch)
    assert cfg.baseline == [] and cfg.dispatch == []


@pytest.mark.parametrize("value, expected", [
    ("- avx2", set()),                       # an operator apart from its name
    ("max - avx512f", "no avx512"),
    ("sse41+avx2", {"SSE41", "AVX2"}),       # NumPy splits around + and -
    ("avx2-avx2", set()),
    ("avx2,-avx2 , sse41", {"SSE41"}),
    ("+ max -  MAX", set()),
    ("-+avx2", {"AVX2"}),                    # the last operator wins
    ("+-avx2 avx2", {"AVX2"}),
])
def test_numpy_operators_may_stand_apart_or_join_names(value, expected):
    got = set(parse_option(value, X86_64, "cpu-dispatch", no_native).names)
    if expected == "no avx512":
        assert got and not any(n.startswith("AVX512") for n in got)
    else:
        assert got == expected


@pytest.mark.parametrize("baseline, dispatch, token", [
    ("unkown_feature - max +min", "unknown max min", "unkown_feature"),  # NumPy's spelling
    ("min", "unknown max min", "unknown"),
    ("#avx2", "max", "#avx2"),
    ("min", "$vsx", "$vsx"),
])
def test_numpy_invalid_option_values_are_errors(baseline, dispatch, token):
    with pytest.raises(DispatchError) as info:
        table_config(X86_64, baseline, dispatch)
    assert f"'{token}'" in info.value.message


@pytest.mark.parametrize("value, per_arch", [
    ("sse vsx neon", {"x86_64": ["SSE"], "ppc64le": ["VSX"], "armhf": ["NEON"],
                      "s390x": []}),
    ("sse41 avx avx2 vsx2 vsx3 neon_vfpv4 asimd",
     {"x86_64": ["SSE41", "AVX", "AVX2"], "ppc64le": ["VSX2", "VSX3"],
      "armhf": ["NEON_VFPV4", "ASIMD"], "s390x": []}),
])
def test_numpy_other_archs_names_are_skipped(value, per_arch):
    for arch_name, expected in per_arch.items():
        sel = parse_option(value, ARCHS[arch_name], "cpu-dispatch", no_native)
        assert sel.names == expected, arch_name
        assert len(sel.notes) == len(value.split()) - len(expected)


@pytest.mark.parametrize("value", ["sse neon vsx", "avx2 vsx3 asimdhp"])
@pytest.mark.parametrize("arch", [X86_64, ARMHF, PPC64LE], ids=["x86_64", "armhf", "ppc64le"])
def test_numpy_dispatch_features_in_the_baseline_are_dropped(value, arch):
    assert dispatch_names(value, arch, baseline=value) == []


def test_numpy_dispatch_features_in_the_baseline_are_dropped_by_configure(gcc_configure):
    cfg = gcc_configure(baseline="avx2 vsx3 asimdhp", dispatch="avx2 vsx3 asimdhp")
    assert cfg.dispatch == []
    assert {"feature": "AVX2", "option": "cpu-dispatch",
            "reason": "already in the baseline"} in cfg.skipped


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "sse sse2 sse3 ssse3 sse41 popcnt sse42 avx f16c fma3 avx2"),
    (PPC64LE, "vsx vsx2 vsx3"),
    (ARMHF, "neon neon_fp16 neon_vfpv4 asimd"),
])
def test_numpy_the_baseline_brings_what_its_features_imply(arch, expected):
    assert baseline_names("fma3 avx2 asimd vsx3", arch) == numpy_names(expected)


@pytest.mark.parametrize("feature, expected", [
    ("fma3", "sse sse2 sse3 ssse3 sse41 popcnt sse42 avx f16c fma3"),  # FMA3 implies F16C
    ("avx2", "sse sse2 sse3 ssse3 sse41 popcnt sse42 avx f16c avx2"),
])
def test_numpy_gcc_keeps_fma3_and_avx2_apart(feature, expected):
    assert baseline_names(feature, X86_64) == numpy_names(expected)


@pytest.mark.parametrize("feature", ["neon", "neon_fp16", "neon_vfpv4", "asimd"])
def test_numpy_aarch64_neon_features_cannot_be_separated(feature):
    assert baseline_names(feature, AARCH64) == numpy_names("neon neon_fp16 neon_vfpv4 asimd")


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "sse sse2 sse3"), (AARCH64, "neon neon_fp16 neon_vfpv4 asimd"),
    (PPC64LE, "vsx vsx2"), (ARMHF, ""), (S390X, ""),
])
def test_numpy_min_is_the_arch_minimum(arch, expected):
    assert dispatch_names("min", arch) == numpy_names(expected)


@pytest.mark.parametrize("value", ["max", "MAX", "+max"])
def test_numpy_max_leaves_out_what_the_compiler_lacks_and_what_implies_it(value):
    # NumPy's trap_files: the compiler cannot build SSE3's test source
    cfg = table_config(X86_64, "", value, lacks=["SSE3"])
    assert cfg.dispatch == ["SSE", "SSE2"]
    cfg = table_config(S390X, "", value, lacks=["VXE"])
    assert cfg.dispatch == ["VX"]


def test_numpy_max_with_a_real_compiler_that_lacks_features(fake_config):
    # fake_cc: gcc without -mavx512fp16 and unable to build AVX512_CLX's source
    assert "AVX512_SKX" in fake_config.dispatch and "AVX512_CNL" in fake_config.dispatch
    for gone in ("AVX512_CLX", "AVX512_ICL", "AVX512_SPR"):
        assert gone not in fake_config.dispatch


def test_numpy_native_is_an_error_when_the_compiler_lacks_it(tmp_path):
    cc = tmp_path / "no-native-cc"
    cc.write_text('#!/bin/sh\nfor a in "$@"; do [ "$a" = -march=native ] && '
                  '{ echo "cc: error: unknown -march=native" >&2; exit 1; }; done\n'
                  'exec gcc "$@"\n')
    cc.chmod(cc.stat().st_mode | stat.S_IXUSR)
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    with pytest.raises(DispatchError, match="-march=native"):
        config_mod.configure(str(cc), "", "min", "native", tmp_path / "cache")


# -- where we differ on purpose ----------------------------------------------------

def test_ours_minus_removes_the_features_that_imply_the_name():
    # NumPy: `max -avx512f` keeps AVX512_SKX, whose flags turn AVX512F back on.
    # Ours: Note [Minus removes successors].
    got = parse_option("max -avx512f", X86_64, "cpu-dispatch", no_native).names
    assert "AVX2" in got and not [n for n in got if n.startswith("AVX512")]


def test_ours_none_clears_what_came_before():
    # NumPy: `none` adds nothing, so `max none` is max. Ours: it clears.
    assert parse_option("max none avx2", X86_64, "cpu-dispatch", no_native).names == ["AVX2"]
    assert parse_option("max -none", X86_64, "cpu-dispatch", no_native).names == \
        [f.name for f in X86_64.features]


@pytest.mark.parametrize("value", ["avx2 -", "avx2 +", "avx2 - ,"])
def test_ours_an_operator_without_a_name_is_an_error(value):
    # NumPy drops a trailing operator silently; a cut-off value is likely a mistake.
    with pytest.raises(DispatchError, match="operator without a feature name"):
        parse_option(value, X86_64, "cpu-dispatch", no_native)


# == the @targets statement =======================================================

# NumPy test_targets_exceptions: each is an error, on every architecture.
BAD_STATEMENTS = [
    "bla bla",
    "/*@targets",
    "/*@targets */",
    "/*@targets unknown */",
    "/*@targets $unknown_policy avx2 */",
    "/*@targets #unknown_group avx2 */",
    "/*@targets $ */",
    "/*@targets # vsx */",
    "/*@targets #$ vsx */",
    "/*@targets vsx avx2 ) */",
    "/*@targets vsx avx2 (avx2 */",
    "/*@targets vsx avx2 () */",
    "/*@targets vsx avx2 ($autovec) */",
    "/*@targets vsx avx2 (xxx) */",
    "/*@targets vsx avx2 (baseline) */",
    # and the operators of option values
    "/*@targets avx2 +vsx */",
    "/*@targets avx2 -vsx */",
]


@pytest.mark.parametrize("arch", ARCHS.values(), ids=ARCHS)
@pytest.mark.parametrize("text", BAD_STATEMENTS)
def test_numpy_bad_statements_are_errors(text, arch):
    with pytest.raises(DispatchError) as info:
        parse(text, "k.dispatch.c", arch, {})
    assert info.value.where.startswith("k.dispatch.c:")


# NumPy test_targets_syntax: separators and comment decorations.
DECORATED = [
    "/*@targets $keep_baseline sse vsx neon vx*/",
    "/*@targets,$keep_baseline,sse,vsx,neon vx*/",
    "/*@targets*$keep_baseline*sse*vsx*neon*vx*/",
    """
    /*
    ** @targets
    ** $keep_baseline, sse vsx,neon, vx
    */
    """,
    """
    /*
    ************@targets****************
    ** $keep_baseline, sse vsx, neon, vx
    ************************************
    */
    """,
    """
    /*
    /////////////@targets/////////////////
    //$keep_baseline//sse//vsx//neon//vx
    /////////////////////////////////////
    */
    """,
    """
    /*
    @targets
    $keep_baseline
    SSE VSX NEON VX*/
    """,
    "/*\t@targets\t$keep_baseline\tsse\tvsx\tneon\tvx\t*/",
    "/* A kernel.\n *\n * @targets $keep_baseline\n *   sse vsx\n *   neon vx\n */",
    "/** @targets $keep_baseline sse vsx neon vx **/",
    "#include <x.h>\n/* license */\n/*@targets $keep_baseline sse vsx neon vx */",
]


@pytest.mark.parametrize("text", DECORATED)
@pytest.mark.parametrize("arch, expected", [
    (X86_64, "sse"), (PPC64LE, "vsx"), (ARMHF, "neon"), (S390X, "vx"),
])
def test_numpy_statement_decorations_and_separators(text, arch, expected):
    assert built(text, table_config(arch)) == numpy_names(expected)


def test_the_statement_line_is_the_line_of_the_mark():
    s = parse("/*\n * intro\n ** @targets\n ** avx2\n */", "k.c", X86_64)
    assert s.line == 3 and [(t.name, t.line) for t in s.targets] == [("AVX2", 4)]


def test_a_comment_without_the_mark_is_not_the_statement():
    s = parse("/* avx512_skx */\n// @targets sse41 */\n/*@targets avx2 */", "k.c", X86_64)
    assert [t.name for t in s.targets] == ["AVX2"]


def test_an_unclosed_comment_holding_the_mark_is_an_error_at_the_mark():
    with pytest.raises(DispatchError, match="no closing") as info:
        parse("/* x */\n/*\n * @targets avx2\n", "k.c", X86_64)
    assert info.value.where == "k.c:3"


def test_the_mark_after_an_unclosed_comment_is_not_found():
    with pytest.raises(DispatchError, match="no /[*]@targets"):
        parse("/* license\nint x;\n", "k.c", X86_64)


ALL_ARCH_BODY = """/*@targets
    sse sse2 sse41 avx avx2 avx512f
    vsx vsx2 vsx3 vsx4
    neon neon_fp16 asimdhp asimddp
    vx vxe vxe2
*/"""


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f avx2"), (ARMHF, "asimddp asimdhp"), (AARCH64, "asimddp asimdhp"),
    (PPC64LE, "vsx4 vsx3"), (S390X, "vxe2"),
])
def test_numpy_targets_in_the_baseline_are_skipped(arch, expected):
    cfg = table_config(arch, baseline="avx vsx2 asimd vx vxe")
    assert built(ALL_ARCH_BODY, cfg) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx2 sse41"), (ARMHF, "asimddp asimd"), (AARCH64, "asimddp asimd"),
    (PPC64LE, "vsx2"), (S390X, "vxe2"),
])
def test_numpy_targets_not_in_dispatch_are_skipped(arch, expected):
    cfg = table_config(arch, baseline="", dispatch="sse41 avx2 vsx2 asimd asimddp vxe2")
    text = """/*@targets
        sse41 avx avx2 avx512f
        vsx2 vsx3 vsx4
        asimd asimdhp asimddp
        vx vxe vxe2
    */"""
    assert built(text, cfg) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "sse41 sse2"), (PPC64LE, "vsx2"), (ARMHF, "asimdhp neon"), (S390X, "vxe vx"),
])
def test_numpy_targets_the_compiler_lacks_are_skipped(arch, expected):
    cfg = table_config(arch, baseline="",
                       lacks=["AVX2", "AVX512F", "VSX3", "VSX4", "ASIMDDP", "VXE2"])
    text = """/*@targets
        sse2 sse41 avx2 avx512f
        vsx2 vsx3 vsx4
        neon asimdhp asimddp
        vx vxe vxe2
    */"""
    assert built(text, cfg) == numpy_names(expected)


IMPLIED_BODY = """/*@targets
    sse sse2 avx fma3 avx2 avx512f avx512cd
    vsx vsx2 vsx3
    neon neon_vfpv4 neon_fp16 neon_fp16 asimd asimdhp
    asimddp asimdfhm
*/"""


@pytest.mark.parametrize("arch, expected", [
    (ARMHF, "asimdfhm asimddp asimdhp asimd neon_vfpv4 neon_fp16 neon"),
    # NEON ... ASIMD imply each other on aarch64: one target, named ASIMD
    (AARCH64, "asimdfhm asimddp asimdhp asimd"),
    # tables: NumPy ties SSE with SSE2 and VSX with VSX2, so it lists one of each
    (X86_64, "avx512cd avx512f avx2 fma3 avx sse2 sse"),
    (PPC64LE, "vsx3 vsx2 vsx"),
])
def test_numpy_written_twice_or_tied_is_one_target(arch, expected):
    assert built(IMPLIED_BODY, table_config(arch, baseline="")) == numpy_names(expected)


def test_numpy_tied_features_with_a_real_compiler(gcc_configure):
    # the x86_64 part of the case above, configured by gcc (which enables
    # SSE SSE2 by itself: they join the baseline)
    cfg = gcc_configure(baseline="", dispatch="max")
    assert built(IMPLIED_BODY, cfg) == numpy_names("avx512cd avx512f avx2 fma3 avx")


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f avx2 sse42 sse2"), (PPC64LE, "vsx3 vsx2"),
    (ARMHF, "asimddp asimd neon_vfpv4 neon"), (AARCH64, "asimddp asimd"),
    (S390X, "vxe2 vxe vx"),
])
def test_numpy_keep_baseline(arch, expected):
    cfg = table_config(arch, baseline="sse41 avx2 vsx2 asimd vsx3 vxe")
    text = """/*@targets
        $keep_baseline
        sse2 sse42 avx2 avx512f
        vsx2 vsx3
        neon neon_vfpv4 asimd asimddp
        vx vxe vxe2
    */"""
    assert built(text, cfg) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f sse42 avx2 sse2"), (PPC64LE, "vsx2 vsx3"),
    (ARMHF, "asimd neon neon_vfpv4 asimddp"), (AARCH64, "asimd asimddp"),
    (S390X, "vxe vxe2"),
])
def test_numpy_keep_sort(arch, expected):
    text = """/*@targets
        $keep_baseline $keep_sort
        avx512f sse42 avx2 sse2
        vsx2 vsx3
        asimd neon neon_vfpv4 asimddp
        vxe vxe2
    */"""
    assert built(text, table_config(arch)) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f avx2 sse42 sse41 sse2"), (PPC64LE, "vsx3 vsx2"),
    (ARMHF, "asimddp asimd neon_vfpv4 neon"), (AARCH64, "asimddp asimd"),
])
def test_numpy_autovec_keeps_what_gcc_can_vectorize(arch, expected):
    text = """/*@targets
        $keep_baseline $keep_sort $autovec
        avx512f avx2 sse42 sse41 sse2
        vsx3 vsx2
        asimddp asimd neon_vfpv4 neon
    */"""
    assert built(text, table_config(arch)) == numpy_names(expected)


@pytest.mark.parametrize("policy, flag", [("$maxopt", "-O3"), ("$autovec", "-O3"),
                                          ("$werror", "-Werror"), ("$WERROR", "-Werror"),
                                          ("$MaxOpt", "-O3")])
def test_numpy_policy_flags(gcc_config, policy, flag):
    # NumPy: $autovec implies $maxopt. Ours: the flags go on the targets;
    # `baseline` is compiled as it is (docs/toolkit.md, "Writing a dispatchable source").
    res = resolve(parse(f"/*@targets baseline avx2 {policy} */", "k.c", X86_64), gcc_config)
    (t,) = res.targets
    assert flag in t.flags and res.baseline
    assert t.flags.count(flag) == 1


def test_autovec_with_maxopt_gives_o3_once(gcc_config):
    res = resolve(parse("/*@targets $autovec $maxopt avx2 */", "k.c", X86_64), gcc_config)
    assert res.targets[0].flags.count("-O3") == 1


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f avx2 sse2 baseline"), (PPC64LE, "vsx3 vsx2 baseline"),
    (ARMHF, "asimddp asimdhp baseline"),
])
def test_numpy_a_group_with_policies(arch, expected):
    groups = {"test_group": "\n    $keep_baseline\n    asimddp sse2 vsx2 avx2 vsx3\n"
                            "    avx512f asimdhp\n"}
    text = "/*@targets $keep_baseline baseline #test_group */"
    assert built(text, table_config(arch), groups) == numpy_names(expected)


def test_ours_a_policy_in_a_group_applies_to_the_whole_statement():
    s = parse("/*@targets avx2 #g */", "k.c", X86_64, {"g": "$keep_baseline sse2"})
    assert s.policies == ["$keep_baseline"]
    assert built("/*@targets sse2 #g */", table_config(X86_64), {"g": "$keep_baseline"}) == \
        ["SSE2"]


GROUPS_BODY = """/*@targets
 * sse42 avx avx512f
 * #test_group_1
 * vsx2
 * #TEST_GROUP_2
 * asimddp asimdfhm
*/"""


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f avx2 avx sse42 sse41"), (PPC64LE, "vsx3"),  # vsx2: min on ppc64le
    (ARMHF, "asimdfhm asimddp asimd"), (AARCH64, "asimdfhm asimddp"),  # asimd: min
])
def test_numpy_groups_dedup_and_sort(arch, expected, tmp_path):
    ini = tmp_path / "groups.ini"
    ini.write_text("[groups]\ntest_group_1 = VSX2 vsx3 asimd avx2 SSE41\n"
                   "Test_Group_2 = vsx2 vsx3 asImd aVx2 sse41\n")
    assert built(GROUPS_BODY, table_config(arch), load_groups(ini)) == numpy_names(expected)


def test_numpy_an_empty_group_is_allowed(tmp_path):
    ini = tmp_path / "groups.ini"
    ini.write_text("[groups]\noff =\nsimd = avx2\n")
    groups = load_groups(ini)
    assert built("/*@targets #off avx512f */", table_config(X86_64), groups) == ["AVX512F"]
    s = parse("/*@targets #off */", "k.c", X86_64, groups)
    assert s.targets == [] and s.notes == ["k.c:1: target group '#off' is empty"]


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "(avx512_clx avx512_cnl)"), (ARMHF, "(asimdhp asimddp)"),
    (AARCH64, "(asimdhp asimddp)"),
])
def test_numpy_multi_targets(arch, expected):
    text = "/*@targets\n    (avx512_clx avx512_cnl) (asimdhp asimddp)\n*/"
    assert built(text, table_config(arch)) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx512f f16c avx"), (PPC64LE, "vsx3"),  # vsx2: min on ppc64le
    (ARMHF, "(asimdhp asimddp)"),
])
def test_numpy_multi_targets_drop_implied_members_and_sort(arch, expected):
    text = """/*@targets
        f16c (sse41 avx sse42) (sse3 avx2 avx512f)
        vsx2 (vsx vsx3 vsx2)
        (neon neon_vfpv4 asimd asimdhp asimddp)
    */"""
    assert built(text, table_config(arch)) == numpy_names(expected)


@pytest.mark.parametrize("arch, expected", [
    (X86_64, "avx avx512f"), (PPC64LE, "vsx3"), (ARMHF, "(asimdhp asimddp)"),
    (S390X, "vxe2"),
])
def test_numpy_multi_targets_keep_sort(arch, expected):
    text = """/*@targets $keep_sort
        (sse41 avx sse42) (sse3 avx2 avx512f)
        (vsx vsx3 vsx2)
        (asimddp neon neon_vfpv4 asimd asimdhp)
        (vx vxe vxe2)
    */"""
    assert built(text, table_config(arch)) == numpy_names(expected)


def test_numpy_multi_targets_written_again_are_one_target(gcc_configure):
    text = "/*@targets $keep_sort\n    fma3 avx2 (fma3 avx2) (avx2 fma3) avx2 fma3\n*/"
    assert built(text, gcc_configure(dispatch="max")) == numpy_names("fma3 avx2 (fma3 avx2)")
