"""The CUDA benchmark: float32 add, exp and sum at 2^20 and 2^28 elements, in
GB/s, beside the device-to-device copy bandwidth and beside torch on the same
GPU (issue 15's targets: add and exp at 2^28 >= 90% of copy, sum >= 85%).

    python tools/bench/run.py --cuda [--json out.json]

Bytes counted are those the kernel must move: add reads 2 and writes 1 array
(12 bytes per float32 element), exp reads 1 and writes 1 (8), sum reads 1
(4), a copy reads 1 and writes 1 (8). Each figure is the median of 5 batches,
each timed between two cudaDeviceSynchronize calls. Without a usable GPU it
exits with status 2 and says why.
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
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
