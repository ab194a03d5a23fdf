"""Follow docs/contributing.md's "Adding a reduction" on a scratch copy of the
checkout, literally: add a throwaway FOLD reduction, `sumsq` (the sum of the
squares), count the files the recipe touched, build the copy, and check the
new operator against NumPy through the public interface.

    python tools/reduction_recipe.py              # apply, count, build, check (under a minute)
    python tools/reduction_recipe.py --no-build   # apply and count only (seconds)

The build is the runtime's whole build with one target per kernel source
(-Dcpu-dispatch=none, no C tests, no CUDA module): 36 s on two cores without
ccache, so tests/test_reduction_recipe.py runs it in every CI run. Exit
status 0 when every check holds; the failing check otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recipe_scratch import apply_to_copy, build_copy, edit, run_check  # noqa: E402

# The recipe's four edits, as docs/contributing.md writes them. The row goes
# before PROD's on purpose: every later id moves, and nothing may care.
ROW = ('    X(SUMSQ, "sumsq", FOLD, INT64, 0, a + x * x,                                      \\\n'
       '      DISPATCH_WRAP_ADD_I64(a, DISPATCH_WRAP_MUL_I64(x, x)), 0)                       \\\n')
ROW_BEFORE = '    X(PROD, "prod", FOLD,'

KERNEL = '''/*@targets baseline */
/* sumsq, the throwaway reduction of tools/reduction_recipe.py: the sum of
 * the squares of n elements `stride` bytes apart, in float64, in order. */
#include "dispatch/cpu_dispatch.h"
#include "simd.h"

#define DEF_SUMSQ(NAME, T)                                                                 \\
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n);  \\
    double DISPATCH_CPU_DISPATCH_CURFX(NAME)(const char *p, intptr_t stride, intptr_t n)   \\
    {                                                                                      \\
        double a = 0;                                                                      \\
        for (intptr_t i = 0; i < n; i++) {                                                 \\
            T v;                                                                           \\
            __builtin_memcpy(&v, p + i * stride, sizeof v);                                \\
            a += (double)v * (double)v;                                                    \\
        }                                                                                  \\
        return a;                                                                          \\
    }

DEF_SUMSQ(dispatch_kernel_sumsq_f32, float)
DEF_SUMSQ(dispatch_kernel_sumsq_f64, double)

#include "kernels_export.h"
DISPATCH_KERNELS_EXPORT(sumsq,
    DISPATCH_KERNELS_REDUCE(FOLD_SUMSQ, FLOAT32, dispatch_kernel_sumsq_f32, 1)
    DISPATCH_KERNELS_REDUCE(FOLD_SUMSQ, FLOAT64, dispatch_kernel_sumsq_f64, 1)
)
#if DISPATCH_CPU_TARGET_IS_BASELINE
#include "sumsq.dispatch.h"
DISPATCH_KERNELS_CHOOSER(sumsq)
#endif
'''

OPERATORS = '''
[[operator]]
schema = "sumsq(Tensor self, *, ScalarType? dtype=None) -> Tensor"
kernel = "reduce"
ctx = "DISPATCH_REDUCE_SUMSQ"
doc = "Sum of the squares of all elements."

[[operator]]
schema = "sumsq.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
kernel = "reduce"
ctx = "DISPATCH_REDUCE_SUMSQ"
doc = "Sum of the squares along dims."
'''

# What the recipe may not touch: the engines, the operator code, CUDA.
ENGINE = ("sources/iterator/", "sources/dispatcher/operators.c", "sources/dispatcher/operators.h",
          "sources/dispatcher/operators_", "sources/cuda/",
          "sources/core/")

CHECK = r'''
import numpy as np
import dispatch
rng = np.random.default_rng(0)
x = rng.standard_normal((37, 129)).astype(np.float32)
t = dispatch.from_numpy(x)
want = (x.astype(np.float64) ** 2).sum()
got = float(dispatch.ops.sumsq(t).item())
assert abs(got - want) <= 1e-6 * want, ("float32 full", got, want)
for dim in (0, 1):
    g = dispatch.ops.sumsq(t, [dim]).numpy()
    w = (x.astype(np.float64) ** 2).sum(axis=dim).astype(np.float32)
    assert g.dtype == np.float32 and np.allclose(g, w, rtol=1e-6), ("float32 dim", dim)
x64 = rng.standard_normal((5, 6, 7))
g = dispatch.ops.sumsq(dispatch.from_numpy(x64)[:, ::2], [0, 2], keepdim=True).numpy()
assert np.allclose(g, (x64[:, ::2] ** 2).sum(axis=(0, 2), keepdims=True), rtol=1e-12), "strided"
i = rng.integers(-1000, 1000, (9, 11), dtype=np.int32)
g = dispatch.ops.sumsq(dispatch.from_numpy(i), [1]).numpy()
assert g.dtype == np.int64 and (g == (i.astype(np.int64) ** 2).sum(axis=1)).all(), "int32 -> int64"
h = (rng.standard_normal(300) * 4).astype(np.float16)
g = dispatch.ops.sumsq(dispatch.from_numpy(h)).numpy()
assert g.dtype == np.float16 and np.isclose(float(g), (h.astype(np.float64) ** 2).sum(),
                                            rtol=1e-3), "float16 through float32"
assert float(dispatch.ops.sumsq(dispatch.tensor(3.0)).item()) == 9.0, "0-dim"
# one long run on two threads: the engine splits only folds made in blocks
# (Note [Fold blocks]); a sum of squares' halves would not combine as a step
dispatch.set_num_threads(2)
for long in (rng.standard_normal(300_000), (rng.standard_normal(300_000) * 0.01).astype(np.float16)):
    g = float(dispatch.ops.sumsq(dispatch.from_numpy(long)).item())
    w = (long.astype(np.float64) ** 2).sum()
    assert abs(g - w) <= 1e-3 * w, ("a long run on two threads", long.dtype, g, w)
dispatch.set_num_threads(1)
# The rows after the new one moved; prod, sum, max keep their meaning.
assert float(dispatch.ops.prod(dispatch.from_numpy(np.arange(1.0, 6.0))).item()) == 120.0
assert float(t.sum().item()) == float(dispatch.ops.sum(t).item())
print("sumsq: every check holds")
'''


def apply_recipe(src: Path) -> None:
    """docs/contributing.md, "Adding a reduction", steps 1-4."""
    # 1. The row.
    edit(src / "sources/include/dispatch/reduction_table.h", ROW_BEFORE, ROW + ROW_BEFORE)
    # 2. Its kernel source.
    (src / "sources" / "kernels" / "sumsq.dispatch.c").write_text(KERNEL)
    # 3. Its meson line.
    edit(src / "sources/kernels/meson.build", "  'prod.dispatch.c',\n",
          "  'prod.dispatch.c',\n  'sumsq.dispatch.c',\n")
    # 4. Its operators.
    table = src / "sources/dispatcher/operators.toml"
    table.write_text(table.read_text() + OPERATORS)


def build_and_check(src: Path, work: Path) -> None:
    run_check(CHECK, work, build_copy(src, work, "sumsq"), "sumsq")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-build", action="store_true", help="apply and count only")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and leave it (default: a temp dir)")
    args = ap.parse_args(argv)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="reduction-recipe-"))
    try:
        src, touched = apply_to_copy(work, apply_recipe)
        print(f"the recipe touched {len(touched)} files: {', '.join(touched)}")
        if len(touched) > 4:
            raise SystemExit(f"recipe: {len(touched)} files, more than 4")
        engine = [f for f in touched if f.startswith(ENGINE)]
        if engine:
            raise SystemExit(f"recipe: it edits the engine or operator code: {engine}")
        if not args.no_build:
            build_and_check(src, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
