"""Validation against the real compiler (dispatchkit.probe + dispatchkit.build_config):
what a build enables, why a feature is dropped, and the probe cache."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from dispatchkit.build_config import BuildConfig, configure
from dispatchkit.errors import DispatchError
from dispatchkit.features import X86_64
from dispatchkit.probe import Probe

ALL_X86 = [f.name for f in X86_64.features]
pytestmark = pytest.mark.skipif(
    subprocess.run(["gcc", "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True,
                   text=True).stdout.find("__x86_64__") < 0
    if shutil.which("gcc") else True,
    reason="needs gcc targeting x86_64")


# -- what the real compiler supports ------------------------------------------

def test_gcc_builds_every_x86_feature(gcc_config):
    assert gcc_config.unsupported == {}


@pytest.mark.parametrize("cflags", ["-Wall -O2", "-Wall -Wextra -O2 -Werror"])
def test_a_users_warning_flags_lose_no_feature(gcc_configure, cflags):
    # the checks are compiled with the user's flags (as the build compiles its
    # sources): gcc 12's unmasked _mm512_exp2a23_ps passed an uninitialized
    # vector, and -Wall made AVX512ER and KNL/KNM "unsupported"
    assert gcc_configure(cflags=cflags).unsupported == {}


def test_default_config_is_min_baseline_and_everything_else_but_xop_fma4(gcc_config):
    assert gcc_config.arch == "x86_64"
    assert gcc_config.compiler_family == "gcc"
    assert gcc_config.baseline == ["SSE", "SSE2", "SSE3"]
    assert gcc_config.baseline_flags == ["-msse", "-msse2", "-msse3"]
    assert gcc_config.dispatch == [n for n in ALL_X86
                                   if n not in ("SSE", "SSE2", "SSE3", "XOP", "FMA4")]


def test_dispatch_features_are_sorted_by_interest(gcc_config):
    assert gcc_config.dispatch == X86_64.sort(gcc_config.dispatch)


def test_dispatch_flags_are_the_baseline_flags_plus_the_features(gcc_config):
    assert gcc_config.dispatch_flags["AVX2"] == [
        "-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-mpopcnt", "-msse4.2", "-mavx",
        "-mf16c", "-mavx2"]
    for name, flags in gcc_config.dispatch_flags.items():
        assert flags[:3] == gcc_config.baseline_flags, name


@pytest.mark.parametrize("name", ["SSE", "SSE2", "SSE3"])
def test_dispatch_features_in_the_baseline_are_skipped_with_the_reason(gcc_config, name):
    assert {"feature": name, "option": "cpu-dispatch",
            "reason": "already in the baseline"} in gcc_config.skipped


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is not installed")
def test_clang_builds_the_default_dispatch_set(cache_dir):
    cfg = configure("clang", "", "min", "max -xop -fma4", cache_dir)
    assert cfg.compiler_family == "clang"
    assert cfg.baseline == ["SSE", "SSE2", "SSE3"]
    # clang never had the Knights Mill flags (-mavx5124fmaps, -mavx5124vnniw); everything
    # else builds
    assert set(cfg.unsupported) <= {"AVX512_KNM", "AVX5124FMAPS", "AVX5124VNNIW"}
    assert set(cfg.dispatch) == set(ALL_X86) - {"SSE", "SSE2", "SSE3", "XOP", "FMA4"} \
        - set(cfg.unsupported)
    for name, reason in cfg.unsupported.items():
        assert {"feature": name, "option": "cpu-dispatch", "reason": reason} in cfg.skipped


# -- the baseline -------------------------------------------------------------

def test_implied_features_join_the_baseline(gcc_configure):
    cfg = gcc_configure(baseline="avx2")
    assert cfg.baseline == X86_64.sort(X86_64.closure(["AVX2"]))
    assert cfg.baseline_flags[-1] == "-mavx2"


def test_a_group_in_the_baseline_brings_its_closure(gcc_configure):
    cfg = gcc_configure(baseline="x86_v3", dispatch="max")
    assert cfg.baseline == X86_64.sort(X86_64.closure(
        ["FMA3", "AVX2", "CX16", "LAHF", "BMI2", "LZCNT", "MOVBE"]))
    assert cfg.dispatch[0] == "XOP"


def test_features_the_compiler_enables_by_itself_join_the_baseline(gcc_configure):
    # gcc on x86_64 always enables SSE and SSE2
    cfg = gcc_configure(baseline="none", dispatch="none")
    assert cfg.baseline == ["SSE", "SSE2"]
    assert any("SSE2 joins the baseline" in n for n in cfg.notes)


def test_baseline_none_dispatch_none_dispatches_nothing(gcc_configure):
    cfg = gcc_configure(baseline="none", dispatch="none")
    assert cfg.dispatch == [] and cfg.dispatch_flags == {}


def test_minus_in_dispatch_leaves_no_avx512_target(gcc_configure):
    cfg = gcc_configure(dispatch="max -avx512f")
    assert not [n for n in cfg.dispatch if n.startswith("AVX512")]
    assert "AVX2" in cfg.dispatch


def test_a_baseline_feature_is_dropped_from_dispatch(gcc_configure):
    cfg = gcc_configure(baseline="avx2", dispatch="sse41 avx2 avx512_skx")
    assert cfg.dispatch == ["AVX512_SKX"]
    assert [s["feature"] for s in cfg.skipped] == ["SSE41", "AVX2"]


def test_another_archs_name_in_an_option_is_a_note(gcc_configure):
    cfg = gcc_configure(dispatch="avx2 vsx2 asimd")
    assert cfg.dispatch == ["AVX2"]
    assert "cpu-dispatch: skipped 'vsx2': not a feature of x86_64" in cfg.notes
    assert "cpu-dispatch: skipped 'asimd': not a feature of x86_64" in cfg.notes


def test_native_enables_what_march_native_predefines(gcc_configure):
    macros = subprocess.run(["gcc", "-march=native", "-dM", "-E", "-x", "c", "/dev/null"],
                            capture_output=True, text=True, check=True).stdout.split()
    expected = {f.name for f in X86_64.features if all(m in macros for m in f.macros)}
    cfg = gcc_configure(baseline="native", dispatch="none")
    assert set(cfg.baseline) == set(X86_64.closure(expected))


def test_an_unknown_option_name_fails_configure(gcc_configure):
    with pytest.raises(DispatchError, match="unknown CPU feature 'avx3'"):
        gcc_configure(dispatch="avx2 avx3")


# -- a compiler that lacks something (fake_cc: no -mavx512fp16, no CLX intrinsic)

def test_a_feature_whose_flag_the_compiler_rejects_is_unsupported_with_the_reason(
        fake_config):
    assert fake_config.unsupported["AVX512_SPR"] == (
        "compiler lacks it (error: unrecognized command-line option '-mavx512fp16')")


def test_a_feature_whose_check_source_fails_is_unsupported_without_paths(fake_config, fake_cc):
    reason = fake_config.unsupported["AVX512_CLX"]
    assert reason == ("compiler lacks it (error: implicit declaration of function "
                      "'_mm512_dpbusd_epi32')")


def test_a_feature_implying_an_unsupported_one_is_unsupported(fake_config):
    # AVX512_ICL's own check builds, but it implies AVX512_CLX
    assert fake_config.unsupported["AVX512_ICL"] == (
        "implies AVX512_CLX, which the compiler lacks")


def test_unsupported_dispatch_features_are_skipped_with_their_reason(fake_config):
    skipped = {s["feature"]: s for s in fake_config.skipped}
    for name in ("AVX512_CLX", "AVX512_ICL", "AVX512_SPR"):
        assert skipped[name] == {"feature": name, "option": "cpu-dispatch",
                                 "reason": fake_config.unsupported[name]}
        assert name not in fake_config.dispatch


def test_the_rest_is_still_supported(fake_config):
    # AVX512FP16 is the single extension whose flag the fake compiler lacks
    assert set(fake_config.unsupported) == {"AVX512_CLX", "AVX512_ICL", "AVX512_SPR",
                                            "AVX512FP16"}
    assert "AVX512_CNL" in fake_config.dispatch and "AVX512_SKX" in fake_config.dispatch


# avx512_spr: the first unsupported feature by interest is the extension whose
# flag the fake lacks (AVX512FP16, below the generations since issue 25)
@pytest.mark.parametrize("baseline, culprit", [("avx512_spr", "AVX512FP16"),
                                                ("avx2 avx512_clx", "AVX512_CLX"),
                                                ("avx512_icl", "AVX512_CLX")])
def test_an_unsupported_feature_in_the_baseline_is_an_error_naming_it(
        fake_cc, fake_config, cache_dir, baseline, culprit):
    with pytest.raises(DispatchError) as info:
        configure(str(fake_cc), "", baseline, "none", cache_dir)
    assert info.value.where == "cpu-baseline"
    assert info.value.message.startswith(f"{culprit} cannot be in the baseline: ")
    assert "Remove it" in info.value.message


def test_baseline_max_drops_unsupported_features_with_the_reason(fake_cc, fake_config,
                                                                cache_dir):
    cfg = configure(str(fake_cc), "", "max", "none", cache_dir)
    assert "AVX512_CNL" in cfg.baseline
    assert {"AVX512_CLX", "AVX512_ICL", "AVX512_SPR"}.isdisjoint(cfg.baseline)
    assert {"feature": "AVX512_CLX", "option": "cpu-baseline",
            "reason": cfg.unsupported["AVX512_CLX"]} in cfg.skipped


# -- errors about the compiler itself ----------------------------------------

def test_a_missing_compiler_is_an_error(cache_dir):
    with pytest.raises(DispatchError, match="compiler 'no-such-cc-xyz' not found on PATH"):
        configure("no-such-cc-xyz", "", "min", "max", cache_dir)


def test_an_empty_compiler_command_is_an_error(cache_dir):
    with pytest.raises(DispatchError, match="empty compiler command"):
        configure("", "", "min", "max", cache_dir)


def test_a_program_that_is_not_a_c_compiler_is_an_error(cache_dir):
    with pytest.raises(DispatchError, match="cannot tell the target architecture"):
        configure(shutil.which("true") or "/bin/true", "", "min", "max", cache_dir)


def test_compiler_flags_it_rejects_are_an_error(cache_dir):
    with pytest.raises(DispatchError, match="-dM -E' failed"):
        configure("gcc", "-fno-such-flag-xyz", "min", "max", cache_dir)


def test_unbalanced_quotes_in_cflags_are_an_error(cache_dir):
    with pytest.raises(DispatchError, match="cannot split"):
        configure("gcc", "-DX='1", "min", "max", cache_dir)


# -- the cache ------------------------------------------------------------------

def test_a_cold_configure_compiles_every_check(gcc_cold):
    _, probes = gcc_cold
    assert [p.compiles_run for p in probes] == [len(X86_64.features)]


def test_a_warm_configure_runs_no_compile_and_gives_the_same_config(
        gcc_cold, cache_dir, counting_configure):
    cold, _ = gcc_cold
    warm, probes = counting_configure("gcc", "", cold.requested_baseline,
                                      cold.requested_dispatch, cache_dir)
    assert [p.compiles_run for p in probes] == [0]
    assert warm == cold


def test_other_options_reuse_the_compile_results(gcc_cold, cache_dir, counting_configure):
    _, probes = counting_configure("gcc", "", "avx2", "avx512_skx", cache_dir)
    assert probes[0].compiles_run == 0


AVX2_JOB = [("AVX2", "cpu_avx2.c", X86_64.flags_for(["AVX2"]))]


def test_other_cflags_are_another_compiler_identity(tmp_path):
    first = Probe(["gcc"], [], tmp_path)
    assert first.compile_checks(AVX2_JOB) == {"AVX2": ""}
    first.save()
    same = Probe(["gcc"], [], tmp_path)
    same.compile_checks(AVX2_JOB)
    other = Probe(["gcc"], ["-O2"], tmp_path)
    other.compile_checks(AVX2_JOB)
    assert (first.compiles_run, same.compiles_run, other.compiles_run) == (1, 0, 1)


def test_each_identity_has_its_own_cache_file(tmp_path):
    for cflags in ([], ["-O2"], []):
        probe = Probe(["gcc"], cflags, tmp_path)
        probe.macros()
        probe.save()
    assert len(list(tmp_path.glob("probe-*.json"))) == 2


def test_a_corrupt_cache_file_is_ignored_and_rewritten(tmp_path):
    probe = Probe(["gcc"], [], tmp_path)
    probe.compile_checks(AVX2_JOB)
    probe.save()
    (cache,) = tmp_path.glob("probe-*.json")
    cache.write_text("{not json")
    again = Probe(["gcc"], [], tmp_path)
    assert again.compile_checks(AVX2_JOB) == {"AVX2": ""}
    assert again.compiles_run == 1
    again.save()
    assert isinstance(json.loads(cache.read_text()), dict)


def test_an_unwritable_cache_dir_only_costs_speed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    probe = Probe(["gcc"], [], blocker / "cache")
    assert probe.compile_checks(AVX2_JOB) == {"AVX2": ""}
    probe.save()  # does not raise
    assert not (blocker / "cache").exists()


def test_without_a_cache_dir_nothing_is_remembered():
    probe = Probe(["gcc"], [], None)
    probe.compile_checks(AVX2_JOB)
    probe.save()
    again = Probe(["gcc"], [], None)
    again.compile_checks(AVX2_JOB)
    assert again.compiles_run == 1


def test_a_failed_compile_is_cached_too(tmp_path, fake_cc):
    job = [("AVX512_SPR", "cpu_avx512_spr.c", X86_64.flags_for(["AVX512_SPR"]))]
    probe = Probe([str(fake_cc)], [], tmp_path)
    first = probe.compile_checks(job)
    probe.save()
    again = Probe([str(fake_cc)], [], tmp_path)
    assert again.compile_checks(job) == first
    assert "-mavx512fp16" in first["AVX512_SPR"] and again.compiles_run == 0


def test_the_config_round_trips_through_json(gcc_config, tmp_path):
    path = tmp_path / "dispatch_config.json"
    path.write_text(gcc_config.to_json())
    assert BuildConfig.load(path) == gcc_config


@pytest.mark.parametrize("text", ["", "{", "[]", '{"arch": "x86_64"}'])
def test_a_bad_config_file_is_an_error(tmp_path, text):
    path = tmp_path / "dispatch_config.json"
    path.write_text(text)
    with pytest.raises(DispatchError, match="cannot read build configuration"):
        BuildConfig.load(path)


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("as") is None,
                    reason="needs gcc and binutils' as")
def test_an_assembler_that_cannot_assemble_a_feature_skips_it(tmp_path):
    """The checks build objects, so a compiler that accepts -mavx512f but an
    assembler that cannot assemble zmm registers (binutils before 2.26; here
    a wrapper given to gcc with -B) skips AVX-512, naming the assembler's
    error, and keeps everything it can assemble."""
    real_as = shutil.which("as")
    fake = tmp_path / "as"
    fake.write_text(f"""#!/bin/sh
for a in "$@"; do
  case "$a" in *.s) if grep -q '%zmm' "$a"; then echo "$a: Error: bad register name \\`%zmm0'" >&2; exit 1; fi;; esac
done
exec {real_as} "$@"
""")
    fake.chmod(0o755)
    config = configure(f"gcc -B{tmp_path}/", "", "min", "max -xop -fma4", cache_dir=None)
    skipped = {s["feature"]: s["reason"] for s in config.skipped}
    assert "AVX512F" not in config.dispatch and "AVX512_SKX" not in config.dispatch
    assert "bad register name" in skipped["AVX512F"], skipped
    assert {"AVX2", "FMA3", "SSE42"} <= set(config.dispatch)
