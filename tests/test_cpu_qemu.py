"""Emulated CPUs: the installed package under `qemu-x86_64 -cpu Nehalem |
Haswell | max` detects that CPU, chooses its target and computes the same
results; a `-Dcpu-baseline=avx2` build under Nehalem stops at import with the
baseline guard's ImportError instead of SIGILL (Note [Baseline guard] in
sources/cpu/cpu_baseline_guard.c).

qemu-user emulates x86 up to AVX2, never AVX-512; the AVX-512 targets are
proven natively by test_cpu_targets.py. Processes a program under qemu spawns
run natively, so nothing here relies on subprocesses of the emulated Python.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

QEMU = shutil.which("qemu-x86_64")
ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.skipif(platform.machine() != "x86_64",
                       reason="qemu-x86_64 checks need an x86_64 host"),
    pytest.mark.skipif(QEMU is None,
                       reason="qemu-x86_64 not found (Debian: apt-get install qemu-user)"),
    pytest.mark.runs_package_under_qemu,
]

# What each emulated CPU has at most, and the probe kernel's target there.
CPUS = {
    "Nehalem": {"top": "SSE42", "absent": "AVX", "probe": "SSE42"},
    "Haswell": {"top": "AVX2", "absent": "AVX512F", "probe": "FMA3__AVX2"},
    "max": {"top": "AVX2", "absent": "AVX512F", "probe": "FMA3__AVX2"},
}

X = [0.25 * i - 3.0 for i in range(37)]  # 37: a vector tail on every width
POSITIVE = [0.125 + 0.5 * i for i in range(37)]

REPORT = f"""
import array, json, dispatch
ffi, lib = dispatch.ffi, dispatch.lib
out = {{
    "features": dispatch.__cpu_features__,
    "trace": [[r.name, list(r.targets), r.chosen] for r in dispatch.dispatch_trace()],
    "probe": dispatch.probe_target(),
    "whoami": ffi.string(lib.dispatch_probe_whoami()).decode(),
    "sum16": lib.dispatch_probe_sum16(ffi.new("float[16]", [float(i) for i in range(1, 17)])),
    "results": {{}},
}}
try:
    from dispatch import kernels
except ImportError:
    kernels = None
if kernels is not None:
    x = array.array("f", {X!r}); p = array.array("f", {POSITIVE!r})
    cases = (("add", (x, x)), ("mul", (x, x)), ("sqrt", (p,)), ("exp", (x,)), ("log", (p,)))
    for op, args in cases:
        if op in kernels.LOOPS:
            res = array.array("f", [0.0] * len(x))
            kernels.run(op, res, *args)
            out["results"][op] = list(res)
print(json.dumps(out))
"""

TCG_NOISE = "TCG doesn't support requested feature"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    env.update(extra or {})
    return env


def _emulated(cpu: str, code: str, cwd: Path, python_args: list[str] = (),
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([QEMU, "-cpu", cpu, sys.executable, *python_args, "-c", code],
                          check=False, cwd=cwd, env=_env(env), capture_output=True, text=True,
                          timeout=300)
    proc.stderr = "\n".join(ln for ln in proc.stderr.splitlines() if TCG_NOISE not in ln)
    return proc


def _expected_choice(targets: list[str], features: dict[str, bool]) -> str:
    for target in targets:
        if target != "baseline" and all(features.get(f) for f in target.split("__")):
            return target
    return "baseline" if "baseline" in targets else "none"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """The report of each emulated CPU, and the native one."""
    cwd = tmp_path_factory.mktemp("cpu-qemu")
    out = {}
    native = subprocess.run([sys.executable, "-c", REPORT], check=False, cwd=cwd, env=_env(),
                            capture_output=True, text=True, timeout=300)
    assert native.returncode == 0, native.stderr
    out["native"] = json.loads(native.stdout)
    for cpu in CPUS:
        proc = _emulated(cpu, REPORT, cwd)
        assert proc.returncode == 0, (cpu, proc.returncode, proc.stderr)
        out[cpu] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize("cpu", CPUS)
def test_emulated_cpu_features_are_detected(runs, cpu):
    features = runs[cpu]["features"]
    assert features[CPUS[cpu]["top"]] is True
    assert features[CPUS[cpu]["absent"]] is False
    v3_scalars = ("BMI", "BMI2", "LZCNT", "MOVBE")  # the x86-64-v3 extensions beside AVX2
    assert features["CX16"] is True and features["LAHF"] is True  # x86-64-v2's
    if cpu == "Nehalem":
        assert features["X86_V2"] is True and features["X86_V3"] is False
        assert not any(features[f] for f in v3_scalars), features
    else:
        assert features["X86_V3"] is True and features["X86_V4"] is False
        assert all(features[f] for f in v3_scalars), features


@pytest.mark.parametrize("cpu", CPUS)
def test_emulated_cpu_gets_its_probe_target(runs, cpu):
    run = runs[cpu]
    assert run["probe"] == CPUS[cpu]["probe"]
    assert run["whoami"] == CPUS[cpu]["probe"]
    assert run["sum16"] == 136.0


@pytest.mark.parametrize("cpu", CPUS)
def test_emulated_cpu_gets_the_highest_supported_target_of_every_function(runs, cpu):
    run = runs[cpu]
    assert run["trace"], "no dispatched function recorded its choice"
    for name, targets, chosen in run["trace"]:
        assert chosen == _expected_choice(targets, run["features"]), name


@pytest.mark.parametrize("cpu", CPUS)
def test_emulated_cpu_computes_the_native_results(runs, cpu):
    native, run = runs["native"]["results"], runs[cpu]["results"]
    if not native:
        pytest.skip("dispatch.kernels is not part of this build")
    assert set(run) == set(native)
    for op in ("add", "mul", "sqrt"):  # correctly rounded on every target
        if op in native:
            assert run[op] == native[op], op
    refs = {"exp": [math.exp(v) for v in X], "log": [math.log(v) for v in POSITIVE]}
    for op, ref in refs.items():
        if op in native:
            for got, want, expect in zip(run[op], native[op], ref):
                assert math.isclose(got, want, rel_tol=4e-7, abs_tol=1e-30), (op, got, want)
                assert math.isclose(got, expect, rel_tol=4e-7, abs_tol=1e-30), (op, got, expect)


# ---------------------------------------------------------------------------
# A -Dcpu-baseline=avx2 build, built once per session into a staged copy.
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def avx2_build(tmp_path_factory) -> dict[str, str]:
    """Environment and interpreter args that import the avx2-baseline build.

    `python -S` with an explicit PYTHONPATH: the staged package first, then
    the directories holding cffi, and no site processing, so neither an
    installed nor an editable `dispatch` can take its place."""
    # meson under this interpreter: the build must target the Python that
    # imports it (extension suffix, cffi).
    meson = [sys.executable, "-m", "mesonbuild.mesonmain"]
    ninja = str(Path(sys.executable).parent / "ninja")
    if not os.access(ninja, os.X_OK):
        ninja = shutil.which("ninja") or "ninja"
    work = tmp_path_factory.mktemp("cpu-avx2")
    build, dest = work / "build", work / "inst"
    steps = (
        # The baseline's guard is under test: not the CUDA module, nor the
        # dispatched variants above AVX2 (every other build compiles those, and
        # none of them runs before the guard): with -Dcpu-dispatch=none this
        # fixture took 66 s instead of 165 on 2 idle cores, without ccache.
        [*meson, "setup", str(build), str(ROOT), "-Dcpu-baseline=avx2", "-Dcpu-dispatch=none",
         "-Dtests=false", "-Dcuda=disabled"],
        [ninja, "-C", str(build)],
        [*meson, "install", "-C", str(build), "--destdir", str(dest), "--quiet"],
    )
    for step in steps:
        proc = subprocess.run(step, cwd=work, check=False, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, (step, proc.stdout[-3000:], proc.stderr[-3000:])
    staged = [p.parent.parent for p in dest.rglob("dispatch/__init__.py")]
    assert len(staged) == 1, staged
    import _cffi_backend
    import cffi

    path = [str(staged[0]), str(Path(cffi.__file__).parent.parent),
            str(Path(_cffi_backend.__file__).parent)]
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(path)), "root": str(staged[0])}


GUARDED = "import dispatch; print(dispatch.__file__); print(' '.join(dispatch.__cpu_baseline__))"


def _avx2_env(avx2_build: dict[str, str]) -> dict[str, str]:
    return {"PYTHONPATH": avx2_build["PYTHONPATH"]}


def test_avx2_build_imports_where_the_baseline_is_present(avx2_build, tmp_path):
    proc = subprocess.run([sys.executable, "-S", "-c", GUARDED], check=False, cwd=tmp_path,
                          env=_env(_avx2_env(avx2_build)), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    file, baseline = proc.stdout.splitlines()
    assert file.startswith(avx2_build["root"])  # the staged build, not another one
    assert "AVX2" in baseline.split()


def test_avx2_build_under_haswell_imports(avx2_build, tmp_path):
    proc = _emulated("Haswell", GUARDED, tmp_path, ["-S"], _avx2_env(avx2_build))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith(avx2_build["root"])


def test_avx2_build_under_nehalem_raises_import_error_not_sigill(avx2_build, tmp_path):
    proc = _emulated("Nehalem", GUARDED, tmp_path, ["-S"], _avx2_env(avx2_build))
    assert proc.returncode != -signal.SIGILL and proc.returncode != 128 + signal.SIGILL
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: dispatch cannot be imported: this CPU lacks AVX F16C "
                           "AVX2, which this build of dispatch requires: its baseline "
                           "(-Dcpu-baseline) is '"), last
    assert "SSE42 AVX F16C AVX2'" in last
    assert "Rebuild with a lower baseline" in last
    assert f"{avx2_build['root']}/dispatch/__init__.py" in proc.stderr


def test_avx2_build_under_qemu64_raises_import_error_not_sigill(avx2_build, tmp_path):
    """qemu64 (SSE3, the oldest QEMU x86-64 model) lacks the avx2 baseline:
    the guard refuses the import before any AVX2 instruction runs."""
    proc = _emulated("qemu64", GUARDED, tmp_path, ["-S"], _avx2_env(avx2_build))
    assert proc.returncode != -signal.SIGILL and proc.returncode != 128 + signal.SIGILL
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: dispatch cannot be imported: this CPU lacks "), last
    assert "which this build of dispatch requires" in last
