"""tools/dispatchgen/dispatchgen as meson and users run it: report, targets, configure,
meson-source; generated files are deterministic and path-free; user errors are
one clean line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

SOURCE = """/*@targets $maxopt baseline
 * sse42 (avx2 fma3)
 * avx512_skx vsx2
 */
int DISPATCH_CPU_DISPATCH_CURFX(whoami)(void) { return 1; }
"""


@pytest.fixture
def gcc_args(cache_dir, gcc_config):
    return ["--cc", "gcc", "--cflags", "", "--cache-dir", str(cache_dir)]


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "hello.dispatch.c"
    path.write_text(SOURCE)
    return path


@pytest.fixture
def configured(tmp_path, gcc_args, cli) -> Path:
    out = tmp_path / "build"
    proc = cli(["configure", *gcc_args, "--outdir", str(out), "--meson"])
    assert proc.returncode == 0, proc.stderr
    return out


# -- report / targets --json -------------------------------------------------------

def test_report_json_gives_arch_compiler_baseline_dispatch_and_skips(cli, gcc_args):
    proc = cli(["report", *gcc_args, "--cpu-baseline", "min", "--cpu-dispatch",
                "max -avx512f vsx", "--json"])
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["arch"] == "x86_64"
    assert report["compiler"]["command"] == ["gcc"]
    assert report["compiler"]["family"] == "gcc" and report["compiler"]["version"]
    assert report["baseline"] == {"requested": "min", "features": ["SSE", "SSE2", "SSE3"],
                                  "flags": ["-msse", "-msse2", "-msse3"]}
    assert report["dispatch"]["requested"] == "max -avx512f vsx"
    features = report["dispatch"]["features"]
    assert "AVX2" in features and not [f for f in features if f.startswith("AVX512")]
    assert features[-1] == "GFNI"  # the highest interest that does not imply AVX512F
    assert report["dispatch"]["flags"]["AVX2"][-1] == "-mavx2"
    assert set(report["dispatch"]["flags"]) == set(report["dispatch"]["features"])
    assert {"feature": "SSE3", "option": "cpu-dispatch",
            "reason": "already in the baseline"} in report["skipped"]
    assert "cpu-dispatch: skipped 'vsx': not a feature of x86_64" in report["notes"]
    assert report["unsupported"] == {}


def test_report_text_lists_skips_with_reasons(cli, gcc_args):
    proc = cli(["report", *gcc_args, "--cpu-baseline", "avx2", "--cpu-dispatch", "avx2 avx512f"])
    assert proc.returncode == 0, proc.stderr
    assert "skipped:   AVX2 (cpu-dispatch): already in the baseline" in proc.stdout
    assert "dispatch:  AVX512F" in proc.stdout


def test_targets_json_gives_targets_flags_skips_and_notes(cli, gcc_args, source):
    proc = cli(["targets", *gcc_args, "--cpu-dispatch", "max -avx512f", str(source), "--json"])
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["file"] == str(source) and res["line"] == 1
    assert res["baseline"] is True and res["policies"] == ["$maxopt"]
    assert [t["name"] for t in res["targets"]] == ["FMA3__AVX2", "SSE42"]
    top = res["targets"][0]
    assert top["features"] == ["FMA3", "AVX2"] and "-O3" in top["flags"]
    assert top["checks"] == ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2"]
    assert res["skipped"] == [{"target": "AVX512_SKX",
                               "reason": "AVX512_SKX is not in cpu-dispatch ('max -avx512f')"}]
    assert res["notes"] == [f"{source}:3: skipped 'vsx2': not a feature of x86_64"]


def test_targets_reads_a_saved_config_instead_of_probing(cli, configured, source):
    proc = cli(["targets", "--cc", "no-such-cc", "--config",
                str(configured / "dispatch_config.json"), str(source), "--json"])
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(proc.stdout)["targets"]] == [
        "AVX512_SKX", "FMA3__AVX2", "SSE42"]


def test_targets_of_several_files_is_a_json_list(cli, gcc_args, source, tmp_path):
    other = tmp_path / "other.dispatch.c"
    other.write_text("/*@targets avx2 */\n")
    proc = cli(["targets", *gcc_args, str(source), str(other), "--json"])
    assert [r["file"] for r in json.loads(proc.stdout)] == [str(source), str(other)]


def test_targets_groups_come_from_the_ini_file(cli, gcc_args, tmp_path):
    ini = tmp_path / "dispatch.ini"
    ini.write_text("[groups]\nsimd = sse42 avx2\n")
    src = tmp_path / "g.dispatch.c"
    src.write_text("/*@targets #simd baseline */\n")
    proc = cli(["targets", *gcc_args, "--groups", str(ini), str(src), "--json"])
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(proc.stdout)["targets"]] == ["AVX2", "SSE42"]


# -- configure + meson-source ----------------------------------------------------------

def test_configure_writes_the_header_and_the_config(configured, gcc_config):
    header = (configured / "_cpu_dispatch.h").read_text()
    assert '#define DISPATCH_WITH_CPU_BASELINE "SSE SSE2 SSE3"' in header
    assert f"#define DISPATCH_WITH_CPU_DISPATCH_N {len(gcc_config.dispatch)}" in header
    assert "#define DISPATCH_HAVE_SSE3 1" in header
    assert "#ifdef DISPATCH__CPU_TARGET_AVX2\n    #define DISPATCH_HAVE_AVX2 1" in header
    config = json.loads((configured / "dispatch_config.json").read_text())
    assert config["dispatch"] == gcc_config.dispatch


def test_configure_writes_the_feature_table_header_the_runtime_includes(configured):
    from dispatchkit import ctable

    text = (configured / "_cpu_features_table.h").read_text()
    assert text == ctable.render()
    assert "    DISPATCH_CPU_FEATURE_AVX512_SKX = 42," in text


def test_configure_meson_output_is_tab_separated_lines(cli, gcc_args, tmp_path):
    proc = cli(["configure", *gcc_args, "--outdir", str(tmp_path), "--meson"])
    lines = dict(line.split("\t", 1) for line in proc.stdout.splitlines()
                 if not line.startswith("note\t"))
    assert lines["baseline"] == "SSE SSE2 SSE3"
    assert lines["baseline_flags"] == "-msse -msse2 -msse3"
    assert lines["dispatch"].split()[0] == "SSSE3"


def meson_source(cli, source: Path, build: Path, *extra: str):
    proc = cli(["meson-source", str(source), "--config", str(build / "dispatch_config.json"),
                "--outdir", str(build), *extra])
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


def test_meson_source_lists_one_wrapper_per_target_highest_first(cli, configured, source):
    lines = meson_source(cli, source, configured)
    wrappers = [ln for ln in lines if ln[0] == "wrapper"]
    assert [w[1:3] for w in wrappers] == [["hello_dispatch_c_AVX512_SKX", "AVX512_SKX"],
                                          ["hello_dispatch_c_FMA3__AVX2", "FMA3__AVX2"],
                                          ["hello_dispatch_c_SSE42", "SSE42"]]
    assert "-mavx512bw" in wrappers[0][3].split() and "-O3" in wrappers[0][3].split()
    assert wrappers[1][4] == "hello.dispatch.fma3__avx2.c"


def test_meson_source_lists_the_baseline_build_with_baseline_flags(cli, configured, source):
    (base,) = [ln for ln in meson_source(cli, source, configured) if ln[0] == "baseline"]
    assert base[1:] == ["hello_dispatch_c_baseline", str(source.resolve()), "-msse -msse2 -msse3"]


def test_meson_source_notes_what_is_built_and_skipped(cli, configured, source):
    notes = [ln[1] for ln in meson_source(cli, source, configured) if ln[0] == "note"]
    assert notes == ["hello.dispatch.c: builds AVX512_SKX FMA3__AVX2 SSE42 baseline",
                     f"{source}:3: skipped 'vsx2': not a feature of x86_64"]


def test_meson_source_writes_the_dispatch_header(cli, configured, source):
    meson_source(cli, source, configured)
    header = (configured / "hello.dispatch.h").read_text()
    assert '#define DISPATCH_CPU_DISPATCH_TARGETS "AVX512_SKX FMA3__AVX2 SSE42 baseline"' \
        in header
    calls = [ln for ln in header.splitlines() if "DISPATCH_EXPAND(CB((" in ln]
    assert [c.split(", ")[1] for c in calls] == ["AVX512_SKX", "FMA3__AVX2", "SSE42"]
    assert "CHK(AVX512_SKX)" in calls[0] and "CHK(SSE3)" not in calls[0]


def test_wrapper_defines_the_target_and_its_features_then_includes_the_source(
        cli, configured, source):
    proc = cli(["wrapper", str(source), "fma3__avx2", "--config",
                str(configured / "dispatch_config.json")])
    assert proc.returncode == 0, proc.stderr
    wrapper = proc.stdout
    assert "#define DISPATCH__CPU_TARGET_CURRENT FMA3__AVX2\n" in wrapper
    for name in ("SSE", "SSE42", "F16C", "FMA3", "AVX2"):
        assert f"#define DISPATCH__CPU_TARGET_{name}\n" in wrapper
    assert "DISPATCH__CPU_TARGET_AVX512F" not in wrapper
    assert wrapper.endswith('#include "hello.dispatch.c"\n')


def test_wrapper_of_a_target_not_built_is_an_error(cli, configured, source):
    proc = cli(["wrapper", str(source), "avx512_icl", "--config",
                str(configured / "dispatch_config.json")])
    assert proc.returncode == 2
    assert "no target 'avx512_icl' is built (built: AVX512_SKX FMA3__AVX2 SSE42)" in proc.stderr


def test_meson_source_disable_optimization_builds_the_source_once(cli, configured, source):
    lines = meson_source(cli, source, configured, "--disable-optimization")
    built = [ln for ln in lines if ln[0] in ("wrapper", "baseline")]
    assert built == [["baseline", "hello_dispatch_c_baseline", str(source.resolve()),
                      "-msse -msse2 -msse3"]]


def generated(cli, gcc_args, source: Path, out: Path) -> dict:
    assert cli(["configure", *gcc_args, "--outdir", str(out)]).returncode == 0
    lines = meson_source(cli, source, out)
    for _, _, target, _, name in (ln for ln in lines if ln[0] == "wrapper"):
        proc = cli(["wrapper", str(source), target, "--config",
                    str(out / "dispatch_config.json")])
        (out / name).write_text(proc.stdout)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_generated_files_are_byte_identical_across_runs_and_dirs(cli, gcc_args, source,
                                                                 tmp_path):
    first = generated(cli, gcc_args, source, tmp_path / "a")
    assert "hello.dispatch.sse42.c" in first and "_cpu_dispatch.h" in first
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "a").iterdir()
              if p.name in ("_cpu_dispatch.h", "hello.dispatch.h")}
    assert first == generated(cli, gcc_args, source, tmp_path / "b")
    assert first == generated(cli, gcc_args, source, tmp_path / "a")
    # and unchanged headers are not rewritten (no needless recompiles)
    assert mtimes == {p: p.stat().st_mtime_ns for p in mtimes}


def test_generated_headers_and_wrappers_hold_no_absolute_path(cli, gcc_args, fake_cc, source,
                                                              tmp_path):
    out = tmp_path / "build"
    files = generated(cli, ["--cc", str(fake_cc), *gcc_args[2:]], source, out)
    for name, data in files.items():
        if name.endswith((".h", ".c")):
            text = data.decode()
            for path in (str(tmp_path), str(fake_cc), str(Path.home()), "/usr/"):
                assert path not in text, (name, path)


# -- user errors: exit 2, one line, no traceback ------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["report", "--cpu-dispatch", "avx3"], "cpu-dispatch: unknown CPU feature 'avx3'"),
    (["report", "--cpu-baseline=$maxopt"], "cpu-baseline: '$maxopt' is not allowed"),
    (["report", "--cpu-dispatch=-"], "'-' is an operator without a feature name"),
    (["report", "--cc", "no-such-cc-xyz"], "compiler 'no-such-cc-xyz' not found"),
    (["report", "--cflags=-DX='1"], "cannot split"),
    (["targets", "missing.dispatch.c"], "missing.dispatch.c: cannot read"),
    (["targets", "--groups", "missing.ini", "{src}"], "cannot read target groups"),
    (["targets", "{bad}"], "{bad}:2: unknown target 'avx3'"),
    (["targets", "--config", "nope.json", "{src}"], "cannot read build configuration"),
])
def test_user_errors_exit_2_with_one_line_and_no_traceback(cli, gcc_args, source, tmp_path,
                                                           args, message):
    bad = tmp_path / "bad.dispatch.c"
    bad.write_text("/*@targets avx2\n avx3 */\n")
    fill = {"src": str(source), "bad": str(bad)}
    args = [a.format(**fill) for a in args]
    proc = cli([args[0], *gcc_args, *args[1:]], cwd=tmp_path)  # later options win
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("dispatchgen: error: ")
    assert message.format(**fill) in lines[0]


def test_a_non_utf8_source_is_a_clean_error(cli, gcc_args, tmp_path):
    src = tmp_path / "latin1.dispatch.c"
    src.write_bytes(b"/*@targets avx2 */ /* \xff\xfe */\n")
    proc = cli(["targets", *gcc_args, str(src)])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
