"""amax/amin whose answer is a zero: the search for the first equal element.

    python tools/bench/bench_zero_extremes.py
    python tools/bench/bench_zero_extremes.py --variant before=/tmp/old --variant after=

max and min answer with the first element equal to the extreme (Note [Which
zero, which NaN] in sources/kernels/sum.dispatch.c), so where the extreme is a
zero, whose sign the vector pass cannot tell, the kernel looks for the first
zero (Note [The first zero by vectors]). Non-negative data makes that the
common case for amin. Each fresh process times amin and amax of a (512, 512)
matrix over all elements, dim 0 and dim 1, 1 thread, torch's same call on the
same memory beside it, for four kinds of values: uniform in [0, 1) (no zero),
the integers 0-99 (a zero about 100 elements into each row and column), 1-100
(none), and a ReLU of normal values (half of them zeros). The best of
--repeats x --calls per process, the best of --procs processes.

--variant NAME=DIR (repeatable; compared_builds.py) puts DIR first on
PYTHONPATH for that variant's processes (an empty DIR: the installed package);
the variants' processes alternate.
"""

from __future__ import annotations

import argparse

import compared_builds  # tools/bench, beside this script

KINDS = ("uniform", "ints0-99", "ints1-100", "relu")

CHILD = r"""
import json, sys, timeit
import numpy as np
import dispatch
import torch
dispatch.set_num_threads(1)
torch.set_num_threads(1)
dtype, calls, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
values = {"uniform": rng.random((512, 512)), "ints0-99": rng.integers(0, 100, (512, 512)),
          "ints1-100": rng.integers(1, 101, (512, 512)),
          "relu": np.maximum(rng.standard_normal((512, 512)), 0)}
out = {}
for kind, v in values.items():
    a = np.ascontiguousarray(v.astype(dtype))
    ours, theirs = dispatch.from_numpy(a), torch.from_numpy(a)
    for op in ("amin", "amax"):
        for dim in ("all", 0, 1):
            args = () if dim == "all" else (dim,)
            f = lambda: getattr(dispatch.ops, op)(ours, *args)
            g = lambda: getattr(torch, op)(theirs, *args)
            f(), g()
            out[f"{op} {kind} {dim}"] = [
                min(timeit.repeat(h, number=calls, repeat=repeats)) / calls for h in (f, g)]
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    compared_builds.add_timing_options(ap, calls=50)
    args = ap.parse_args()
    builds = compared_builds.parse(ap, args.variant)
    best = compared_builds.best_rows(CHILD, [args.dtype, str(args.calls), str(args.repeats)],
                                     builds, args.procs)
    print(f"us per call, (512, 512) {args.dtype}, 1 thread; ours (torch); best of "
          f"{args.repeats} x {args.calls} in each of {args.procs} processes")
    for name, _ in builds:
        print(f"\n{name}:" if len(builds) > 1 else "")
        print(f"  {'':10s}" + "".join(f"{op + ' ' + str(d):>18s}" for op in ("amin", "amax")
                                       for d in ("all", 0, 1)))
        for kind in KINDS:
            cells = [best[(name, f"{op} {kind} {d}")] for op in ("amin", "amax")
                     for d in ("all", 0, 1)]
            print(f"  {kind:10s}" + "".join(f"{o * 1e6:9.1f} {f'({t * 1e6:.1f})':>8s}"
                                            for o, t in cells))
    if args.json:
        compared_builds.write_rows(args.json, best)


if __name__ == "__main__":
    main()
