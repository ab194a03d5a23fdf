"""How much a script's work grew its process's peak resident memory: the
script, run in a fresh interpreter, marks the start with `START()` and its
last line prints `GREW()`, the KiB ru_maxrss grew since (Linux counts KiB)."""

from __future__ import annotations

import subprocess
import sys
import tempfile

import pytest

# ru_maxrss is KiB on Linux (bytes on macOS): the tests that read it run there
LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="ru_maxrss in KiB as Linux counts it")

PROLOGUE = """
import resource
def START():
    global _before
    _before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
def GREW():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - _before
"""


def peak_growth_kib(script: str) -> int:
    """Run PROLOGUE + script in a fresh interpreter (cwd outside the checkout:
    `python -c` puts cwd first on sys.path); its stdout's last line, an int."""
    proc = subprocess.run([sys.executable, "-c", PROLOGUE + script], capture_output=True,
                          text=True, timeout=300, cwd=tempfile.gettempdir(), check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.split()[-1])


def assert_grows_under(script: str, kib: int) -> None:
    grew = peak_growth_kib(script)
    assert grew < kib, f"peak memory grew {grew} KiB"
