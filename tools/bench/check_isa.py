"""Check that each compiled kernel variant uses its target's instruction set.

    python tools/bench/check_isa.py BUILD_DIR [--json]

Disassembles (objdump -d) every ``lib<source>_dispatch_c_<TARGET>.a`` the
kernels build left in BUILD_DIR/sources/kernels and counts what the target
allows: 512-bit registers (zmm) for AVX512_SKX and AVX512_SPR, float16
arithmetic (vaddph, ...) for AVX512_SPR only, 256-bit (ymm) and FMA for
FMA3__AVX2, SSE4.1 instructions (blendv, pmulld, ...) for SSE42, and none of
them for the baseline. A variant breaks the rule when it uses registers wider
than its target's (it would fault on a CPU that lacks them) or when it uses
nothing of its target's ISA (the dispatch would buy nothing).

It counts gathers (vpgatherdd and its kin): a source whose loops read
consecutive elements should have none (Note [Clang gathers the lanes] in
sources/kernels/int_reduce.dispatch.c).

It also counts the short loops (a backward branch at most 32 bytes past its
target, with no ret or jmp between) and those of them that straddle a 32-byte
block: Note [Loops on a fetch window] in sources/kernels/meson.build.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

LIB = re.compile(r"lib(?P<source>\w+)_dispatch_c_(?P<target>\w+)\.a$")
FP16 = re.compile(r"\bv(add|sub|mul|div|max|min|sqrt|cmp)ph\b")
SSE41 = re.compile(r"\b(v?p?blendv|pmulld|pminsd|pmaxsd|pminsq|ptest|roundp|pcmpeqq|pmovsx)")
INSN = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", re.M)
BRANCH_TARGET = re.compile(r"([0-9a-f]+) <")
GATHER = re.compile(r"\bv(p)?gather")
SHORT_LOOP = 32  # bytes: Note [Loops on a fetch window]


@dataclass
class Variant:
    source: str
    target: str
    zmm: int
    ymm: int
    fma: int
    sse41: int
    fp16: int = 0  # AVX512-FP16 arithmetic (v...ph, vcvtph2ps/vcvtps2ph count as F16C)
    short_loops: int = 0  # loops of at most SHORT_LOOP bytes
    split_loops: int = 0  # of those, the ones that straddle a SHORT_LOOP-byte block
    gathers: int = 0  # vector gathers (vpgatherdd, vgatherqpd, ...)

    def problems(self) -> list:
        """What is wrong with this variant's code ([] when nothing)."""
        t = self.target
        out = []
        if not t.startswith("AVX512") and self.zmm:
            out.append(f"uses zmm registers ({self.zmm}) without AVX-512")
        if t != "AVX512_SPR" and self.fp16:
            out.append(f"uses AVX512-FP16 instructions ({self.fp16}) below AVX512_SPR")
        if t == "AVX512_SPR" and not self.fp16:
            out.append("uses no AVX512-FP16 instruction")
        if t in ("SSE42", "baseline") and (self.ymm or self.fma):
            out.append(f"uses ymm/FMA ({self.ymm}/{self.fma}) without AVX2")
        if t == "baseline" and self.sse41:
            out.append(f"uses SSE4.1 instructions ({self.sse41}) in the baseline")
        if t.startswith("AVX512") and not self.zmm:
            out.append("uses no zmm register")
        if t == "FMA3__AVX2" and not self.ymm:
            out.append("uses no ymm register")
        return out


def short_loops(asm: str) -> tuple:
    """(short loops, those straddling a block) in objdump -d output. A loop
    is a conditional branch back at most SHORT_LOOP bytes with no ret or jmp
    between its target and it; objdump's addresses are section offsets, and
    the sections' alignment (at least SHORT_LOOP where loops are aligned)
    keeps their place in a block at link time."""
    insns = [(int(a, 16), op, arg) for a, op, arg in INSN.findall(asm)]
    short = split = 0
    for i in range(len(insns) - 1):
        at, op, arg = insns[i]
        m = BRANCH_TARGET.match(arg)
        if not op.startswith("j") or op.startswith("jmp") or not m:
            continue
        top, end = int(m[1], 16), insns[i + 1][0]
        if not top < at or end - top > SHORT_LOOP or end < at:
            continue
        j = i
        while j > 0 and top <= insns[j - 1][0] < insns[j][0]:  # not past a section start
            j -= 1
        if any(o.startswith(("ret", "jmp")) for _, o, _ in insns[j:i]):
            continue
        short += 1
        split += top // SHORT_LOOP != (end - 1) // SHORT_LOOP
    return short, split


def disassemble(lib: Path) -> str:
    """objdump -d of one static library, without the raw bytes."""
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], check=True,
                          capture_output=True, text=True).stdout


def scan(build_dir: Path) -> list:
    """Every kernel variant of the build, with its instruction counts."""
    found = []
    for lib in sorted((build_dir / "sources" / "kernels").glob("lib*_dispatch_c_*.a")):
        m = LIB.search(lib.name)
        if not m:
            continue
        asm = disassemble(lib)
        found.append(Variant(m["source"], m["target"], asm.count("%zmm"), asm.count("%ymm"),
                             len(re.findall(r"\bvfn?m(add|sub)", asm)), len(SSE41.findall(asm)),
                             len(FP16.findall(asm)), *short_loops(asm),
                             gathers=len(GATHER.findall(asm))))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    variants = scan(args.build_dir)
    if not variants:
        print(f"no kernel variants under {args.build_dir}/sources/kernels", file=sys.stderr)
        return 1
    bad = 0
    if args.json:
        print(json.dumps([{**asdict(v), "problems": v.problems()} for v in variants], indent=1))
    for v in variants:
        bad += bool(v.problems())
        if not args.json:
            status = "; ".join(v.problems()) or "ok"
            print(f"{v.source:10s} {v.target:11s} zmm={v.zmm:<5d} ymm={v.ymm:<5d} "
                  f"fma={v.fma:<4d} sse4.1={v.sse41:<4d} fp16={v.fp16:<4d} "
                  f"gathers={v.gathers:<4d} split loops={v.split_loops}/{v.short_loops} "
                  f"{status}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
