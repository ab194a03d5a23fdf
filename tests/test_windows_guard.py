"""The guard of a Windows program and of a Windows DLL built with the toolkit
by mingw-w64 (gcc, and clang --target=x86_64-w64-mingw32), run under wine
(issue 47, item 1; Note [Program guard] in
tools/dispatchgen/dispatchkit/cpu/cpu_program_guard.c).

Each build is what `dispatchgen meson --name NAME [--shared-library]` lists
(its libraries' sources, compile and link args), compiled and linked by hand
as meson would, with a baseline above this CPU and with one this CPU has:

- a program whose constructor runs code built with the baseline flags (a C
  `__attribute__((constructor(101)))`, the first a program may ask for, with
  both compilers: the guard when it was a constructor of that priority ran
  after it and the program died of an illegal instruction; a C++ static object's
  constructor, with clang: Debian's mingw-w64 gcc has no C++ compiler) stops
  before that constructor and before main, with one line naming what the CPU
  lacks and status 1, never an illegal instruction; the build of a lower
  baseline runs the constructor, then main;
- a DLL loaded with LoadLibrary: refused at load (LoadLibrary returns NULL,
  ERROR_DLL_INIT_FAILED) with the guard's one line, its DllMain never run,
  and a program linked against it never reaches main;
  the lower build loads, runs DllMain and its export.

Skips, naming what is missing, without mingw-w64, clang-19 or wine."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_windows_mingw import COMPILERS, _baselines, _run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DISPATCHGEN = REPO / "tools" / "dispatchgen" / "dispatchgen"
HERE = REPO / "tests" / "windows"

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

ERROR_DLL_INIT_FAILED = 1114
# The feature each ladder baseline of test_windows_mingw adds last: what the
# guard's line must name on a CPU that has the rung below.
LACKS = {"avx2": "AVX2", "avx512_skx": "AVX512BW", "avx512_icl": "AVX512VBMI2",
         "avx512_spr": "AVX512FP16"}


def _require(compiler: str) -> list[str]:
    cc = COMPILERS[compiler]
    if shutil.which(cc[0]) is None or shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.skip(f"needs {cc[0]} and mingw-w64 (Debian: gcc-mingw-w64-x86-64)")
    return cc


def build(tmp: Path, compiler: str, baseline: str, name: str, sources: list[str],
          shared: bool = False) -> Path:
    """NAME.exe (or NAME.dll) from sources (tests/windows/), as `dispatchgen
    meson --name NAME` lists its libraries."""
    cc = _require(compiler)
    out = tmp / f"{name}-{compiler}-{baseline}"
    out.mkdir()
    r = _run(["python3", str(DISPATCHGEN), "meson", "--name", name, "--outdir", str(out),
              "--cc", " ".join(cc), "--cpu-baseline", baseline, "--cpu-dispatch", "none",
              "--sources", *[str(HERE / s) for s in sources],
              *(["--shared-library"] if shared else [])])
    assert r.returncode == 0, r.stderr
    objects, link = [], []
    for line in r.stdout.splitlines():
        lib, srcs, largs, cargs = line.split("\t")
        link += largs.split()
        for src in srcs.split():
            obj = out / f"{lib}-{Path(src).name}.o"
            lang = (["-x", "c++", "-std=c++17", "-fno-exceptions", "-fno-rtti"]
                    if src.endswith(".cc") else ["-std=c11"])
            c = _run([*cc, *lang, "-O2", *cargs.split(), "-c", src, "-o", str(obj)])
            assert c.returncode == 0, c.stderr
            objects.append(str(obj))
    target = out / (f"{name}.dll" if shared else f"{name}.exe")
    c = _run([*cc, *(["-shared"] if shared else []), *objects, *link, "-o", str(target)])
    assert c.returncode == 0, c.stderr
    return target


def _own(stderr: str) -> list[str]:
    """stderr's lines less wine's own (a new prefix says it was made)."""
    return [line for line in stderr.splitlines() if not line.startswith("wine:")]


def _rungs() -> tuple[str, str]:
    have, above = _baselines()
    if have is None or above is None:
        pytest.skip("needs a CPU with AVX2 that lacks a rung of the ladder (avx512_spr)")
    return have, above


PROGRAMS = [("gcc", "c_constructor.c", "constructor"), ("clang", "c_constructor.c", "constructor"),
            ("clang", "static_object.cc", "static constructor")]


@pytest.mark.parametrize("compiler,source,says", PROGRAMS,
                         ids=[f"{c}-{s.split('.')[0]}" for c, s, _ in PROGRAMS])
def test_program_guard_runs_before_constructors_and_main(tmp_path, wine_env, compiler,
                                                         source, says):
    have, above = _rungs()
    sources = [source, "baseline_payload.c"]
    refused = _run(["wine", str(build(tmp_path, compiler, above, "early", sources))],
                   env=wine_env)
    # status 1 from the guard: an illegal instruction would be 0xC000001D
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout == ""  # neither the constructor nor main ran
    lines = _own(refused.stderr)
    assert len(lines) == 1 and lines[0].startswith("early: this CPU lacks "), lines
    assert LACKS[above] in lines[0].split("requires")[0], lines
    runs = _run(["wine", str(build(tmp_path, compiler, have, "early", sources))],
                env=wine_env)
    assert runs.returncode == 0, runs.stdout + runs.stderr
    assert runs.stdout.splitlines() == [f"{says} 523776.0", "main"]


@pytest.mark.parametrize("compiler", sorted(COMPILERS))
def test_dll_guard_refuses_the_load_and_the_loader_says_so(tmp_path, wine_env, compiler):
    have, above = _rungs()
    cc = _require(compiler)
    loader = tmp_path / "load_dll.exe"
    c = _run([*cc, "-std=c11", "-O2", str(HERE / "load_dll.c"), "-o", str(loader)])
    assert c.returncode == 0, c.stderr
    sources = ["guarded_dll.c", "baseline_payload.c"]
    refused_dll = build(tmp_path, compiler, above, "guarded", sources, shared=True)
    refused = _run(["wine", str(loader), str(refused_dll)], env=wine_env)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert refused.stdout.splitlines() == [f"LoadLibrary failed: error {ERROR_DLL_INIT_FAILED}"]
    lines = _own(refused.stderr)
    assert len(lines) == 1 and LACKS[above] in lines[0].split("requires")[0], refused.stderr
    # linked against the DLL: the loader does not start the program (wine's status: 66)
    user = refused_dll.parent / "use_dll.exe"
    c = _run([*cc, "-std=c11", "-O2", str(HERE / "use_dll.c"), str(refused_dll), "-o", str(user)])
    assert c.returncode == 0, c.stderr
    linked = _run(["wine", str(user)], env=wine_env)
    assert linked.returncode != 0 and linked.stdout == "", linked.stdout + linked.stderr
    assert any(line.startswith("guarded: this CPU lacks ") for line in _own(linked.stderr))
    loads = _run(["wine", str(loader),
                  str(build(tmp_path, compiler, have, "guarded", sources, shared=True))],
                 env=wine_env)
    assert loads.returncode == 0, loads.stdout + loads.stderr
    assert loads.stdout.splitlines() == ["DllMain 523776.0", "payload 523776.0"]
    assert "guarded:" not in loads.stderr


# What the runtime's objects (detection, env parsing, report, a DLL's guard)
# may call on Windows: the C standard library and Win32, no POSIX (write,
# read, open: an msvcrt compatibility name at best). mingw-w64's stdlib.h
# maps C's _Exit to the Microsoft C runtime's own _exit.
ALLOWED_CALLS = {"_exit", "getenv", "strcmp", "strlen", "strncmp", "memcpy", "memset", "snprintf",
                 "vsnprintf", "__mingw_vsnprintf", "__mingw_snprintf", "__stdio_common_vsprintf",
                 "_Exit", "__imp_GetStdHandle", "__imp_WriteFile", "DllMainCRTStartup"}


@pytest.mark.parametrize("shared", [False, True], ids=["program", "dll"])
@pytest.mark.parametrize("compiler", sorted(COMPILERS))
def test_windows_runtime_calls_no_posix_function(tmp_path, compiler, shared):
    cc = _require(compiler)
    r = _run(["python3", str(DISPATCHGEN), "meson", "--name", "noposix", "--outdir", str(tmp_path),
              "--cc", " ".join(cc), "--cpu-baseline", "min", "--cpu-dispatch", "none",
              *(["--shared-library"] if shared else [])])
    assert r.returncode == 0, r.stderr
    _, srcs, _, cargs = r.stdout.splitlines()[0].split("\t")
    objects = []
    for src in srcs.split():
        obj = tmp_path / f"{Path(src).name}.o"
        c = _run([*cc, "-std=c11", "-O2", *cargs.split(), "-c", src, "-o", str(obj)])
        assert c.returncode == 0, c.stderr
        objects.append(str(obj))
    nm = _run(["x86_64-w64-mingw32-nm", "-u", *objects])
    assert nm.returncode == 0, nm.stderr
    calls = {line.split()[-1] for line in nm.stdout.splitlines()
             if line.strip() and not line.endswith(":")}
    own = {c for c in calls if c.startswith("dispatch_") or c.startswith("dispatch__")}
    assert calls - own <= ALLOWED_CALLS, sorted(calls - own - ALLOWED_CALLS)
