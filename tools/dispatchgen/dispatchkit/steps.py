"""The steps every command shares: options -> configuration -> the files and
libraries a build compiles. The CLI (cli.py) and `dispatchgen meson`
(meson_plan.py) both call these; neither imports the other.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import ctable, generate, paths
from .build_config import BuildConfig, configure
from .errors import DispatchError, printable, shown
from .inputs import read_input
from .probe import default_cache_dir
from .targets import load_groups, parse, resolve

DEFAULT_BASELINE = "min"
DEFAULT_DISPATCH = "max -xop -fma4"


def add_build_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cc", default=os.environ.get("CC", "cc"),
                   help="compiler command, e.g. 'gcc', 'ccache clang', 'cl' or 'clang-cl' (those two "
                        "get cl's syntax) (default: $CC or cc)")
    p.add_argument("--cflags", default=os.environ.get("CFLAGS", ""),
                   help="extra compiler flags the build uses (default: $CFLAGS)")
    p.add_argument("--cpu-baseline", default=DEFAULT_BASELINE,
                   help=f"features always enabled (default: {DEFAULT_BASELINE!r})")
    p.add_argument("--cpu-dispatch", default=DEFAULT_DISPATCH,
                   help=f"features to dispatch on (default: {DEFAULT_DISPATCH!r})")
    p.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                   help="where compiler probe results are cached (default: %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--exhaustive-probe", action="store_true",
                   help="compile each feature's check on its own instead of one union "
                        "compile first (see Note [Union probe] in probe.py)")


def config_from_args(args: argparse.Namespace) -> BuildConfig:
    if getattr(args, "config", None):
        return BuildConfig.load(args.config)
    return configure(args.cc, args.cflags, args.cpu_baseline, args.cpu_dispatch,
                     None if args.no_cache else args.cache_dir, args.exhaustive_probe)


def report_dict(config: BuildConfig) -> dict:
    return {
        "arch": config.arch,
        "compiler": {"command": config.compiler, "family": config.compiler_family,
                     "version": config.compiler_version, "cflags": config.cflags},
        "baseline": {"requested": config.requested_baseline, "features": config.baseline,
                     "flags": config.baseline_flags},
        "dispatch": {"requested": config.requested_dispatch, "features": config.dispatch,
                     "flags": config.dispatch_flags},
        "skipped": config.skipped,
        "unsupported": config.unsupported,
        "notes": config.notes,
    }


def report_text(config: BuildConfig) -> str:
    lines = [
        f"arch:      {config.arch}",
        f"compiler:  {' '.join(config.compiler)} ({config.compiler_family} "
        f"{config.compiler_version})",
        f"baseline:  {' '.join(config.baseline) or '(none)'}   "
        f"[{' '.join(config.baseline_flags)}]   from {config.requested_baseline!r}",
        f"dispatch:  {' '.join(config.dispatch) or '(none)'}   "
        f"from {config.requested_dispatch!r}",
    ]
    lines += [f"skipped:   {s['feature']} ({s['option']}): {s['reason']}" for s in config.skipped]
    lines += [f"note:      {n}" for n in config.notes]
    return "\n".join(lines)


def write_config(config: BuildConfig, outdir: Path) -> None:
    """configure's outputs: all or none (a later step reads the JSON, the C
    code the headers)."""
    generate.write_files([(outdir / "_cpu_dispatch.h", generate.cpu_dispatch_header(config)),
                          (outdir / ctable.HEADER_NAME, ctable.render()),
                          (outdir / "dispatch_config.json", config.to_json())])


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_prefix_of(package: str) -> str:
    """The env-variable prefix of a package: `my-pkg.sub` -> `MY_PKG_SUB`."""
    return re.sub(r"[^A-Za-z0-9_]", "_", package).upper()


def runtime_library(package: str, module: Optional[str], prefix: Optional[str],
                    program: Optional[str] = None,
                    shared_library: bool = False) -> Tuple[List[str], List[str]]:
    """The CPU runtime as a downstream build compiles it: (sources, -D flags).

    The toolkit's own files (paths.CPU), compiled WITHOUT the build's baseline
    flags, with the package's env prefix (Note [Env prefix] in
    cpu/cpu_features.c); with a module name, also the module guard (Note
    [Module guard] in cpu/cpu_module_guard.c), whose PyInit_<module> is the
    extension's; with a program name, the program guard (Note [Program guard]
    in cpu/cpu_program_guard.c), a .preinit_array entry, or a first
    constructor in a shared library.
    """
    prefix = prefix or env_prefix_of(package)
    c_package = package.replace(".", "_").replace("-", "_")
    for what, value in (("package", c_package), ("module", module), ("env prefix", prefix)):
        if value is not None and not _IDENT.fullmatch(value):
            raise DispatchError(f"the {what} name {shown(value)!r} must be a C identifier "
                                "(letters, digits, underscores)")
    names = list(paths.RUNTIME_SOURCES)
    flags = [f"-DDISPATCH_CPU_ENV_PREFIX={prefix}"]
    if module:
        names.append(paths.MODULE_GUARD)
        flags += [f"-DDISPATCH_PACKAGE_NAME={c_package}", f"-DDISPATCH_MODULE_NAME={module}"]
    elif program:
        names.append(paths.PROGRAM_GUARD)
        codes = ",".join(str(b) for b in program.encode())
        flags.append(f"-DDISPATCH_PROGRAM_NAME_CHARS={codes}")
        if shared_library:
            flags.append("-DDISPATCH_PROGRAM_GUARD_CONSTRUCTOR")
    sources = [str(paths.CPU / n) for n in names]
    bad = next((s for s in sources if not s.isprintable()), None)
    if bad is not None:  # it goes into meson's tab-separated lines
        raise DispatchError(f"the toolkit lies in a path meson's lines cannot carry: "
                            f"{printable(bad)!r}; install it elsewhere")
    return sources, flags


def resolve_file(src: Path, config: BuildConfig, groups: dict, disable_opt: bool):
    text = read_input(Path(src), "source")
    return resolve(parse(text, str(src), config.table, groups), config, disable_opt)


def dispatch_objects(config: BuildConfig, sources: List[Path], outdir: Path,
                     groups_file: Optional[Path], disable_optimization: bool):
    """Every object of a project's dispatchable sources: (headers to write, as
    (path, text, the source that asks for it), [(library name, index of the
    source, flags)], notes).

    The flags are the target's compiler flags plus the -D macros that make the
    source itself that target's translation unit (Note [No wrapper files] in
    generate.py). Any error in any source is a DispatchError, and so are two
    sources that would write one header or make one library (Note [One path,
    one output] in generate.py).
    """
    groups = load_groups(groups_file)
    files, objects, notes = [], [], []
    for index, src in enumerate(sources):
        generate.check_source_path(src)
        generate.source_language(src)
        res = resolve_file(src, config, groups, disable_optimization)
        files.append((outdir / generate.header_name(src.name),
                      generate.source_header(res, src.name), str(src)))
        stem = src.name.replace(".", "_")
        for t in res.targets:
            objects.append((f"{stem}_{t.name}", index, [*t.flags, *generate.target_defines(t)]))
        if res.baseline:
            objects.append((f"{stem}_baseline", index, list(config.baseline_flags)))
        built = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
        notes.append(f"{src.name}: builds {' '.join(built) or 'nothing'}")
        notes += [f"{src}:{res.skipped_lines.get(s['target'], res.line)}: skipped "
                  f"{s['target']}: {s['reason']}" for s in res.skipped]
        notes += res.notes
    inputs = [(Path(src), f"the source {src}") for src in sources]
    if groups_file is not None:
        inputs.append((Path(groups_file), f"the groups file {groups_file}"))
    generate.check_outputs([(path, origin) for path, _, origin in files], inputs)
    check_library_names([(name, str(sources[index])) for name, index, _ in objects])
    return files, objects, notes


def check_library_names(libraries: Sequence[Tuple[str, str]]) -> None:
    """Refuse two static libraries of one name, (name, what asks for it) each:
    meson would refuse the second, or a build would link one twice. The error
    names both inputs."""
    made: Dict[str, str] = {}
    for name, origin in libraries:
        other = made.setdefault(name, origin)
        if other != origin:
            raise DispatchError(f"{printable(other)} and {printable(origin)} would both make "
                                f"the static library {printable(name)!r}; rename one of them")
