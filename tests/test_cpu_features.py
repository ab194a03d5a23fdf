"""Runtime CPU detection as Python sees it: dispatch.__cpu_features__ agrees
with the kernel's /proc/cpuinfo flags through the toolkit's table, the
baseline is present, and the reports (show_runtime, python -m dispatch) say
what the build and the machine have.

Each check runs `import dispatch` in a fresh interpreter with the
DISPATCH_*_CPU_FEATURES variables removed, so neither this process's
environment nor the source tree can leak in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "dispatchgen"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from dispatchkit.features import ARCHES


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """This interpreter with ``args``, without any DISPATCH_* variable."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    return subprocess.run([sys.executable, *args], check=False, cwd=cwd, env=clean,
                          capture_output=True, text=True, timeout=120)


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return _run(["-c", code], cwd)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    """`python -m dispatch --json` of a clean interpreter."""
    cwd = tmp_path_factory.mktemp("cpu-features")
    proc = _run(["-m", "dispatch", "--json"], cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def arch(report):
    return ARCHES[report["runtime"]["arch"]]


def _cpuinfo_flags() -> frozenset[str] | None:
    """Words of the first `flags` (x86) or `Features` (ARM) line, if any."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return None


def test_every_feature_and_group_of_the_arch_is_reported(report, arch):
    expected = {f.name for f in arch.features} | {g.name for g in arch.groups}
    assert set(report["features"]) == expected


def test_runtime_table_implies_what_the_toolkit_table_implies(arch, tmp_path):
    code = ("import json; from dispatch import ffi, lib\n"
            "n = lib.dispatch_cpu_feature_count()\n"
            "rows = [lib.dispatch_cpu_feature_at(i) for i in range(n)]\n"
            "print(json.dumps({ffi.string(r.name).decode():"
            " [ffi.string(r.implies).decode().split(), bool(r.is_group)]"
            " for r in rows if r.on_this_arch}))")
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    runtime = json.loads(proc.stdout)
    toolkit = {f.name: [sorted(f.implies), False] for f in arch.features}
    # a group implies its members and every smaller group whose members it holds
    # (so DISABLE of X86_V3 turns X86_V4 off: docs/cpu-features.md)
    toolkit.update({g.name: [sorted(g.members + tuple(h.name for h in arch.groups
                                                      if set(h.members) < set(g.members))), True]
                    for g in arch.groups})
    assert {name: [sorted(imp), group] for name, (imp, group) in runtime.items()} == toolkit


def test_features_match_proc_cpuinfo(report, arch):
    flags = _cpuinfo_flags()
    if flags is None:
        pytest.skip("no /proc/cpuinfo feature line on this system")
    # A feature is present when the kernel lists all its flags and all it
    # implies is present (greatest fixed point: cycles such as aarch64's
    # NEON/ASIMD stay present together); a group when all its members are.
    have = {f.name: all(c in flags for c in f.cpuinfo) for f in arch.features}
    changed = True
    while changed:
        changed = False
        for f in arch.features:
            if have[f.name] and not all(have[d] for d in f.implies):
                have[f.name] = False
                changed = True
    for g in arch.groups:
        have[g.name] = all(have[m] for m in g.members)
    assert report["features"] == have


def test_baseline_features_are_present(report):
    baseline = report["build"]["cpu_baseline"]
    assert all(report["features"][f] for f in baseline)


def test_dispatch_names_are_features_of_the_arch(report):
    assert set(report["build"]["cpu_dispatch"]) <= set(report["features"])


def test_found_and_not_found_split_the_dispatched_set(report):
    rt = report["runtime"]
    assert set(rt["found"]) | set(rt["not_found"]) == set(report["build"]["cpu_dispatch"])
    assert rt["found"] == [f for f in report["build"]["cpu_dispatch"] if report["features"][f]]
    assert rt["disabled_by_env"] == []


def test_module_attributes_match_the_report(report, tmp_path):
    code = ("import json, dispatch; print(json.dumps([dispatch.__cpu_baseline__,"
            " dispatch.__cpu_dispatch__, dispatch.__cpu_features__]))")
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    baseline, dispatched, features = json.loads(proc.stdout)
    assert baseline == report["build"]["cpu_baseline"]
    assert dispatched == report["build"]["cpu_dispatch"]
    assert features == report["features"]


def test_show_runtime_names_baseline_found_and_not_found(report, tmp_path):
    proc = _python("import dispatch; dispatch.show_runtime()", tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if ln.startswith("  ")}
    assert lines["baseline"].split()[1:] == report["build"]["cpu_baseline"]
    assert lines["found"].split()[1:] == (report["runtime"]["found"] or ["(none)"])
    assert "dispatched functions" in proc.stdout


def test_show_runtime_lists_each_traced_function_with_its_choice(report, tmp_path):
    functions = report["runtime"]["functions"]
    if not functions:
        pytest.skip("this build records no dispatched function yet")
    proc = _python("import dispatch; dispatch.show_runtime()", tmp_path)
    for f in functions:
        assert any(ln.split()[:2] == [f["name"], f["chosen"]] for ln in proc.stdout.splitlines())


def test_traced_choice_is_one_of_the_compiled_targets(report):
    for f in report["runtime"]["functions"]:
        assert f["chosen"] in f["targets"] or f["chosen"] == "none", f


def test_python_m_dispatch_prints_build_and_runtime(tmp_path):
    proc = _run(["-m", "dispatch"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for word in ("compiler", "cpu-baseline", "cpu-dispatch", "CPU features", "found",
                 "kernel sources", "CUDA"):
        assert word in proc.stdout


def test_python_m_dispatch_summary_names_compiler_sets_kernel_targets_and_cuda(report, tmp_path):
    proc = _run(["-m", "dispatch"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {ln.split()[0]: ln.split()[1:] for ln in proc.stdout.splitlines()
            if ln.startswith("  ")}
    build = report["build"]
    assert rows["compiler"] == build["compiler"].split()
    assert build["compiler"].split()[0] in ("gcc", "clang", "msvc")
    assert rows["cpu-baseline"] == (build["cpu_baseline"] or ["(none)"])
    assert rows["cpu-dispatch"] == (build["cpu_dispatch"] or ["(none)"])
    for source, target in report["kernels"].items():  # one row per kernel source
        assert rows[source] == [target]
    assert {"probe", "arith", "exp_log", "half_arith"} <= set(report["kernels"])
    # the CUDA row: "not built" without the module; with it (issue 14), its state here
    cuda_state = report["cuda"]["state"]
    if cuda_state == "not built":
        assert rows["not"][:1] == ["built"]
    else:
        assert cuda_state in rows and rows["built"] == report["cuda"]["archs"]
    # the summary is short: the per-function rows are --verbose's
    assert "dispatched functions" not in proc.stdout
    assert len(proc.stdout.splitlines()) < 30
    for f in report["runtime"]["functions"]:  # (the probe is its own kernel source)
        assert f["name"] not in rows or f["name"] in report["kernels"]


def test_python_m_dispatch_verbose_adds_each_dispatched_function(report, tmp_path):
    proc = _run(["-m", "dispatch", "--verbose"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "kernel sources" in proc.stdout and "dispatched functions" in proc.stdout
    lines = proc.stdout.splitlines()
    for f in report["runtime"]["functions"]:
        assert any(ln.split()[:2] == [f["name"], f["chosen"]] for ln in lines), f


def test_python_m_dispatch_json_has_everything(report):
    assert set(report) >= {"build", "runtime", "features", "kernels", "cuda"}
    assert report["build"]["compiler"]
    assert report["runtime"]["functions"]
    import dispatch
    if not dispatch.__cuda_archs__:
        assert report["cuda"] == {"built": False, "state": "not built",
                                  "detail": report["cuda"]["detail"]}
    else:  # built with CUDA (issue 14): whether it runs here, and why not
        assert report["cuda"]["built"] is True
        assert report["cuda"]["state"] in ("available", "unavailable")
        assert report["cuda"]["archs"] == dispatch.__cuda_archs__
    probe = next(f for f in report["runtime"]["functions"] if f["name"] == "probe")
    assert report["kernels"]["probe"] == probe["chosen"]
