"""MSVC-style compilers: Microsoft's `cl` and LLVM's `clang-cl`.

Note [MSVC-style compilers]: both take cl's command line (`/c`, `/Fo<obj>`,
`/WX`, `/EP`; `-D` and `-I` are accepted as `/D` and `/I`), write `.obj`
objects, and have no `-dM -E`. They are told from gcc-style compilers by the
name of the compiler in --cc (style_of): the first word that is not a launcher
(ccache, sccache), its file name without `.exe`: `cl` is family "msvc",
`clang-cl` (or `clang-cl-19`, or any command with `--driver-mode=cl`) is
family "clang-cl". Everything else is gcc-style, as before.

  - Predefined macros: a generated source names every macro the toolkit reads
    (macro_source) and is preprocessed with /EP; cl's _M_X64, _M_IX86 and
    _M_ARM64 stand for __x86_64__, __i386__ and __aarch64__ (gnu_equivalents),
    so the target architecture comes from `--target=`, from which cl (its
    directory picks x64, x86 or arm64) or from `/arch`, whatever set them.
  - Feature flags, clang-cl: the same `-m` flags as clang (`-mavx2`,
    `-mavx512f`, ...). clang-cl takes them directly, one per feature, which is
    exact; `/arch:AVX2` would add FMA, BMI and more at once.
  - Feature flags, cl: cl has no per-feature flag and compiles every
    intrinsic whatever `/arch` says; `/arch` only chooses which instructions
    cl may emit for plain C. So a target gets the highest `/arch` whose
    instructions it guarantees (cl_arch_flags): /arch:AVX512 needs AVX512F,
    AVX512CD, AVX512BW, AVX512DQ and AVX512VL (AVX512_SKX); /arch:AVX2 needs
    AVX2 and FMA3 (F16C comes with both in the tables); /arch:AVX needs AVX;
    on 32-bit x86 /arch:SSE2 needs SSE2 (x64 always has it). Anything less
    gets no flag: SSE4.2, POPCNT, BMI are used through their intrinsics
    only. F16C, FMA3 and BMI have no flag of their own (F16C and FMA3 imply
    AVX in the tables: /arch:AVX).
    cl on arm64 has no per-feature flags the toolkit knows: its features
    beyond the baseline are unsupported, with that reason.
  - Policies: $maxopt is /O2, $werror /WX; $autovec adds nothing (/O2
    vectorizes already).
  - Exports: a `.pyd` exports what is declared `__declspec(dllexport)`, and
    Python's PyMODINIT_FUNC is that on Windows: no version script (Note
    [Exports] in meson_plan.py is for ELF), so the runtime's link-args field
    is empty. Meson and setuptools run the linker (link.exe, lld-link)
    themselves and pass it link arguments as they are: none needs cl's
    `/link` prefix, which only passes options through cl to the linker.
    Objects are `.obj` and static libraries `.lib`: meson and setuptools
    name them; the toolkit only names the probe's objects.
  - The CPU runtime uses C11's <stdatomic.h>, which cl has from Visual Studio
    2022 17.5 on, behind `/experimental:c11atomics` and with `/std:c11`:
    the runtime's library gets both (CL_RUNTIME_FLAGS; meson's c_std=c11
    says /std:c11 too, setuptools says nothing). clang-cl has its own.
  - Assembly (.S) is gcc's syntax, which neither assembles: a variants file's
    `.S` sources need their C alternative (`-Dasm=false` in the examples).

On a POSIX host clang-cl reads `/work/x.c` as an option: sources follow
`--`, which clang-cl takes and cl (which runs on Windows only) never needs.
"""

from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

LAUNCHERS = ("ccache", "sccache")
MSVC, CLANG_CL = "msvc", "clang-cl"
FAMILIES = (MSVC, CLANG_CL)
MARK = "DISPATCHGEN_MACRO"

# What the toolkit reads besides the feature tables' own macros.
_IDENT_MACROS = ("_MSC_VER", "_MSC_FULL_VER", "__clang__", "__clang_major__",
                 "__clang_minor__", "__clang_patchlevel__", "_M_X64", "_M_AMD64", "_M_IX86",
                 "_M_IX86_FP", "_M_ARM64", "_M_ARM64EC", "_M_ARM", "_WIN32", "_WIN64")
# cl's architecture macro -> the gcc-style one the tables name.
_GNU_EQUIVALENT = (("_M_ARM64", "__aarch64__"), ("_M_X64", "__x86_64__"),
                   ("_M_IX86", "__i386__"), ("_M_ARM", "__arm__"))


def style_of(argv: Sequence[str]) -> str:
    """"msvc" (cl), "clang-cl", or "" (gcc-style), from the compiler's name."""
    if "--driver-mode=cl" in argv:
        return CLANG_CL
    for word in argv:
        name = os.path.basename(word.replace("\\", "/")).lower()
        if name.endswith(".exe"):
            name = name[:-4]
        if name in LAUNCHERS:
            continue
        if name == "cl":
            return MSVC
        if re.fullmatch(r"clang-cl(-\d+(\.\d+)*)?", name):
            return CLANG_CL
        return ""
    return ""


def macro_source(names: Iterable[str]) -> str:
    """A source whose /EP output is one `DISPATCHGEN_MACRO "name" value` line
    per defined macro of ``names`` (the name as a string literal, so it is
    not expanded)."""
    return "".join(f'#ifdef {n}\n{MARK} "{n}" {n}\n#endif\n' for n in sorted(set(names)))


def parse_macros(output: str) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for line in output.splitlines():
        parts = line.strip().split(None, 2)
        if len(parts) >= 2 and parts[0] == MARK and len(parts[1]) > 2:
            found[parts[1].strip('"')] = parts[2].strip() if len(parts) > 2 else ""
    return gnu_equivalents(found)


def gnu_equivalents(found: Dict[str, str]) -> Dict[str, str]:
    """Add the gcc-style architecture macro for cl's (clang-cl has both)."""
    out = dict(found)
    if "_M_ARM64EC" in out:  # x64 code that links with arm64: not an x86_64 target here
        return out
    for ms, gnu in _GNU_EQUIVALENT:
        if ms in out:
            out.setdefault(gnu, "1")
            break
    return out


def wanted_macros(tables) -> List[str]:
    """Every macro the feature tables (ARCHES' values) and the toolkit read."""
    names = set(_IDENT_MACROS) | {gnu for _, gnu in _GNU_EQUIVALENT}
    for arch in tables:
        names.update(arch.macros, arch.not_macros)
        for f in arch.features:
            names.update(f.macros)
    return sorted(names)


def family_and_version(macros: Dict[str, str]) -> Tuple[str, str]:
    if "__clang__" in macros:
        return CLANG_CL, ".".join(macros.get(k, "0") for k in
                                  ("__clang_major__", "__clang_minor__", "__clang_patchlevel__"))
    return MSVC, macros.get("_MSC_FULL_VER") or macros.get("_MSC_VER", "")


def inputs(style: str, src: str) -> List[str]:
    """A source file on the command line (see the module's last paragraph)."""
    return ["--", src] if style == CLANG_CL else [src]


def compile_command(argv: Sequence[str], style: str, flags: Sequence[str], src: str,
                    obj: str) -> List[str]:
    return [*argv, *flags, "/nologo", "/WX", "/c", f"/Fo{obj}", *inputs(style, src)]


def preprocess_command(argv: Sequence[str], style: str, flags: Sequence[str],
                       src: str) -> List[str]:
    return [*argv, *flags, "/nologo", "/EP", *inputs(style, src)]


# -- cl's /arch ---------------------------------------------------------------

_X86_AVX512 = frozenset({"AVX512F", "AVX512CD", "AVX512BW", "AVX512DQ", "AVX512VL"})
_CL_LEVELS: Dict[str, Tuple[Tuple[str, FrozenSet[str]], ...]] = {
    # highest first: the flag, and what the features must hold for it
    "x86_64": (("/arch:AVX512", _X86_AVX512 | {"AVX2", "FMA3"}),
               ("/arch:AVX2", frozenset({"AVX2", "FMA3"})),
               ("/arch:AVX", frozenset({"AVX"}))),
    "x86": (("/arch:AVX512", _X86_AVX512 | {"AVX2", "FMA3"}),
            ("/arch:AVX2", frozenset({"AVX2", "FMA3"})),
            ("/arch:AVX", frozenset({"AVX"})),
            ("/arch:SSE2", frozenset({"SSE2"}))),
}


def cl_arch_flags(arch, features: Iterable[str]) -> Optional[List[str]]:
    """cl's flags for code that may use ``features`` (and all they imply):
    the highest /arch they guarantee, or [] below the lowest. None when cl
    has no flags for this architecture and a feature beyond its minimum is
    asked for."""
    closure = arch.closure(list(features))
    levels = _CL_LEVELS.get(arch.name)
    if levels is None:
        return [] if closure <= set(arch.closure(arch.minimum)) else None
    for flag, needs in levels:
        if needs <= closure:
            return [flag]
    return []


def cl_unsupported_reason(arch) -> str:
    return f"cl has no flag for it on {arch.name} (Note [MSVC-style compilers] in msvc.py)"


CL_RUNTIME_FLAGS = ["/std:c11", "/experimental:c11atomics"]
POLICY_FLAGS = {"$maxopt": ["/O2"], "$werror": ["/WX"], "$autovec": []}
