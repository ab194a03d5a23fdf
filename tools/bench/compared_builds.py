"""Builds compared in alternating fresh processes (``--variant NAME=DIR``).

The benchmarks that time one call in many fresh processes
(bench_threads_steady.py, bench_block_cache.py) share this: a variant puts
DIR first on the child's PYTHONPATH (an empty DIR: the installed package),
and every child runs from this directory, so that a checkout's own source
``dispatch/`` (no compiled extension) never shadows the build asked for:
``python -c`` puts the working directory first on sys.path.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=DIR",
                    help="a PYTHONPATH directory holding another build's dispatch/ "
                         "(repeatable; an empty DIR: the installed one)")


def parse(ap: argparse.ArgumentParser, values: list[str]) -> list[tuple[str, str]]:
    """(name, dir) of each --variant, or the installed package alone."""
    builds = []
    for v in values or ["installed="]:
        name, sep, path = v.partition("=")
        if not sep or not name:
            ap.error(f"--variant {v!r}: expected NAME=DIR (DIR may be empty)")
        if path and not os.path.isdir(os.path.join(path, "dispatch")):
            ap.error(f"--variant {v!r}: {path} has no dispatch/ package")
        builds.append((name, path))
    return builds


def run_child(script: str, args: list[str], pythonpath: str, env: dict | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
    """script run by ``python -c`` with args, DIR first on its PYTHONPATH,
    from this directory; env defaults to this process's."""
    env = dict(os.environ if env is None else env)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=HERE)
