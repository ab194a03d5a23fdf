"""``python -m dispatch``: the build configuration and the runtime report.

    python -m dispatch          # human-readable
    python -m dispatch --json   # the same as one JSON object
"""

from __future__ import annotations

import argparse
import json
import platform
import sys

from . import _cpu


def build_info() -> dict:
    """What this build was configured with."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        pkg_version = version("dispatch")
    except PackageNotFoundError:  # not installed as a distribution (a staged copy)
        pkg_version = "unknown"
    return {
        "version": pkg_version,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_baseline": list(_cpu.__cpu_baseline__),
        "cpu_dispatch": list(_cpu.__cpu_dispatch__),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dispatch", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    build = build_info()
    if args.json:
        report = {"build": build, "runtime": _cpu.runtime_info(),
                  "features": dict(_cpu.__cpu_features__)}
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    print(f"dispatch {build['version']} (Python {build['python']}, {build['machine']})")
    print("build")
    print(f"  {'cpu-baseline':<16} {' '.join(build['cpu_baseline']) or '(none)'}")
    print(f"  {'cpu-dispatch':<16} {' '.join(build['cpu_dispatch']) or '(none)'}")
    _cpu.show_runtime()
    return 0


if __name__ == "__main__":
    sys.exit(main())
