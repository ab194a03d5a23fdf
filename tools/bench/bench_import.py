"""Import time: ``import dispatch`` beside ``import numpy`` and ``import torch``.

    python tools/bench/bench_import.py                     # this interpreter, 20 runs
    python tools/bench/bench_import.py --runs 50 --python /path/to/venv/bin/python
    python tools/bench/bench_import.py --json out.json

Each figure is a fresh ``python -I -c "<statement>"`` process, timed from
start to exit: its CPU time (user + system, the kernel's accounting of the
child: what the import costs, little moved by other load) and its wall
time. Python's own start-up (``pass``) is the first row and is subtracted in
the "import" columns. Min and median over the runs, after one warm-up run
each; the statements run interleaved (one run of each in turn) so a
drifting machine moves them all alike. A module that is not installed for
the interpreter is reported as such, not timed.

Run it with an installed (not editable) dispatch: an editable install
checks its build on every import, which is not what users pay.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "python (start-up only)": "pass",
    "import dispatch": "import dispatch",
    "import numpy": "import numpy",
    "import numpy, dispatch": "import numpy, dispatch",
    "import torch": "import torch",
}


def _run_once(python: str, statement: str) -> tuple[float, float, bool]:
    """(cpu seconds, wall seconds, exited 0) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-I", "-c", statement], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode == 0


def measure(python: str, runs: int) -> dict[str, dict]:
    available = {name: _run_once(python, stmt)[2] for name, stmt in STATEMENTS.items()}
    cpu: dict[str, list[float]] = {name: [] for name, ok in available.items() if ok}
    wall: dict[str, list[float]] = {name: [] for name in cpu}
    for _ in range(runs):
        for name in cpu:
            c, w, _ = _run_once(python, STATEMENTS[name])
            cpu[name].append(c * 1e3)
            wall[name].append(w * 1e3)
    start = "python (start-up only)"
    base_cpu, base_wall = statistics.median(cpu[start]), statistics.median(wall[start])
    out = {}
    for name, ok in available.items():
        if not ok:
            out[name] = {"available": False}
            continue
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        out[name] = {"available": True, "cpu_min_ms": min(cpu[name]), "cpu_median_ms": c,
                     "import_cpu_ms": c - base_cpu, "wall_min_ms": min(wall[name]),
                     "wall_median_ms": w, "import_wall_ms": w - base_wall}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to time")
    parser.add_argument("--runs", type=int, default=20, help="runs of each statement")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    results = measure(args.python, args.runs)
    print(f"{args.python}: {args.runs} runs each of `python -I -c STATEMENT`, ms "
          "(import = median - start-up's median)")
    print(f"| {'statement':<24} | {'cpu min':>7} | {'cpu med':>7} | {'import cpu':>10} | "
          f"{'wall min':>8} | {'wall med':>8} | {'import wall':>11} |")
    print(f"|{'-' * 26}|{'-' * 9}:|{'-' * 9}:|{'-' * 12}:|{'-' * 10}:|{'-' * 10}:|{'-' * 13}:|"
          .replace("-:|", ":|"))
    for name, r in results.items():
        if not r["available"]:
            print(f"| {name:<24} | {'-':>7} | {'-':>7} | {'-':>10} | {'-':>8} | {'-':>8} | "
                  f"{'not installed':>11} |")
            continue
        print(f"| {name:<24} | {r['cpu_min_ms']:7.1f} | {r['cpu_median_ms']:7.1f} | "
              f"{r['import_cpu_ms']:10.1f} | {r['wall_min_ms']:8.1f} | "
              f"{r['wall_median_ms']:8.1f} | {r['import_wall_ms']:11.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": args.python, "runs": args.runs, "results": results}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
