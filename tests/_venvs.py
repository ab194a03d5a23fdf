"""Fresh virtual environments and checked subprocesses for the tests that
build a project as its user would (the README's and docs' snippets, the
downstream examples)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def run(cmd, **kw) -> subprocess.CompletedProcess:
    """Run cmd; a failure shows the command and the ends of its output."""
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"
    return r


def fresh_venv(path: Path, system_site: bool = True) -> Path:
    """A fresh venv at path; its python. With system_site, one that sees
    meson, meson-python and ninja where this interpreter sees them: the base
    interpreter's packages and, when this interpreter is itself a venv's
    (.venv, a GPU machine's), that venv's too, after the new venv's own (so
    installing the toolkit's wheel into it takes --ignore-installed: the
    outer venv may hold one)."""
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", *(["--system-site-packages"] if system_site else []), path])
    python = path / "bin" / "python"
    if system_site and sys.prefix != sys.base_prefix:
        site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        Path(site.stdout.strip(), "zz-outer-venv.pth").write_text(
            sysconfig.get_paths()["purelib"] + "\n")
    return python
