"""Each kernel variant of this build uses its target's instruction set
(objdump of the static libraries the build left; tools/bench/check_isa.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import dispatch._core
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "bench"))
import check_isa

BUILD = Path(dispatch._core.__file__).resolve().parents[1]
VARIANTS = check_isa.scan(BUILD) if shutil.which("objdump") else []
pytestmark = pytest.mark.skipif(not VARIANTS, reason="needs objdump and an in-tree build dir")


def test_every_variant_uses_its_targets_isa_and_nothing_wider():
    problems = {f"{v.source} {v.target}": v.problems() for v in VARIANTS if v.problems()}
    assert problems == {}


@pytest.mark.parametrize("source", ["arith", "addcmul", "sum", "int_arith"])
def test_bit_identical_kernels_never_fuse_multiply_add(source):
    fused = {v.target: v.fma for v in VARIANTS if v.source == source and v.fma}
    assert fused == {}


def test_exp_log_fuses_on_the_fma_targets():
    fma = {v.target: v.fma for v in VARIANTS if v.source == "exp_log"}
    assert fma.get("AVX512_SKX", 0) > 0 and fma.get("FMA3__AVX2", 0) > 0
    assert fma.get("baseline", 0) == 0
