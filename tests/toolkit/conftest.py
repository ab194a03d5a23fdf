"""Fixtures for the toolkit's tests.

The engine (tools/dispatchgen/dispatchkit) is build-time code, standard library only: these
tests import it straight from the checkout, so they run from a bare clone with
`python -m pytest tests/toolkit`, without building the `dispatch` package.

Compiler probes are slow (one compile per feature), so every test shares one
session-scoped probe cache in a temporary directory (never the user's
~/.cache) and the configurations that several tests read are built once.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Sequence, Tuple
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "dispatchgen"
DISPATCHGEN = TOOLS / "dispatchgen"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from dispatchkit import build_config as config_mod  # noqa: E402
from dispatchkit.cli import DEFAULT_BASELINE, DEFAULT_DISPATCH  # noqa: E402
from dispatchkit.build_config import BuildConfig  # noqa: E402
from dispatchkit.probe import Probe  # noqa: E402



@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One probe cache for the whole session."""
    return tmp_path_factory.mktemp("probe-cache")


def configure_counting(cc: str, cflags: str, baseline: str, dispatch: str,
                       cache_dir: Path, exhaustive: bool = False
                       ) -> Tuple[BuildConfig, List[Probe]]:
    """``config.configure`` that also returns the Probe objects it created, so a
    test can read how many compiles each ran."""
    made: List[Probe] = []

    class RecordingProbe(Probe):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    with mock.patch.object(config_mod, "Probe", RecordingProbe):
        cfg = config_mod.configure(cc, cflags, baseline, dispatch, cache_dir, exhaustive)
    return cfg, made


@pytest.fixture(scope="session")
def gcc_cold(cache_dir: Path) -> Tuple[BuildConfig, List[Probe]]:
    """The default configuration with gcc, from an empty cache, every feature's
    check compiled on its own (exhaustive: see Note [Union probe]), so the
    session's cache holds each feature's own answer."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    return configure_counting("gcc", "", DEFAULT_BASELINE, DEFAULT_DISPATCH, cache_dir,
                              exhaustive=True)


@pytest.fixture(scope="session")
def gcc_config(gcc_cold: Tuple[BuildConfig, List[Probe]]) -> BuildConfig:
    """gcc, cpu-baseline 'min', cpu-dispatch 'max -xop -fma4' (the defaults)."""
    return gcc_cold[0]


@pytest.fixture(scope="session")
def gcc_configure(cache_dir: Path, gcc_config: BuildConfig) -> Callable[..., BuildConfig]:
    """Configure gcc with other option values; the probe cache is warm."""

    def run(baseline: str = DEFAULT_BASELINE, dispatch: str = DEFAULT_DISPATCH,
            cflags: str = "") -> BuildConfig:
        return config_mod.configure("gcc", cflags, baseline, dispatch, cache_dir)

    return run


FAKE_CC = r"""#!/bin/sh
# gcc, but without -mavx512fp16 (an older gcc) and unable to build the
# AVX512_CLX check source although it accepts its flags (older headers).
for arg in "$@"; do
    case "$arg" in
        -mavx512fp16)
            echo "gcc: error: unrecognized command-line option '-mavx512fp16'" >&2
            exit 1 ;;
        */cpu_avx512_clx.c)
            echo "$arg:6:12: error: implicit declaration of function '_mm512_dpbusd_epi32'" >&2
            exit 1 ;;
    esac
done
exec gcc "$@"
"""


@pytest.fixture(scope="session")
def fake_cc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compiler wrapper that lacks -mavx512fp16 and the AVX512_CLX intrinsics."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    path = tmp_path_factory.mktemp("fakecc") / "old-gcc"
    path.write_text(FAKE_CC)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture(scope="session")
def fake_config(fake_cc: Path, cache_dir: Path) -> BuildConfig:
    return config_mod.configure(str(fake_cc), "", DEFAULT_BASELINE, "max", cache_dir)


def run_cli(args: Sequence[str], cwd: Path = ROOT, **kwargs) -> subprocess.CompletedProcess:
    """Run tools/dispatchgen/dispatchgen in a child process, as meson does."""
    env = {**os.environ, "LC_ALL": "C"}
    return subprocess.run([sys.executable, str(DISPATCHGEN), *args], capture_output=True,
                          text=True, cwd=cwd, env=env, check=False, **kwargs)


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess]:
    """``cli(args, cwd=...)`` runs tools/dispatchgen/dispatchgen in a child process."""
    return run_cli


@pytest.fixture(scope="session")
def counting_configure() -> Callable[..., Tuple[BuildConfig, List[Probe]]]:
    """``configure`` that also returns the Probes it used (see configure_counting)."""
    return configure_counting
