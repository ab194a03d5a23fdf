"""Every snippet of docs/downstream.md a user pastes, built and run as they
would, in the environment its text names: the `<!-- file: NAME -->` blocks
written into a fresh directory, the `<!-- run -->` blocks run there with bash,
by both routes (a fresh venv with nothing installed and the toolkit's wheel
in wheelhouse/, pip's isolated build; the toolkit vendored with
`dispatch-config --vendor` into a venv that has meson-python). The runtime's
blocks run where the runtime is installed (this test's environment). Also:
every environment variable the sources read is documented there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _venvs import fresh_venv as _venv  # noqa: E402
from _venvs import run as _run  # noqa: E402

QEMU = shutil.which("qemu-x86_64")


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISPATCH_", "MYMOD_", "PKG_CONFIG_PATH", "PYTHONPATH"))}
    env["DISPATCHGEN_CACHE_DIR"] = str(tmp / "probe-cache")
    return env


REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "downstream.md"
# A block tagged with a builder, `<!-- file: setup.py (setuptools) -->`, belongs
# to that builder's project: the shared sources, its own files instead of Meson's.
BLOCK = re.compile(r"<!-- (file: (?P<name>[^ ]+)|run)(?: \((?P<route>[\w-]+)\))? -->\n"
                   r"```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
MESON_FILES = {"pyproject.toml", "meson.build", "meson_options.txt"}
ROUTES = ("setuptools", "scikit-build")

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64",
                                reason="the snippets' targets are x86's")


def _blocks(route=None):
    files, runs = {}, []
    for m in BLOCK.finditer(DOC.read_text()):
        if m["route"] != route:
            continue
        if m["name"]:
            files[m["name"]] = m["body"]
        else:
            runs.append(m["body"])
    return files, runs


def test_the_doc_has_the_snippets_the_tests_run():
    files, runs = _blocks()
    assert set(files) == {"pyproject.toml", "meson_options.txt", "include/mymod.h",
                          "add.dispatch.c", "mymod.c", "meson.build", "every_variant.py"}
    assert len(runs) == 5
    assert set(_blocks("setuptools")[0]) == {"pyproject.toml", "setup.py"}
    assert set(_blocks("scikit-build")[0]) == {"pyproject.toml", "CMakeLists.txt"}
    assert [len(_blocks(route)[1]) for route in ROUTES] == [1, 1]
    assert {m["route"] for m in BLOCK.finditer(DOC.read_text())} == {None, *ROUTES}


def test_each_file_block_shows_its_file_name():
    """The `<!-- file: NAME -->` comment is invisible once rendered: the line
    above it names the file the reader is to write."""
    text = DOC.read_text()
    for m in BLOCK.finditer(text):
        if not m["name"]:
            continue
        above = [ln for ln in text[:m.start()].splitlines() if ln.strip()][-1]
        assert above.startswith(f"`{m['name']}`"), (m["name"], above)


def test_quick_start_builds_the_wheel_where_route_a_finds_it(tmp_path):
    """The quick-start's `pip wheel` line, run from the project's directory
    with this checkout as the path it names, leaves the toolkit's wheel in the
    folder route (a)'s `pip install --find-links` reads."""
    text = DOC.read_text()
    quick = text[text.index("## Quick-start"):]
    (build,) = [b for b in re.findall(r"```sh\n(.*?)```", quick[:quick.index("<!-- file:")], re.S)
                if "pip wheel" in b]
    assert "path/to/dispatch/" in build
    project = tmp_path / "mymod"
    project.mkdir()
    script = build.replace("path/to/dispatch/", f"{REPO}/")
    _bash(script, project, _path_env(tmp_path, Path(sys.executable).parent))
    found = re.search(r"--find-links (\S+)", _blocks()[1][0])[1]
    assert [p.name for p in (project / found).glob("dispatchgen-*.whl")], script


def _project(tmp: Path, route=None) -> Path:
    """The snippets' project; for another builder, its files instead of Meson's."""
    src = tmp / "mymod"
    src.mkdir()
    files = _blocks()[0]
    if route:
        files = {name: body for name, body in files.items() if name not in MESON_FILES}
        files.update(_blocks(route)[0])
    for name, body in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(body)
    return src


def _bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{script}\n{r.stdout[-5000:]}\n{r.stderr[-5000:]}"
    return r


def _path_env(tmp: Path, *bins: Path) -> dict:
    env = _env(tmp)
    env["PATH"] = os.pathsep.join([*map(str, bins), env["PATH"]])
    return env


def test_quick_start_route_a_builds_and_runs(tmp_path, toolkit_wheel):
    python = _venv(tmp_path / "venv", system_site=False)  # nothing installed
    src = _project(tmp_path)
    (src / "wheelhouse").mkdir()
    shutil.copy2(toolkit_wheel, src / "wheelhouse")
    runs = _blocks()[1]
    r = _bash(runs[0], src, _path_env(tmp_path, python.parent))
    lines = r.stdout.strip().splitlines()
    assert lines[-1].startswith("(4.0, 6.0) {'add': '")
    # "Testing and benchmarking every variant", in this venv: each target the
    # CPU runs, that target's variant (or the next one down where the compiler
    # skipped it), then the baseline alone.
    r = _bash(runs[2], src, _path_env(tmp_path, python.parent))
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "{'add': 'baseline'}", r.stdout
    assert lines[-2] == "baseline -> baseline (4.0, 6.0)", r.stdout
    order = ["AVX512_SKX", "AVX2", "SSE42", "baseline"]
    for line in lines[:-1]:
        asked, _, got = line.partition(" -> ")
        assert got.endswith(" (4.0, 6.0)"), r.stdout
        assert order.index(got.split()[0]) >= order.index(asked), r.stdout
    if QEMU:  # the guard and the choice of this snippet's module on an emulated CPU
        env = _env(tmp_path)
        env.pop("LD_PRELOAD", None)  # the sanitizer job's libasan kills qemu guests
        out = subprocess.run([QEMU, "-cpu", "Nehalem", python, "-c",
                              "import mymod; print(mymod.__cpu_targets__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
        assert out.stdout.strip() == "{'add': 'SSE42'}", out.stderr


def test_quick_start_route_b_vendors_and_builds(tmp_path, toolkit_wheel):
    tool = _venv(tmp_path / "tool")  # where dispatch-config comes from
    _run([tool, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
          toolkit_wheel])
    python = _venv(tmp_path / "venv")  # the build's Python: no toolkit installed
    src = _project(tmp_path)
    runs = _blocks()[1]
    r = _bash(runs[1], src, _path_env(tmp_path, python.parent, tool.parent))
    assert (src / "tools" / "dispatchgen" / "dispatchgen").is_file()
    assert (src / "tools" / "dispatchgen" / "dispatchkit" / "cpu" / "cpu_features.c").is_file()
    r = _run([python, "-c", "import mymod; print(mymod.add2((1, 2), (3, 4)))"], cwd=tmp_path,
             env=_env(tmp_path))
    assert r.stdout.strip() == "(4.0, 6.0)"


@pytest.mark.parametrize("route", ROUTES)
def test_other_builders_build_the_same_module(route, tmp_path, toolkit_wheel):
    """"Other builders": the same sources, setuptools' or CMake's files, in a
    fresh venv with nothing installed; the module chooses as route (a)'s, here
    and under qemu Nehalem."""
    python = _venv(tmp_path / "venv", system_site=False)
    src = _project(tmp_path, route)
    (src / "wheelhouse").mkdir()
    shutil.copy2(toolkit_wheel, src / "wheelhouse")
    (script,) = _blocks(route)[1]
    r = _bash(script, src, _path_env(tmp_path, python.parent))
    cpu = set(Path("/proc/cpuinfo").read_text().split())
    best = "AVX512_SKX" if {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"} <= cpu \
        else "AVX2" if {"avx2", "f16c"} <= cpu else "SSE42" if "sse4_2" in cpu else "baseline"
    assert r.stdout.strip().splitlines()[-1] == f"(4.0, 6.0) {{'add': '{best}'}}", r.stdout
    if QEMU:
        env = _env(tmp_path)
        env.pop("LD_PRELOAD", None)
        out = subprocess.run([QEMU, "-cpu", "Nehalem", python, "-c",
                              "import mymod; print(mymod.__cpu_targets__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
        assert out.stdout.strip() == "{'add': 'SSE42'}", out.stderr


def test_other_builders_client_code_is_at_most_15_lines():
    for route, name in (("setuptools", "setup.py"), ("scikit-build", "CMakeLists.txt")):
        body = _blocks(route)[0][name].splitlines()
        code = [ln for ln in body if ln.strip() and not ln.lstrip().startswith("#")]
        assert len(code) <= 15, (name, len(code))


def test_dispatch_package_snippets_run(tmp_path):
    pytest.importorskip("dispatch")
    runs = _blocks()[1]
    env = _path_env(tmp_path, Path(sys.executable).parent)
    for script in runs[3:]:
        _bash(script, tmp_path, env)


README = REPO / "README.md"
PYTHON_RUN = re.compile(r"<!-- run: python -->\n```python\n(?P<body>.*?)```", re.S)


def test_readme_first_examples_print_what_their_comments_say(tmp_path):
    """README's python examples, run as written; a print's comment is its output."""
    pytest.importorskip("dispatch")
    blocks = PYTHON_RUN.findall(README.read_text())
    assert blocks, "README has its first examples"
    for body in blocks:
        said = [ln.split("# ", 1)[1].strip() for ln in body.splitlines()
                if ln.startswith("print(") and "# " in ln]
        assert said, body
        r = _run([sys.executable, "-I", "-c", body], cwd=tmp_path, env=_env(tmp_path))
        assert r.stdout.strip().splitlines() == said, (body, r.stdout)


EXCERPT = re.compile(r"<!-- excerpt: (?P<path>[^ ]+) -->\n```\w*\n(?P<body>.*?)```", re.S)


@pytest.mark.parametrize("doc, count", [(DOC, 3), (README, 1)], ids=["downstream", "README"])
def test_excerpts_are_the_example_files_lines(doc, count):
    """A snippet marked as an excerpt is lines of a tested example, comments aside."""
    found = 0
    for m in EXCERPT.finditer(doc.read_text()):
        lines = {re.split(r"\s*(;|/\*)", line)[0].strip()
                 for line in (REPO / m["path"]).read_text().splitlines()}
        for line in m["body"].splitlines():
            code = re.split(r"\s*(;|/\*)", line)[0].strip()
            assert not code or code in lines, f"{m['path']}: {line!r}"
        found += 1
    assert found == count


def test_every_environment_variable_read_is_documented():
    text = DOC.read_text()
    found = set()
    for root in ("sources", "dispatch", "tools"):
        for f in (REPO / root).rglob("*"):
            if f.suffix in (".c", ".h", ".py") and "test" not in f.name:
                found |= set(re.findall(r'getenv\("([A-Z_]+)"\)', f.read_text()))
                found |= set(re.findall(r'environ\.get\("([A-Z_]+)"', f.read_text()))
    found |= {"DISPATCH_DISABLE_CPU_FEATURES", "DISPATCH_ENABLE_CPU_FEATURES"}  # by prefix
    assert found >= {"DISPATCH_CPU_CACHE_MB", "DISPATCHGEN_CACHE_DIR"}
    missing = sorted(v for v in found if f"`{v}`" not in text and v not in ("XDG_CACHE_HOME",))
    assert not missing, missing


def test_the_line_count_the_doc_states_is_the_snippets():
    """"From `find_program` to `extension_module` that is N lines", comments aside."""
    stated = re.search(r"From `find_program` to `extension_module` that is (\d+) lines",
                       DOC.read_text())
    assert stated, "the doc states the line count"
    body = _blocks()[0]["meson.build"].splitlines()
    code = [ln for ln in body if ln.strip() and not ln.lstrip().startswith("#")]
    first = next(i for i, ln in enumerate(code) if "find_program('dispatchgen'" in ln)
    last = next(i for i, ln in enumerate(code) if ln.startswith("py.extension_module("))
    assert last - first + 1 == int(stated[1]) <= 15


def test_generated_header_names_in_prose_are_the_snippets():
    """Prose names the header generated for the source the snippets use."""
    for path in (README, *sorted((REPO / "docs").glob("*.md"))):
        text = path.read_text()
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        named = set(re.findall(r"`([a-z_]\w*)\.dispatch\.h`", prose))  # not `X.dispatch.h`
        snippets = "".join(re.findall(r"```.*?```", text, flags=re.S))
        included = set(re.findall(r'#include "(\w+)\.dispatch\.h"', snippets))
        assert named <= included, (path.name, named - included)
