"""Accuracy beside the peers: the largest error in ulps, and how many results
are not the correctly rounded one, of ours, torch's and NumPy's exp, log,
expm1, log1p, tanh and sqrt, float32 and float64, on the same random inputs.

The matrix (bench_matrix.py) says who is faster; this says what each one's
speed buys. An accuracy rule of ours excuses a slower row only where the
peer is less accurate (tools/bench/matrix_rules.py); where the peer is
faster and as accurate or more, the row is work left, and this shows it.

    python tools/bench/bench_accuracy.py                  # 1M inputs a row, about a minute
    python tools/bench/bench_accuracy.py --samples 100000 --peers numpy

Inputs: float bit patterns drawn uniformly between the ends of each
function's range (so every binade gets its share, as a log scale would),
both signs where the function takes them. The reference is the same
function one format wider, rounded to the dtype for the ulp: float64 for
float32 (its own error is 2^-29 of a float32 ulp), and np.longdouble for
float64 where it is wider (x87's 64-bit significand: 2^-11 of an ulp);
where long double is float64 (Windows, macOS on Apple silicon) the
float64 rows are left out and the output says so.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

FUNCTIONS = ("exp", "log", "expm1", "log1p", "tanh", "sqrt")
# (low, high, both signs) of the magnitudes drawn, per function and dtype:
# results stay finite and normal, and tanh's and exp's flat ends stay short.
RANGES = {
    ("exp", "float32"): (2.0**-30, 87.0, True), ("exp", "float64"): (2.0**-60, 708.0, True),
    ("log", "float32"): (2.0**-126, 3e38, False), ("log", "float64"): (2.0**-1022, 1e308, False),
    ("expm1", "float32"): (2.0**-30, 87.0, True), ("expm1", "float64"): (2.0**-60, 708.0, True),
    ("log1p", "float32"): (2.0**-30, 3e38, False), ("log1p", "float64"): (2.0**-60, 1e308, False),
    ("tanh", "float32"): (2.0**-14, 10.0, True), ("tanh", "float64"): (2.0**-27, 20.0, True),
    ("sqrt", "float32"): (2.0**-126, 3e38, False), ("sqrt", "float64"): (2.0**-1022, 1e308, False),
}
WIDER = {"float32": np.float64, "float64": np.longdouble}


def draw(rng: np.random.Generator, lo: float, hi: float, signed: bool, dtype: str,
         n: int) -> np.ndarray:
    """n values of dtype, bit patterns uniform between lo and hi; half negated
    where signed."""
    ints = np.int32 if dtype == "float32" else np.int64
    a, b = np.array([lo, hi], dtype=dtype).view(ints)
    x = rng.integers(a, b, n, dtype=ints, endpoint=True).view(dtype)
    if signed:
        x[: n // 2] = -x[: n // 2]
    return x


def ulps(got: np.ndarray, ref: np.ndarray, dtype: str) -> tuple[float, float]:
    """(the largest |got - ref| in ulps of ref rounded to dtype, the share of
    results that are not the correctly rounded one: more than half an ulp
    from ref, beyond the reference's own error); ref in a wider format."""
    nearest = ref.astype(dtype)
    spacing = np.spacing(np.abs(nearest)).astype(ref.dtype)
    err = np.abs(got.astype(ref.dtype) - ref) / spacing
    own = 2.0 ** (np.finfo(dtype).nmant - np.finfo(ref.dtype).nmant)  # ref's error, in ulps
    return float(err.max()), float(np.mean(err > 0.5 + own))


def results(peer: str, fn: str, x: np.ndarray) -> np.ndarray:
    if peer == "ours":
        import dispatch
        return getattr(dispatch, fn)(dispatch.tensor(x)).numpy()
    if peer == "torch":
        import torch
        return getattr(torch, fn)(torch.from_numpy(x)).numpy()
    return getattr(np, fn)(x)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000, help="inputs a row (1000000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peers", default="torch numpy",
                    help="of torch and numpy, those to run beside ours ('torch numpy')")
    ap.add_argument("--functions", default=" ".join(FUNCTIONS))
    args = ap.parse_args(argv)
    if args.samples < 1:
        ap.error(f"--samples must be at least 1, got {args.samples}")
    peers = ["ours"]
    for p in args.peers.split():
        if p not in ("torch", "numpy"):
            ap.error(f"--peers takes torch and numpy, got {p!r}")
        if p == "torch":
            try:
                import torch
            except ImportError:
                print("torch is not installed: its column is left out")
                continue
            torch.set_num_threads(1)
        peers.append(p)
    functions = args.functions.split()
    unknown = [f for f in functions if f not in FUNCTIONS]
    if unknown:
        ap.error(f"--functions takes {', '.join(FUNCTIONS)}, got {', '.join(unknown)}")
    dtypes = ["float32", "float64"]
    if np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant:
        print("long double is float64 here: no reference for the float64 rows, left out")
        dtypes = ["float32"]
    rng = np.random.default_rng(args.seed)
    print(f"largest error in ulps (share of results not correctly rounded), "
          f"{args.samples} inputs a row, seed {args.seed}")
    print(f"{'function':<16}" + "".join(f"{p:>22}" for p in peers))
    for fn in functions:
        for dtype in dtypes:
            lo, hi, signed = RANGES[fn, dtype]
            x = draw(rng, lo, hi, signed, dtype, args.samples)
            if fn == "log1p":  # half of them in (-1, 0)
                below_one = float(np.nextafter(np.array(1.0, dtype), 0))
                half = args.samples // 2
                x[:half] = -draw(rng, lo, below_one, False, dtype, half)
            with np.errstate(all="ignore"):
                ref = getattr(np, fn)(x.astype(WIDER[dtype]))
                cells = []
                for p in peers:
                    worst, share = ulps(results(p, fn, x), ref, dtype)
                    cells.append(f"{worst:9.3f} ({share:8.4%})")
            print(f"{fn + ' ' + dtype:<16}" + "".join(f"{c:>22}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
