"""Each kernel variant uses its target's instruction set, with gcc and with
clang: objdump of the per-target static libraries of a meson build of this
repository (tools/bench/check_isa.py)."""

from __future__ import annotations

import platform
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "bench"))
import check_isa  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernel_sources import own_targets  # noqa: E402

pytestmark = pytest.mark.skipif(not shutil.which("objdump"), reason="needs objdump (binutils)")
COMPILERS = ["gcc", "clang"]


@pytest.fixture(scope="module", params=COMPILERS)
def variants(request, meson_tree):
    found = check_isa.scan(meson_tree(request.param))
    assert found, "the build left no per-target kernel libraries"
    return found


def test_every_variant_uses_its_targets_isa_and_nothing_wider(variants):
    problems = {f"{v.source} {v.target}": v.problems() for v in variants if v.problems()}
    assert problems == {}


def test_every_source_builds_exactly_its_own_targets(variants):
    built = {}
    for v in variants:
        built.setdefault(v.source, set()).add(v.target)
    for source in ("arith", "exp_log", "addcmul", "sum", "int_arith", "int_reduce",
                   "half_arith"):
        assert built[source] == set(own_targets(source)), source


def test_streaming_arithmetic_stops_at_avx2_and_the_rest_keeps_avx512():
    # Note [Streaming arithmetic stops at AVX2] in arith.dispatch.c
    for source in ("arith", "int_arith"):
        assert own_targets(source) == ("FMA3__AVX2", "SSE42", "baseline"), source
    # Note [Integer reductions on AVX-512] in int_reduce.dispatch.c
    for source in ("exp_log", "addcmul", "sum", "int_reduce"):
        assert own_targets(source)[0] == "AVX512_SKX", source


def test_integer_reductions_never_gather(variants):
    # Note [Clang gathers the lanes] in int_reduce.dispatch.c: its loops read
    # consecutive elements; clang 14's AVX-512 variant turned them into 1096
    # vpgather (int32 amax() 2.4x its AVX2 variant's time)
    gathers = {v.target: v.gathers for v in variants if v.source == "int_reduce" and v.gathers}
    assert gathers == {}


@pytest.mark.parametrize("source", [
    "arith", "addcmul", "sum", "int_arith", "int_reduce", "half_arith"])
def test_bit_identical_kernels_never_fuse_multiply_add(variants, source):
    fused = {v.target: v.fma for v in variants if v.source == source and v.fma}
    assert fused == {}


def test_exp_log_fuses_on_the_fma_targets(variants):
    fma = {v.target: v.fma for v in variants if v.source == "exp_log"}
    assert fma.get("AVX512_SKX", 0) > 0 and fma.get("FMA3__AVX2", 0) > 0
    assert fma.get("baseline", 0) == 0


def test_float16_variants(variants):
    half = {v.target: v for v in variants if v.source == "half_arith"}
    assert set(half) == {"AVX512_SPR", "AVX512_SKX", "FMA3__AVX2", "baseline"}
    assert half["AVX512_SPR"].fp16 > 0 and half["FMA3__AVX2"].ymm > 0
    # AVX-512 without FP16 (Skylake-X, Ice Lake, Zen 4): 16-lane F16C-style
    # conversions and masked stores of every other element, no FP16 arithmetic
    assert half["AVX512_SKX"].zmm > 0 and half["AVX512_SKX"].fp16 == 0


# sources/kernels/meson.build's kernel_aligned_sources
ALIGNED_SOURCES = ("int_loops", "float_loops", "narrow_loops", "cast_loops", "int_arith")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 fetch windows")
def test_short_loops_keep_to_one_fetch_block(variants):
    # Note [Loops on a fetch window] in sources/kernels/meson.build: without
    # -falign-loops=32 about half the short loops straddled a 32-byte block,
    # and a float64 fill of every other element ran at 2 cycles a store
    # instead of 1. What stays split are loops the compiler judged cold
    # (tails of vector loops) or whose head is reached by more than one
    # back edge.
    aligned = [v for v in variants if v.source in ALIGNED_SOURCES]
    assert {v.source for v in aligned} == set(ALIGNED_SOURCES)
    short = sum(v.short_loops for v in aligned)
    split = sum(v.split_loops for v in aligned)
    assert short > 1000
    assert split <= short // 5, f"{split} of {short} short loops straddle a 32-byte block"


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 variants")
def test_integer_reductions_on_avx512_use_its_64_bit_lanes_at_256_bits(meson_tree):
    # Note [Integer reductions on AVX-512] in int_reduce.dispatch.c: the
    # AVX-512 variant is there for vpmaxsq/vpminsq/vpmullq, which AVX2 lacks,
    # and gcc keeps the loops at 256 bits (wider ones slowed 1- and 2-byte
    # max/min 1.1-1.6x); the AVX2 variant has none of the three.
    lib = meson_tree("gcc") / "sources" / "kernels"
    asm = {t: check_isa.disassemble(lib / f"libint_reduce_dispatch_c_{t}.a")
           for t in ("AVX512_SKX", "FMA3__AVX2")}
    wide = ("vpmaxsq", "vpminsq", "vpmullq")
    for insn in wide:
        assert f"{insn} " in asm["AVX512_SKX"].replace("\t", " "), insn
        assert insn not in asm["FMA3__AVX2"], insn
    ymm = sum(1 for line in asm["AVX512_SKX"].splitlines()
              if any(i in line for i in wide) and "%ymm" in line)
    zmm = sum(1 for line in asm["AVX512_SKX"].splitlines()
              if any(i in line for i in wide) and "%zmm" in line)
    assert ymm > 0 and ymm > 4 * zmm, (ymm, zmm)
