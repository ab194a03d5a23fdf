"""DISPATCH_DISABLE_CPU_FEATURES / DISPATCH_ENABLE_CPU_FEATURES, one
behaviour per test, messages included. Each case imports dispatch in a fresh
interpreter: the variables are read once, at import.
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

DISABLE = "DISPATCH_DISABLE_CPU_FEATURES"
ENABLE = "DISPATCH_ENABLE_CPU_FEATURES"
FEATURES = "import json, dispatch; print(json.dumps(dispatch.__cpu_features__))"
ENV_MAX = 1023


def _import(env: dict[str, str], cwd: Path, code: str = FEATURES) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    clean.update(env)
    return subprocess.run([sys.executable, "-W", "always", "-c", code], check=False, cwd=cwd,
                          env=clean, capture_output=True, text=True, timeout=120)


def _features(env: dict[str, str], cwd: Path) -> dict[str, bool]:
    proc = _import(env, cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _error(env: dict[str, str], cwd: Path) -> str:
    """The last line of the traceback of a failed import."""
    proc = _import(env, cwd)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> dict:
    """The build's sets and this machine's features, without overrides."""
    cwd = tmp_path_factory.mktemp("cpu-env")
    code = ("import json, dispatch; print(json.dumps({'baseline': dispatch.__cpu_baseline__,"
            " 'dispatch': dispatch.__cpu_dispatch__, 'features': dispatch.__cpu_features__,"
            " 'arch': dispatch._cpu.runtime_info()['arch']}))")
    proc = _import({}, cwd, code)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    out["table"] = ARCHES[out["arch"]]
    return out


def _present_dispatched(build: dict) -> list[str]:
    return [f for f in build["dispatch"] if build["features"][f]]


def _successors(build: dict, name: str) -> list[str]:
    return sorted(build["table"].successors(name))


def test_both_variables_set_is_an_import_error(tmp_path):
    line = _error({DISABLE: "AVX2", ENABLE: "AVX2"}, tmp_path)
    assert line.startswith("ImportError: ")
    assert f"{DISABLE} and {ENABLE} are both set; set only one of them" in line


def test_disabling_a_baseline_feature_is_a_runtime_error(build, tmp_path):
    if not build["baseline"]:
        pytest.skip("this build has an empty baseline")
    name = build["baseline"][-1]
    line = _error({DISABLE: name.lower()}, tmp_path)
    assert line.startswith(f"RuntimeError: {DISABLE} cannot disable {name}: it is part of "
                           f"this build's baseline (")
    assert " ".join(build["baseline"]) in line
    assert "rebuild with a lower -Dcpu-baseline" in line


def test_enabling_a_feature_the_machine_lacks_is_a_runtime_error(build, tmp_path):
    missing = [f for f in build["dispatch"] if not build["features"][f]]
    if not missing:
        pytest.skip("this machine has every dispatched feature")
    line = _error({ENABLE: missing[0]}, tmp_path)
    assert line.startswith(f"RuntimeError: {ENABLE} cannot enable {missing[0]}: "
                           "this machine does not support it (missing: ")
    assert missing[0] in line.split("(missing: ")[1]


def test_an_unknown_name_is_a_runtime_error_listing_the_arch_features(build, tmp_path):
    line = _error({DISABLE: "AVX3"}, tmp_path)
    assert line.startswith(f"RuntimeError: {DISABLE} names 'AVX3', which is not a CPU feature; "
                           f"the features of {build['arch']} are: ")
    assert set(line.split(" are: ")[1].split()) == set(build["features"])


def test_an_over_long_value_is_a_runtime_error(tmp_path):
    value = " ".join(["AVX2"] * 300)
    line = _error({ENABLE: value}, tmp_path)
    assert line == (f"RuntimeError: {ENABLE} is {len(value)} characters long; "
                    f"at most {ENV_MAX} are accepted")


def test_a_value_of_exactly_the_limit_is_accepted(build, tmp_path):
    present = _present_dispatched(build)
    if not present:
        pytest.skip("no dispatched feature on this machine")
    value = present[0]
    value += " " * (ENV_MAX - len(value))
    assert len(value) == ENV_MAX
    assert _features({DISABLE: value}, tmp_path)[present[0]] is False


def test_a_name_not_dispatched_warns_naming_the_dispatched_set(build, tmp_path):
    undispatched = [f for f in build["features"]
                    if f not in build["dispatch"] and f not in build["baseline"]]
    if not undispatched:
        pytest.skip("this build dispatches every feature of the arch")
    name = undispatched[0]
    proc = _import({DISABLE: name}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "CPUFeatureWarning" in proc.stderr
    expected = (f"{DISABLE} names {name}, which this build does not dispatch, so no compiled "
                f"code depends on it; the dispatched features are: "
                f"{' '.join(build['dispatch']) or '(none)'}")
    assert expected in proc.stderr


def test_disable_turns_off_the_feature_and_all_that_imply_it(build, tmp_path):
    present = _present_dispatched(build)
    if not present:
        pytest.skip("no dispatched feature on this machine")
    name = present[len(present) // 2]
    features = _features({DISABLE: name}, tmp_path)
    off = set(_successors(build, name)) | {g.name for g in build["table"].groups
                                           if name in build["table"].closure(g.members)}
    for f, on in features.items():
        assert on == (build["features"][f] and f not in off), f


def test_disable_accepts_commas_and_any_case(build, tmp_path):
    present = _present_dispatched(build)
    if len(present) < 2:
        pytest.skip("needs two dispatched features on this machine")
    top, second = present[-1], present[-2]
    features = _features({DISABLE: f" {top.lower()},{second.title()} ,"}, tmp_path)
    assert features[top] is False and features[second] is False


def test_enable_keeps_the_feature_what_it_implies_and_the_baseline_only(build, tmp_path):
    present = _present_dispatched(build)
    if not present:
        pytest.skip("no dispatched feature on this machine")
    name = present[len(present) // 2]
    features = _features({ENABLE: name}, tmp_path)
    kept = build["table"].closure([name]) | build["table"].closure(build["baseline"])
    for f in build["table"].by_name:
        assert features[f] == (f in kept), f
    for g in build["table"].groups:
        assert features[g.name] == all(features[m] for m in g.members), g.name


def test_enable_of_a_compound_feature_keeps_its_prerequisites(build, tmp_path):
    if not build["features"].get("AVX512_SKX"):
        pytest.skip("needs AVX512_SKX")
    features = _features({ENABLE: "AVX512_SKX"}, tmp_path)
    for f in ("AVX2", "FMA3", "F16C", "AVX", "AVX512F", "AVX512CD", "AVX512VL", "AVX512BW",
              "AVX512DQ", "AVX512_SKX"):
        assert features[f] is True, f
    # A group is on only when every member is: AVX512_SKX does not imply the
    # x86-64-v3 scalar extensions (BMI, BMI2, LZCNT, MOVBE) that X86_V4 holds,
    # so enabling it alone leaves the level off (docs/downstream.md).
    for f in ("AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR", "AVX512VNNI", "X86_V4",
              "BMI2"):
        assert features[f] is False, f


def test_enable_of_a_group_enables_every_member(build, tmp_path):
    if not build["features"].get("X86_V4"):
        pytest.skip("needs an x86-64-v4 machine")
    features = _features({ENABLE: "X86_V4"}, tmp_path)
    for f in ("X86_V4", "X86_V3", "AVX512_SKX", "BMI", "BMI2", "LZCNT", "MOVBE"):
        assert features[f] is True, f


def test_disabling_a_single_extension_removes_the_generations_built_on_it(build, tmp_path):
    if not build["features"].get("AVX512VL"):
        pytest.skip("needs AVX512VL")
    features = _features({DISABLE: "AVX512VL"}, tmp_path)
    for f in ("AVX512VL", "AVX512_SKX", "X86_V4"):
        assert features[f] is False, f
    for f in ("AVX512F", "AVX512CD", "AVX512BW", "AVX512DQ"):
        assert features[f] == build["features"][f], f


@pytest.mark.parametrize("name", ["BMI2", "LZCNT", "MOVBE"])
def test_disabling_a_scalar_extension_of_x86_64_v3_removes_the_level(build, tmp_path, name):
    """The psABI levels hold their scalar extensions (issue 37): without one
    the CPU is not x86-64-v3, though every vector feature stays."""
    if build["arch"] != "x86_64" or not build["features"].get("X86_V3"):
        pytest.skip("needs an x86-64-v3 machine")
    features = _features({DISABLE: name}, tmp_path)
    assert features[name] is False and features["X86_V3"] is False
    assert features["X86_V2"] is True
    for f in ("AVX2", "FMA3", "F16C"):
        assert features[f] is True, f


def test_enabling_a_single_extension_the_machine_lacks_names_what_is_missing(build, tmp_path):
    if build["arch"] not in ("x86_64", "x86") or build["features"]["AVX512VL"]:
        pytest.skip("needs an x86 machine without AVX512VL")
    line = _error({ENABLE: "avx512vl"}, tmp_path)
    assert line.startswith(f"RuntimeError: {ENABLE} cannot enable AVX512VL: "
                           "this machine does not support it (missing: ")
    missing = line.split("(missing: ")[1].rstrip(")").split()
    closure = build["table"].closure(["AVX512VL"])
    assert set(missing) == {f for f in closure if not build["features"][f]}


def test_an_empty_value_is_as_if_unset(build, tmp_path):
    assert _features({DISABLE: " , ", ENABLE: ""}, tmp_path) == build["features"]


def test_disabled_features_show_in_the_runtime_report(build, tmp_path):
    present = _present_dispatched(build)
    if not present:
        pytest.skip("no dispatched feature on this machine")
    code = "import json, dispatch; print(json.dumps(dispatch._cpu.runtime_info()))"
    proc = _import({DISABLE: present[-1]}, tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["disabled_by_env"] == [present[-1]]


def test_the_test_hook_rereads_the_environment(build, tmp_path):
    present = _present_dispatched(build)
    if not present:
        pytest.skip("no dispatched feature on this machine")
    name = present[0]
    code = (f"import os, json, dispatch\n"
            f"os.environ['{DISABLE}'] = '{name}'\n"
            f"after = dispatch._cpu._redetect_for_tests()\n"
            f"print(json.dumps([dispatch.__cpu_features__['{name}'], after['{name}']]))")
    proc = _import({}, tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [True, False]


def test_the_test_hook_raises_like_the_import(tmp_path):
    code = (f"import os, dispatch\n"
            f"os.environ['{DISABLE}'] = 'AVX3'\n"
            f"dispatch._cpu._redetect_for_tests()")
    line = _import({}, tmp_path, code).stderr.strip().splitlines()[-1]
    assert line.startswith(f"RuntimeError: {DISABLE} names 'AVX3', which is not a CPU feature")

