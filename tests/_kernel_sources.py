"""Each kernel source's own x86 targets, read from its `@targets` line by the
toolkit's parser (`tools/dispatchgen/dispatchgen targets --json`), so the tests follow
the one list the build follows instead of keeping a copy of it."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "sources" / "kernels"


@functools.cache
def own_targets(source: str) -> tuple[str, ...]:
    """The x86 targets `source`.dispatch.c asks for, highest first, then baseline."""
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "dispatchgen" / "dispatchgen"), "targets",
                           str(KERNELS / f"{source}.dispatch.c"), "--json"],
                          capture_output=True, text=True, check=True)
    spec = json.loads(proc.stdout)
    names = tuple(t["name"] for t in spec["targets"])
    return names + ("baseline",) if spec["baseline"] else names
