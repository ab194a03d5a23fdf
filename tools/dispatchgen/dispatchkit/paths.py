"""Where the toolkit's own files are: one folder, the package itself.

The same layout serves a checkout (tools/dispatchgen/dispatchkit), an
installed wheel (site-packages/dispatchkit) and a vendored subproject
(subprojects/dispatchgen/dispatchkit): headers under include/, the CPU runtime
sources under cpu/, the feature checks under checks/, dispatchgen.pc under
lib/pkgconfig/, the CMake package under cmake/.
"""

from __future__ import annotations

from pathlib import Path

PKG = Path(__file__).resolve().parent
INCLUDE = PKG / "include"
CPU = PKG / "cpu"
PKGCONFIG = PKG / "lib" / "pkgconfig"
CMAKE = PKG / "cmake"  # dispatchgenConfig.cmake: find_package(dispatchgen)

# The CPU runtime a build compiles WITHOUT its baseline flags (Note [Baseline
# guard]): detection, the env overrides, the dispatch trace; with a Python
# module, also its guard (Note [Module guard] in cpu/cpu_module_guard.c); with
# a program (`--name`), the program's (Note [Program guard] in
# cpu/cpu_program_guard.c).
RUNTIME_SOURCES = ("cpu_features.c", "cpu_detect.c", "cpu_dispatch_trace.c")
MODULE_GUARD = "cpu_module_guard.c"
PROGRAM_GUARD = "cpu_program_guard.c"
