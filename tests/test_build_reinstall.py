"""Configuring this project while an editable dispatch is installed.

meson-python's editable install puts an import hook on sys.meta_path that
claims the package's top-level names (`dispatch`, `dispatchkit`) and, on any
import of them, rebuilds the editable build directory first. The generator
that configure runs (tools/dispatchgen/dispatchgen) imports `dispatchkit`; run with
that interpreter's site, the hook caught the import and ran ninja on the very
build directory meson was regenerating: a second `pip install -e .` (or any
reconfigure of the editable tree) failed with "Some other Meson process is
already using this build directory". meson.build runs the generator with
`python -S`, which it can: it needs only the standard library.

The hook is reproduced here by one that fails any import of those names, in
a venv layered over this environment (so meson, ninja and cffi are found);
`meson setup` must configure the tree without importing through it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# What meson-python's editable hook does, minus the rebuild: claim the names.
TRAP = textwrap.dedent('''
    import sys

    class EditableHookStandIn:
        """Claims dispatch/dispatchkit the way an editable install's hook does."""

        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".", 1)[0] in ("dispatch", "dispatchkit"):
                raise ImportError(
                    f"the installed editable hook was asked for {fullname}")
            return None

    sys.meta_path.insert(0, EditableHookStandIn())
''')


def _venv_with_hook(root: Path) -> Path:
    """A venv whose site loads this environment's packages and the hook."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)],
                   check=True)
    python = root / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    site = Path(site)
    # Every directory this interpreter imports from (its venv's site, and a
    # base site a --system-site-packages venv sees, as the sanitizer job's
    # does, where meson may live), in order; the stand-in hook still comes
    # first for the names it claims.
    parent = [p for p in sys.path if p and Path(p).is_dir()]
    (site / "parent_env.pth").write_text("".join(p + "\n" for p in parent))
    (site / "editable_hook_stand_in.py").write_text(TRAP)
    (site / "zz_editable_hook_stand_in.pth").write_text("import editable_hook_stand_in\n")
    return python


def test_configure_does_not_import_through_an_installed_editable_hook(tmp_path):
    python = _venv_with_hook(tmp_path / "venv")
    # The stand-in is live in that interpreter's site...
    r = subprocess.run([python, "-c", "import dispatchkit"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "editable hook" in r.stderr, r.stderr
    # ...and configure, whose generator imports dispatchkit, never meets it.
    r = subprocess.run(
        [python, "-m", "mesonbuild.mesonmain", "setup", str(tmp_path / "build"),
         str(REPO), "-Dtests=false", "-Dcuda=disabled"],
        capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (tmp_path / "build" / "build.ninja").is_file()
