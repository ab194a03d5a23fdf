"""The command line: `python tools/dispatchgen/dispatchgen <subcommand> ...`.

User errors exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from . import ctable, generate, meson_plan, paths, variants
from .config import BuildConfig, configure
from .inputs import read_input
from .errors import DispatchError, printable, shown, write_stdout
from .probe import default_cache_dir
from .targets import load_groups, parse, resolve

DEFAULT_BASELINE = "min"
DEFAULT_DISPATCH = "max -xop -fma4"


def add_build_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cc", default=os.environ.get("CC", "cc"),
                   help="compiler command, e.g. 'gcc' or 'ccache clang' (default: $CC or cc)")
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


def _config_from(args: argparse.Namespace) -> BuildConfig:
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


def cmd_report(args: argparse.Namespace) -> str:
    config = _config_from(args)
    return (json.dumps(report_dict(config), indent=2) if args.json else report_text(config)) + "\n"


def write_config(config: BuildConfig, outdir: Path) -> None:
    """configure's outputs: all or none (a later step reads the JSON, the C
    code the headers)."""
    generate.write_files([(outdir / "_cpu_dispatch.h", generate.cpu_dispatch_header(config)),
                          (outdir / ctable.HEADER_NAME, ctable.render()),
                          (outdir / "dispatch_config.json", config.to_json())])


def cmd_configure(args: argparse.Namespace) -> str:
    config = _config_from(args)
    write_config(config, Path(args.outdir))
    runtime = runtime_library(args.package, args.module, args.env_prefix) if args.package else None
    if not args.meson:
        return report_text(config) + "\n"
    # One "key<TAB>value" per line: meson's DSL can split but not parse JSON.
    lines = [f"include\t{paths.INCLUDE}",
             f"baseline\t{' '.join(config.baseline)}",
             f"baseline_flags\t{' '.join(config.baseline_flags)}",
             f"dispatch\t{' '.join(config.dispatch)}"]
    if runtime:
        lines.append(f"runtime\t{' '.join(runtime[0])}\t{' '.join(runtime[1])}")
    lines += [f"note\t{printable(line)}" for line in report_text(config).splitlines()]
    return "".join(f"{line}\n" for line in lines)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_prefix_of(package: str) -> str:
    """The env-variable prefix of a package: `my-pkg.sub` -> `MY_PKG_SUB`."""
    return re.sub(r"[^A-Za-z0-9_]", "_", package).upper()


def runtime_library(package: str, module: Optional[str],
                    prefix: Optional[str]) -> Tuple[List[str], List[str]]:
    """The CPU runtime as a downstream build compiles it: (sources, -D flags).

    The toolkit's own files (paths.CPU), compiled WITHOUT the build's baseline
    flags, with the package's env prefix (Note [Env prefix] in
    cpu/cpu_features.c); with a module name, also the module guard (Note
    [Module guard] in cpu/cpu_module_guard.c), whose PyInit_<module> is the
    extension's.
    """
    prefix = prefix or env_prefix_of(package)
    c_package = package.replace(".", "_").replace("-", "_")
    for what, value in (("package", c_package), ("module", module), ("env prefix", prefix)):
        if value is not None and not _IDENT.fullmatch(value):
            raise DispatchError(f"the {what} name {shown(value)!r} must be a C identifier "
                                "(letters, digits, underscores)")
    names = list(paths.RUNTIME_SOURCES) + ([paths.MODULE_GUARD] if module else [])
    flags = [f"-DDISPATCH_CPU_ENV_PREFIX={prefix}"]
    if module:
        flags += [f"-DDISPATCH_PACKAGE_NAME={c_package}", f"-DDISPATCH_MODULE_NAME={module}"]
    return [str(paths.CPU / n) for n in names], flags


def cmd_targets(args: argparse.Namespace) -> str:
    config = _config_from(args)
    groups = load_groups(args.groups)
    results, lines = [], []
    for src in args.files:
        res = _resolve_file(src, config, groups, args.disable_optimization)
        results.append(res.to_dict())
        names = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
        lines.append(f"{printable(str(src))}: {' '.join(names) or '(nothing to build)'}")
        lines += [f"  {t.name}: {' '.join(t.flags)}" for t in res.targets]
        lines += [f"  skipped {s['target']}: {s['reason']}" for s in res.skipped]
        lines += [f"  note: {printable(n)}" for n in res.notes]
    if args.json:
        return json.dumps(results[0] if len(results) == 1 else results, indent=2) + "\n"
    return "".join(f"{line}\n" for line in lines)


def _resolve_file(src: Path, config: BuildConfig, groups: dict, disable_opt: bool):
    text = read_input(Path(src), "source")
    return resolve(parse(text, str(src), config.table, groups), config, disable_opt)


def cmd_meson_source(args: argparse.Namespace) -> str:
    """Write <name>.dispatch.h; tell meson what to build (one source per process:
    meson-sources does all of them in one, without wrapper files).

    Lines: wrapper<TAB>lib name<TAB>target<TAB>flags<TAB>wrapper file name,
    baseline<TAB>lib name<TAB>source<TAB>flags, and note<TAB>text. Meson makes
    each wrapper with configure_file(command: ... wrapper ...), so that it holds
    a file reference to it rather than a path string.
    """
    config = BuildConfig.load(args.config)
    src = Path(args.source)
    generate.check_source_path(src)
    res = _resolve_file(src, config, load_groups(args.groups), args.disable_optimization)
    out = Path(args.outdir)
    stem = src.name.replace(".", "_")
    generate.write_if_changed(out / generate.header_name(src.name),
                              generate.source_header(res, src.name))
    lines = [f"wrapper\t{stem}_{t.name}\t{t.name}\t{' '.join(t.flags)}\t"
             f"{generate.wrapper_name(src.name, t)}" for t in res.targets]
    if res.baseline:
        lines.append(f"baseline\t{stem}_baseline\t{os.path.realpath(src)}\t"
                     f"{' '.join(config.baseline_flags)}")
    built = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
    lines.append(f"note\t{src.name}: builds {' '.join(built) or 'nothing'}")
    lines += [f"note\t{printable(str(src))}:{res.skipped_lines.get(s['target'], res.line)}: "
              f"skipped {s['target']}: {printable(s['reason'])}" for s in res.skipped]
    lines += [f"note\t{printable(n)}" for n in res.notes]
    return "".join(f"{line}\n" for line in lines)


def dispatch_objects(config: BuildConfig, sources: List[Path], outdir: Path,
                     groups_file: Optional[Path], disable_optimization: bool):
    """Every object of a project's dispatchable sources: (headers to write,
    [(library name, index of the source, flags)], notes).

    The flags are the target's compiler flags plus the -D macros that make the
    source itself that target's translation unit (Note [No wrapper files] in
    generate.py). Any error in any source is a DispatchError.
    """
    groups = load_groups(groups_file)
    names: dict = {}
    files, objects, notes = [], [], []
    for index, src in enumerate(sources):
        generate.check_source_path(src)
        generate.source_language(src)
        header = generate.header_name(src.name)
        if header in names:
            raise DispatchError(f"{src.name} and {names[header]} would both generate "
                                f"{header}; rename one", str(src))
        names[header] = src.name
        res = _resolve_file(src, config, groups, disable_optimization)
        files.append((outdir / header, generate.source_header(res, src.name)))
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
    return files, objects, notes


def cmd_meson_sources(args: argparse.Namespace) -> str:
    """All of a meson project's dispatchable sources in one process.

    Writes every <name>.dispatch.h (only those whose text changed, all or none:
    generate.write_files) and prints one line per object to build:
    lib<TAB>library name<TAB>index of the source in the arguments<TAB>flags,
    and note<TAB>text lines (at least one, so meson never splits an empty
    output). Any error in any source is one line and no header is written.
    """
    config = BuildConfig.load(args.config)
    files, objects, notes = dispatch_objects(config, args.sources, Path(args.outdir),
                                             args.groups, args.disable_optimization)
    generate.write_files(files)
    if not args.sources:
        notes.append("no dispatchable sources")
    lines = [f"lib\t{name}\t{index}\t{' '.join(flags)}" for name, index, flags in objects]
    lines += [f"note\t{printable(n)}" for n in notes]
    return "".join(f"{line}\n" for line in lines)


def cmd_wrapper(args: argparse.Namespace) -> str:
    """Print the wrapper source of one target of one source."""
    config = BuildConfig.load(args.config)
    generate.check_source_path(Path(args.source))
    res = _resolve_file(args.source, config, load_groups(args.groups), False)
    target = next((t for t in res.targets if t.name == args.target.upper()), None)
    if target is None:
        built = " ".join(t.name for t in res.targets) or "none"
        raise DispatchError(f"no target '{args.target}' is built (built: {built})",
                            str(args.source))
    return generate.wrapper_source(target, Path(args.source).name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dispatchgen",
        description="CPU dispatch toolkit: validate cpu-baseline/cpu-dispatch against a "
                    "compiler, parse @targets, generate the dispatch headers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="what a configuration enables, with skip reasons")
    add_build_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("targets", help="the parsed @targets of dispatchable sources")
    add_build_options(p)
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--config", type=Path, help="a dispatch_config.json from configure")
    p.add_argument("--groups", type=Path, help="INI file whose [groups] define #name")
    p.add_argument("--disable-optimization", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_targets)

    p = sub.add_parser("configure", help="write _cpu_dispatch.h, _cpu_features_table.h "
                       "and dispatch_config.json")
    add_build_options(p)
    p.add_argument("--outdir", type=Path, required=True)
    p.add_argument("--meson", action="store_true", help="print lines for meson")
    p.add_argument("--package", help="a package's CPU runtime: with --meson, one line "
                   "runtime<TAB>its sources<TAB>its -D flags (compile WITHOUT the baseline flags)")
    p.add_argument("--module", help="with --package: the extension module whose init the "
                   "runtime guards (DISPATCH_MODULE_INIT(<module>))")
    p.add_argument("--env-prefix", help="with --package: prefix of its env variables "
                   "(default: the package name in upper case)")
    p.set_defaults(func=cmd_configure)

    meson_plan.add_parser(sub)  # meson: the one call of a client's meson.build

    p = sub.add_parser("meson-source", help="write one source's header and wrappers (meson)")
    p.add_argument("source", type=Path)
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--outdir", type=Path, required=True)
    p.add_argument("--groups", type=Path)
    p.add_argument("--disable-optimization", action="store_true")
    p.set_defaults(func=cmd_meson_source)

    p = sub.add_parser("meson-sources",
                       help="write every source's header, list the objects to build (meson)")
    p.add_argument("sources", type=Path, nargs="*")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--outdir", type=Path, required=True)
    p.add_argument("--groups", type=Path)
    p.add_argument("--disable-optimization", action="store_true")
    p.set_defaults(func=cmd_meson_sources)

    p = sub.add_parser("wrapper", help="print the wrapper source of one target (meson)")
    p.add_argument("source", type=Path)
    p.add_argument("target")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--groups", type=Path)
    p.set_defaults(func=cmd_wrapper)

    variants.add_parser(sub)  # meson-variants: dispatchkit/variants.py
    return parser


def _trace(argv: List[str]) -> None:
    """$DISPATCHGEN_TRACE names a file that gets one line per run (the
    subcommand and its argument count): how tests count generator processes."""
    path = os.environ.get("DISPATCHGEN_TRACE")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{argv[0] if argv else ''}\t{len(argv)}\n")
        except OSError:
            pass


def main(argv: Optional[List[str]] = None) -> int:
    _trace(sys.argv[1:] if argv is None else list(argv))
    args = build_parser().parse_args(argv)
    try:
        write_stdout(args.func(args))
    except DispatchError as exc:
        _error(str(exc))
        return 2
    except OSError as exc:  # an I/O failure not named where it happened: still one line
        _error(printable(str(exc)))
        return 2
    return 0


def _error(text: str) -> None:
    if sys.stderr is not None:
        try:
            print(f"dispatchgen: error: {text}", file=sys.stderr, flush=True)
        except OSError:
            pass
