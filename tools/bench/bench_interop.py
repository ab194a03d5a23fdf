"""NumPy interop calls beside torch's: from_numpy, .numpy(), np.asarray, tensor().

    python tools/bench/bench_interop.py
    python tools/bench/bench_interop.py --variant before=/tmp/old --variant after=

What a call costs where NumPy and the runtime meet, whatever the size: each
fresh process times, at 1 thread, `from_numpy` of a contiguous (256, 256)
float32 array, of its every other column and of a 4-element int64 array;
`t.numpy()` and `np.asarray(t)` of a tensor; `tensor()` of a 4-element
array (a copy); torch's same call on the same arrays beside each. The best
of --repeats x --calls per process, the best of --procs processes.

--variant NAME=DIR (repeatable; compared_builds.py) puts DIR first on
PYTHONPATH for that variant's processes (an empty DIR: the installed package);
the variants' processes alternate.
"""

from __future__ import annotations

import argparse

import compared_builds  # tools/bench, beside this script

ROWS = ("from_numpy contiguous", "from_numpy every other column", "from_numpy 4 int64",
        "numpy()", "np.asarray", "tensor() of 4 int64")

CHILD = r"""
import json, sys, timeit
import numpy as np
import dispatch
import torch
dispatch.set_num_threads(1)
torch.set_num_threads(1)
calls, repeats = int(sys.argv[1]), int(sys.argv[2])
square = np.ones((256, 256), dtype=np.float32)
columns, small = square[:, ::2], np.arange(4)
ours, theirs = dispatch.from_numpy(square), torch.from_numpy(square)
pairs = {
    "from_numpy contiguous": (lambda: dispatch.from_numpy(square),
                              lambda: torch.from_numpy(square)),
    "from_numpy every other column": (lambda: dispatch.from_numpy(columns),
                                      lambda: torch.from_numpy(columns)),
    "from_numpy 4 int64": (lambda: dispatch.from_numpy(small), lambda: torch.from_numpy(small)),
    "numpy()": (ours.numpy, theirs.numpy),
    "np.asarray": (lambda: np.asarray(ours), lambda: np.asarray(theirs)),
    "tensor() of 4 int64": (lambda: dispatch.tensor(small), lambda: torch.tensor(small)),
}
out = {}
for row, fs in pairs.items():
    for f in fs:
        f()
    out[row] = [min(timeit.repeat(f, number=calls, repeat=repeats)) / calls for f in fs]
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    compared_builds.add_timing_options(ap, calls=2000)
    args = ap.parse_args()
    builds = compared_builds.parse(ap, args.variant)
    best = compared_builds.best_rows(CHILD, [str(args.calls), str(args.repeats)], builds,
                                     args.procs)
    print(f"us per call, 1 thread; best of {args.repeats} x {args.calls} in each of "
          f"{args.procs} processes")
    print(f"  {'':32s}" + "".join(f"{name:>10s}" for name, _ in builds) + f"{'torch':>10s}")
    for row in ROWS:
        torch_s = min(best[(name, row)][1] for name, _ in builds)
        print(f"  {row:32s}" + "".join(f"{best[(name, row)][0] * 1e6:10.2f}"
                                       for name, _ in builds) + f"{torch_s * 1e6:10.2f}")
    if args.json:
        compared_builds.write_rows(args.json, best)


if __name__ == "__main__":
    main()
