"""The CUDA benchmark: float32 add, exp and sum at 2^20 and 2^28 elements, in
GB/s, beside the device-to-device copy bandwidth and beside torch on the same
GPU (issue 15's targets: add and exp at 2^28 >= 90% of copy, sum >= 85%).

    python tools/bench/run.py --cuda [--json out.json]

Bytes counted are those the kernel must move: add reads 2 and writes 1 array
(12 bytes per float32 element), exp reads 1 and writes 1 (8), sum reads 1
(4), a copy reads 1 and writes 1 (8). Each figure is the median of 5 batches,
each timed between two cudaDeviceSynchronize calls. Without a usable GPU it
exits with status 2 and says why.

Then issue 26's table (ROWS), each in float32 and float16, one run each: our
time and torch's in microseconds, our GB/s, ours/torch as a time ratio (below
1.0: faster than torch), and for full sums the fraction of the
device-to-device copy bandwidth measured in the same run (target: >= 90%);
each reduction row also gives our plan (dispatch.cuda.last_reduce(): path,
vector width, splits, blocks, lanes), which on an H200 told why the column
reductions trail torch's (docs/cuda.md). sum(1) and amax(1) of the same
(8192, 8192) put the inner path beside the outer one.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

SIZES = {"2^20": 1 << 20, "2^28": 1 << 28}
BYTES = {"copy": 8, "add": 12, "exp": 8, "sum": 4}


def _time(fn, sync, reps: int) -> float:
    fn()
    sync()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / reps)
    return statistics.median(samples)


def _ours(n: int, reps: int) -> dict:
    import dispatch

    a = dispatch.empty(n, device="cuda").fill_(1.5)
    b = dispatch.empty(n, device="cuda").fill_(0.25)
    o = dispatch.empty(n, device="cuda")
    sync = dispatch.cuda.synchronize
    out = {"copy": _time(lambda: o.copy_(a), sync, reps),
           "add": _time(lambda: dispatch.ops.add(a, b), sync, reps),
           "exp": _time(lambda: dispatch.ops.exp(b), sync, reps)}
    try:
        out["sum"] = _time(lambda: a.sum(), sync, reps)
    except (NotImplementedError, RuntimeError) as e:  # a build without CUDA reductions
        out["sum"] = f"not run: {str(e).splitlines()[0]}"
    return out


def _torch(n: int, reps: int) -> dict | str:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    a = torch.full((n,), 1.5, device="cuda")
    b = torch.full((n,), 0.25, device="cuda")
    o = torch.empty(n, device="cuda")
    sync = torch.cuda.synchronize
    return {"copy": _time(lambda: o.copy_(a), sync, reps),
            "add": _time(lambda: torch.add(a, b), sync, reps),
            "exp": _time(lambda: torch.exp(b), sync, reps),
            "sum": _time(lambda: a.sum(), sync, reps)}


# issue 26's rows: (name, shape, what it does, bytes moved per element of the
# input, as multiples of its itemsize). Each runs in float32 and float16.
ROWS = [
    ("sum 2^20", (1 << 20,), "sum", 1),
    ("sum 2^24", (1 << 24,), "sum", 1),
    ("sum 2^26", (1 << 26,), "sum", 1),
    ("sum 2^28", (1 << 28,), "sum", 1),
    ("sum(0) 8192x8192", (8192, 8192), "sum0", 1),
    ("sum(0) 65536x1024", (65536, 1024), "sum0", 1),
    ("sum(0) 4096x16", (4096, 16), "sum0", 1),
    ("amax(0) 8192x8192", (8192, 8192), "amax0", 1),
    ("amin(0) 8192x8192", (8192, 8192), "amin0", 1),
    ("sum(1) 8192x8192", (8192, 8192), "sum1", 1),    # the inner path, beside amax's
    ("amax(1) 8192x8192", (8192, 8192), "amax1", 1),
    ("cast 2^26", (1 << 26,), "cast", None),  # float32 -> float16 or float16 -> float32
    ("(8192,8192)*(8192,1)", (8192, 8192), "bmul", 2),
    ("clone 2^20", (1 << 20,), "clone", 2),
    ("copy 2^26", (1 << 26,), "copy", 2),
]


def _row_fns(lib, kind: str, shape: tuple, half: bool):
    """The row's call on library lib ("dispatch" or "torch"), on fresh inputs."""
    if lib == "torch":
        import torch as m

        dt = m.float16 if half else m.float32
        other = m.float32 if half else m.float16
        x = m.full(shape, 0.5, dtype=dt, device="cuda")
        amax = lambda t, d=0: m.amax(t, d)  # noqa: E731
        amin = lambda t, d=0: m.amin(t, d)  # noqa: E731
        s0 = lambda t, d=0: m.sum(t, d)  # noqa: E731
        sync = m.cuda.synchronize
        col = m.full((shape[0], 1), 2.0, dtype=dt, device="cuda") if kind == "bmul" else None
    else:
        import dispatch as m

        dt = m.float16 if half else m.float32
        other = m.float32 if half else m.float16
        x = m.empty(*shape, dtype=dt, device="cuda").fill_(0.5)
        amax = lambda t, d=0: m.ops.amax(t, d)  # noqa: E731
        amin = lambda t, d=0: m.ops.amin(t, d)  # noqa: E731
        s0 = lambda t, d=0: m.ops.sum(t, d)  # noqa: E731
        sync = m.cuda.synchronize
        col = (m.empty(shape[0], 1, dtype=dt, device="cuda").fill_(2.0)
               if kind == "bmul" else None)
    o = x.clone() if kind == "copy" else None
    fn = {"sum": lambda: x.sum(), "sum0": lambda: s0(x), "amax0": lambda: amax(x),
          "amin0": lambda: amin(x),
          "sum1": lambda: s0(x, 1), "amax1": lambda: amax(x, 1),
          "cast": lambda: x.to(other), "bmul": lambda: x * col, "clone": lambda: x.clone(),
          "copy": lambda: o.copy_(x)}[kind]
    return fn, sync


def _row_time(lib: str, kind: str, shape: tuple, half: bool, reps: int):
    try:
        fn, sync = _row_fns(lib, kind, shape, half)
        return _time(fn, sync, reps)
    except Exception as e:  # noqa: BLE001 - a row that cannot run says why
        return f"not run: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


REDUCTIONS = ("sum", "sum0", "amax0", "amin0", "sum1", "amax1")


def _plan_text(plan: dict) -> str:
    """The reduction plan of dispatch.cuda.last_reduce(), in a few words."""
    return (f"{plan.get('path')}, vec {plan.get('vec')}, {plan.get('splits')} splits, "
            f"{plan.get('blocks')} blocks, lanes {plan.get('lanes')}, "
            f"{plan.get('threads_per_output')} threads an output")


def issue_rows(name: str, torch_reason: str | None) -> list:
    """Issue 26's table on this GPU: one run of every row, float32 and float16."""
    out = []
    print(f"\nissue 26's rows on {name} (us; GB/s ours; ours/torch time; full sums: % of copy)")
    print(f"{'case':>22} {'dtype':>8} {'ours us':>9} {'torch us':>9} {'GB/s':>8} "
          f"{'ours/torch':>10} {'of copy':>8}")
    copy_gbs = {}
    for half in (False, True):
        isz = 2 if half else 4
        for label, shape, kind, mult in ROWS:
            n = 1
            for s in shape:
                n *= s
            reps = 200 if n <= 1 << 20 else 20 if n <= 1 << 26 else 5
            mine = _row_time("dispatch", kind, shape, half, reps)
            plan = None
            if kind in REDUCTIONS and isinstance(mine, float):  # the plan of the row's call
                import dispatch

                plan = dispatch.cuda.last_reduce()
            theirs = (torch_reason if torch_reason else
                      _row_time("torch", kind, shape, half, reps))
            nbytes = n * (isz + (4 if half else 2)) if kind == "cast" else n * isz * mult
            gbs = nbytes / mine / 1e9 if isinstance(mine, float) else None
            if kind == "copy" and gbs:
                copy_gbs[half] = gbs
            row = {"case": label, "dtype": "float16" if half else "float32",
                   "ours_s": mine if isinstance(mine, float) else None,
                   "torch_s": theirs if isinstance(theirs, float) else None,
                   "ours_gbs": gbs, "note": None if isinstance(mine, float) else mine,
                   "plan": plan}
            out.append(row)
            ratio = (f"{mine / theirs:10.2f}" if isinstance(mine, float) and isinstance(theirs, float)
                     else "")
            us = lambda v: f"{v * 1e6:9.1f}" if isinstance(v, float) else f"{'-':>9}"  # noqa: E731
            print(f"{label:>22} {row['dtype']:>8} {us(mine)} {us(theirs)} "
                  f"{(f'{gbs:8.1f}' if gbs else '-'):>8} {ratio:>10}"
                  + ("" if isinstance(mine, float) else f"  {mine}")
                  + (f"  ({_plan_text(plan)})" if plan else ""))
    for row in out:  # the copy row comes last: the full sums' fraction, afterwards
        half = row["dtype"] == "float16"
        if row["case"].startswith("sum 2^") and row["ours_gbs"] and copy_gbs.get(half):
            # a sum moves half a copy's bytes per element: compare GB/s
            row["of_copy"] = row["ours_gbs"] / copy_gbs[half]
            print(f"{row['case']:>22} {row['dtype']:>8} reads at {row['of_copy']:.0%} of "
                  f"the copy's {copy_gbs[half]:.1f} GB/s")
    return out


def _gbs(seconds, n: int, op: str) -> str:
    if not isinstance(seconds, float):
        return seconds
    return f"{BYTES[op] * n / seconds / 1e9:8.1f}"


def main(json_path: str | None = None) -> int:
    import dispatch

    if not dispatch.cuda.is_available():
        print(f"bench --cuda: no usable CUDA GPU here: {dispatch.cuda.unavailable_reason()}",
              file=sys.stderr)
        return 2
    name = dispatch.cuda.get_device_name(0)
    rows = []
    print(f"CUDA benchmark on {name} (GB/s; bytes moved per element: {BYTES})")
    print(f"{'size':>6} {'op':>5} {'ours':>9} {'torch':>9} {'ours/copy':>10} {'ours/torch':>11}")
    for label, n in SIZES.items():
        reps = 200 if n <= 1 << 20 else 5
        ours, theirs = _ours(n, reps), _torch(n, reps)
        for op in ("copy", "add", "exp", "sum"):
            mine = ours[op]
            other = theirs[op] if isinstance(theirs, dict) else theirs
            row = {"gpu": name, "size": label, "op": op,
                   "ours_s": mine if isinstance(mine, float) else None,
                   "torch_s": other if isinstance(other, float) else None}
            rows.append(row)
            frac = (f"{ours['copy'] / mine * BYTES[op] / BYTES['copy']:10.0%}"
                    if isinstance(mine, float) else "")
            both = isinstance(mine, float) and isinstance(other, float)
            vs = f"{other / mine:11.2f}" if both else ""
            print(f"{label:>6} {op:>5} {_gbs(mine, n, op):>9} {_gbs(other, n, op):>9} {frac} {vs}")
    torch_reason = theirs if isinstance(theirs, str) else None
    rows += issue_rows(name, torch_reason)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
