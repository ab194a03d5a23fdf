#!/usr/bin/env python3
"""Validate the meson option cuda-arch against this nvcc; print the gencode flags.

    python3 tools/cuda_arch.py NVCC VALUE

VALUE is what `-Dcuda-arch=` got. Empty or "default": the GPUs this machine
has, as `nvidia-smi --query-gpu=compute_cap` lists them (SASS for each, PTX
of the highest), the way torch's extension builds detect theirs; where no GPU
is seen (no nvidia-smi, or it fails or lists none), PTX of the oldest default
architecture only (Note [PTX where no GPU is seen]). "all": the
full list, for release wheels (SASS for sm_75 sm_80 sm_86 sm_89 sm_90, and
sm_100 sm_120 where this nvcc has them, plus PTX of the highest). Else names
separated by commas, spaces or semicolons, as TORCH_CUDA_ARCH_LIST spells
them: "sm_80", "8.0" or "80" for machine code, "compute_90" for PTX only, a
"+PTX" suffix ("9.0+PTX") for both.
Output, one "key<TAB>value" per line: `flags` (nvcc's --generate-code flags),
`sass` and `ptx` (the architectures, space separated), `why` (how they were
chosen, for `python -m dispatch`) and `libdir` (where this nvcc's
libcudart_static.a is). A bad value exits 1 with one line quoting it.
Standard library only (run by meson at configure).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

DEFAULT_SASS = (75, 80, 86, 89, 90)
DEFAULT_IF_AVAILABLE = (100, 120)


def nvcc_codes(nvcc: str) -> set:
    """The sm_XY numbers this nvcc can emit machine code for (--list-gpu-code)."""
    out = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, check=True).stdout
    return {int(m) for m in re.findall(r"\bsm_(\d+)\b", out)}


def _number(token: str, text: str) -> int:
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(?:\.(\d))?", token)
    if not m:
        raise ValueError(f"cuda-arch: {token!r} (in {text!r}) is not an architecture "
                         "(expected e.g. sm_80, 8.0, 80, compute_90 or 9.0+PTX)")
    return int(m.group(1)) * 10 + int(m.group(2)) if m.group(2) is not None else int(m.group(1))


def parse(text: str, available: set) -> tuple:
    """(sass, ptx): sorted lists of sm numbers; ValueError naming the bad token."""
    text = text.strip()
    if text.lower() in ("", "default", "all"):
        sass = [a for a in DEFAULT_SASS if a in available]
        sass += [a for a in DEFAULT_IF_AVAILABLE if a in available]
        missing = [a for a in DEFAULT_SASS if a not in available]
        if missing:
            raise ValueError(f"cuda-arch: the default list needs sm_{missing[0]}, which this nvcc "
                             f"cannot build (it has: {' '.join(f'sm_{a}' for a in sorted(available))})")
        return sass, [max(sass)]
    sass, ptx = set(), set()
    for token in re.split(r"[\s,;]+", text):
        if not token:
            continue
        low = token.lower()
        both = low.endswith("+ptx")
        core = low[:-4] if both else low
        num = _number(core, text)
        if num not in available:
            raise ValueError(f"cuda-arch: {token!r} (in {text!r}) is not an architecture this nvcc "
                             f"can build (it has: {' '.join(f'sm_{a}' for a in sorted(available))})")
        if core.startswith("compute_"):
            ptx.add(num)
        else:
            sass.add(num)
            if both:
                ptx.add(num)
    if not sass and not ptx:
        raise ValueError(f"cuda-arch: {text!r} names no architecture")
    return sorted(sass), sorted(ptx)


# Note [PTX where no GPU is seen]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Machine code (SASS) runs only on its own architecture family, PTX on every
# GPU of its version or newer, compiled by the driver when the module first
# loads and kept in the driver's cache on disk (~/.nv/ComputeCache). A build
# that sees no GPU cannot know which GPU will run it, and SASS for all eight
# default architectures cost 30 minutes of nvcc on 2 cores (issue 34); PTX of
# the oldest one costs one front-end pass (no ptxas) and still serves every GPU
# from sm_75 up. The price moves to the first CUDA calls on each machine (the
# driver compiles the PTX of each shard a process uses, once, Note [CUDA
# shards] in sources/cuda/cuda_device_types.cuh); `-Dcuda-arch=all` builds the
# full list for release wheels, and a build that sees a GPU gets its SASS.

def oldest_ptx(available: set) -> int:
    """The architecture whose PTX the default build carries where no GPU is
    seen: the oldest default one this nvcc can build (else its oldest)."""
    usable = [a for a in DEFAULT_SASS if a in available]
    if usable:
        return usable[0]
    if not available:
        raise ValueError("cuda-arch: this nvcc lists no architecture (nvcc --list-gpu-code)")
    return min(available)


def detect(smi: str | None = None) -> tuple:
    """(sm numbers of this machine's GPUs, sorted, unique; what was seen), from
    `nvidia-smi --query-gpu=compute_cap --format=csv,noheader` ("9.0" a line).
    No GPU seen gives ([], the reason)."""
    smi = smi or shutil.which("nvidia-smi")
    if not smi:
        return [], "nvidia-smi is not on PATH"
    try:
        proc = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], f"nvidia-smi failed: {e}"
    if proc.returncode != 0:
        first = (proc.stderr or proc.stdout).strip().splitlines()
        return [], f"nvidia-smi failed (exit {proc.returncode}){': ' + first[0] if first else ''}"
    caps = set()
    for line in proc.stdout.splitlines():
        m = re.fullmatch(r"\s*(\d+)\.(\d)\s*", line)
        if m:
            caps.add(int(m.group(1)) * 10 + int(m.group(2)))
    if not caps:
        return [], "nvidia-smi lists no GPU"
    return sorted(caps), " ".join(f"{c // 10}.{c % 10}" for c in sorted(caps))


def choose(text: str, available: set, smi: str | None = None) -> tuple:
    """(sass, ptx, why) for the option's value: Note at the top of this file."""
    low = text.strip().lower()
    if low == "all":
        sass, ptx = parse("default", available)
        return sass, ptx, "-Dcuda-arch=all: every default architecture (release wheels)"
    if low not in ("", "default"):
        sass, ptx = parse(text, available)
        return sass, ptx, f"-Dcuda-arch={text.strip()}"
    caps, seen = detect(smi)
    if not caps:
        return [], [oldest_ptx(available)], (
            f"no GPU seen at configure ({seen}): PTX for the oldest default architecture, "
            "which every GPU from it up runs through the driver's JIT (cached after its first "
            "use); -Dcuda-arch=all for machine code of every default architecture")
    sass = [c for c in caps if c in available]
    # PTX of the highest SASS; for a GPU newer than this nvcc, PTX of the
    # highest architecture below it that nvcc has, for the driver to compile
    newer = [c for c in caps if c not in available]
    below = [a for a in available if newer and a < min(newer)]
    ptx = [max(below)] if below else [max(sass)] if sass else []
    if not sass and not ptx:
        return [], [oldest_ptx(available)], (
            f"this machine's GPUs ({seen}) are not buildable here: PTX for the oldest default "
            "architecture (the driver's JIT compiles it); -Dcuda-arch=all for every default one")
    return sass, ptx, (f"the GPUs of the machine that built it (nvidia-smi: {seen}); "
                       "-Dcuda-arch=all for every default architecture")


def cuda_libdir(nvcc: str) -> str:
    """The folder of this nvcc's libcudart_static.a (its --dryrun's -L paths)."""
    proc = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                          capture_output=True, text=True)
    for d in re.findall(r'-L"?([^"\s]+)"?', proc.stdout + proc.stderr):
        if os.path.exists(os.path.join(d, "libcudart_static.a")):
            return os.path.normpath(d)
    return ""


def gencode_flags(sass: list, ptx: list) -> list:
    # nvcc's long name for -gencode: ccache (4.7) reads any option starting
    # with -g as debug information and then hashes the build folder, so the
    # short name kept two clones' nvcc objects apart (docs/toolkit.md,
    # "Builds that cache and distribute").
    flags = [f"--generate-code=arch=compute_{a},code=sm_{a}" for a in sass]
    flags += [f"--generate-code=arch=compute_{a},code=compute_{a}" for a in ptx]
    return flags


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: cuda_arch.py NVCC VALUE", file=sys.stderr)
        return 2
    nvcc, value = argv
    try:
        available = nvcc_codes(nvcc)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"cuda-arch: cannot ask {nvcc} for its architectures: {e}", file=sys.stderr)
        return 1
    try:
        sass, ptx, why = choose(value, available)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    libdir = cuda_libdir(nvcc)
    if not libdir:
        print(f"cuda-arch: {nvcc} names no folder with libcudart_static.a (nvcc --dryrun)",
              file=sys.stderr)
        return 1
    print("flags\t" + " ".join(gencode_flags(sass, ptx)))
    print("sass\t" + " ".join(f"sm_{a}" for a in sass))
    print("ptx\t" + " ".join(f"compute_{a}" for a in ptx))
    print("why\t" + why)
    print("libdir\t" + libdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
