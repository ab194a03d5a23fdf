"""``python -m dispatch``: the build configuration and the runtime report.

    python -m dispatch            # summary: compiler, baseline, dispatch set,
                                  # the target chosen per kernel source, CUDA
    python -m dispatch --verbose  # and the target of every dispatched function
    python -m dispatch --json     # all of it as one JSON object
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from . import _cpu, cuda, kernels
from ._core import ffi, lib


def build_info() -> dict:
    """What this build was configured with."""
    try:
        pkg_version = version("dispatch-tensor")  # the distribution; `dispatch` on the index is another project
    except PackageNotFoundError:  # not installed as a distribution (a staged copy)
        pkg_version = "unknown"
    return {
        "version": pkg_version,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "compiler": ffi.string(lib.dispatch_cpu_compiler()).decode(),
        "cpu_baseline": list(_cpu.__cpu_baseline__),
        "cpu_dispatch": list(_cpu.__cpu_dispatch__),
    }


def kernel_targets() -> dict:
    """The target chosen for this CPU per kernel source (the probe first)."""
    out = {"probe": ffi.string(lib.dispatch_probe_chosen()).decode()}
    out.update((source, kernels.chosen(source)) for source in kernels.SOURCES)
    return out


def cuda_info() -> dict:
    """Whether this package has its CUDA module (the meson option cuda) and, when
    it has, whether CUDA runs here: the device and the code it runs, or why not."""
    if not cuda.archs() or importlib.util.find_spec("dispatch._cuda") is None:
        return {"built": False, "state": "not built",
                "detail": f"this package has no CUDA module ({cuda.unavailable_reason()})"}
    info = cuda.runtime_info()
    why = getattr(cuda._cuda_build, "ARCH_WHY", "")
    if not info["available"]:
        return {"built": True, "state": "unavailable", "archs": info["archs"],
                "archs_why": why, "detail": info["reason"]}
    return {"built": True, "state": "available", "archs": info["archs"],
            "archs_why": why, "devices": info["devices"],
            "detail": "; ".join(f"device {d['index']} {d['name']} runs {d['code']}"
                                for d in info["devices"])}


def report() -> dict:
    """Everything ``--json`` prints."""
    return {"build": build_info(), "runtime": _cpu.runtime_info(),
            "features": dict(_cpu.__cpu_features__), "kernels": kernel_targets(),
            "cuda": cuda_info()}


def _line(label: str, value: str) -> None:
    print(f"  {label:<16} {value or '(none)'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dispatch", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="print everything as one JSON object")
    group.add_argument("--verbose", "-v", action="store_true",
                       help="also list the target chosen for each dispatched function")
    args = parser.parse_args(argv)
    info = report()
    if args.json:
        json.dump(info, sys.stdout, indent=2)
        print()
        return 0
    build, runtime = info["build"], info["runtime"]
    print(f"dispatch {build['version']} (Python {build['python']}, {build['machine']})")
    print("build")
    _line("compiler", build["compiler"])
    _line("cpu-baseline", " ".join(build["cpu_baseline"]))
    _line("cpu-dispatch", " ".join(build["cpu_dispatch"]))
    print(f"CPU features ({runtime['arch']})")
    _line("found", " ".join(runtime["found"]))
    _line("not found", " ".join(runtime["not_found"]))
    if runtime["disabled_by_env"]:
        _line("disabled by env", " ".join(runtime["disabled_by_env"]))
    # the options in the heading, not a line of their own: a summary a screen long
    more = "" if args.verbose else "; each function's: --verbose; all of it as JSON: --json"
    print(f"kernel sources (the target chosen for this CPU{more})")
    for source, target in info["kernels"].items():
        _line(source, target)
    print("CUDA")
    if info["cuda"]["built"]:
        _line("built", " ".join(info["cuda"]["archs"]))
        if info["cuda"].get("archs_why"):
            _line("built-for", info["cuda"]["archs_why"])
    _line(info["cuda"]["state"], info["cuda"]["detail"])
    if not args.verbose:
        return 0
    print("dispatched functions")
    functions = runtime["functions"]
    if not functions:
        print("  (none recorded)")
    width = max((len(f["name"]) for f in functions), default=0)
    for f in functions:
        print(f"  {f['name']:<{width}}  {f['chosen']:<12} of {' '.join(f['targets'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
