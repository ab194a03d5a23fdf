"""Does a loop's time depend on where its array starts in a cache line?

    python tools/bench/bench_line_starts.py                      # the default rows
    python tools/bench/bench_line_starts.py --ops add_ mul_ --dtypes int8 uint8
    python tools/bench/bench_line_starts.py --variant before=/tmp/old --variant after=
    python tools/bench/bench_line_starts.py --layouts col row --peer torch

NumPy's arrays start wherever its allocator put them (16-byte alignment), so
a loop that users call on NumPy's memory (``dispatch.from_numpy``) runs on
arrays 0, 16, 32 or 48 bytes into a 64-byte line, and the matrix
(bench_matrix.py), which takes whatever start each process got, shows such a
loop as two speeds between runs. Here each row is timed on arrays placed at
each of the four starts (every operand of the row at the same start; ``_``
rows in place, the others into a fresh output), NumPy's (or, with --peer
torch, torch's) same operation on the same memory beside it, 1 thread: the
best of --repeats x --calls in each of --procs fresh processes, the best
kept. The layouts: ``contig`` (two 1-D tensors), ``scalar`` (a Python
number), and the 2-D ones, where a loop runs once a row: ``col`` (an
(n/512, 512) matrix with an (n/512, 1) column) and ``row`` (with a (1, 512)
row). Note [Stores on whole lines] and Note [A head pays on long runs] in
sources/kernels/line_head.h are what these rows measure.

--variant NAME=DIR (repeatable) runs that build (DIR first on PYTHONPATH; an
empty DIR: the installed package), the variants' processes alternating.
"""

from __future__ import annotations

import argparse
import json

import compared_builds  # tools/bench, beside this script

STARTS = (0, 16, 32, 48)

CHILD = r"""
import json, sys, timeit
from functools import partial
import numpy as np
import dispatch
dispatch.set_num_threads(1)
n, calls, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ops, dtypes, layouts = sys.argv[4].split(","), sys.argv[5].split(","), sys.argv[6].split(",")
starts, peer = [int(s) for s in sys.argv[7].split(",")], sys.argv[8]
if peer == "torch":
    import torch
    torch.set_num_threads(1)
    wrap = torch.from_numpy

    def their(op, a, other, in_place):
        if in_place:
            return partial(getattr(a, op + "_"), other)
        return partial(getattr(torch, op), a, other) if other is not None else partial(getattr(torch, op), a)
else:
    wrap = lambda x: x
    NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
             "lt": np.less, "eq": np.equal, "neg": np.negative, "abs": np.absolute}

    def their(op, a, other, in_place):
        f = NUMPY[op]
        if other is None:
            return partial(f, a)
        return partial(f, a, other, out=a) if in_place else partial(f, a, other)

def at(start, values):
    raw = np.empty(values.nbytes + 128, np.uint8)
    s = (-raw.ctypes.data) % 64 + start
    v = raw[s:s + values.nbytes].view(values.dtype)
    v[...] = values
    return v

def best(f, peer=False):
    try:
        f()
    except (TypeError, RuntimeError):
        if not peer:
            raise
        return None  # a row the peer does not run (torch's maximum of a number)
    return min(timeit.repeat(f, number=calls, repeat=repeats)) / calls

SHAPES = {"contig": ((n,), (n,)), "scalar": ((n,), None),
          "col": ((n // 512, 512), (n // 512, 1)), "row": ((n // 512, 512), (1, 512))}

rng = np.random.default_rng(0)
out = {}
for dtype in dtypes:
    for op in ops:
        unary = op in ("neg", "abs")
        if dtype == "bool" and op.rstrip("_") in ("neg", "sub"):
            continue  # no bool negation or subtraction (as torch)
        for layout in (("contig",) if unary else layouts):
            for start in starts:
                shape, other_shape = SHAPES[layout]
                m = int(np.prod(other_shape)) if other_shape else 0
                if dtype == "bool":
                    x, y = rng.random(n) < 0.5, np.ones(m, bool)
                else:
                    x, y = rng.integers(1, 50, n).astype(dtype), np.ones(m, dtype)
                a = at(start, x).reshape(shape)
                b = at(start, y).reshape(other_shape) if other_shape else None
                number = True if dtype == "bool" else 1
                ta, wa = dispatch.from_numpy(a), wrap(a)
                mine = number if b is None else dispatch.from_numpy(b)
                theirs = number if b is None else wrap(b)
                fn, name = getattr(dispatch.ops, op), op.rstrip("_")
                if unary:
                    ours, peer_call = partial(fn, ta), their(name, wa, None, False)
                else:
                    ours = partial(fn, ta, mine)
                    peer_call = their(name, wa, theirs, op.endswith("_"))
                key = f"{op} {dtype} {'' if unary else layout}".strip()
                out.setdefault(key, {})[str(start)] = [best(ours), best(peer_call, peer=True)]
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", nargs="+", default=["add_", "mul_", "sub", "lt", "neg"],
                    choices=["add", "add_", "sub", "sub_", "mul", "mul_", "maximum", "lt", "eq",
                             "neg", "abs"])
    ap.add_argument("--dtypes", nargs="+",
                    default=["bool", "int8", "uint8", "int16", "int32", "float32", "float64"],
                    choices=["bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                             "float32", "float64"])  # NumPy's dtypes (no bfloat16)
    ap.add_argument("--layouts", nargs="+", default=["contig", "scalar"],
                    choices=["contig", "scalar", "col", "row"])
    ap.add_argument("--peer", choices=["numpy", "torch"], default="numpy",
                    help="the library timed beside ours on the same memory (numpy)")
    ap.add_argument("--n", type=int, default=262144, help="elements (262144)")
    ap.add_argument("--procs", type=int, default=2, help="fresh processes per variant (2)")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--json", help="write the rows here too")
    compared_builds.add_option(ap)
    args = ap.parse_args()
    builds = compared_builds.parse(ap, args.variant)
    if ({"col", "row"} & set(args.layouts)) and args.n % 512:
        ap.error(f"--n {args.n}: the col and row layouts need a multiple of 512")

    best: dict = {}  # (variant, row, start) -> [ours, the peer's] (None: the peer refused)
    child_args = [str(args.n), str(args.calls), str(args.repeats), ",".join(args.ops),
                  ",".join(args.dtypes), ",".join(args.layouts), ",".join(map(str, STARTS)),
                  args.peer]
    for name, rows in compared_builds.children_json(CHILD, child_args, builds, args.procs,
                                                    timeout=1800):
        for row, by_start in rows.items():
            for start, times in by_start.items():
                compared_builds.keep_best(best, (name, row, int(start)), times)

    peer = {"numpy": "NumPy", "torch": "torch"}[args.peer]
    print(f"us per call, 1 thread, {args.n} elements; arrays 0/16/32/48 bytes into a "
          f"64-byte line; best of {args.repeats} x {args.calls} in each of {args.procs} "
          f"processes; 'spread' is the slowest start over the fastest")
    rows = list(dict.fromkeys(row for _, row, _ in best))

    def cells(times: list) -> str:
        if None in times:
            return f"{'-':>31s} {'-':>6s}"
        us = [t * 1e6 for t in times]
        return f"{' '.join(f'{v:7.2f}' for v in us)} {max(us) / min(us):6.2f}"

    for name, _ in builds:
        print(f"\n{name}:" if len(builds) > 1 else "")
        print(f"  {'row':24s} {'ours at 0/16/32/48':>30s} {'spread':>6s}   "
              f"{peer + ' at 0/16/32/48':>30s} {'spread':>6s}")
        for row in rows:
            t = [best.get((name, row, s)) for s in STARTS]
            if None in t:
                continue
            print(f"  {row:24s} {cells([x[0] for x in t])}   {cells([x[1] for x in t])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"variant": v, "row": r, "start": s, "ours_s": t[0], f"{args.peer}_s": t[1]}
                       for (v, r, s), t in best.items()], f, indent=1)


if __name__ == "__main__":
    main()
