#!/usr/bin/env python3
"""Validate the meson option cuda-arch against this nvcc; print the gencode flags.

    python3 tools/cuda_arch.py NVCC VALUE

VALUE is what `-Dcuda-arch=` got: empty or "default" for the default list
(SASS for sm_75 sm_80 sm_86 sm_89 sm_90, and sm_100 sm_120 where this nvcc
has them, plus PTX of the highest), or names separated by commas, spaces or
semicolons, as TORCH_CUDA_ARCH_LIST spells them: "sm_80", "8.0" or "80" for
machine code, "compute_90" for PTX only, a "+PTX" suffix ("9.0+PTX") for both.
Output, one "key<TAB>value" per line: `flags` (the nvcc -gencode flags),
`sass` and `ptx` (the architectures, space separated). A bad value exits 1
with one line quoting it. Standard library only (run by meson at configure).
"""

from __future__ import annotations

import re
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
    if text.lower() in ("", "default"):
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


def gencode_flags(sass: list, ptx: list) -> list:
    flags = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in sass]
    flags += [f"-gencode=arch=compute_{a},code=compute_{a}" for a in ptx]
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
        sass, ptx = parse(value, available)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    print("flags\t" + " ".join(gencode_flags(sass, ptx)))
    print("sass\t" + " ".join(f"sm_{a}" for a in sass))
    print("ptx\t" + " ".join(f"compute_{a}" for a in ptx))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
