"""Dispatch overhead: one dispatched no-op call in C, and dispatch.ops.add / a + b
on 1- and 16-element float32 tensors beside numpy.add and torch.add (when installed).

    python tools/bench/bench_dispatch_overhead.py [--repeat 7] [--number 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import timeit

import numpy as np


def best_ns(stmt, number: int, repeat: int) -> float:
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from dispatch import _tensor, ops
    from dispatch._core import lib

    rows: dict[str, float] = {
        "c_noop_dispatch_ns": min(lib.dispatch_bench_noop_ns(1_000_000) for _ in range(args.repeat)),
    }
    try:
        import torch
    except ImportError:
        torch = None
    for n in (1, 16):
        a = np.arange(n, dtype=np.float32)
        b = np.ones(n, dtype=np.float32)
        ta, tb = _tensor.from_numpy(a.copy()), _tensor.from_numpy(b.copy())
        add = ops.add
        rows[f"ops.add[{n}]_ns"] = best_ns(lambda: add(ta, tb), args.number, args.repeat)
        rows[f"a+b[{n}]_ns"] = best_ns(lambda: ta + tb, args.number, args.repeat)
        rows[f"numpy.add[{n}]_ns"] = best_ns(lambda: np.add(a, b), args.number, args.repeat)
        if torch is not None:
            xa, xb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
            rows[f"torch.add[{n}]_ns"] = best_ns(lambda: torch.add(xa, xb), args.number,
                                                 args.repeat)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for k, v in rows.items():
            print(f"{k:24s} {v:10.1f}")


if __name__ == "__main__":
    main()
