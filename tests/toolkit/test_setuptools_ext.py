"""The setuptools route's own behaviour, in-process (tests/test_three_builders.py
builds with it): where its CPU options come from, that a C++ source makes a
C++ link, and that nothing else in the toolkit imports setuptools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

setuptools = pytest.importorskip("setuptools")

from dispatchkit import setuptools_ext  # noqa: E402
from dispatchkit.steps import DEFAULT_BASELINE, DEFAULT_DISPATCH  # noqa: E402

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"


def _command(monkeypatch, env: dict, **options):
    for name in ("DISPATCHGEN_CPU_BASELINE", "DISPATCHGEN_CPU_DISPATCH",
                 "DISPATCHGEN_DISABLE_OPTIMIZATION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from setuptools.dist import Distribution
    cmd = setuptools_ext.build_ext(Distribution({"name": "x", "script_name": "setup.py"}))
    cmd.initialize_options()
    for name, value in options.items():
        setattr(cmd, name, value)
    cmd.finalize_options()
    return cmd


def test_the_cpu_options_default_to_the_toolkits(monkeypatch):
    cmd = _command(monkeypatch, {})
    assert (cmd.cpu_baseline, cmd.cpu_dispatch, cmd.disable_optimization) == \
        (DEFAULT_BASELINE, DEFAULT_DISPATCH, False)


def test_the_environment_sets_the_cpu_options(monkeypatch):
    cmd = _command(monkeypatch, {"DISPATCHGEN_CPU_BASELINE": "avx2",
                                 "DISPATCHGEN_CPU_DISPATCH": "avx512_skx",
                                 "DISPATCHGEN_DISABLE_OPTIMIZATION": "1"})
    assert (cmd.cpu_baseline, cmd.cpu_dispatch, cmd.disable_optimization) == \
        ("avx2", "avx512_skx", True)
    off = _command(monkeypatch, {"DISPATCHGEN_DISABLE_OPTIMIZATION": "off"})
    assert not off.disable_optimization


def test_the_command_line_wins_over_the_environment(monkeypatch):
    cmd = _command(monkeypatch, {"DISPATCHGEN_CPU_BASELINE": "avx2"}, cpu_baseline="sse42")
    assert cmd.cpu_baseline == "sse42"


def test_a_cpp_source_links_as_cpp():
    ext = setuptools_ext.DispatchExtension("m", ["m.c"], dispatch=["a.dispatch.cpp"])
    assert ext.language == "c++"
    plain = setuptools_ext.DispatchExtension("m", ["m.c"], dispatch=["a.dispatch.c"])
    assert plain.language is None


def test_the_rest_of_the_toolkit_never_imports_setuptools():
    code = ("import sys, dispatchkit.cli, dispatchkit.dispatch_config, dispatchkit.meson_plan; "
            "print('setuptools' in sys.modules, 'distutils' in sys.modules)")
    r = subprocess.run([sys.executable, "-S", "-c", code], cwd=TOOLS, capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.split() == ["False", "False"], r.stderr


def test_every_other_toolkit_module_imports_the_standard_library_only():
    """setuptools_ext.py alone imports a non-standard module (setuptools, the client's)."""
    import ast
    outside = {}
    for path in sorted((TOOLS / "dispatchkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "dispatchkit":
                    outside.setdefault(path.name, set()).add(top)
    assert outside == {"setuptools_ext.py": {"setuptools"}}, outside
