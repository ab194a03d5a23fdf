"""Is a 2-thread call as fast in every fresh process? (issue 44, item 4)

    python tools/bench/bench_threads_steady.py                 # 10 processes
    python tools/bench/bench_threads_steady.py --procs 20 --n 1048576
    python tools/bench/bench_threads_steady.py --variant before=/tmp/old --variant after=

Each of --procs fresh processes builds a float32 tensor of --n elements,
calls ``dispatch.set_num_threads(2)``, runs 3 untimed warm-up rounds and then
times ``t.sum()``: 20 calls a repeat, 7 repeats; it reports the median and
the best repeat in us per call, beside the same at 1 thread and, where torch
is installed, torch's 2-thread ``sum`` of the same buffer (timed after ours,
in the same process). One process per line, so a bimodal spread (some
processes at the 1-thread time) shows as it is.

Right after ``import numpy``, NumPy's OpenBLAS threads wait for work busy
for about 100 ms (CPU time of the threads that exist before our pool starts,
while ours is timed, is the last column); ``--import-order numpy-last``
imports NumPy just before the timing so that it always falls in that
window (the bimodal case of issue 44), ``--openblas-threads 1`` removes it.

--variant NAME=DIR (repeatable) puts DIR first on PYTHONPATH for that
variant's processes (an empty DIR: the installed package), and the processes
of the variants alternate (a, b, a, b, ...), so a before/after comparison
shares whatever else the machine was doing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import compared_builds  # tools/bench, beside this script

CHILD = r"""
import json, os, sys, time
if sys.argv[3] == "numpy-last":
    import dispatch
import numpy as np
import dispatch
n, threads = int(sys.argv[1]), int(sys.argv[2])
a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
t = dispatch.from_numpy(a)

def cpu_ms(tids):
    total = 0
    for tid in tids:
        with open(f"/proc/self/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e6

def rounds(fn, warm=3, repeats=7, calls=20):
    for _ in range(warm):
        for _ in range(calls):
            fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return out

# The threads other than the main one before our pool starts (NumPy's BLAS
# threads): their CPU time while ours is timed, as busy ones share the cores.
linux = os.path.isdir("/proc/self/task")
others = [t for t in os.listdir("/proc/self/task") if int(t) != os.getpid()] if linux else []
before = cpu_ms(others)
row = {"file": dispatch.__file__, "other_threads": len(others)}
dispatch.set_num_threads(threads)
t0 = time.perf_counter()
row["ours"] = rounds(t.sum)
row["ours_window_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
if linux:
    row["others_busy_ms"] = round(cpu_ms(others) - before, 1)
dispatch.set_num_threads(1)
row["ours_1t"] = rounds(t.sum)
try:
    import torch  # after ours: its import takes longer than BLAS threads spin
except ImportError:
    torch = None
if torch is not None:
    torch.set_num_threads(threads)
    row["torch"] = rounds(torch.from_numpy(a).sum)
print(json.dumps(row))
"""


def run_one(n: int, threads: int, pythonpath: str, blas: int | None, order: str) -> dict:
    env = dict(os.environ)
    env.pop("DISPATCH_NUM_THREADS", None)
    if blas is not None:
        env["OPENBLAS_NUM_THREADS"] = str(blas)
    p = compared_builds.run_child(CHILD, [str(n), str(threads), order], pythonpath, env)
    if p.returncode != 0:
        sys.exit(f"bench_threads_steady: a child failed: {p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(v: list | None) -> str:
    return f"{statistics.median(v):7.1f} {min(v):7.1f}" if v else f"{'-':>7} {'-':>7}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=10, help="fresh processes per variant (10)")
    ap.add_argument("--n", type=int, default=1 << 20, help="float32 elements (1M)")
    ap.add_argument("--threads", type=int, default=2)
    compared_builds.add_option(ap)
    ap.add_argument("--openblas-threads", type=int, metavar="N",
                    help="set OPENBLAS_NUM_THREADS in the children (default: as inherited)")
    ap.add_argument("--import-order", choices=["numpy-first", "numpy-last"],
                    default="numpy-first",
                    help="numpy-last: import dispatch, then NumPy, so the timing starts while "
                         "the BLAS threads NumPy's import started still spin (its first ~100 ms)")
    ap.add_argument("--json", metavar="FILE", help="write every process's rounds here")
    args = ap.parse_args(argv)
    builds = compared_builds.parse(ap, args.variant)
    with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as f:
        load = f.read().split()[:3]
    print(f"sum of {args.n} float32 at {args.threads} threads, {args.procs} fresh processes per "
          f"variant, us per call (median and best of 7 repeats of 20 calls, after 3 warm-up "
          f"rounds); load average before: {' '.join(load) or '-'}")
    print(f"{'variant':>10} {'proc':>4}  {'ours med':>7} {'best':>7}  {'1-thr med':>7} {'best':>7}"
          f"  {'torch med':>7} {'best':>7}  other threads busy while ours ran")
    rows = []
    t0 = time.time()
    for i in range(args.procs):
        for name, path in builds:
            r = run_one(args.n, args.threads, path, args.openblas_threads, args.import_order)
            r.update(variant=name, proc=i)
            rows.append(r)
            print(f"{name:>10} {i:>4}  {fmt(r['ours'])}  {fmt(r['ours_1t'])}  "
                  f"{fmt(r.get('torch'))}  {r.get('others_busy_ms', '-'):>6} of "
                  f"{r['ours_window_ms']} ms", flush=True)
    print()
    for name, _ in builds:
        meds = [statistics.median(r["ours"]) for r in rows if r["variant"] == name]
        one = statistics.median(statistics.median(r["ours_1t"]) for r in rows
                                if r["variant"] == name)
        slow = sum(m > 0.75 * one for m in meds)
        own = [statistics.median(r["ours"]) / statistics.median(r["ours_1t"]) for r in rows
               if r["variant"] == name]
        print(f"{name}: ours at {args.threads} threads {min(meds):.1f}-{max(meds):.1f} us "
              f"(medians of the processes); 1 thread {one:.1f} us; processes slower than 3/4 "
              f"of the 1-thread time: {slow} of {len(meds)}; each over its own 1-thread time "
              f"{min(own):.2f}-{max(own):.2f}")
    tr = [statistics.median(r["torch"]) for r in rows if "torch" in r]
    if tr:
        print(f"torch at {args.threads} threads: {min(tr):.1f}-{max(tr):.1f} us")
    print(f"({time.time() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
