"""The command line: `python tools/dispatchgen/dispatchgen <subcommand> ...`.

User errors exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

from . import generate, meson_plan, paths, variants
from .build_config import BuildConfig
from .errors import DispatchError, printable, write_stdout
from .fsutil import check_regular_or_absent
from .steps import (DEFAULT_BASELINE, DEFAULT_DISPATCH, add_build_options,  # noqa: F401
                    config_from_args, dispatch_objects, report_dict, report_text,
                    resolve_file, runtime_library, write_config)
from .targets import load_groups


def cmd_report(args: argparse.Namespace) -> str:
    config = config_from_args(args)
    return (json.dumps(report_dict(config), indent=2) if args.json else report_text(config)) + "\n"


def cmd_configure(args: argparse.Namespace) -> str:
    config = config_from_args(args)
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


def cmd_targets(args: argparse.Namespace) -> str:
    config = config_from_args(args)
    groups = load_groups(args.groups)
    results, lines = [], []
    for src in args.files:
        res = resolve_file(src, config, groups, args.disable_optimization)
        results.append(res.to_dict())
        names = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
        lines.append(f"{printable(str(src))}: {' '.join(names) or '(nothing to build)'}")
        lines += [f"  {t.name}: {' '.join(t.flags)}" for t in res.targets]
        lines += [f"  skipped {s['target']}: {s['reason']}" for s in res.skipped]
        lines += [f"  note: {printable(n)}" for n in res.notes]
    if args.json:
        return json.dumps(results[0] if len(results) == 1 else results, indent=2) + "\n"
    return "".join(f"{line}\n" for line in lines)


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
    res = resolve_file(src, config, load_groups(args.groups), args.disable_optimization)
    out = Path(args.outdir)
    stem = src.name.replace(".", "_")
    header = out / generate.header_name(src.name)
    inputs = [(src, f"the source {src}")]
    if args.groups is not None:
        inputs.append((Path(args.groups), f"the groups file {args.groups}"))
    records = generate.check_outputs([(header, str(src))], inputs)
    generate.write_files([(header, generate.source_header(res, src.name)), *records])
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
    # checked by dispatch_objects; again here for the folders' records
    records = generate.check_outputs([(path, origin) for path, _, origin in files])
    generate.write_files([(path, text) for path, text, _ in files] + records)
    if not args.sources:
        notes.append("no dispatchable sources")
    lines = [f"lib\t{name}\t{index}\t{' '.join(flags)}" for name, index, flags in objects]
    lines += [f"note\t{printable(n)}" for n in notes]
    return "".join(f"{line}\n" for line in lines)


def cmd_wrapper(args: argparse.Namespace) -> str:
    """Print the wrapper source of one target of one source."""
    config = BuildConfig.load(args.config)
    generate.check_source_path(Path(args.source))
    res = resolve_file(args.source, config, load_groups(args.groups), False)
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
        check_regular_or_absent(Path(path), "$DISPATCHGEN_TRACE")  # a FIFO would block
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{argv[0] if argv else ''}\t{len(argv)}\n")
        except OSError:
            pass


# Options whose value is a compiler command or its flags: the next word is the
# value whatever it starts with (argparse would take `--cflags -DNDEBUG` for an
# option missing its value; meson.build files pass ' '.join(c_args) there).
_RAW_VALUE_OPTIONS = ("--cc", "--cflags")


def _attach_raw_values(argv: List[str]) -> List[str]:
    out: List[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return out + argv[i:]
        if word in _RAW_VALUE_OPTIONS and i + 1 < len(argv):
            out.append(f"{word}={argv[i + 1]}")
            i += 2
        else:
            out.append(word)
            i += 1
    return out


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        _trace(argv)
    except DispatchError as exc:
        _error(str(exc))
        return 2
    args = build_parser().parse_args(_attach_raw_values(argv))
    try:
        write_stdout(args.func(args))
    except DispatchError as exc:
        _error(str(exc))
        return 2
    except OSError as exc:  # an I/O failure not named where it happened: still one line
        _error(printable(str(exc)))
        return 2
    except RecursionError:  # a path or input deeper than any check above expected
        _error("a path or an input nested too deep to handle")
        return 2
    return 0


def _error(text: str) -> None:
    if sys.stderr is not None:
        try:
            print(f"dispatchgen: error: {text}", file=sys.stderr, flush=True)
        except OSError:
            pass
