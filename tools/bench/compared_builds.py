"""Builds compared in alternating fresh processes (``--variant NAME=DIR``).

The benchmarks that time calls in many fresh processes
(bench_threads_steady.py, bench_block_cache.py, bench_line_starts.py,
bench_zero_extremes.py, bench_interop.py) share this: a variant puts
DIR first on the child's PYTHONPATH (an empty DIR: the installed package),
and every child runs from this directory, so that a checkout's own source
``dispatch/`` (no compiled extension) never shadows the build asked for:
``python -c`` puts the working directory first on sys.path.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=DIR",
                    help="a PYTHONPATH directory holding another build's dispatch/ "
                         "(repeatable; an empty DIR: the installed one)")


def parse(ap: argparse.ArgumentParser, values: list[str]) -> list[tuple[str, str]]:
    """(name, dir) of each --variant, or the installed package alone."""
    builds = []
    for v in values or ["installed="]:
        name, sep, path = v.partition("=")
        if not sep or not name:
            ap.error(f"--variant {v!r}: expected NAME=DIR (DIR may be empty)")
        if path and not os.path.isdir(os.path.join(path, "dispatch")):
            ap.error(f"--variant {v!r}: {path} has no dispatch/ package")
        builds.append((name, path))
    return builds


def run_child(script: str, args: list[str], pythonpath: str, env: dict | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
    """script run by ``python -c`` with args, DIR first on its PYTHONPATH,
    from this directory; env defaults to this process's."""
    env = dict(os.environ if env is None else env)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=HERE)


def children_json(script: str, args: list[str], builds: list[tuple[str, str]], procs: int,
                  timeout: float = 900):
    """(name, what its child printed as JSON) for each build's child, procs
    rounds of the builds in turn; a child that fails ends the run."""
    for _ in range(procs):
        for name, path in builds:
            r = run_child(script, args, path, timeout=timeout)
            if r.returncode:
                raise SystemExit(f"{name}: the child failed:\n{r.stderr[-3000:]}")
            yield name, json.loads(r.stdout)


def keep_best(best: dict, key: object, times: list) -> None:
    """best[key]: the least of each of its times so far and times (None, a row
    a peer refused, stays None)."""
    old = best.get(key, times)
    best[key] = [None if a is None or b is None else min(a, b) for a, b in zip(old, times)]


def add_timing_options(ap: argparse.ArgumentParser, calls: int) -> None:
    """--procs, --calls, --repeats, --json and --variant, as the row benchmarks take them."""
    ap.add_argument("--procs", type=int, default=2, help="fresh processes per variant (2)")
    ap.add_argument("--calls", type=int, default=calls)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="write the rows here too")
    add_option(ap)


def best_rows(script: str, args: list[str], builds: list[tuple[str, str]],
              procs: int) -> dict:
    """(variant, row) -> [ours, the peer's]: each row's best over the processes,
    from children that print {row: [ours, the peer's]}."""
    best: dict = {}
    for name, rows in children_json(script, args, builds, procs):
        for row, times in rows.items():
            keep_best(best, (name, row), times)
    return best


def write_rows(path: str, best: dict, peer: str = "torch") -> None:
    """best_rows' rows as a JSON list, one object a (variant, row)."""
    with open(path, "w") as f:
        json.dump([{"variant": v, "row": r, "ours_s": t[0], f"{peer}_s": t[1]}
                   for (v, r), t in best.items()], f, indent=1)
