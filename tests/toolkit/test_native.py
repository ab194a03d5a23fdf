"""`native` in cpu-baseline / cpu-dispatch resolves, at configure, to the
explicit feature flags of this machine's CPU (-msse4.2 -mavx2 ...), never to
`-march=native` on a compile line: a compile sent elsewhere (distcc) or
replayed from a shared cache (ccache, sccache) must mean the same instructions
on every machine (tests/test_build_cache.py builds through both)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from dispatchkit.build_config import configure
from dispatchkit.features import X86_64

_MACROS = subprocess.run(["gcc", "-march=native", "-dM", "-E", "-x", "c", "/dev/null"],
                         capture_output=True, text=True).stdout if shutil.which("gcc") else ""
pytestmark = pytest.mark.skipif("__x86_64__" not in _MACROS,
                                reason="needs gcc targeting x86_64 that accepts -march=native")

KNOWN_FLAGS = {flag for f in X86_64.features for flag in f.flags}


def native_features() -> set:
    """The table's features whose macros gcc -march=native predefines here."""
    defined = {ln.split()[1] for ln in _MACROS.splitlines() if ln.startswith("#define ")}
    return {f.name for f in X86_64.features
            if f.macros and not f.disable and all(m in defined for m in f.macros)}


def macros_with(flags) -> set:
    out = subprocess.run(["gcc", *flags, "-dM", "-E", "-x", "c", "/dev/null"], check=True,
                         capture_output=True, text=True).stdout
    return {ln.split()[1] for ln in out.splitlines() if ln.startswith("#define ")}


def assert_explicit(flags) -> None:
    for flag in flags:
        assert "native" not in flag and not flag.startswith(("-march", "-mtune", "-mcpu")), flag
        assert flag in KNOWN_FLAGS, f"{flag} is not a feature flag of the x86 table"


def test_native_baseline_is_explicit_feature_flags(gcc_configure):
    cfg = gcc_configure("native", "max -xop -fma4")
    assert set(cfg.baseline) == native_features()
    assert cfg.baseline_flags and "-msse2" in cfg.baseline_flags
    assert_explicit(cfg.baseline_flags)
    for name, flags in cfg.dispatch_flags.items():
        assert_explicit(flags)


def test_native_dispatch_is_explicit_feature_flags(gcc_configure):
    cfg = gcc_configure("min", "native")
    assert set(cfg.baseline) | set(cfg.dispatch) == native_features() | set(cfg.baseline)
    for flags in cfg.dispatch_flags.values():
        assert_explicit(flags)


def test_native_flags_enable_what_march_native_enables(gcc_configure):
    """The explicit flags predefine every feature macro -march=native does,
    for every feature the toolkit knows."""
    cfg = gcc_configure("native", "none")
    explicit = macros_with(cfg.baseline_flags)
    native = macros_with(["-march=native"])
    feature_macros = {m for f in X86_64.features for m in f.macros}
    assert explicit & feature_macros == native & feature_macros


def test_configure_writes_no_march_native_for_meson(cli, cache_dir, gcc_config, tmp_path):
    out = tmp_path / "build"
    proc = cli(["configure", "--cc", "gcc", "--cflags", "", "--cache-dir", str(cache_dir),
                "--cpu-baseline", "native", "--cpu-dispatch", "native avx512_skx",
                "--outdir", str(out), "--meson"])
    assert proc.returncode == 0, proc.stderr
    (flags_line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("baseline_flags\t")]
    assert_explicit(flags_line.split("\t")[1].split())
    data = json.loads((out / "dispatch_config.json").read_text())
    assert_explicit(data["baseline_flags"])
    for flags in data["dispatch_flags"].values():
        assert_explicit(flags)
    assert "march" not in (out / "_cpu_dispatch.h").read_text()


def test_native_is_asked_of_this_cpu_not_read_from_the_probe_cache(tmp_path):
    """The probe cache is keyed by the compiler, not the CPU: a cache carried
    to another machine (a shared home, a container image) must not decide
    what `native` means there."""
    first = configure("gcc", "", "native", "none", tmp_path)
    (cache,) = tmp_path.glob("probe-*.json")
    data = json.loads(cache.read_text())
    # Pretend the cache was filled on a CPU with SSE2 only.
    data["macros -march=native"] = {"__x86_64__": "1", "__SSE__": "1", "__SSE2__": "1"}
    cache.write_text(json.dumps(data))
    again = configure("gcc", "", "native", "none", tmp_path)
    assert again.baseline == first.baseline
    assert set(first.baseline) == native_features()
