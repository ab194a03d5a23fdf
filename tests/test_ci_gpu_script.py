""".ci/gpu.sh, the GPU job (issue 26, part 3), without a GPU: its syntax and
its --dry-run plan. It runs the whole suite (no hard-coded list of CUDA
files), in parallel where pytest-xdist installs, from outside the checkout,
offline from WHEELS, in a venv made from the base interpreter even when the
Python it is given is itself a venv's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".ci" / "gpu.sh"


def _bash() -> str:
    bash = shutil.which("bash")
    if bash is None or shutil.which("nproc") is None:
        pytest.skip("bash and nproc are needed to run .ci/gpu.sh")
    return bash


def _plan(*args: str, **env: str) -> list[str]:
    """The lines of `.ci/gpu.sh --dry-run ARGS` (runs nothing)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("WHEELS", "CUDA_ARCH", "OUT", "VENV", "PYTHON", "PHASES", "PACK")}
    r = subprocess.run([_bash(), str(SCRIPT), "--dry-run", *args], env={**clean, **env},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.splitlines()


def _pytest_line(lines: list[str]) -> list[str]:
    """The main run's pytest line (the JIT phase's comes after it)."""
    line, _jit = [x for x in lines if " -m pytest " in x]
    return line.split()


def test_gpu_script_is_valid_bash():
    r = subprocess.run([_bash(), "-n", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_gpu_script_names_no_test_file_but_the_one_it_deselects():
    code = [line for line in SCRIPT.read_text().splitlines() if not line.lstrip().startswith("#")]
    named = {f for line in code for f in re.findall(r"tests/\w+\.py", line)}
    assert named <= {"tests/test_cuda_build.py"}, named
    assert all("--deselect" in line for line in code if "tests/test_cuda_build.py" in line)


def test_gpu_script_runs_the_whole_suite_by_default():
    words = _pytest_line(_plan())
    paths = [w for w in words if w.startswith(str(REPO / "tests"))]
    assert paths == [str(REPO / "tests")]  # every test file under it, as CI's `pytest`
    assert not any(w.endswith(".py") for w in words)


def test_gpu_script_runs_pytest_on_every_cpu_with_xdist():
    words = _pytest_line(_plan())
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    assert words[words.index("-n") + 1] == nproc


def test_gpu_script_runs_pytest_outside_the_checkout():
    """xdist's workers put their cwd first on sys.path: from the checkout its
    source dispatch/ would shadow the installed package."""
    lines = _plan(OUT="/tmp/gpu-out-plan")
    assert "+ cd /tmp/gpu-out-plan" in lines
    assert lines.index("+ cd /tmp/gpu-out-plan") < lines.index(
        next(x for x in lines if " -m pytest " in x))
    words = _pytest_line(lines)
    assert words[words.index("-c") + 1] == str(REPO / "pyproject.toml")
    assert words[words.index("--rootdir") + 1] == str(REPO)


def test_gpu_script_makes_arguments_paths_in_the_checkout():
    words = _pytest_line(_plan("tests/test_cuda_ops.py::test_x", "-k", "foo"))
    assert words[-3:] == [str(REPO / "tests/test_cuda_ops.py::test_x"), "-k", "foo"]


def test_gpu_script_installs_every_package_offline_from_wheels():
    lines = [x for x in _plan(WHEELS="/nowhere/wheels") if " -m pip install " in x]
    # requirements-dev (toolkit and pytest-xdist included), this checkout, its PTX-only build
    assert len(lines) == 3
    assert all("--no-index --find-links /nowhere/wheels" in x for x in lines)


def test_gpu_script_with_cuda_arch_deselects_the_default_arch_list_test():
    words = _pytest_line(_plan(CUDA_ARCH="sm_90"))
    assert words[words.index("--deselect") + 1] == \
        "tests/test_cuda_build.py::test_module_holds_sass_for_each_requested_arch_plus_ptx"


def test_gpu_script_makes_its_venv_from_the_base_interpreter_of_a_venv():
    """Given a venv's Python (as this suite's usually is), the venv comes from
    sys.base_prefix's interpreter, and the outer venv's site-packages is
    appended by a .pth (its torch stays visible)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("this Python is not a venv's")
    lines = _plan(PYTHON=sys.executable)
    (venv,) = [x for x in lines if " -m venv " in x]
    base = Path(venv.split()[1])
    assert base.resolve().is_relative_to(Path(sys.base_prefix).resolve()) or \
        str(base).startswith(sys.base_prefix)
    assert "--system-site-packages" not in venv
    import sysconfig

    assert any(x.startswith(f"+ echo {sysconfig.get_paths()['purelib']} > ")
               and x.endswith("zz-outer-venv.pth") for x in lines)


def test_gpu_script_last_runs_the_cuda_tests_on_a_ptx_only_build_timing_the_first_call():
    """The JIT path (a build that saw no GPU carries PTX for compute_75 only):
    rebuilt so, its first CUDA call timed with an empty and a filled driver
    cache, then the CUDA tests on it."""
    lines = _plan(OUT="/tmp/gpu-out-plan")
    main = next(i for i, x in enumerate(lines) if " -m pytest " in x)
    (build,) = [i for i, x in enumerate(lines) if "-Dcuda-arch=compute_75" in x]
    assert main < build and "--force-reinstall" in lines[build]
    assert lines[build + 1:].count("JIT, driver cache cold:") == 1
    assert lines[build + 1:].count("JIT, driver cache warm:") == 1
    jit = lines[-1].split()
    assert "-m" in jit and jit[jit.index("-m") + 1] == "pytest" and jit[-3:] == ["-k", "cuda", str(REPO / "tests")]


def test_gpu_script_runs_the_phases_named_and_refuses_an_unknown_one():
    """PHASES splits the job over device commands: "suite bench" leaves out
    the matrix and the JIT phase's build, "jit" the main build, the suite and
    the benchmarks; an unknown phase is an error quoting it, before anything
    runs."""
    first = _plan(PHASES="suite bench")
    assert not any("-Dcuda-arch=compute_75" in x or "bench_matrix.py" in x for x in first)
    assert len([x for x in first if " -m pytest " in x]) == 1
    assert any("tools/bench/run.py --cuda" in x for x in first)
    matrix = _plan(PHASES="matrix", OUT="/tmp/gpu-out-plan")
    assert any("-Cbuild-dir=build-gpu " in x for x in matrix)  # the main build
    (line,) = [x.split() for x in matrix if "bench_matrix.py" in x]
    assert line[line.index("--device") + 1] == "cuda" and "/tmp/gpu-out-plan/matrix/cuda" in line
    assert not any(" -m pytest " in x for x in matrix)
    jit = _plan(PHASES="jit")
    assert not any("-Cbuild-dir=build-gpu " in x or "run.py --cuda" in x for x in jit)
    assert [x for x in jit if " -m pytest " in x][0].split()[-3:] == ["-k", "cuda", str(REPO / "tests")]
    assert any("-Dcuda-arch=compute_75" in x for x in jit)
    assert _plan() == _plan(PHASES="suite bench matrix jit")
    clean = {k: v for k, v in os.environ.items() if k != "PHASES"}
    r = subprocess.run([_bash(), str(SCRIPT), "--dry-run"], env={**clean, "PHASES": "suite gpu"},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "'gpu'" in r.stderr and not r.stdout


def test_gpu_script_bench_phase_profiles_the_rows_and_pack_gathers_the_logs():
    """The bench phase also reads the device times of issue 48's rows from
    torch's profiler; PACK=FILE gathers OUT into one archive last (a device
    command brings back a few files only), and only when asked."""
    lines = _plan(PHASES="bench", OUT="/tmp/gpu-out-plan", PACK="/tmp/gpu-out-plan.tgz")
    (prof,) = [x.split() for x in lines if "cuda_profile_rows.py" in x]
    assert prof[prof.index("--json") + 1] == "/tmp/gpu-out-plan/profile_cuda.json"
    assert lines[-1].split() == ["+", "tar", "czf", "/tmp/gpu-out-plan.tgz", "-C", "/tmp/gpu-out-plan", "."]
    assert not any(" tar " in x for x in _plan(PHASES="bench"))
    assert not any("cuda_profile_rows.py" in x for x in _plan(PHASES="suite"))
