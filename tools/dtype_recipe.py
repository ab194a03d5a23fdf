"""Follow docs/contributing.md's "Adding a dtype" on a scratch copy of the
checkout, literally, for an integer (`uint16`: one line appended to the dtype
list) or a narrow float (`float8_e4m3fn`: its line in the list and its row of
the narrow float formats); count the files each recipe touched (outside
tests/: the script adds no test files, it checks through the public
interface itself), build the copy, check the new dtype through the public
interface (the integer against NumPy, the float against a pure-Python
reference of its format: tools/narrow_float_check.py), then run
tests/test_tables_agree.py against the copy's build.

    python tools/dtype_recipe.py                  # the integer: apply, count, build, check
    python tools/dtype_recipe.py float            # the narrow float
    python tools/dtype_recipe.py integer float    # both, each counted alone, one build of both
    python tools/dtype_recipe.py float --no-build # apply and count only (seconds)

The build is the runtime's whole build with one target per kernel source
(-Dcpu-dispatch=none, no C tests, no CUDA module), as tools/reduction_recipe.py's
(20 s for both dtypes on 2 cores without ccache; the checks take seconds).
The CUDA module is not built: its device type of an integer, or of a narrow
float stored as its bits, comes from the same lists
(sources/cuda/cuda_device_types.cuh), which the recipe leaves as they are.
Exit status 0 when every check holds; the failing check otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recipe_scratch import apply_to_copy, build_copy, edit, run_check  # noqa: E402

LIMIT = 4  # issue 39: an integer dtype in at most 4 files
FLOAT_LIMIT = 6  # and a narrow float in at most 6

# The integer recipe's one edit, as docs/contributing.md writes it: a line
# appended to DISPATCH_FORALL_DTYPES (the last line gains its backslash).
LIST = "sources/include/dispatch/dtype.h"
LAST = '    X(A, BFLOAT16, "bfloat16", bf16, dispatch_bfloat16, 2, FLOAT, "", "", Bfloat)\n'
LINE = '    X(A, UINT16,   "uint16",   u16,  uint16_t,          2, INT,   "u", "H", UInt)\n'

# The narrow float recipe's two edits of the same file (Note [Narrow floats]
# in dtype.h): its line in DISPATCH_FORALL_DTYPES (stored as its bits, no
# NumPy kind or struct format, DLPack's kDLFloat8_e4m3fn) and its format, a
# row of DISPATCH_FORALL_BITS_FLOATS (4 exponent bits, 3 mantissa bits,
# finite with one NaN).
FLOAT_LINE = ('    X(A, FLOAT8_E4M3FN, "float8_e4m3fn", f8e4m3fn, uint8_t, 1, FLOAT, "", "", '
              'Float8_e4m3fn)\n')
FORMAT_LAST = "    X(A, BFLOAT16, bf16, dispatch_bfloat16, 8, 7, IEEE)\n"
FORMAT_LINE = "    X(A, FLOAT8_E4M3FN, f8e4m3fn, uint8_t, 4, 3, FN)\n"

CHECK = r'''
import numpy as np
import dispatch
from dispatch import uint16, int64, float32
U = np.uint16
assert uint16.num == dispatch.bfloat16.num + 1, "appended: the ids before it are kept"
assert (uint16.itemsize, uint16.typestr, uint16.is_floating_point) == (2, "<u2", False)
rng = np.random.default_rng(0)
a = rng.integers(0, 65536, (7, 33), dtype=U)
b = rng.integers(0, 65536, (7, 33), dtype=U)
ta, tb = dispatch.from_numpy(a), dispatch.from_numpy(b)
with np.errstate(over="ignore"):
    for name, got, want in [("add", ta + tb, a + b), ("sub", ta - tb, a - b),
                            ("mul", ta * tb, a * b), ("scalar", ta + 1, a + U(1)),
                            ("maximum", dispatch.ops.maximum(ta, tb), np.maximum(a, b)),
                            ("neg", -ta, (0 - a.astype(np.int64)).astype(U)),
                            ("abs", abs(ta), a)]:
        g = got.numpy()
        assert g.dtype == U and (g == want).all(), ("wrapping arithmetic", name)
for name, got, want in [("lt", ta < tb, a < b), ("eq", ta == tb, a == b),
                        ("ge", ta >= tb, a >= b)]:
    g = got.numpy()
    assert g.dtype == np.bool_ and (g == want).all(), ("comparison", name)
s = ta.sum()
assert s.dtype is int64 and s.item() == int(a.astype(np.int64).sum()), "sum -> int64"
g = dispatch.ops.sum(ta, [1]).numpy()
assert g.dtype == np.int64 and (g == a.astype(np.int64).sum(axis=1)).all(), "sum(dim)"
assert ta.max().item() == a.max() and ta.min().item() == a.min(), "max, min"
assert dispatch.ops.argmax(ta).item() == a.argmax(), "argmax"
v, i = dispatch.ops.max(ta, 1)
assert v.dtype is uint16 and (v.numpy() == a.max(axis=1)).all(), "max(dim) values"
assert (i.numpy() == a.argmax(axis=1)).all(), "max(dim) indices"
assert (dispatch.ops.argmin(ta, 0).numpy() == a.argmin(axis=0)).all(), "argmin(dim)"
top = dispatch.tensor([1, 65535, 65535, 2], dtype=uint16)
assert dispatch.ops.argmax(top).item() == 1, "the first of equal maxima"
# casts: to and from float32 and int64, out-of-range values wrapped by the
# rule of Note [Float to integer casts] (NumPy's on x86-64)
f = np.array([0.0, 1.5, 65535.0, 70000.25, -1.0, -3.75, 1e6], np.float32)
g = dispatch.from_numpy(f).to(uint16).numpy()
assert g.dtype == U and (g == f.astype(np.int32).astype(U)).all(), ("float32 -> uint16", g)
assert (ta.to(float32).numpy() == a.astype(np.float32)).all(), "uint16 -> float32"
assert (ta.to(int64).numpy() == a.astype(np.int64)).all(), "uint16 -> int64"
i64 = np.array([0, 65535, 65536, -1, 2**40 + 7, -2**63], np.int64)
assert (dispatch.from_numpy(i64).to(uint16).numpy() == i64.astype(U)).all(), "int64 -> uint16"
# promotion: the narrowest integer holding both ranges
for other, want in [(dispatch.uint8, uint16), (dispatch.int8, dispatch.int32),
                    (dispatch.int16, dispatch.int32), (dispatch.int32, dispatch.int32),
                    (dispatch.int64, int64), (dispatch.bool, uint16),
                    (dispatch.float16, dispatch.float16)]:
    got = (ta + dispatch.zeros(1, dtype=other)).dtype
    assert got is want, ("promotion", other, got, want)
# tensor([...], dtype=uint16): Python ints must fit (negatives down to -65535 wrap)
assert dispatch.tensor([0, 65535, -1], dtype=uint16).tolist() == [0, 65535, 65535]
for bad in ([65536], [-65536], [1e6]):
    try:
        dispatch.tensor(bad, dtype=uint16)
    except ValueError as e:
        assert "uint16" in str(e), e
    else:
        raise AssertionError(("out of range accepted", bad))
try:
    dispatch.ops.add(ta, tb, alpha=65536)
except ValueError as e:
    assert "uint16" in str(e), e
else:
    raise AssertionError("alpha out of uint16's range accepted")
# NumPy interop both ways, and tensor() of a NumPy array
assert dispatch.from_numpy(a).numpy().dtype == U
assert (dispatch.tensor(a).numpy() == a).all() and dispatch.tensor(a).dtype is uint16
assert np.asarray(ta).dtype == U
# the dtypes before it keep their behaviour
assert (dispatch.tensor([200], dtype=dispatch.uint8) + dispatch.tensor([-1], dtype=dispatch.int8)
        ).dtype is dispatch.int16
assert dispatch.tensor([255], dtype=dispatch.uint8).sum().item() == 255
print("uint16: every check holds")
'''


def apply_recipe(src: Path) -> None:
    """docs/contributing.md, "Adding a dtype", for an integer: the list's line."""
    edit(src / LIST, LAST, LAST[:-1] + " \\\n" + LINE)


def apply_float_recipe(src: Path) -> None:
    """docs/contributing.md, "Adding a dtype", for a narrow float: its line and
    its format's row. After the integer's line when both are applied."""
    path = src / LIST
    last = LINE if LINE in path.read_text() else LAST
    edit(path, last, last[:-1] + " \\\n" + FLOAT_LINE)
    edit(path, FORMAT_LAST, FORMAT_LAST[:-1] + " \\\n" + FORMAT_LINE)


# name: (its dtype, its limit, what applies it)
RECIPES = {"integer": ("uint16", LIMIT, apply_recipe),
           "float": ("float8_e4m3fn", FLOAT_LIMIT, apply_float_recipe)}


def float_check(src: Path, after: str) -> str:
    """The check of the narrow float: the copy's tools/narrow_float_check.py."""
    script = src / "tools" / "narrow_float_check.py"
    return ("import runpy, sys\n"
            f"sys.argv = [{str(script)!r}, 'float8_e4m3fn', '--appended-after', {after!r}]\n"
            f"runpy.run_path({str(script)!r}, run_name='__main__')\n")


def build_and_check(src: Path, work: Path, recipes: list[str]) -> None:
    what = " and ".join(RECIPES[r][0] for r in recipes)
    start = time.monotonic()
    env = build_copy(src, work, what)
    print(f"built the copy with {what} in {time.monotonic() - start:.0f} s")
    if "integer" in recipes:
        start = time.monotonic()
        run_check(CHECK, work, env, "uint16")
        print(f"checked uint16 in {time.monotonic() - start:.1f} s")
    # The copy's own table test, against the copy's build (importlib mode:
    # the source package of the copy is not imported).
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "0",
                        "-p", "no:cacheprovider", "--import-mode=importlib",
                        str(src / "tests" / "test_tables_agree.py")],
                       cwd=work, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"recipe: tests/test_tables_agree.py fails with {what}:\n" +
                         r.stdout[-4000:] + r.stderr[-2000:])
    print("tests/test_tables_agree.py: " + r.stdout.strip().splitlines()[-1])
    if "float" in recipes:
        start = time.monotonic()
        run_check(float_check(src, "uint16" if "integer" in recipes else "bfloat16"), work, env,
                  "float8_e4m3fn")
        print(f"checked float8_e4m3fn in {time.monotonic() - start:.1f} s")


def count(work: Path, name: str) -> Path:
    """One recipe applied alone on a copy in work; its count checked; the copy."""
    dtype, limit, apply = RECIPES[name]
    src, touched = apply_to_copy(work, apply)
    print(f"{dtype}: the recipe touched {len(touched)} files (tests/ not counted, none added): "
          f"{', '.join(touched)}")
    if any(f.startswith("tests/") for f in touched):
        raise SystemExit("recipe: it edits tests/, which the count leaves out")
    if len(touched) > limit:
        raise SystemExit(f"recipe: {len(touched)} files for {dtype}, more than {limit}")
    return src


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipes", nargs="*", metavar="integer|float",
                    help="the recipes to follow (default: integer); two: one build of both")
    ap.add_argument("--no-build", action="store_true", help="apply and count only")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and leave it (default: a temp dir)")
    args = ap.parse_args(argv)
    for r in args.recipes:  # (argparse's choices refuse an empty nargs="*")
        if r not in RECIPES:
            ap.error(f"no recipe {r!r} (choose from {', '.join(RECIPES)})")
    recipes = [r for r in RECIPES if r in (args.recipes or ["integer"])]  # the integer first
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dtype-recipe-"))
    try:
        if len(recipes) == 1:
            src = count(work, recipes[0])
        else:  # each counted on its own copy; both applied on the one that is built
            for name in recipes:
                count(work / name, name)
            src, _ = apply_to_copy(work, lambda s: [RECIPES[r][2](s) for r in recipes])
        if not args.no_build:
            build_and_check(src, work, recipes)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
