"""Does a new large size still reuse its blocks once older sizes fill the cache?

    python tools/bench/bench_block_cache.py                      # 3 processes
    python tools/bench/bench_block_cache.py --variant before=/tmp/old --variant after=

Each fresh process first makes and frees eight float64 tensors of 4 to 32 MiB
(every slot of the runtime's cache of freed large blocks, Note [CPU
allocations] in sources/core/storage.c), then times ``a + b`` of --n float64
elements (default 16M: a 128 MiB result), --calls calls after --warmup
untimed ones, and counts the minor page faults the process took during them.
A result whose block is reused takes none; one whose block the cache refused
faults its pages in again on every call (Note [The cache keeps the newest
blocks]: the old sizes' blocks make room once they are stale).

--variant NAME=DIR (repeatable; compared_builds.py) puts DIR first on PYTHONPATH for
that variant's processes (an empty DIR: the installed package); the variants'
processes alternate, so a before/after comparison shares the machine's noise.
"""

from __future__ import annotations

import argparse
import sys

import compared_builds  # tools/bench, beside this script

CHILD = """
import resource, sys, time
import dispatch as d
d.set_num_threads(1)
n, calls, warmup = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
a = d.ones(n, dtype=d.float64)
b = d.ones(n, dtype=d.float64)
held = [d.zeros((1 << 19) * k, dtype=d.float64) for k in range(1, 9)]  # 4..32 MiB
del held
for _ in range(warmup):  # untimed: the older blocks go stale and make room
    a + b
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t0 = time.perf_counter()
for _ in range(calls):
    r = a + b
    del r
t = (time.perf_counter() - t0) / calls
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls
print(f"{t * 1e3:.1f} {faults:.0f}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=3, help="fresh processes per variant (3)")
    ap.add_argument("--n", type=int, default=1 << 24, help="elements of a and b (16M)")
    ap.add_argument("--calls", type=int, default=5, help="timed calls per process (5)")
    ap.add_argument("--warmup", type=int, default=40,
                    help="untimed calls first (40: more than the frees a block stays in "
                         "the cache untaken before it counts as stale, 32)")
    compared_builds.add_option(ap)
    args = ap.parse_args()
    builds = compared_builds.parse(ap, args.variant)
    print(f"a + b of {args.n} float64 after eight other sizes were freed; "
          f"ms and minor faults per call, {args.calls} calls a process")
    for _ in range(args.procs):
        for name, path in builds:
            p = compared_builds.run_child(CHILD, [str(args.n), str(args.calls), str(args.warmup)], path)
            if p.returncode != 0:
                sys.exit(f"bench_block_cache: a child failed: {p.stderr.strip().splitlines()[-1:]}")
            ms, faults = p.stdout.split()
            print(f"  {name:12s} {ms:>8s} ms  {faults:>6s} faults")


if __name__ == "__main__":
    main()
