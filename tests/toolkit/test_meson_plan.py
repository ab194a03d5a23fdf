"""`dispatchgen meson`, the one call of a client's meson.build: what it lists
(one line per static library: name, sources, link args, compile args), what
it writes, and its errors, without building anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLKIT = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"
DISPATCHGEN = TOOLKIT / "dispatchgen"

SOURCE = "/*@targets $maxopt baseline sse42 avx2 */\nint x;\n"
VARIANTS = """[library]
name = vx
[baseline]
sources = portable.c
f = vx_f_portable
[avx2]
sources[asm] = avx2.S
sources[!asm] = avx2.c
f = vx_f_avx2
"""


def _meson(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    return subprocess.run([sys.executable, str(DISPATCHGEN), "meson", "--outdir", str(tmp / "out"),
                           "--cpu-baseline", "min", "--cpu-dispatch", "sse42 avx2", *args],
                          capture_output=True, text=True, env=env, cwd=tmp)


def _libraries(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert all(len(row) == 4 for row in rows), rows
    return {name: (srcs.split(), link.split(), cflags.split()) for name, srcs, link, cflags in rows}


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "mod.c").write_text("int y;\n")
    (tmp_path / "k.dispatch.c").write_text(SOURCE)
    for name in ("portable.c", "avx2.c", "avx2.S"):
        (tmp_path / name).write_text("")
    (tmp_path / "vx.variants.ini").write_text(VARIANTS)
    return tmp_path


def test_a_module_gets_its_runtime_sources_dispatch_objects_and_variants(project):
    libs = _libraries(_meson(project, "--module", "pkg._mod", "--sources", "mod.c",
                             "--dispatch", "k.dispatch.c", "--variants", "vx.variants.ini",
                             "--option", "asm=true"))
    assert sorted(libs) == ["_mod_cpu_runtime", "_mod_sources", "k_dispatch_c_AVX2",
                            "k_dispatch_c_SSE42", "k_dispatch_c_baseline", "vx_AVX2", "vx_baseline"]
    runtime_sources, link, cflags = libs["_mod_cpu_runtime"]
    assert [Path(s).name for s in runtime_sources] == [
        "cpu_features.c", "cpu_detect.c", "cpu_dispatch_trace.c", "cpu_module_guard.c"]
    assert "-DDISPATCH_MODULE_NAME=_mod" in cflags and "-DDISPATCH_PACKAGE_NAME=pkg" in cflags
    assert "-DDISPATCH_CPU_ENV_PREFIX=PKG" in cflags
    assert not [f for f in cflags if f.startswith("-m")]  # the guard: no baseline flags
    (script,) = link
    assert script.startswith("-Wl,--version-script=")
    text = Path(script.split("=", 1)[1]).read_text()
    assert "global: PyInit__mod;" in text and "local: *;" in text
    assert "-msse3" in libs["_mod_sources"][2]  # the module's own code: the baseline flags
    assert "-mavx2" in libs["k_dispatch_c_AVX2"][2]
    assert [Path(s).name for s in libs["vx_AVX2"][0]] == ["avx2.S"]
    for name in libs:  # the headers and the config, where the -I flags say
        assert f"-I{project / 'out'}" in libs[name][2]
    for written in ("k.dispatch.h", "vx_dispatch.h", "dispatch/_cpu_dispatch.h",
                    "dispatch/_cpu_features_table.h", "dispatch/dispatch_config.json"):
        assert (project / "out" / written).is_file(), written


def test_a_meson_option_chooses_a_variants_source(project):
    libs = _libraries(_meson(project, "--name", "prog", "--variants", "vx.variants.ini",
                             "--option", "asm=false"))
    assert [Path(s).name for s in libs["vx_AVX2"][0]] == ["avx2.c"]
    runtime_sources, link, _ = libs["prog_cpu_runtime"]
    assert link == [] and "cpu_module_guard.c" not in " ".join(runtime_sources)  # a program


def test_a_program_gets_the_program_guard_without_baseline_flags(project):
    """Note [Program guard]: the guard is in the runtime's library, which has
    no baseline flags; the name travels as character codes."""
    libs = _libraries(_meson(project, "--name", "prog", "--sources", "mod.c"))
    runtime_sources, _, cflags = libs["prog_cpu_runtime"]
    assert [Path(s).name for s in runtime_sources] == [
        "cpu_features.c", "cpu_detect.c", "cpu_dispatch_trace.c", "cpu_program_guard.c"]
    assert "-DDISPATCH_PROGRAM_NAME_CHARS=112,114,111,103" in cflags  # p r o g
    assert "-DDISPATCH_PROGRAM_GUARD_CONSTRUCTOR" not in cflags  # a .preinit_array entry
    assert not [f for f in cflags if f.startswith("-m")]
    assert "-msse3" in libs["prog_sources"][2]


def test_a_shared_library_gets_its_guard_as_a_constructor(project):
    libs = _libraries(_meson(project, "--name", "prog", "--shared-library"))
    assert "-DDISPATCH_PROGRAM_GUARD_CONSTRUCTOR" in libs["prog_cpu_runtime"][2]


def test_the_variants_header_records_the_choice_in_the_trace(project):
    _libraries(_meson(project, "--name", "prog", "--variants", "vx.variants.ini",
                      "--option", "asm=true"))
    header = (project / "out" / "vx_dispatch.h").read_text()
    assert 'dispatch_cpu_trace_record_choice("vx." #ENTRY' in header


@pytest.mark.parametrize("args,message", [
    (["--name", "prog", "--variants", "vx.variants.ini"],
     "vx.variants.ini:6: [avx2] sources[asm] depends on the option 'asm', which the build did "
     "not pass"),
    (["--name", "prog", "--variants", "vx.variants.ini", "--option", "asm"],
     "--option 'asm': expected NAME=VALUE"),
    (["--name", "vx", "--sources", "mod.c", "--variants", "vx.variants.ini", "--option",
      "asm=1", "--dispatch", "k.dispatch.c"], None),
    (["--sources", "mod.c"], "--module (a Python extension"),
    (["--module", "pkg._mod", "--shared-library"], "--shared-library goes with --name"),
])
def test_errors_are_one_line_and_write_nothing(project, args, message):
    r = _meson(project, *args)
    if message is None:  # a program named like its variants file's library: no clash
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert r.stdout == "" and not (project / "out").exists()


def test_a_path_with_a_space_is_named(tmp_path):
    spaced = tmp_path / "my project"
    spaced.mkdir()
    (spaced / "k.dispatch.c").write_text(SOURCE)
    r = _meson(spaced, "--name", "prog", "--dispatch", "k.dispatch.c")
    assert r.returncode == 2 and "white space" in r.stderr and "my project" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
