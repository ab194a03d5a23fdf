"""--cpu-durations (tests/_cpu_durations.py), which .ci/run and the sanitizer
job pass: the CPU a test's phase used, its own and its children's, is
printed per phase, in one process and through pytest-xdist's workers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# Half a second of CPU in a child, and a fixture that burns it in the test's
# own process; a test that sleeps uses wall time and no CPU. Burned by the
# process's CPU clock, not by a count of operations: a fast CPU did 4M squares
# in 0.2 s, at the assertion's edge below.
BURN = ("import time; t = time.process_time(); "
        "all(time.process_time() - t < 0.5 for _ in iter(int, 1))")
SUITE = f'''
import subprocess, sys, time
import pytest

@pytest.fixture
def warm():
    {BURN}

def test_child_burns():
    subprocess.run([sys.executable, "-c", "{BURN}"], check=True)

def test_setup_burns(warm):
    pass

def test_sleeps():
    time.sleep(1.0)
'''
ROW = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+\S*::(\w+)$", re.M)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_each_phase_gets_the_cpu_of_its_process_and_children(tmp_path, workers):
    (tmp_path / "test_burn.py").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    env.pop("PYTEST_ADDOPTS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_cpu_durations",
                        "-p", "no:cacheprovider", "-p", "no:randomly", "-n", workers,
                        "--cpu-durations=0", "test_burn.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    cpu = {(test, when): float(s) for s, when, test in ROW.findall(r.stdout)}
    assert len(cpu) == 9, r.stdout  # three phases of three tests
    burned = cpu["test_child_burns", "call"]
    assert burned > 0.2, cpu
    assert cpu["test_setup_burns", "setup"] > 0.5 * burned, cpu
    # waiting is no CPU, and a phase is charged only its own
    assert cpu["test_sleeps", "call"] < 0.2 * burned, cpu
    assert cpu["test_setup_burns", "call"] < 0.2 * burned, cpu
    total = float(re.search(r"([\d.]+)s of CPU in all 9 phases", r.stdout).group(1))
    assert total >= burned + cpu["test_setup_burns", "setup"] - 0.01
