"""Time `meson setup` of this repository and of a downstream project.

    python tools/bench/bench_configure.py            # 5 runs each
    python tools/bench/bench_configure.py -n 10 --ref /path/to/an/older/checkout

Three rows per tree (each run a new build dir, the min and median of N runs):
- repo cold: `meson setup` of the repository with an empty probe cache
  (a fresh DISPATCHGEN_CACHE_DIR per run, and CCACHE_DISABLE=1 so that a
  ccache in front of the compiler does not answer the probes);
- repo warm: the same, the probe cache filled by an untimed first setup;
- downstream warm: a generated project with 10 dispatchable sources built with
  docs/toolkit.md's snippet (tests/examples/hello/meson.build), dispatch as subproject.
--ref times the same rows for another checkout (e.g. `git worktree add /tmp/old
HEAD~1`), run in turn with this one so both see the same machine load.
The load average is printed: on a shared machine, quote medians with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[2]
SOURCE = """/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx */
#include "dispatch/cpu_dispatch.h"
#include "k{i}.dispatch.h"
int DISPATCH_CPU_DISPATCH_CURFX(k{i})(void);
int DISPATCH_CPU_DISPATCH_CURFX(k{i})(void) {{ return {i}; }}
"""


def downstream(repo: Path, where: Path, n: int = 10) -> Path:
    """A project with n sources, made from repo's example meson.build (the
    toolkit reached as tools/dispatchgen, a link to repo's copy)."""
    src = where / "down"
    src.mkdir(parents=True)
    (src / "tools").mkdir()
    (src / "tools" / "dispatchgen").symlink_to(repo / "tools" / "dispatchgen",
                                               target_is_directory=True)
    names = [f"k{i}.dispatch.c" for i in range(n)]
    for i, name in enumerate(names):
        (src / name).write_text(SOURCE.format(i=i))
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    example = repo / "tests" / "examples" / "hello"
    text = (example / "meson.build").read_text()
    if "files('hello.dispatch.c')" not in text:
        raise SystemExit(f"{example / 'meson.build'}: no files('hello.dispatch.c') to replace")
    text = text.replace("files('hello.dispatch.c')",
                        "files(" + ", ".join(f"'{x}'" for x in names) + ")")
    (src / "meson.build").write_text(text.split("executable('hello'", 1)[0])
    if (example / "meson_options.txt").exists():  # the example's options (cpu-baseline, ...)
        shutil.copy(example / "meson_options.txt", src / "meson_options.txt")
    return src


def setup_time(src: Path, build: Path, cache: Path, cold: bool = False) -> float:
    shutil.rmtree(build, ignore_errors=True)
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(cache)}
    if cold:  # a first configure on a new machine: ccache (meson's cc) knows nothing
        env["CCACHE_DISABLE"] = "1"
    t0 = time.perf_counter()
    proc = subprocess.run(["meson", "setup", str(build), str(src)], capture_output=True,
                          text=True, env=env)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"meson setup {src} failed:\n{proc.stdout[-2000:]}{proc.stderr}")
    return dt


def prepare(repo: Path, where: Path) -> None:
    """The downstream project, and the warm probe cache filled (untimed)."""
    where.mkdir()
    down = downstream(repo, where)
    setup_time(repo, where / "b", where / "warm-cache")
    setup_time(down, where / "b", where / "warm-cache")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("--ref", type=Path, help="another checkout to time the same way")
    args = ap.parse_args()
    trees = [("this", REPO)] + ([("ref", args.ref.resolve())] if args.ref else [])
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-configure-") as tmp:
        for round_ in range(args.runs):  # interleave the trees: same load for both
            for name, repo in trees:
                where = Path(tmp) / name
                if round_ == 0:
                    prepare(repo, where)
                for k, v in bench_once(repo, where, round_).items():
                    results.setdefault(name, {}).setdefault(k, []).append(v)
    load = os.getloadavg()
    print(f"meson setup, {args.runs} runs each, {os.cpu_count()} cores, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"{'tree':6} {'what':22} {'min s':>7} {'median s':>9}")
    for name, rows in results.items():
        for what, times in rows.items():
            print(f"{name:6} {what:22} {min(times):7.2f} {statistics.median(times):9.2f}")


def bench_once(repo: Path, where: Path, i: int) -> Dict[str, float]:
    warm_cache = where / "warm-cache"
    down = where / "down"
    return {
        "repo cold": setup_time(repo, where / "b", where / f"cold-cache-{i}", cold=True),
        "repo warm": setup_time(repo, where / "b", warm_cache),
        "downstream(10) warm": setup_time(down, where / "b", warm_cache),
    }


if __name__ == "__main__":
    main()
