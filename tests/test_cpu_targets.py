"""Every compiled target of every dispatched function runs here, once, in
the manner of Highway's per-target tests: a fresh interpreter per target,
with DISPATCH_ENABLE_CPU_FEATURES restricting the CPU to exactly what that
target needs, asserting the loader really chose it (the dispatch trace) and
that it computes the right thing (the probe kernel).

A target name is its features joined by "__" ("FMA3__AVX2"); "baseline" is
the build's baseline. Targets this machine cannot run are skipped, saying so;
the qemu tests (test_cpu_qemu.py) cover the lower ones on emulated CPUs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ENABLE = "DISPATCH_ENABLE_CPU_FEATURES"

# Prints the features, every trace record and the probe's own report.
REPORT = """
import json, dispatch
x = [float(i) for i in range(1, 17)]
ffi, lib = dispatch.ffi, dispatch.lib
print(json.dumps({
    "features": dispatch.__cpu_features__,
    "baseline": dispatch.__cpu_baseline__,
    "trace": [[r.name, list(r.targets), r.chosen] for r in dispatch.dispatch_trace()],
    "probe": dispatch.probe_target(),
    "whoami": ffi.string(lib.dispatch_probe_whoami()).decode(),
    "sum16": lib.dispatch_probe_sum16(ffi.new("float[16]", x)),
}))
"""


def _report(env: dict[str, str], cwd: Path) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    clean.update(env)
    proc = subprocess.run([sys.executable, "-c", REPORT], check=False, cwd=cwd, env=clean,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def expected_choice(targets: list[str], features: dict[str, bool]) -> str:
    """The highest target whose features are all on, else the baseline."""
    for target in targets:
        if target != "baseline" and all(features.get(f) for f in target.split("__")):
            return target
    return "baseline" if "baseline" in targets else "none"


_NATIVE: dict | None = None


def _native() -> dict:
    """The unrestricted run, once per session (also used at collection)."""
    global _NATIVE
    if _NATIVE is None:
        _NATIVE = _report({}, Path(tempfile.mkdtemp(prefix="cpu-targets-")))
    return _NATIVE


@pytest.fixture(scope="module")
def native() -> dict:
    return _native()


def pytest_generate_tests(metafunc):
    """One case per (function, target) of every traced function."""
    if "function_target" in metafunc.fixturenames:
        pairs = sorted({(name, t) for name, targets, _ in _native()["trace"] for t in targets})
        metafunc.parametrize("function_target", pairs, ids=[f"{f}-{t}" for f, t in pairs])


def _enable_value(target: str, baseline: list[str]) -> str | None:
    if target == "baseline":
        return " ".join(baseline) or None
    return " ".join(target.split("__"))


def test_the_probe_kernel_is_traced(native):
    probe = [r for r in native["trace"] if r[0] == "probe"]
    assert len(probe) == 1
    assert probe[0][2] == native["probe"]


def test_every_traced_choice_is_the_highest_supported_target(native):
    for name, targets, chosen in native["trace"]:
        assert chosen == expected_choice(targets, native["features"]), name


def test_target_is_chosen_when_the_cpu_is_restricted_to_it(native, function_target, tmp_path):
    function, target = function_target
    traced = {name: targets for name, targets, _ in native["trace"]}
    if function not in traced or target not in traced[function]:
        pytest.skip(f"{function} has no target {target} in this build")
    if target != "baseline" and not all(native["features"].get(f) for f in target.split("__")):
        pytest.skip(f"this machine cannot run {target} (see test_cpu_qemu.py)")
    value = _enable_value(target, native["baseline"])
    env = {ENABLE: value} if value else {}
    if not value:  # empty baseline: disable every dispatched feature instead
        env = {"DISPATCH_DISABLE_CPU_FEATURES": " ".join(
            f for f, on in native["features"].items() if on)}
    run = _report(env, tmp_path)
    chosen = {name: c for name, _, c in run["trace"]}
    # The restricted CPU picks exactly this target for this function ...
    assert chosen[function] == target
    # ... and every other function its own highest target under the same CPU.
    for name, targets, c in run["trace"]:
        assert c == expected_choice(targets, run["features"]), name
    if function == "probe":
        assert run["probe"] == target
        assert run["whoami"] == target
        assert run["sum16"] == sum(range(1, 17))
