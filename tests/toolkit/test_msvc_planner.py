"""MSVC-style compilers (issue 47, item 2): how cl and clang-cl are told from
gcc-style ones, cl's /arch per target, the macros read without -dM, and what
the meson and setuptools routes pass them. No compiler runs here; clang-cl's
real objects are in test_msvc_clang_cl.py. Note [MSVC-style compilers] in
dispatchkit/msvc.py is what these tests hold the code to."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
from dispatchkit import meson_plan, msvc
from dispatchkit.build_config import BuildConfig, feature_flags
from dispatchkit.features import ARCHES, arch_from_macros
from dispatchkit.targets import parse, resolve

X64 = ARCHES["x86_64"]


@pytest.mark.parametrize("argv, style", [
    (["cl"], "msvc"), (["cl.exe"], "msvc"), (["CL.EXE", "/nologo"], "msvc"),
    ([r"C:\Program Files\Microsoft Visual Studio\VC\bin\Hostx64\x64\cl.exe"], "msvc"),
    (["ccache", "cl"], "msvc"), (["sccache", "clang-cl", "--target=x86_64-pc-windows-msvc"],
                                 "clang-cl"),
    (["/usr/lib/llvm-19/bin/clang-cl"], "clang-cl"), (["clang-cl-19"], "clang-cl"),
    (["clang", "--driver-mode=cl"], "clang-cl"),
    (["gcc"], ""), (["clang"], ""), (["x86_64-w64-mingw32-gcc"], ""), (["ccache", "gcc"], ""),
    (["clang-cleaner"], ""), (["icl"], ""),
])
def test_the_style_comes_from_the_compilers_name(argv, style):
    assert msvc.style_of(argv) == style


def test_macros_are_read_by_name_and_cls_arch_macros_stand_for_gccs():
    """cl has no -dM: the /EP output of macro_source is read back, and cl's
    _M_X64 (which defines no __x86_64__) identifies the x86_64 table."""
    src = msvc.macro_source(["_M_X64", "__AVX2__", "_MSC_VER"])
    assert '#ifdef _M_X64\nDISPATCHGEN_MACRO "_M_X64" _M_X64\n#endif\n' in src
    # what cl /EP /arch:AVX2 prints for it: the names stay literals, the values expand
    out = 'DISPATCHGEN_MACRO "_MSC_VER" 1940\n\nDISPATCHGEN_MACRO "_M_X64" 100\n' \
          'DISPATCHGEN_MACRO "__AVX2__" 1\n'
    macros = msvc.parse_macros(out)
    assert macros == {"_MSC_VER": "1940", "_M_X64": "100", "__AVX2__": "1", "__x86_64__": "1"}
    assert arch_from_macros(macros) is X64
    assert msvc.family_and_version(macros) == ("msvc", "1940")
    arm = msvc.parse_macros('DISPATCHGEN_MACRO "_M_ARM64" 1\n')
    assert arch_from_macros(arm) is ARCHES["aarch64"]
    assert arch_from_macros(msvc.parse_macros('DISPATCHGEN_MACRO "_M_IX86" 600\n')) \
        is ARCHES["x86"]
    # x64 code built to link with arm64 (arm64EC) is not the x86_64 table's
    assert arch_from_macros(msvc.parse_macros('DISPATCHGEN_MACRO "_M_X64" 100\n'
                                              'DISPATCHGEN_MACRO "_M_ARM64EC" 1\n')) is None


def test_every_macro_a_table_reads_is_asked_for():
    wanted = set(msvc.wanted_macros(ARCHES.values()))
    for arch in ARCHES.values():
        assert set(arch.macros) <= wanted
        for f in arch.features:
            assert set(f.macros) <= wanted, f.name


@pytest.mark.parametrize("features, flags", [
    (["SSE3"], []), (["SSE42"], []), (["POPCNT"], []), (["BMI2"], []),
    (["F16C"], ["/arch:AVX"]),                             # F16C implies AVX
    (["AVX"], ["/arch:AVX"]), (["FMA3"], ["/arch:AVX"]),   # FMA3 alone: not AVX2
    (["AVX2"], ["/arch:AVX"]),            # AVX2 without FMA3: cl's /arch:AVX2 emits FMA
    (["AVX2", "FMA3"], ["/arch:AVX2"]), (["X86_V3"], ["/arch:AVX2"]),
    (["AVX512F"], ["/arch:AVX2"]), (["AVX512_KNL"], ["/arch:AVX2"]),  # no BW, DQ, VL
    (["AVX512_SKX"], ["/arch:AVX512"]), (["AVX512_SPR"], ["/arch:AVX512"]),
])
def test_cl_gets_the_highest_arch_its_features_guarantee(features, flags):
    names = [m for n in features
             for m in (X64.group_by_name[n].members if n in X64.group_by_name else (n,))]
    assert msvc.cl_arch_flags(X64, names) == flags


def test_cl_on_32_bit_x86_names_sse2_and_on_arm64_has_no_flags():
    assert msvc.cl_arch_flags(ARCHES["x86"], ["SSE2"]) == ["/arch:SSE2"]
    assert msvc.cl_arch_flags(ARCHES["x86"], ["SSE"]) == []
    arm = ARCHES["aarch64"]
    assert msvc.cl_arch_flags(arm, list(arm.minimum)) == []
    assert feature_flags("msvc", arm, ["ASIMDDP"]) is None
    assert feature_flags("clang-cl", arm, ["ASIMDDP"]) == arm.flags_for(["ASIMDDP"])


def _config(family: str) -> BuildConfig:
    base = ["SSE", "SSE2", "SSE3"]
    dispatch = ["SSE42", "AVX", "FMA3", "AVX2", "AVX512F", "AVX512CD", "AVX512VL",
                "AVX512BW", "AVX512DQ", "AVX512_SKX"]
    cc = {"msvc": ["cl"], "clang-cl": ["clang-cl"], "gcc": ["gcc"]}[family]
    return BuildConfig(arch="x86_64", compiler=cc, compiler_family=family,
                       compiler_version="1", cflags=[], requested_baseline="min",
                       requested_dispatch="max", baseline=base,
                       baseline_flags=feature_flags(family, X64, base) or [],
                       dispatch=dispatch, dispatch_flags={})


HELLO_TARGETS = "/*@targets $maxopt $werror $autovec baseline sse42 (avx2 fma3) avx512_skx */"


def test_a_cl_target_gets_one_arch_flag_and_cls_policies():
    res = resolve(parse(HELLO_TARGETS, "hello.dispatch.c", X64), _config("msvc"))
    flags = {t.name: t.flags for t in res.targets}
    assert flags == {"AVX512_SKX": ["/arch:AVX512", "/O2", "/WX"],
                     "FMA3__AVX2": ["/arch:AVX2", "/O2", "/WX"],
                     "SSE42": ["/O2", "/WX"]}


def test_a_clang_cl_target_gets_clangs_m_flags_and_cls_policies():
    res = resolve(parse(HELLO_TARGETS, "hello.dispatch.c", X64), _config("clang-cl"))
    flags = {t.name: t.flags for t in res.targets}
    assert flags["FMA3__AVX2"][:3] == ["-msse", "-msse2", "-msse3"]
    assert "-mavx2" in flags["FMA3__AVX2"] and "-mfma" in flags["FMA3__AVX2"]
    assert "-mavx512bw" in flags["AVX512_SKX"]
    # /O2 and /WX, not -O3 and -Werror (clang-cl ignores -O3 with a warning);
    # no -fvectorize (unknown to clang-cl), but 512-bit vectors for AVX-512
    for t in flags.values():
        assert "/O2" in t and "/WX" in t and "-O3" not in t and "-fvectorize" not in t
    assert "-mprefer-vector-width=512" in flags["AVX512_SKX"]
    assert "-mprefer-vector-width=512" not in flags["FMA3__AVX2"]


def _meson_args(tmp_path: Path, module: str) -> argparse.Namespace:
    return argparse.Namespace(module=module, name=None, outdir=tmp_path, env_prefix=None,
                              shared_library=False, sources=[], dispatch=[], variants=[],
                              option=[], groups=None, disable_optimization=False)


@pytest.mark.parametrize("family", ["msvc", "clang-cl"])
def test_a_pyd_has_no_version_script(tmp_path, family):
    """A .pyd exports its dllexport PyInit only; the ELF version script is gcc's."""
    libs, _ = meson_plan.plan(_meson_args(tmp_path, "pkg._ext"), _config(family))
    runtime = next(lib for lib in libs if lib[0] == "_ext_cpu_runtime")
    assert runtime[3] == []
    assert "-DDISPATCH_MODULE_NAME=_ext" in runtime[2]
    assert any(s.endswith("cpu_module_guard.c") for s in runtime[1])
    assert not (tmp_path / "_ext.exports").exists()
    # cl's <stdatomic.h> (the runtime's) wants C11 and its experimental switch
    atomics = ["/std:c11", "/experimental:c11atomics"]
    assert (runtime[2][-4:-2] == atomics) == (family == "msvc"), runtime[2]


@pytest.mark.parametrize("family", ["msvc", "clang-cl"])
def test_a_dll_has_the_guard_as_its_entry_in_link_exes_syntax(tmp_path, family):
    """--shared-library: the guard is the DLL's entry point (Note [Program
    guard]); link.exe and lld-link take /ENTRY:, never gcc's -Wl,--entry=."""
    args = _meson_args(tmp_path, None)
    args.name, args.shared_library = "mylib", True
    libs, _ = meson_plan.plan(args, _config(family))
    runtime = next(lib for lib in libs if lib[0] == "mylib_cpu_runtime")
    assert runtime[3] == ["/ENTRY:dispatch__pg_dll_entry"]
    assert "-DDISPATCH_PROGRAM_GUARD_CONSTRUCTOR" in runtime[2]


def test_gcc_keeps_its_version_script(tmp_path):
    libs, _ = meson_plan.plan(_meson_args(tmp_path, "pkg._ext"), _config("gcc"))
    runtime = next(lib for lib in libs if lib[0] == "_ext_cpu_runtime")
    assert runtime[3] == [f"-Wl,--version-script={tmp_path.resolve() / '_ext.exports'}"]


def test_cl_has_no_native():
    from dispatchkit.errors import DispatchError
    from dispatchkit import build_config

    class FakeProbe:  # what cl /EP answers for x64; never compiles (native fails first)
        argv, cflags, style = ["cl"], [], "msvc"

        def macros(self, extra=()):
            return msvc.parse_macros('DISPATCHGEN_MACRO "_M_X64" 100\n'
                                     'DISPATCHGEN_MACRO "_MSC_FULL_VER" 194033811\n')

        def family_and_version(self):
            return msvc.family_and_version(self.macros())

    with pytest.raises(DispatchError, match="'native': cl has no flag"):
        build_config._configure(FakeProbe(), "cl", "", "native", "", False)


class _FakeMSVCCompiler:
    """What setuptools' MSVC compiler class holds: compiler_type 'msvc', and
    cc (cl.exe's path, found by initialize())."""
    compiler_type = "msvc"

    def __init__(self) -> None:
        self.initialized = False
        self.cc = ""

    def initialize(self, plat_name=None) -> None:
        self.initialized = True
        self.cc = r"C:\Program Files\Microsoft Visual Studio\VC\Hostx64\x64\cl.exe"


def test_setuptools_passes_cl_exe_whole():
    pytest.importorskip("setuptools")
    from dispatchkit import setuptools_ext
    from dispatchkit.build_config import split_words
    compiler = _FakeMSVCCompiler()
    cc = setuptools_ext._compiler_command(compiler, "win-amd64")
    assert compiler.initialized
    assert split_words(cc) == [compiler.cc]        # spaces and backslashes survive
    assert msvc.style_of(split_words(cc)) == "msvc"
    assert setuptools_ext._is_msvc(compiler)


def test_the_configuration_of_a_cl_build_round_trips(tmp_path):
    cfg = dataclasses.replace(_config("msvc"), dispatch_flags={"AVX2": ["/arch:AVX"]})
    (tmp_path / "c.json").write_text(cfg.to_json())
    assert BuildConfig.load(tmp_path / "c.json") == cfg
