"""Time the build of this repository: configure, the package per option set,
and the CUDA module per architecture choice.

    python tools/bench/bench_build.py                  # every row but the slow ones
    python tools/bench/bench_build.py --rows configure,cpu,cuda-ptx -n 3
    python tools/bench/bench_build.py --rows cuda-all  # the release list: ~30 min on 2 cores

Rows (each run a new build dir, ccache off, ninja on every core; the min and
median of N runs are printed, with the core count and the load average):
- configure: `meson setup` with the probe cache warm (Note [Probe cache] in
  the toolkit), nvcc on PATH as found;
- cpu: the package with -Dcuda=disabled, setup + ninja;
- cuda-ptx: the default where no GPU is seen (PTX for compute_75 only), the
  whole package, then the CUDA module alone (its objects and link, the C
  part already built);
- cuda-one: one GPU seen (-Dcuda-arch=9.0+PTX: SASS for it and its PTX),
  the same two figures;
- cuda-all: -Dcuda-arch=all (SASS for every default architecture and PTX of
  the highest), the same two figures; not in the default rows;
- pip: `pip wheel . --no-deps` with build isolation, as README's first
  command builds (its build requirements come from the index); not in the
  default rows.
No row asserts anything: this is a benchmark, quoted in docs/performance.md's build table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CUDA_ROWS = {"cuda-ptx": [], "cuda-one": ["-Dcuda-arch=9.0+PTX"], "cuda-all": ["-Dcuda-arch=all"]}
DEFAULT_ROWS = ["configure", "cpu", "cuda-ptx", "cuda-one"]


def _env(cache: Path) -> dict:
    return {**os.environ, "CCACHE_DISABLE": "1", "DISPATCHGEN_CACHE_DIR": str(cache)}


def _run(cmd: list, env: dict, cwd: Path | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return dt


def _setup(build: Path, options: list, env: dict) -> float:
    shutil.rmtree(build, ignore_errors=True)
    return _run(["meson", "setup", str(build), str(REPO), *options], env)


def _targets(build: Path) -> list:
    """Every ninja target of the build dir."""
    out = subprocess.run(["ninja", "-C", str(build), "-t", "targets", "all"], capture_output=True,
                         text=True, check=True).stdout
    return [line.split(":")[0] for line in out.splitlines()]


def _is_cuda_module(target: str) -> bool:
    """The CUDA module's target (dispatch/_cuda.<ext-suffix>)."""
    return target.startswith("dispatch/_cuda.") and target.endswith(".so")


def time_row(row: str, where: Path, jobs: int, cache: Path) -> dict:
    """{figure name: seconds} for one run of one row."""
    env = _env(cache)
    build = where / "b"
    if row == "configure":
        return {"configure (meson setup, probe cache warm)": _setup(build, [], env)}
    if row == "cpu":
        t = _setup(build, ["-Dcuda=disabled"], env)
        t += _run(["ninja", "-C", str(build), "-j", str(jobs)], env)
        return {"package, -Dcuda=disabled (setup + build)": t}
    if row in CUDA_ROWS:
        opts, label = CUDA_ROWS[row], {"cuda-ptx": "no GPU seen: PTX compute_75",
                                       "cuda-one": "one GPU seen: sm_90 + PTX",
                                       "cuda-all": "-Dcuda-arch=all"}[row]
        t = _setup(build, opts, env)
        t += _run(["ninja", "-C", str(build), "-j", str(jobs)], env)
        _setup(build, opts, env)  # again, the C part first, untimed, then the module alone
        targets = _targets(build)
        (module,) = [t for t in targets if _is_cuda_module(t)] or [None]
        if module is None:
            raise SystemExit(f"{build}: no CUDA module target (is nvcc on PATH?)")
        rest = [t for t in targets if t.endswith((".so", ".a")) and not _is_cuda_module(t)]
        _run(["ninja", "-C", str(build), "-j", str(jobs), *rest], env)
        alone = _run(["ninja", "-C", str(build), "-j", str(jobs), module], env)
        return {f"package, {label} (setup + build)": t, f"CUDA module alone, {label}": alone}
    if row == "pip":
        out = where / "wheel"
        shutil.rmtree(out, ignore_errors=True)
        return {"pip wheel . (build isolation, default options)":
                _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                      str(REPO)], env)}
    raise SystemExit(f"unknown row {row!r} (rows: configure, cpu, {', '.join(CUDA_ROWS)}, pip)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=1)
    ap.add_argument("--rows", default=",".join(DEFAULT_ROWS),
                    help=f"comma separated (default {','.join(DEFAULT_ROWS)}; also cuda-all, pip)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    rows = [r for r in args.rows.split(",") if r]
    if any(r.startswith("cuda") for r in rows) and not shutil.which("nvcc"):
        raise SystemExit("the cuda rows need nvcc on PATH")
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        cache = Path(tmp) / "probe-cache"
        _setup(Path(tmp) / "warm", ["-Dcuda=disabled"], _env(cache))  # fills the probe cache
        for _ in range(args.runs):
            for row in rows:
                for what, t in time_row(row, Path(tmp), args.jobs, cache).items():
                    results.setdefault(what, []).append(t)
    load = os.getloadavg()
    print(f"build times, {args.runs} run(s) each, ninja -j {args.jobs}, {os.cpu_count()} cores, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"{'what':58} {'min s':>8} {'median s':>9}")
    for what, times in results.items():
        print(f"{what:58} {min(times):8.1f} {statistics.median(times):9.1f}")


if __name__ == "__main__":
    main()
