"""Call overhead: `a + b` and `a + 1.0` on 1- and 16-element float32 tensors beside NumPy
and PyTorch (when installed), with the C side of the same call and a
dispatched no-op measured in C, so the Python/cffi share is visible; and a
Tensor method beside the same operator called through dispatch.ops
(`t.sum(0)` against `ops.sum(t, 0)`: the ratio_method rows, 1.0 when a
method adds nothing).

    python tools/bench/bench_dispatch_overhead.py [--repeat 7] [--number 20000] [--json]

The three libraries are timed in alternating rounds (best of --repeat), so a
neighbour's load on a shared machine hits them alike. OpenBLAS (loaded by
NumPy, unused here) is held to one thread: its idle workers spin and steal
the second core of a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import timeit
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import dispatch
    from dispatch import ops
    from dispatch._core import lib

    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rows: dict[str, float] = {
        "c_noop_dispatch_ns": min(lib.dispatch_bench_noop_ns(1_000_000) for _ in range(args.repeat)),
    }
    for n in (1, 16):
        a = np.arange(n, dtype=np.float32)
        b = np.ones(n, dtype=np.float32)
        da, db = dispatch.from_numpy(a.copy()), dispatch.from_numpy(b.copy())
        add = ops.add
        stmts = {
            f"a+b[{n}]_ns": lambda: da + db,
            f"ops.add[{n}]_ns": lambda: add(da, db),
            f"numpy a+b[{n}]_ns": lambda: a + b,
            # a tensor with a Python number (the scalar path of the C slots)
            f"a+1.0[{n}]_ns": lambda: da + 1.0,
            f"2*a[{n}]_ns": lambda: 2 * da,
            f"numpy a+1.0[{n}]_ns": lambda: a + 1.0,
        }
        if torch is not None:
            ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
            stmts[f"torch a+b[{n}]_ns"] = lambda: ta + tb
            stmts[f"torch a+1.0[{n}]_ns"] = lambda: ta + 1.0
        best = {k: float("inf") for k in stmts}
        for _ in range(args.repeat):  # alternate the contenders round by round
            for k, fn in stmts.items():
                t = timeit.timeit(fn, number=args.number) / args.number * 1e9
                best[k] = min(best[k], t)
        rows.update(best)
        rows[f"c_side_a+b[{n}]_ns"] = min(lib.dispatch_bench_add_ns(n, 100_000)
                                          for _ in range(args.repeat))
        rows[f"ratio_vs_numpy[{n}]"] = best[f"a+b[{n}]_ns"] / best[f"numpy a+b[{n}]_ns"]
        if torch is not None:
            rows[f"ratio_vs_torch[{n}]"] = best[f"a+b[{n}]_ns"] / best[f"torch a+b[{n}]_ns"]
    rows.update(method_rows(args, dispatch, ops))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for k, v in rows.items():
            print(f"{k:30s} {v:10.2f}" if k.startswith("ratio") else f"{k:30s} {v:10.1f}")


def method_rows(args: argparse.Namespace, dispatch: Any, ops: Any) -> dict[str, float]:
    """t.<op>(...) against ops.<op>(t, ...) on a 2x8 float32 tensor, in alternating rounds."""
    t = dispatch.ones(2, 8)
    u = dispatch.ones(2, 8)
    pairs = {  # name: (the method call, the same call through dispatch.ops)
        "sum(0)": (lambda: t.sum(0), lambda: ops.sum(t, 0)),
        "sum()": (lambda: t.sum(), lambda: ops.sum(t)),
        "add(u)": (lambda: t.add(u), lambda: ops.add(t, u)),
        "add(u,alpha=2)": (lambda: t.add(u, alpha=2), lambda: ops.add(t, u, alpha=2)),
        "sum(dim=0)": (lambda: t.sum(dim=0), lambda: ops.sum(t, dim=0)),
    }
    best = {(k, i): float("inf") for k in pairs for i in (0, 1)}
    for _ in range(args.repeat):
        for k, fns in pairs.items():
            for i, fn in enumerate(fns):
                ns = timeit.timeit(fn, number=args.number) / args.number * 1e9
                best[k, i] = min(best[k, i], ns)
    rows: dict[str, float] = {}
    for k in pairs:
        rows[f"t.{k}_ns"] = best[k, 0]
        rows[f"ops.{k}_ns"] = best[k, 1]
        rows[f"ratio_method[{k}]"] = best[k, 0] / best[k, 1]
    return rows


if __name__ == "__main__":
    main()
