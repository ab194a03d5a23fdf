"""The toolkit's CPU runtime (tools/dispatchgen/dispatchkit/cpu) compiled by a
C compiler alone, with a main of the test's: no meson, no configure. The two
headers configure would write are stood in by what the runtime reads of them:
the feature table (dispatchkit.ctable's rendering) and the four configuration
macros of _cpu_dispatch.h.

Used by the tests of the runtime's C (test_cpu_runtime_c.py,
test_cpu_recorded.py), of its syntax on other architectures
(test_cpu_crosscheck.py), of its env parsing (toolkit/test_cpu_env_scale.py,
toolkit/test_hostile_input.py) and of the CPU-feature recipe
(test_contributing_recipes.py, on a scratch copy's toolkit)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

TOOLKIT = Path(__file__).resolve().parents[1] / "tools" / "dispatchgen"
if str(TOOLKIT) not in sys.path:
    sys.path.insert(0, str(TOOLKIT))

CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
SOURCES = ("cpu_features.c", "cpu_detect.c", "cpu_dispatch_trace.c")


def write_headers(root: Path, baseline: str = "", dispatch: str = "",
                  table: str | None = None) -> Path:
    """root/dispatch/ with the feature table and _cpu_dispatch.h for a build
    of that baseline and dispatch list (feature names, space-separated; no
    per-target calls); table: another toolkit's rendering (a scratch copy's),
    else this checkout's. Returns root, the directory to put on -I."""
    from dispatchkit import ctable

    (root / "dispatch").mkdir(parents=True, exist_ok=True)
    (root / "dispatch" / ctable.HEADER_NAME).write_text(ctable.render() if table is None else table)
    (root / "dispatch" / "_cpu_dispatch.h").write_text(
        f'#define DISPATCH_WITH_CPU_BASELINE "{baseline}"\n'
        f'#define DISPATCH_WITH_CPU_DISPATCH "{dispatch}"\n'
        "#define DISPATCH_WITH_CPU_BASELINE_CALL(MACRO, ...)\n"
        "#define DISPATCH_WITH_CPU_DISPATCH_CALL(MACRO, ...)\n")
    return root


def include_flags(root: Path, toolkit: Path = TOOLKIT) -> list[str]:
    """-I for write_headers' root, the toolkit's public headers and its cpu/."""
    kit = toolkit / "dispatchkit"
    return [f"-I{root}", f"-I{kit / 'include'}", f"-I{kit / 'cpu'}"]


def sources(toolkit: Path = TOOLKIT) -> list[str]:
    return [str(toolkit / "dispatchkit" / "cpu" / name) for name in SOURCES]


def compile_program(cc: str, root: Path, main: Path, exe: Path, *flags: str,
                    toolkit: Path = TOOLKIT, timeout: int = 300) -> Path:
    """exe: the runtime and main, C11, warnings as errors, with flags (-O2,
    -static, ...) before the rest; a failed compile fails the test with the
    compiler's message. Run it with _cross.GUEST_ENV: no DISPATCH_*
    setting of this process, no sanitizer preload."""
    cmd = [cc, *flags, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread",
           *include_flags(root, toolkit), *sources(toolkit), str(main), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return exe

