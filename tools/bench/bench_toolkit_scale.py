#!/usr/bin/env python3
"""Time the toolkit on each input it reads, doubled from 1K to 256K items
(issue 45), and print each doubling's time ratio: about 2 for a linear cost,
about 4 for a quadratic one. Each run is the CLI in a child process, as a
build runs it; the time includes starting Python (about 0.1 s).

    python3 tools/bench/bench_toolkit_scale.py [--max 262144] [--input NAME ...]

Inputs (--input, default all):
  sources   a variants file's `sources =` list (the files do not exist: the
            run ends at the first missing one, after the whole file is read)
  entries   entry points of a variants file, in two sections (header written)
  sections  sections of a variants file, each a target this build skips
  targets   names in one `@targets` line (`dispatchgen targets`)
  dispatch  dispatchable sources, each with its @targets (`meson-sources`)
  option    tokens of a --cpu-dispatch value (`report`, warm probe cache)
  cache     entries of the probe cache file (`report`, reading it)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List

TOOLS = Path(__file__).resolve().parents[1] / "dispatchgen"
# 18 x86 features this build does not dispatch (--cpu-dispatch avx2): their
# subsets name 262,143 distinct targets, every one skipped.
SKIPPED = ["XOP", "FMA4", "AVX512F", "AVX512CD", "AVX512_SKX", "AVX512BW", "AVX512VL",
           "AVX512DQ", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "F16C", "FMA3",
           "AVX512_SPR", "AVX512FP16", "AVX512VNNI", "AVX512IFMA", "AVX512VBMI"]


def _run(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ARGS.toolkit.resolve())}
    return subprocess.run([sys.executable, "-m", "dispatchkit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def _variants(work: Path, text: str) -> List[str]:
    (work / "v.ini").write_text(text)
    return ["meson-variants", "v.ini", "--config", "build/dispatch_config.json",
            "--outdir", "out"]


def sources(work: Path, n: int) -> List[str]:
    return _variants(work, "[library]\nname = mylib\n[avx2]\nsources = "
                     + " ".join(f"f{i}.c" for i in range(n)) + "\nsum = s\n")


def entries(work: Path, n: int) -> List[str]:
    (work / "f.c").write_text("")
    body = "".join(f"e{i} = e{i}_x\n" for i in range(n))
    return _variants(work, "[library]\nname = mylib\n[avx2]\nsources = f.c\n" + body
                     + "[baseline]\nsources = f.c\n" + body)


def sections(work: Path, n: int) -> List[str]:
    (work / "f.c").write_text("")
    names = ("(" + " ".join(f for k, f in enumerate(SKIPPED) if i >> k & 1) + ")"
             for i in range(1, n + 1))
    return _variants(work, "[library]\nname = mylib\n"
                     + "".join(f"[{s}]\nsources = f.c\nsum = s\n" for s in names))


def targets(work: Path, n: int) -> List[str]:
    words = ["avx2", "sse41", "(avx2 fma3)", "xop"]
    (work / "t.c").write_text("/*@targets " + " ".join(words[i % 4] for i in range(n))
                              + " */\n")
    return ["targets", "--config", "build/dispatch_config.json", "t.c"]


def dispatch(work: Path, n: int) -> List[str]:
    src = work / f"d{n}"  # short relative names: the list is one command line
    src.mkdir()
    for i in range(n):
        (src / f"{i}.c").write_text("/*@targets baseline avx2 (avx2 fma3) */\n")
    return ["meson-sources", "--config", "build/dispatch_config.json", "--outdir",
            f"out{n}", *(f"d{n}/{i}.c" for i in range(n))]


def option(work: Path, n: int) -> List[str]:
    words = ["avx2", "-avx512f", "sse41", "-xop"]
    return ["report", "--cc", ARGS.cc, "--cache-dir", "cache", "--cpu-dispatch",
            " ".join(words[i % 4] for i in range(n))]


def cache(work: Path, n: int) -> List[str]:
    (path,) = (work / "cache").glob("probe-*.json")
    data = json.loads(path.read_text())
    data = {k: v for k, v in data.items() if not k.startswith("compile 0")}
    data.update({f"compile 0{i:031x}": "" for i in range(n)})
    path.write_text(json.dumps(data))
    return ["report", "--cc", ARGS.cc, "--cache-dir", "cache"]


INPUTS: Dict[str, Callable[[Path, int], List[str]]] = {
    "sources": sources, "entries": entries, "sections": sections, "targets": targets,
    "dispatch": dispatch, "option": option, "cache": cache}


def main() -> int:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=256 * 1024)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--input", action="append", choices=list(INPUTS))
    ap.add_argument("--toolkit", type=Path, default=TOOLS,
                    help="the tools/dispatchgen folder to time (default: this checkout's); "
                         "an older checkout's gives the before ratios")
    ARGS = ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        proc = _run(["configure", "--cc", ns.cc, "--cpu-dispatch", "avx2", "--cache-dir",
                     "cache", "--outdir", "build"], work)
        if proc.returncode:
            sys.exit(f"configure failed: {proc.stderr.strip()}")
        for name in ns.input or list(INPUTS):
            n, last = 1024, None
            print(f"{name:>8} {'items':>8} {'seconds':>8} {'ratio':>6}", flush=True)
            while n <= ns.max:
                args = INPUTS[name](work, n)
                start = time.perf_counter()
                try:
                    proc = _run(args, work)
                except OSError as exc:  # E2BIG: the list is longer than one command line
                    print(f"{'':>8} {n:>8} {exc.strerror}", flush=True)
                    break
                took = time.perf_counter() - start
                if "Traceback" in proc.stderr:
                    sys.exit(f"{name} at {n}: {proc.stderr}")
                ratio = f"{took / last:6.2f}" if last else ""
                print(f"{'':>8} {n:>8} {took:8.2f} {ratio:>6}", flush=True)
                last, n = took, n * 2
    return 0


ARGS: argparse.Namespace


if __name__ == "__main__":
    sys.exit(main())
