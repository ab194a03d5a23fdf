#!/usr/bin/env python3
"""Time `dispatchgen meson-variants` on a `sources =` list doubled from 1K to
256K names (issue 45) and print each doubling's time ratio: about 2 for a
linear cost, about 4 for a quadratic one. The files are not created, so the
run ends at the first missing one, after the whole file is read and parsed.

    python3 tools/bench/bench_toolkit_scale.py [--max 262144]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "dispatchgen"


def _run(args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    return subprocess.run([sys.executable, "-m", "dispatchkit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=256 * 1024)
    ap.add_argument("--cc", default="gcc")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        proc = _run(["configure", "--cc", ns.cc, "--outdir", "build"], work)
        if proc.returncode:
            sys.exit(f"configure failed: {proc.stderr.strip()}")
        n, last = 1024, None
        print(f"{'sources':>8} {'seconds':>8} {'ratio':>6}")
        while n <= ns.max:
            (work / "v.ini").write_text("[library]\nname = mylib\n[avx2]\nsources = "
                                        + " ".join(f"f{i}.c" for i in range(n))
                                        + "\nsum = s\n")
            start = time.perf_counter()
            _run(["meson-variants", "v.ini", "--config", "build/dispatch_config.json",
                  "--outdir", "out"], work)
            took = time.perf_counter() - start
            ratio = f"{took / last:6.2f}" if last else ""
            print(f"{n:>8} {took:8.2f} {ratio:>6}", flush=True)
            last, n = took, n * 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
