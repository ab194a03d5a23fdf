"""Big-endian ppc64 and loongarch64 (issue 37): the tables NumPy has for
them, recognised from the compiler's macros and validated against a real
cross compiler where this machine has one (Debian: gcc-powerpc64-linux-gnu;
clang 19 targets loongarch64, though bookworm has no loongarch64 C library,
so nothing is linked or run for it: docs/cpu-features.md). The ppc64 runtime
runs under qemu in tests/test_cross_matrix.py and tests/test_program_guard.py."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from dispatchkit.features import ARCHES, arch_from_macros
from dispatchkit.features.ppc64 import PPC64, PPC64LE
from dispatchkit.features.loongarch64 import LOONGARCH64


def test_the_byte_order_tells_ppc64_from_ppc64le():
    assert arch_from_macros({"__powerpc64__": "1", "__BIG_ENDIAN__": "1"}) is PPC64
    assert arch_from_macros({"__powerpc64__": "1", "__LITTLE_ENDIAN__": "1"}) is PPC64LE


def test_big_endian_power_has_no_minimum_and_the_same_levels():
    """Big-endian Linux runs on POWER5 and 970, without VSX (NumPy's min: none)."""
    assert PPC64.minimum == () and PPC64LE.minimum == ("VSX", "VSX2")
    assert [f.name for f in PPC64.features] == ["VSX", "VSX2", "VSX3", "VSX4"]
    assert PPC64.features == PPC64LE.features


def test_loongarch64_has_lsx_as_its_minimum():
    assert arch_from_macros({"__loongarch64": "1"}) is LOONGARCH64 is ARCHES["loongarch64"]
    assert LOONGARCH64.minimum == ("LSX",)
    assert LOONGARCH64.flags_for(["LSX"]) == ["-mlsx"]


def _report(cli, cc: str, baseline: str, dispatch: str, cache) -> dict:
    r = cli(["report", "--cc", cc, "--cpu-baseline", baseline, "--cpu-dispatch", dispatch,
             "--cache-dir", str(cache), "--json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_ppc64_cross_compiler_builds_every_level(cli, tmp_path):
    if shutil.which("powerpc64-linux-gnu-gcc") is None:
        pytest.skip("no powerpc64-linux-gnu-gcc (Debian: gcc-powerpc64-linux-gnu)")
    report = _report(cli, "powerpc64-linux-gnu-gcc", "min", "max", tmp_path)
    assert report["arch"] == "ppc64"
    assert report["baseline"]["features"] == [] and report["baseline"]["flags"] == []
    assert report["dispatch"]["features"] == ["VSX", "VSX2", "VSX3", "VSX4"]
    assert report["dispatch"]["flags"]["VSX3"] == ["-mvsx", "-mcpu=power9"]


def test_loongarch64_lsx_check_compiles_with_clang_19(cli, tmp_path):
    clang = shutil.which("clang-19")
    probe = clang and subprocess.run(
        [clang, "--target=loongarch64-linux-gnu", "-dM", "-E", "-x", "c", "/dev/null"],
        capture_output=True, text=True)
    if not probe or probe.returncode != 0 or "__loongarch64" not in probe.stdout:
        pytest.skip("no clang-19 with the LoongArch target (Debian: clang-19)")
    report = _report(cli, "clang-19 --target=loongarch64-linux-gnu", "min", "max", tmp_path)
    assert report["arch"] == "loongarch64"
    assert report["baseline"] == {"requested": "min", "features": ["LSX"], "flags": ["-mlsx"]}
    assert report["unsupported"] == {}  # the check source compiled
