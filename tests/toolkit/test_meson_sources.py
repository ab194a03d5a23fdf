"""`dispatchgen meson-sources` (one process for all of a meson project's
dispatchable sources) and the one-compile union probe of a cold configure."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from dispatchkit.build_config import configure
from dispatchkit.features import X86_64
from dispatchkit.features.base import merge_keep_last
from dispatchkit.probe import Probe

pytestmark = pytest.mark.skipif(
    subprocess.run(["gcc", "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True,
                   text=True).stdout.find("__x86_64__") < 0
    if shutil.which("gcc") else True,
    reason="needs gcc targeting x86_64")

SOURCE = """/*@targets $maxopt baseline
 * sse42 (avx2 fma3)
 * avx512_skx vsx2
 */
int DISPATCH_CPU_DISPATCH_CURFX(whoami)(void) { return 1; }
"""


@pytest.fixture
def build(tmp_path, cli, cache_dir, gcc_config) -> Path:
    out = tmp_path / "build"
    proc = cli(["configure", "--cc", "gcc", "--cflags", "", "--cache-dir", str(cache_dir),
                "--outdir", str(out)])
    assert proc.returncode == 0, proc.stderr
    return out


def sources(tmp_path: Path, *names: str, text: str = SOURCE):
    paths = []
    for name in names:
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    return paths


def run(cli, build: Path, srcs, *extra: str):
    return cli(["meson-sources", *map(str, srcs), "--config",
                str(build / "dispatch_config.json"), "--outdir", str(build), *extra])


def lines_of(proc):
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


def test_meson_sources_lists_every_object_of_every_source(cli, build, tmp_path):
    srcs = sources(tmp_path, "a.dispatch.c", "b.dispatch.cpp")
    libs = [ln for ln in lines_of(run(cli, build, srcs)) if ln[0] == "lib"]
    assert [ln[1:3] for ln in libs] == [
        ["a_dispatch_c_AVX512_SKX", "0"], ["a_dispatch_c_FMA3__AVX2", "0"],
        ["a_dispatch_c_SSE42", "0"], ["a_dispatch_c_baseline", "0"],
        ["b_dispatch_cpp_AVX512_SKX", "1"], ["b_dispatch_cpp_FMA3__AVX2", "1"],
        ["b_dispatch_cpp_SSE42", "1"], ["b_dispatch_cpp_baseline", "1"]]
    assert libs[3][3] == "-msse -msse2 -msse3"
    assert (build / "a.dispatch.h").is_file() and (build / "b.dispatch.h").is_file()


def test_meson_sources_flags_define_what_the_wrapper_defined(cli, build, tmp_path):
    (src,) = sources(tmp_path, "hello.dispatch.c")
    libs = {ln[1]: ln[3].split() for ln in lines_of(run(cli, build, [src])) if ln[0] == "lib"}
    wrapper = cli(["wrapper", str(src), "fma3__avx2", "--config",
                   str(build / "dispatch_config.json")]).stdout
    flags = libs["hello_dispatch_c_FMA3__AVX2"]
    assert "-mavx2" in flags and "-O3" in flags
    defines = [f for f in flags if f.startswith("-D")]
    expected = [ln.replace("#define ", "-D", 1).replace(" ", "=", 1)
                for ln in wrapper.splitlines() if ln.startswith("#define ")]
    assert defines == [d if "=" in d else d + "=" for d in expected]
    assert defines[0] == "-DDISPATCH__CPU_TARGET_CURRENT=FMA3__AVX2"


def test_meson_sources_objects_compile_and_carry_the_target_symbol(cli, build, tmp_path):
    (src,) = sources(tmp_path, "hello.dispatch.c",
                     text=SOURCE.replace("int DISPATCH", '#include "dispatch/cpu_dispatch.h"\nint DISPATCH'))
    inc = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen" / "dispatchkit" / "include"
    (tmp_path / "gen" / "dispatch").mkdir(parents=True)
    for header in ("_cpu_dispatch.h", "_cpu_features_table.h"):
        shutil.copy(build / header, tmp_path / "gen" / "dispatch")
    for _, name, _, flags in (ln for ln in lines_of(run(cli, build, [src])) if ln[0] == "lib"):
        obj = tmp_path / f"{name}.o"
        subprocess.run(["gcc", *flags.split(), f"-I{tmp_path / 'gen'}", f"-I{inc}", f"-I{build}", "-c", str(src),
                        "-o", str(obj)], check=True)
        syms = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
        suffix = name.split("hello_dispatch_c_")[1]
        assert ("whoami" if suffix == "baseline" else f"whoami_{suffix}") in syms.split()


def test_meson_sources_disable_optimization_builds_each_source_once(cli, build, tmp_path):
    srcs = sources(tmp_path, "a.dispatch.c", "b.dispatch.c")
    libs = [ln for ln in lines_of(run(cli, build, srcs, "--disable-optimization"))
            if ln[0] == "lib"]
    assert [ln[1] for ln in libs] == ["a_dispatch_c_baseline", "b_dispatch_c_baseline"]


def test_meson_sources_bad_targets_is_one_line_naming_file_line_token_and_writes_nothing(
        cli, build, tmp_path):
    good, bad = sources(tmp_path, "good.dispatch.c", "bad.dispatch.c")
    bad.write_text("/*@targets baseline\n avx2 $nosuchpolicy\n */\n")
    proc = run(cli, build, [good, bad])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert f"{bad}:2" in proc.stderr and "$nosuchpolicy" in proc.stderr
    assert not (build / "good.dispatch.h").exists()


@pytest.mark.parametrize("names, words", [
    (["x.dispatch.f90"], ["must end in"]),
    (["x.dispatch.c", "x.dispatch.cpp"], ["both generate x.dispatch.h"]),
])
def test_meson_sources_refuses_what_it_cannot_build(cli, build, tmp_path, names, words):
    proc = run(cli, build, sources(tmp_path, *names))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert all(w in proc.stderr for w in words), proc.stderr


def test_meson_sources_rewrites_only_changed_headers(cli, build, tmp_path):
    a, b = sources(tmp_path, "a.dispatch.c", "b.dispatch.c")
    lines_of(run(cli, build, [a, b]))
    before = {p: (build / p).stat().st_mtime_ns for p in ("a.dispatch.h", "b.dispatch.h")}
    first = (build / "a.dispatch.h").read_bytes()
    b.write_text(SOURCE.replace("sse42 ", ""))
    lines_of(run(cli, build, [a, b]))
    assert (build / "a.dispatch.h").stat().st_mtime_ns == before["a.dispatch.h"]
    assert (build / "a.dispatch.h").read_bytes() == first
    assert '"AVX512_SKX FMA3__AVX2 baseline"' in (build / "b.dispatch.h").read_text()


# -- the union probe (Note [Union probe]) ---------------------------------------------

def test_a_cold_configure_compiles_one_union_and_agrees_with_the_exhaustive_one(
        tmp_path, gcc_config, counting_configure):
    cfg, probes = counting_configure("gcc", "", "min", "max -xop -fma4", tmp_path)
    assert [p.compiles_run for p in probes] == [1]
    assert cfg == gcc_config  # gcc_config: every check compiled on its own
    again, probes = counting_configure("gcc", "", "min", "max -xop -fma4", tmp_path)
    assert [p.compiles_run for p in probes] == [0] and again == cfg


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is not installed")
def test_a_failing_union_falls_back_to_each_check_with_its_reason(tmp_path,
                                                                  counting_configure):
    cfg, probes = counting_configure("clang", "", "min", "max -xop -fma4", tmp_path / "u")
    exhaustive, _ = counting_configure("clang", "", "min", "max -xop -fma4", tmp_path / "e",
                                       exhaustive=True)
    assert cfg == exhaustive
    if not cfg.unsupported:
        pytest.skip("this clang builds every x86 feature: its union does not fail")
    assert probes[0].compiles_run == 1 + len([f for f in X86_64.features if not f.disable])
    # clang 14: no -mavx5124fmaps; named per feature, not "the union failed"
    for name, reason in cfg.unsupported.items():
        assert reason.startswith("compiler lacks it (") or "implies" in reason, reason
    if "AVX512_KNM" in cfg.unsupported:
        assert "AVX512_KNM" not in cfg.dispatch
        assert any(s["feature"] == "AVX512_KNM" and s["reason"] == cfg.unsupported["AVX512_KNM"]
                   for s in cfg.skipped)
    _, probes = counting_configure("clang", "", "min", "max -xop -fma4", tmp_path / "u")
    assert [p.compiles_run for p in probes] == [0]


def test_no_union_is_tried_where_flags_override_each_other(tmp_path):
    probe = Probe(["gcc"], [], tmp_path)
    jobs = [("A", "cpu_sse.c", ["-march=x86-64"]), ("B", "cpu_avx.c", ["-march=haswell"])]
    assert probe.compile_union(jobs, merge_keep_last(("-march=",))) is None
    assert probe.compiles_run == 0


def test_the_cli_exhaustive_switch_compiles_every_check(tmp_path, cli):
    proc = cli(["report", "--cc", "gcc", "--cflags", "", "--cache-dir", str(tmp_path),
                "--exhaustive-probe", "--json"])
    assert proc.returncode == 0, proc.stderr
    (cache,) = tmp_path.glob("probe-*.json")
    text = cache.read_text()
    assert text.count('"compile ') == len([f for f in X86_64.features if not f.disable])
    assert '"union ' not in text


def test_configure_of_fewer_features_still_answers_from_one_union(tmp_path):
    cfg = configure("gcc", "", "avx2", "avx512_skx", tmp_path)
    assert cfg.dispatch == ["AVX512_SKX"] and not cfg.unsupported
