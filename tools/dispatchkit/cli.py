"""The command line: `python tools/dispatchgen.py <subcommand> ...`.

User errors exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import List, Optional

from . import ctable, generate, variants
from .config import BuildConfig, configure
from .inputs import read_input
from .errors import DispatchError, printable
from .probe import default_cache_dir
from .targets import load_groups, parse, resolve

DEFAULT_BASELINE = "min"
DEFAULT_DISPATCH = "max -xop -fma4"


def _add_build_options(p: argparse.ArgumentParser) -> None:
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


def cmd_report(args: argparse.Namespace) -> None:
    config = _config_from(args)
    print(json.dumps(report_dict(config), indent=2) if args.json else report_text(config))


def cmd_configure(args: argparse.Namespace) -> None:
    config = _config_from(args)
    out = Path(args.outdir)
    # All or none: a later step reads the JSON, the C code the headers.
    generate.write_files([(out / "_cpu_dispatch.h", generate.cpu_dispatch_header(config)),
                          (out / ctable.HEADER_NAME, ctable.render()),
                          (out / "dispatch_config.json", config.to_json())])
    runtime = []
    if args.package:
        runtime = runtime_sources(args.package, args.module, args.env_prefix)
        for name, text in runtime:
            generate.write_if_changed(out / name, text)
    if not args.meson:
        print(report_text(config))
        return
    # One "key<TAB>value" per line: meson's DSL can split but not parse JSON.
    print(f"baseline\t{' '.join(config.baseline)}")
    print(f"baseline_flags\t{' '.join(config.baseline_flags)}")
    print(f"dispatch\t{' '.join(config.dispatch)}")
    for name, _ in runtime:
        print(f"runtime\t{name}")
    for line in report_text(config).splitlines():
        print(f"note\t{printable(line)}")


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_prefix_of(package: str) -> str:
    """The env-variable prefix of a package: `my-pkg.sub` -> `MY_PKG_SUB`."""
    return re.sub(r"[^A-Za-z0-9_]", "_", package).upper()


def runtime_sources(package: str, module: Optional[str], prefix: Optional[str]):
    """The CPU runtime as a downstream build compiles it: (file name, text) pairs.

    One small translation unit per runtime source, each including the
    toolkit's file through the include path the `dispatch` dependency gives
    (`cpu/<file>.c`), with the package's env prefix (Note [Env prefix] in
    sources/cpu/cpu_features.c); with a module name, also the module guard
    (Note [Module guard] in sources/cpu/cpu_module_guard.c). The build
    compiles them WITHOUT its baseline flags.
    """
    prefix = prefix or env_prefix_of(package)
    for what, value in (("package", package.replace(".", "_").replace("-", "_")),
                        ("module", module), ("env prefix", prefix)):
        if value is not None and not _IDENT.fullmatch(value):
            raise DispatchError(f"the {what} name {value!r} must be a C identifier "
                                "(letters, digits, underscores)")
    head = (f"/* Generated by dispatchgen configure for {package}: the toolkit's CPU "
            "runtime. Compile WITHOUT the baseline flags. Do not edit. */\n"
            f"#define DISPATCH_CPU_ENV_PREFIX {prefix}\n")
    files = [(f"dispatch_rt_{stem}.c", head + f'#include "cpu/{stem}.c"\n')
             for stem in ("cpu_features", "cpu_detect", "cpu_dispatch_trace")]
    if module:
        files.append(("dispatch_rt_module_guard.c", head +
                      f"#define DISPATCH_PACKAGE_NAME {package.replace('-', '_')}\n"
                      f"#define DISPATCH_MODULE_NAME {module}\n"
                      '#include "cpu/cpu_module_guard.c"\n'))
    return files


def cmd_targets(args: argparse.Namespace) -> None:
    config = _config_from(args)
    groups = load_groups(args.groups)
    results = []
    for src in args.files:
        res = _resolve_file(src, config, groups, args.disable_optimization)
        results.append(res.to_dict())
        if not args.json:
            names = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
            print(f"{printable(str(src))}: {' '.join(names) or '(nothing to build)'}")
            for t in res.targets:
                print(f"  {t.name}: {' '.join(t.flags)}")
            for s in res.skipped:
                print(f"  skipped {s['target']}: {s['reason']}")
            for n in res.notes:
                print(f"  note: {printable(n)}")
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))


def _resolve_file(src: Path, config: BuildConfig, groups: dict, disable_opt: bool):
    text = read_input(Path(src), "source")
    return resolve(parse(text, str(src), config.table, groups), config, disable_opt)


def cmd_meson_source(args: argparse.Namespace) -> None:
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
    for t in res.targets:
        print(f"wrapper\t{stem}_{t.name}\t{t.name}\t{' '.join(t.flags)}\t"
              f"{generate.wrapper_name(src.name, t)}")
    if res.baseline:
        print(f"baseline\t{stem}_baseline\t{os.path.realpath(src)}\t"
              f"{' '.join(config.baseline_flags)}")
    built = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
    print(f"note\t{src.name}: builds {' '.join(built) or 'nothing'}")
    for s in res.skipped:
        print(f"note\t{printable(str(src))}:{res.skipped_lines.get(s['target'], res.line)}: "
              f"skipped {s['target']}: {printable(s['reason'])}")
    for n in res.notes:
        print(f"note\t{printable(n)}")


def cmd_meson_sources(args: argparse.Namespace) -> None:
    """All of a meson project's dispatchable sources in one process.

    Writes every <name>.dispatch.h (only those whose text changed, all or none:
    generate.write_files) and prints one line per object to build:
    lib<TAB>library name<TAB>index of the source in the arguments<TAB>flags,
    where flags are the target's compiler flags plus the -D macros that make
    the source itself that target's translation unit (see Note [No wrapper
    files] in generate.py), and note<TAB>text lines (at least one, so meson
    never splits an empty output). Any error in any source is one line and no
    header is written.
    """
    config = BuildConfig.load(args.config)
    groups = load_groups(args.groups)
    out = Path(args.outdir)
    headers: dict = {}
    files, lines, notes = [], [], []
    for index, src in enumerate(args.sources):
        generate.check_source_path(src)
        generate.source_language(src)
        header = generate.header_name(src.name)
        if header in headers:
            raise DispatchError(f"{src.name} and {headers[header]} would both generate "
                                f"{header}; rename one", str(src))
        headers[header] = src.name
        res = _resolve_file(src, config, groups, args.disable_optimization)
        files.append((out / header, generate.source_header(res, src.name)))
        stem = src.name.replace(".", "_")
        for t in res.targets:
            flags = [*t.flags, *generate.target_defines(t)]
            lines.append(f"lib\t{stem}_{t.name}\t{index}\t{' '.join(flags)}")
        if res.baseline:
            lines.append(f"lib\t{stem}_baseline\t{index}\t{' '.join(config.baseline_flags)}")
        built = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
        notes.append(f"{src.name}: builds {' '.join(built) or 'nothing'}")
        notes += [f"{src}:{res.skipped_lines.get(s['target'], res.line)}: skipped "
                  f"{s['target']}: {s['reason']}" for s in res.skipped]
        notes += res.notes
    generate.write_files(files)
    if not args.sources:
        notes.append("no dispatchable sources")
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.write("".join(f"note\t{printable(n)}\n" for n in notes))


def cmd_wrapper(args: argparse.Namespace) -> None:
    """Print the wrapper source of one target of one source."""
    config = BuildConfig.load(args.config)
    generate.check_source_path(Path(args.source))
    res = _resolve_file(args.source, config, load_groups(args.groups), False)
    target = next((t for t in res.targets if t.name == args.target.upper()), None)
    if target is None:
        built = " ".join(t.name for t in res.targets) or "none"
        raise DispatchError(f"no target '{args.target}' is built (built: {built})",
                            str(args.source))
    sys.stdout.write(generate.wrapper_source(target, Path(args.source).name))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dispatchgen",
        description="CPU dispatch toolkit: validate cpu-baseline/cpu-dispatch against a "
                    "compiler, parse @targets, generate the dispatch headers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="what a configuration enables, with skip reasons")
    _add_build_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("targets", help="the parsed @targets of dispatchable sources")
    _add_build_options(p)
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--config", type=Path, help="a dispatch_config.json from configure")
    p.add_argument("--groups", type=Path, help="INI file whose [groups] define #name")
    p.add_argument("--disable-optimization", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_targets)

    p = sub.add_parser("configure", help="write _cpu_dispatch.h, _cpu_features_table.h "
                       "and dispatch_config.json")
    _add_build_options(p)
    p.add_argument("--outdir", type=Path, required=True)
    p.add_argument("--meson", action="store_true", help="print lines for meson")
    p.add_argument("--package", help="a downstream package: also write its CPU runtime "
                   "sources (runtime<TAB>file lines with --meson)")
    p.add_argument("--module", help="with --package: the extension module whose init the "
                   "runtime guards (DISPATCH_MODULE_INIT(<module>))")
    p.add_argument("--env-prefix", help="with --package: prefix of its env variables "
                   "(default: the package name in upper case)")
    p.set_defaults(func=cmd_configure)

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

    variants.add_parser(sub)  # meson-variants: tools/dispatchkit/variants.py
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
        args.func(args)
    except DispatchError as exc:
        print(f"dispatchgen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an I/O failure not named where it happened: still one line
        print(f"dispatchgen: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    return 0
