"""tools/bench/bench_accuracy.py: the largest error in ulps and the share of
results not correctly rounded, ours beside the peers, on the same inputs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

TOOL = Path(__file__).resolve().parents[1] / "tools" / "bench" / "bench_accuracy.py"


@pytest.fixture(scope="module")
def tool():
    return load_file(TOOL, "bench_accuracy")


@pytest.mark.parametrize("dtype, wider", [("float32", np.float64), ("float64", np.longdouble)])
def test_ulps_counts_a_neighbour_as_one_ulp_and_the_nearest_as_correctly_rounded(tool, dtype,
                                                                                  wider):
    if np.finfo(np.longdouble).nmant <= 52 and wider is np.longdouble:
        pytest.skip("long double is float64 here")
    ref = np.array([1.0, 3.0, 1e-3], dtype=wider) / wider(3)  # between two floats of dtype
    nearest = ref.astype(dtype)
    worst, share = tool.ulps(nearest, ref, dtype)
    assert worst <= 0.5 and share == 0.0
    up = np.nextafter(nearest, np.array(np.inf, dtype))
    worst, share = tool.ulps(up, ref, dtype)
    assert 0.5 < worst < 1.5 and share > 0.0


def test_draw_spans_every_binade_between_the_ends_with_both_signs(tool):
    x = tool.draw(np.random.default_rng(1), 2.0**-20, 8.0, True, "float32", 20000)
    assert x.dtype == np.float32 and (np.abs(x) >= 2.0**-20).all() and (np.abs(x) <= 8).all()
    seen = set(np.frexp(np.abs(x))[1].tolist())  # [2^-20, 8]: each binade, 8 itself rarely
    assert set(range(-19, 4)) <= seen <= set(range(-19, 5)), sorted(seen)
    assert (x < 0).sum() == 10000


def test_a_run_prints_a_row_per_function_and_dtype_and_ours_keeps_its_bounds(tool, capsys):
    assert tool.main(["--samples", "4000", "--peers", "numpy"]) == 0
    out = capsys.readouterr().out
    rows = {m[1]: (float(m[2]), float(m[3])) for m in re.finditer(
        r"^(\w+ float\d\d)\s+([\d.]+) \(\s*([\d.]+)%\)\s+[\d.]+ \(", out, re.M)}
    dtypes = 2 if np.finfo(np.longdouble).nmant > 52 else 1
    assert len(rows) == 6 * dtypes, out
    # sqrt is the hardware's, correctly rounded (docs/semantics.md); log keeps
    # its documented 1 ulp (Note [Polynomials by Estrin]'s bounds).
    assert rows["sqrt float32"] == (0.5, 0.0), out
    assert rows["log float32"][0] <= 1.0, out


@pytest.mark.parametrize("args, says", [(["--samples", "0"], "got 0"),
                                        (["--peers", "jax"], "got 'jax'"),
                                        (["--functions", "sin"], "got sin")])
def test_bad_options_name_the_value(tool, capsys, args, says):
    with pytest.raises(SystemExit) as e:
        tool.main(args)
    assert e.value.code == 2
    assert says in capsys.readouterr().err
