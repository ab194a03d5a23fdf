"""The whole matrix beside torch and NumPy: every operator of dispatch.ops x
every dtype x layout, the reductions, where, every cast pair (issue 44).

    python tools/bench/bench_matrix.py --quick                  # 256K, 1 and 2 threads, minutes
    python tools/bench/bench_matrix.py                          # 4K to 16M: about an hour
    python tools/bench/bench_matrix.py --quick --threads 1 --out docs/perf/matrix
    python tools/bench/bench_matrix.py --quick --as-cpu avx2    # as on an AVX2 CPU
    python tools/bench/bench_matrix.py --quick --processes 3    # best of 3 processes a row
    python tools/bench/bench_matrix.py --quick --processes 3 --before /tmp/old  # two builds

The rows come from the operator table (matrix_cases.py says how), so a new
operator or dtype shows up by itself. Each row is timed in one process, the
libraries taking turns (ours, torch, NumPy, ours, ...), each turn enough
calls to last --turn-ms, the best turn of --rounds kept, at each thread count
of --threads (``dispatch.set_num_threads`` and ``torch.set_num_threads``;
NumPy has one thread). Calls are out of place, as a user writes them: each
allocates its result. Each turn starts with one untimed call, which brings
that library's inputs back into the caches the previous turn filled with
its own (at 1M elements, 2 ms turns of float64 `a + b` timed cold took
1.5x the warm time for every library: 2-3 calls a turn, the first from
memory). At 2 threads that call follows a pause as long as the previous
library's workers spin after a call (torch's OpenMP workers about 10 ms,
ours 1 ms: a spinning worker takes the core the next turn needs).

--processes K runs the whole matrix K times, each in a fresh process, one
after another, and keeps each row's best time per library: on some VMs a row
moves by up to 2x from one process to the next with nothing changed (where
its memory lands), which one process cannot tell from a change of code.

--before DIR compares two builds of ours: DIR holds the other one (a
`dispatch` package folder, say a copy of an installed one made before a
change), put first on PYTHONPATH for the "before" side. The matrix runs in
2K fresh processes, before and after taking turns, each side's rows the best
of its K; PREFIX-before-* and PREFIX-after-* are each side's files as above,
and PREFIX-change.txt and .json compare them row by row (matrix_before_after.py),
with torch's and NumPy's own after/before beside ours: they ran the same code
twice, so theirs is the noise of the run.

--device cuda times ours and torch's on CUDA tensors of the same GPU (issue
48, item 3): the same rows, each library's inputs copied to the device once
and every turn closed by its library's synchronize (the calls queue work, the
clock stops when it is done); NumPy has no column there, the thread count is
the host's alone (default 1), and the CPU rules (matrix_rules.py) name no
row. Without a GPU it exits with status 2 and says why.

--as-cpu avx2 (or sse4.2) has every library run the loops it would pick on
an x86-64 CPU of that level, on this one (matrix_cpu_level.py says how); the
summary names what each library said it runs.

torch and NumPy are optional: without torch the ratios are ours/NumPy only,
without either the times are ours alone (the summary and the picture say
which). A row a library cannot run (torch's bool ``sub``, NumPy's bfloat16,
an operator we refuse for a dtype) is kept and named with the library's own
error, never dropped.

Writes, next to --out PREFIX: PREFIX-rows.csv and .json (every row, times
in seconds and the ratios), PREFIX-summary.txt and .json (per thread count
and size: rows, rows <= 1.0, geometric mean, the worst 20 rows, the same per
category) and PREFIX-<T>t-<size>.svg (a heat map of ours/torch per operator
x dtype, ours/NumPy without torch); prints each row as it is measured, then
the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # NumPy's idle BLAS threads spin

import matrix_before_after as before_after
import matrix_cases as cases
import matrix_cpu_level as cpu_level
import matrix_report as report
import matrix_rules as rules

# How long each library's idle workers spin after a call (the pause before
# the next library's turn at more than one thread).
SPIN_AFTER_S = {"ours": 0.002, "torch": 0.012, "numpy": 0.0}


def best_of_turns(fns: dict, rounds: int, turn_s: float, settle: bool,
                  syncs: dict | None = None) -> dict:
    """Best seconds per call of each callable, timed in alternating turns;
    syncs[name], where given, is called before each clock read (a device's
    queued calls end there)."""
    nothing = lambda: None  # noqa: E731 - the CPU's calls are done when they return
    sync_of = {name: (syncs or {}).get(name, nothing) for name in fns}
    reps = {}
    for name, fn in fns.items():
        sync = sync_of[name]
        fn()
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        reps[name] = max(1, int(turn_s / max(time.perf_counter() - t0, 1e-7)))
    best = {name: float("inf") for name in fns}
    prev = None
    for _ in range(rounds):
        for name, fn in fns.items():
            if settle:
                time.sleep(SPIN_AFTER_S.get(prev, 0.0))
            fn()  # its inputs back in the caches, its own workers awake
            sync_of[name]()
            n = reps[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            sync_of[name]()
            best[name] = min(best[name], (time.perf_counter() - t0) / n)
            prev = name
    return best


def _why(e: BaseException) -> str:
    """One line of a library's refusal, for the row's note."""
    text = str(e).strip().splitlines()
    line = text[0] if text else ""
    return f"{type(e).__name__}: {line}"[:160]


def out_dtype(r: Any) -> str:
    """The result's dtype name (the first of a tuple), or '-'."""
    if isinstance(r, tuple):
        r = r[0] if r else None
    dt = getattr(r, "dtype", None)
    return str(dt).split(".")[-1] if dt is not None else "-"


def measure_row(row: dict, libs: list, vals: cases.Values, args: argparse.Namespace,
                threads: int) -> dict:
    fns: dict[str, Callable[[], Any]] = {}
    for lib in libs:
        try:
            ts, scalar = cases.make_inputs(lib, vals, row)
            fn = lib.call(row, ts, scalar)
            row[f"{lib.name}_out"] = out_dtype(fn())
            fns[lib.name] = fn
        except Exception as e:  # noqa: BLE001 - a library that cannot run the row: named
            row[f"{lib.name}_note"] = _why(e)
    if fns:
        syncs = {lib.name: lib.synchronize for lib in libs if lib.name in fns}
        settle = threads > 1 and args.device == "cpu"
        for name, s in best_of_turns(fns, args.rounds, args.turn_ms / 1e3, settle, syncs).items():
            row[f"{name}_s"] = s
    return add_ratios(row, args.as_cpu)


def add_ratios(row: dict, as_cpu: str | None) -> dict:
    """ours/<peer> from the row's times, and the rule that covers it (if any)."""
    for peer in ("torch", "numpy"):
        row.pop(f"ours/{peer}", None)
        row.pop(f"{peer}_rule", None)
        if "ours_s" in row and f"{peer}_s" in row:
            row[f"ours/{peer}"] = row["ours_s"] / row[f"{peer}_s"]
        rule = rules.rule_for(row, peer, as_cpu) if row.get("device", "cpu") == "cpu" else None
        if rule and f"ours/{peer}" in row:
            row[f"{peer}_rule"] = rule.name
    return row


def cuda_refusal() -> str:
    """Why --device cuda cannot run here ("" when it can)."""
    import dispatch

    if not dispatch.cuda.is_available():
        return f"no CUDA device: {dispatch.cuda.unavailable_reason()}"
    return ""


def load_libraries(peers: list, device: str = "cpu") -> tuple:
    import dispatch

    np = torch = None
    if device != "cpu" and "numpy" in peers:
        print("bench_matrix: --device cuda: NumPy has no CUDA arrays: no NumPy column",
              file=sys.stderr)
        peers = [p for p in peers if p != "numpy"]
    if "numpy" in peers or device != "cpu":  # the values are made with NumPy where it is
        try:
            import numpy as np
            np.seterr(all="ignore")  # integer division by a 0, float16 overflow: timed as is
        except ImportError:
            print("bench_matrix: NumPy not installed: no NumPy column", file=sys.stderr)
    if "torch" in peers:
        try:
            import torch
        except ImportError:
            print("bench_matrix: torch not installed: no torch column "
                  "(pip install torch==2.13.0 for it)", file=sys.stderr)
    if torch is not None and device != "cpu" and not torch.cuda.is_available():
        print("bench_matrix: --device cuda: torch sees no CUDA device: no torch column",
              file=sys.stderr)
        torch = None
    libs: list = [cases.Ours(dispatch, np, device)]
    if torch is not None:
        libs.append(cases.Torch(torch, np, device))
    if np is not None and "numpy" in peers:
        libs.append(cases.NumPy(np))
    return dispatch, np, torch, libs


def machine() -> dict:
    info = {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                               if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    flags = cpu_level.cpu_flags()
    if flags:
        info["avx"] = " ".join(sorted(f for f in flags if f.startswith(("avx", "f16c", "fma"))))
    try:
        info["load_before"] = os.getloadavg()[0]
    except OSError:
        pass
    return info


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="one size (256K), 3 rounds of 2 ms turns: a few minutes on 2 cores")
    ap.add_argument("--sizes", nargs="+", choices=list(cases.SIZES),
                    help="matrix sizes (default: 4K 64K 1M 16M; --quick: 256K)")
    ap.add_argument("--threads", nargs="+", type=int, help="(1 2; --device cuda: 1)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="where the tensors live: cuda times ours and torch's on the GPU (cpu)")
    ap.add_argument("--rounds", type=int, help="turns per library, the best kept (5; --quick 3)")
    ap.add_argument("--turn-ms", type=float, help="length of a turn (10 ms; --quick 2 ms)")
    ap.add_argument("--peers", nargs="+", default=["torch", "numpy"],
                    choices=["torch", "numpy", "none"], help="libraries beside ours")
    ap.add_argument("--ops", nargs="+", help="only these operators (default: the whole table)")
    ap.add_argument("--out", default="matrix", metavar="PREFIX", help="output files' prefix")
    ap.add_argument("--processes", type=int, default=1, metavar="K",
                    help="run the matrix in K fresh processes, one after another, and keep "
                         "each row's best time per library (1)")
    ap.add_argument("--before", metavar="DIR",
                    help="compare with the build of dispatch in DIR/dispatch, in alternating "
                         "processes (--processes of each side)")
    ap.add_argument("--as-cpu", choices=list(cpu_level.LEVELS),
                    help="every library runs the loops of an x86-64 CPU of this level "
                         "(this CPU must have its features)")
    args = ap.parse_args(argv)
    args.sizes = args.sizes or (["256K"] if args.quick else ["4K", "64K", "1M", "16M"])
    args.threads = args.threads or ([1] if args.device == "cuda" else [1, 2])
    if args.device == "cuda" and args.as_cpu:
        ap.error("--as-cpu picks the CPU's loops: it has no meaning with --device cuda")
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.turn_ms = args.turn_ms or (2.0 if args.quick else 10.0)
    if any(t < 1 or t > 256 for t in args.threads):
        ap.error(f"--threads: expected 1 to 256, got {args.threads}")
    if args.rounds < 1 or args.turn_ms <= 0:
        ap.error("--rounds and --turn-ms must be positive")
    if not 1 <= args.processes <= 100:
        ap.error(f"--processes: expected 1 to 100, got {args.processes}")
    if args.before is not None:
        if not os.path.isfile(os.path.join(args.before, "dispatch", "__init__.py")):
            ap.error(f"--before: {args.before!r} holds no dispatch package "
                     f"(expected {os.path.join(args.before, 'dispatch', '__init__.py')})")
        args.before = os.path.abspath(args.before)
    return args


PARENT_OPTIONS = ("--processes", "--out", "--before")  # the parent's own, with a value


def child_argv(argv: list[str], out: str) -> list[str]:
    """argv without --processes, --before and --out, for one of the processes."""
    kept, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in PARENT_OPTIONS:
            skip = True
        elif not a.startswith(tuple(f"{o}=" for o in PARENT_OPTIONS)):
            kept.append(a)
    return [*kept, "--out", out]


def merge_processes(runs: list[list], as_cpu: str | None) -> list:
    """One row per key: the first run's row with each library's best time of
    all runs (a library that ran a row in one process runs it in all)."""
    best = {report.row_key(r): dict(r) for r in runs[0]}
    for rows in runs[1:]:
        for r in rows:
            into = best.setdefault(report.row_key(r), dict(r))
            for lib in ("ours", "torch", "numpy"):
                t = r.get(f"{lib}_s")
                if t is not None and (into.get(f"{lib}_s") is None or t < into[f"{lib}_s"]):
                    into[f"{lib}_s"] = t
    return [add_ratios(r, as_cpu) for r in best.values()]


def run_child(argv: list[str], out: str, what: str, pythonpath: str | None = None) -> dict:
    """One matrix in a fresh process (PYTHONPATH's first entry pythonpath,
    where given): its rows and meta, or SystemExit with its exit status."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    print(f"bench_matrix: {what}", flush=True)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), *child_argv(argv, out)],
                       env=env, check=False)
    if p.returncode != 0:
        print(f"bench_matrix: {what} exited with {p.returncode}", file=sys.stderr)
        raise SystemExit(p.returncode)
    with open(f"{out}-rows.json") as f:
        return json.load(f)


def run_in_processes(args: argparse.Namespace, argv: list[str]) -> int:
    """--processes K: the matrix K times in fresh processes, the best of each row."""
    t0 = time.time()
    runs, meta = [], None
    with tempfile.TemporaryDirectory(prefix="bench_matrix-") as tmp:
        for k in range(args.processes):
            got = run_child(argv, os.path.join(tmp, f"p{k}"),
                            f"process {k + 1} of {args.processes}")
            runs.append(got["rows"])
            meta = meta or got["meta"]
    finish_merged(args.out, runs, meta, args, argv, t0)
    return 0


def finish_merged(out: str, runs: list, meta: dict, args: argparse.Namespace,
                  argv: list[str], t0: float) -> list:
    """The K processes' rows merged (each row's best), written and summed up
    as one run's under `out`; returns the merged rows."""
    meta["processes"] = args.processes
    meta["command"] = " ".join(["python", "tools/bench/bench_matrix.py", *argv])
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    rows = merge_processes(runs, args.as_cpu)
    finish(out, rows, meta, t0)
    return rows


def run_before_after(args: argparse.Namespace, argv: list[str]) -> int:
    """--before DIR: K processes of each build, taking turns; each side's
    files, then the comparison (matrix_before_after.py)."""
    t0 = time.time()
    runs: dict = {"before": [], "after": []}
    metas: dict = {}
    before_pkg = os.path.realpath(os.path.join(args.before, "dispatch"))
    with tempfile.TemporaryDirectory(prefix="bench_matrix-") as tmp:
        for k in range(args.processes):
            for side in runs:
                got = run_child(argv, os.path.join(tmp, f"{side}{k}"),
                                f"{side}, process {k + 1} of {args.processes}",
                                args.before if side == "before" else None)
                runs[side].append(got["rows"])
                metas.setdefault(side, got["meta"])
            if k == 0:  # the first pair says whether each side imported its build
                where = {side: meta["dispatch_path"] for side, meta in metas.items()}
                if where["before"] != before_pkg or where["after"] == before_pkg:
                    hint = ("; PYTHONPATH did not come first: an editable install of "
                            "dispatch (pip install -e) is found before it, so compare two "
                            "non-editable builds" if where["before"] == where["after"] else "")
                    print(f"bench_matrix: --before: the before side imported dispatch from "
                          f"{where['before']}, the after side from {where['after']}: "
                          f"expected {before_pkg} only before{hint}", file=sys.stderr)
                    return 2
    merged = {side: finish_merged(f"{args.out}-{side}", runs[side], metas[side], args, argv, t0)
              for side in runs}
    change = before_after.compare(merged["before"], merged["after"])
    change["before_dir"], change["after_dir"] = where["before"], where["after"]
    change["processes"], change["command"] = args.processes, metas["after"]["command"]
    txt = before_after.text(change, args.before, args.processes)
    with open(f"{args.out}-change.json", "w") as f:
        json.dump(change, f, indent=1)
    with open(f"{args.out}-change.txt", "w") as f:
        f.write(txt)
    print()
    print(txt)
    return 0


def finish(out: str, rows: list, meta: dict, t0: float) -> int:
    """The run's time and load into meta, the files written, the summary printed."""
    try:
        meta["machine"]["load_after"] = os.getloadavg()[0]
    except OSError:
        pass
    meta["seconds"] = round(time.time() - t0)
    summary = report.summarize(rows, meta)
    text = report.summary_text(summary)
    report.write_all(out, rows, summary, text)
    print()
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    argv_list = list(argv if argv is not None else sys.argv[1:])
    if args.before is not None:
        return run_before_after(args, argv_list)
    if args.processes > 1:
        return run_in_processes(args, argv_list)
    if args.as_cpu:
        error = cpu_level.apply(args.as_cpu)  # before the first import of any library
        if error:
            print(f"bench_matrix: {error}", file=sys.stderr)
            return 2
    if args.device == "cuda":
        refusal = cuda_refusal()
        if refusal:
            print(f"bench_matrix: --device cuda: {refusal}", file=sys.stderr)
            return 2
    dispatch, np, torch, libs = load_libraries(args.peers, args.device)
    as_cpu = cpu_level.confirm(args.as_cpu, dispatch, torch, np) if args.as_cpu else None
    if as_cpu and as_cpu["not_at_level"]:
        print(f"bench_matrix: --as-cpu {args.as_cpu}: {', '.join(as_cpu['not_at_level'])} did "
              f"not take the level (they run: {as_cpu['seen']}); the summary says so",
              file=sys.stderr)
    forms = cases.operator_forms(dispatch)
    if args.ops:
        unknown = sorted(set(args.ops) - set(forms))
        if unknown:
            print(f"bench_matrix: no operator named {', '.join(unknown)} in dispatch.ops "
                  f"(it has {', '.join(forms)})", file=sys.stderr)
            return 2
        forms = {k: v for k, v in forms.items() if k in args.ops}
    dtypes = cases.dtype_names(dispatch)
    template = cases.rows_of(forms, dtypes)
    head = os.path.dirname(args.out)
    if head:
        os.makedirs(head, exist_ok=True)
    meta = {"machine": machine(), "peers": [lib.name for lib in libs[1:]],
            "torch": getattr(torch, "__version__", None), "numpy": getattr(np, "__version__", None),
            "dispatch_target": dispatch.probe_target(),
            "dispatch_path": os.path.dirname(os.path.realpath(dispatch.__file__)),
            "sizes": args.sizes,
            "threads": args.threads, "rounds": args.rounds, "turn_ms": args.turn_ms,
            "as_cpu": as_cpu, "device": args.device,
            "gpu": dispatch.cuda.get_device_name() if args.device == "cuda" else None,
            "command": " ".join(["python", "tools/bench/bench_matrix.py", *(argv or sys.argv[1:])])}
    print(f"bench_matrix: {len(template)} rows a size and thread count; comparing ours with "
          f"{' and '.join(meta['peers']) or 'nothing (ours alone)'}", flush=True)
    print(report.row_header(), flush=True)
    rows = []
    t0 = time.time()
    for size in args.sizes:
        vals = cases.Values(np, cases.SIZES[size])
        for threads in args.threads:
            dispatch.set_num_threads(threads)
            if torch is not None:
                torch.set_num_threads(threads)
            for tmpl in template:
                row = dict(tmpl, size=size, n=cases.SIZES[size], threads=threads)
                if args.device != "cpu":
                    row["device"] = args.device
                if row["form"] == "none":
                    row["ours_note"] = "no form: the bench does not know how to call this schema"
                else:
                    measure_row(row, libs, vals, args, threads)
                rows.append(row)
                print(report.row_line(row), flush=True)
    return finish(args.out, rows, meta, t0)


if __name__ == "__main__":
    sys.exit(main())
