"""An x86-64 CPU of a lower level, stood in for by this one (bench_matrix's
--as-cpu): every library runs the loops it would pick on that CPU.

Each library reads its own switch once, when it is imported, so the
environment is set before the first import: ours
(DISPATCH_DISABLE_CPU_FEATURES), torch's ATen kernels (ATEN_CPU_CAPABILITY)
and the MKL under its dot (MKL_ENABLE_INSTRUCTIONS), NumPy's dispatched loops
(NPY_DISABLE_CPU_FEATURES) and the OpenBLAS under its dot
(OPENBLAS_CORETYPE). After the import, `confirm` asks each library what it
runs, so a switch a library ignored shows in the summary instead of a
comparison that is not what it says.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    flags: tuple  # /proc/cpuinfo flags a CPU of this level has
    env: dict
    ours_not: tuple  # substrings that must not be in dispatch.probe_target()
    torch: str  # torch.backends.cpu.get_cpu_capability() at this level
    numpy_off: str  # a NumPy feature group that must read False


LEVELS = {
    "avx2": Level(
        flags=("avx2", "fma", "f16c"),
        env={"DISPATCH_DISABLE_CPU_FEATURES": "AVX512F", "ATEN_CPU_CAPABILITY": "avx2",
             "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
             "OPENBLAS_CORETYPE": "Haswell"},
        ours_not=("AVX512",), torch="AVX2", numpy_off="X86_V4"),
    "sse4.2": Level(
        flags=("sse4_2", "popcnt"),
        env={"DISPATCH_DISABLE_CPU_FEATURES": "AVX", "ATEN_CPU_CAPABILITY": "default",
             "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
             "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
             "OPENBLAS_CORETYPE": "Nehalem"},
        ours_not=("AVX",), torch="DEFAULT", numpy_off="X86_V3"),
}


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def apply(name: str) -> str | None:
    """Sets the environment for level `name`; an error message if this
    machine cannot stand in for it (the caller exits with it)."""
    level = LEVELS[name]
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"--as-cpu {name}: an x86-64 level, and this machine is {platform.machine()}"
    missing = [f for f in level.flags if f not in cpu_flags()]
    if missing:
        return (f"--as-cpu {name}: this CPU lacks {' '.join(missing)}, so it cannot stand in "
                f"for a CPU that has them")
    os.environ.update(level.env)
    return None


def confirm(name: str, dispatch, torch, np) -> dict:
    """What each imported library says it runs, and whether that is level
    `name` (a library that ignored its switch is named, not hidden)."""
    level = LEVELS[name]
    seen = {"ours": dispatch.probe_target()}
    wrong = [] if not any(s in seen["ours"] for s in level.ours_not) else ["ours"]
    if torch is not None:
        seen["torch"] = torch.backends.cpu.get_cpu_capability()
        if seen["torch"] != level.torch:
            wrong.append("torch")
    if np is not None:
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as features
        except ImportError:  # NumPy 1.x
            from numpy.core._multiarray_umath import __cpu_features__ as features
        on = features.get(level.numpy_off)
        seen["numpy"] = f"{level.numpy_off} {'on' if on else 'off'}"
        if on:
            wrong.append("numpy")
    return {"level": name, "env": dict(level.env), "seen": seen, "not_at_level": wrong}
