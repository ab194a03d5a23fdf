"""The whole runtime builds warning-free and passes its C tests with each
supported compiler: gcc and clang (clang 14 has no _Float16 on x86-64, so
its build takes the portable float16 path of sources/core/narrow_float.c)."""

from __future__ import annotations

import subprocess

import pytest


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_c_tests_pass(meson_tree, build_tool, cc):
    tree = meson_tree(cc)
    r = subprocess.run([build_tool("meson"), "test", "-C", str(tree), "--print-errorlogs"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "dispatch:narrow_float" in r.stdout


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_build_has_no_compiler_warnings(meson_tree, cc):
    log = (meson_tree(cc) / "build-output.txt").read_text()
    warnings = [line for line in log.splitlines() if "warning:" in line]
    assert warnings == []
