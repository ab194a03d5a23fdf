"""Device time of the CUDA rows issue 48 (item 2) names, ours beside torch's,
from torch's profiler: CUPTI records every kernel and copy the process
launches on the GPU, whichever library launched it, so both libraries' rows
are read the same way, without the host's launch and Python costs that the
wall-clock rows of run.py --cuda include.

    python tools/bench/cuda_profile_rows.py [--reps 20] [--json out.json]
        [--row KIND SHAPE ...]

--row profiles other rows instead, e.g. `--row sum0 64x2097152 --row sum0
8192x8192` (a column sum with no split beside a split one): KIND one of
bench_cuda's (sum, sum0, sum1, amax0, amin0, amax1, copy, clone, cast,
bmul), SHAPE dims joined by x.

For each row and dtype (float32, float16): the device microseconds per call
(every kernel, memcpy and memset of the reps, summed, over reps), the
launches per call and the longest kernel's name, ours and torch's, and
ours/torch. Our reductions' plans (dispatch.cuda.last_reduce()) beside them.
Without a GPU, or without torch built for CUDA, it exits 2 saying why.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cuda  # noqa: E402 - the rows' inputs and calls, shared with run.py --cuda

# (label, shape, bench_cuda's kind)
ROWS = [
    ("amax(0) 8192x8192", (8192, 8192), "amax0"),
    ("amin(0) 8192x8192", (8192, 8192), "amin0"),
    ("amax(1) 8192x8192", (8192, 8192), "amax1"),
    ("sum(0) 8192x8192", (8192, 8192), "sum0"),
    ("sum(0) 65536x1024", (65536, 1024), "sum0"),
    ("sum(0) 4096x16", (4096, 16), "sum0"),
    ("sum(1) 8192x8192", (8192, 8192), "sum1"),
    ("sum 2^20", (1 << 20,), "sum"),
    ("sum 2^26", (1 << 26,), "sum"),
    ("copy_ 2^20", (1 << 20,), "copy"),
]

KINDS = tuple(dict.fromkeys(kind for _, _, kind, _ in bench_cuda.ROWS))  # what _row_fns calls


def parse_row(kind: str, shape: str) -> tuple:
    """A --row's (label, shape, kind); ValueError saying what is wrong."""
    if kind not in KINDS:
        raise ValueError(f"--row: unknown kind {kind!r} (the kinds: {', '.join(KINDS)})")
    try:
        dims = tuple(int(d) for d in shape.lower().split("x"))
    except ValueError:
        dims = ()
    if not dims or any(d < 1 for d in dims):
        raise ValueError(f"--row {kind}: shape {shape!r} is not positive sizes joined by x "
                         f"(e.g. 8192x8192)")
    if kind in ("sum0", "sum1", "amax0", "amin0", "amax1", "bmul") and len(dims) != 2:
        raise ValueError(f"--row {kind}: shape {shape!r} needs two dims")
    return (f"{kind} {'x'.join(map(str, dims))}", dims, kind)


def device_activities(events) -> list:
    """(name, microseconds) of each device activity among profiler events:
    objects with device_type() (or .device_type), name and a duration."""
    out = []
    for e in events:
        dt = e.device_type() if callable(getattr(e, "device_type", None)) else getattr(e, "device_type", None)
        if "CUDA" not in str(dt):
            continue
        name = e.name() if callable(getattr(e, "name", None)) else e.name
        if callable(getattr(e, "duration_ns", None)):
            us = e.duration_ns() / 1e3
        else:
            us = e.time_range.elapsed_us()
        out.append((name, us))
    return out


def summarize(acts: list, reps: int) -> dict:
    """Per call: device microseconds, launches, and the longest activity's name."""
    total = sum(us for _, us in acts)
    longest = max(acts, key=lambda a: a[1])[0] if acts else "-"
    return {"device_us": total / reps, "launches": len(acts) / reps, "longest": longest}


def profile_row(lib: str, kind: str, shape: tuple, half: bool, reps: int) -> dict:
    from torch.profiler import ProfilerActivity, profile

    fn, sync = bench_cuda._row_fns(lib, kind, shape, half)
    for _ in range(3):
        fn()
    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        sync()
    raw = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    acts = device_activities(raw.events() if raw is not None else prof.events())
    row = summarize(acts, reps)
    if lib == "dispatch" and kind in bench_cuda.REDUCTIONS:
        import dispatch

        row["plan"] = dispatch.cuda.last_reduce()
    return row


def refusal() -> str:
    """Why the rows cannot be profiled here ("" when they can)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed (its profiler reads the device times)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    import dispatch

    if not dispatch.cuda.is_available():
        return f"no CUDA device for dispatch: {dispatch.cuda.unavailable_reason()}"
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="calls profiled per row and library (20)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--row", nargs=2, action="append", metavar=("KIND", "SHAPE"),
                    help="profile this row instead of issue 48's (repeatable)")
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error(f"--reps: expected a positive count, got {args.reps}")
    try:
        rows_asked = [parse_row(k, sh) for k, sh in args.row] if args.row else ROWS
    except ValueError as e:
        ap.error(str(e))
    why = refusal()
    if why:
        print(f"cuda_profile_rows: {why}", file=sys.stderr)
        return 2
    import torch

    print(f"device time per call on {torch.cuda.get_device_name()} (torch's profiler, "
          f"{args.reps} calls)")
    print(f"{'case':>18} {'dtype':>8} {'ours us':>9} {'torch us':>9} {'ours/torch':>10} "
          f"{'launches':>9}  longest kernels (ours | torch)")
    rows = []
    for half in (False, True):
        for label, shape, kind in rows_asked:
            ours = profile_row("dispatch", kind, shape, half, args.reps)
            theirs = profile_row("torch", kind, shape, half, args.reps)
            ratio = ours["device_us"] / theirs["device_us"] if theirs["device_us"] else None
            row = {"case": label, "dtype": "float16" if half else "float32",
                   "ours": ours, "torch": theirs, "ours/torch": ratio}
            rows.append(row)
            print(f"{label:>18} {row['dtype']:>8} {ours['device_us']:9.1f} "
                  f"{theirs['device_us']:9.1f} {(f'{ratio:10.2f}' if ratio else '-'):>10} "
                  f"{ours['launches']:4.0f}|{theirs['launches']:<4.0f}  "
                  f"{ours['longest'][:50]} | {theirs['longest'][:50]}")
            if "plan" in ours:
                print(f"{'':>18} {'':>8} ours: {bench_cuda._plan_text(ours['plan'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
