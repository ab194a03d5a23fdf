"""Libraries as they are written: one source file per instruction set.

A library in the BLAKE3 / zlib-ng / simdjson style keeps a file per ISA
(`mylib_sse41.c`, `mylib_avx2.c`, `mylib_avx2_xor.S`, ...), each defining the
library's own entry points under the library's own names
(`mylib_sum_sse41`, `mylib_sum_avx2`). A small INI file declares each file
as a target's variant of those entry points, with no renames and no
@targets comment:

    [library]
    name = mylib                  ; macro prefix of the generated header
    policies = $maxopt            ; optional, @targets policies for every target

    [baseline]                    ; compiled with the baseline flags only
    sources = mylib_portable.c
    sum = mylib_sum_portable

    [avx2]                        ; a @targets expression: avx2, (avx2 fma3), x86_v3
    sources = mylib_avx2.c mylib_avx2_xor.S
    sum = mylib_sum_avx2
    xor = mylib_xor_avx2          ; implemented in assembly

Sources may depend on a build option: `sources[asm] = mylib_avx2.S` is used
when the option `asm` (passed as `--option asm=true`) is true or enabled,
`sources[!asm] = mylib_avx2.c` when it is false or disabled, and
`sources[impl:fast] = ...` when it equals `fast`; plain `sources` always.

`dispatchgen meson-variants mylib.variants.ini --config ... --outdir ...`
resolves every section against the build's configuration (a target the
dispatch set does not enable, or the compiler cannot build, is skipped with a
note; a target inside the baseline is kept: its file is different code, not a
second compile of the baseline), writes `<name>_dispatch.h` and prints, for
meson, one `variant` line per target that is built (a source of one, named
relative to the variants file, that does not exist is an error naming the
line that names it). Each file is compiled
exactly once, with its target's flags and the public macros
DISPATCH_CPU_TARGET_NAME ("AVX2", "baseline") and
DISPATCH_CPU_TARGET_IS_BASELINE (0/1), which also work in `.S` files.

The header gives, per entry point, the highest-interest variant the running
CPU supports: `MYLIB_DISPATCH(sum)` (an expression: the function pointer;
the baseline's, or a null pointer when no [baseline] defines it; evaluating
it records the choice as `mylib.sum` in the CPU runtime's trace, so a Python
module's `__cpu_targets__` shows it with no call of its own),
`MYLIB_DISPATCH_INFO(sum)` (its target name) and `MYLIB_DISPATCH_TARGETS`.
Declaring the variants is the library's own header's job, as upstream has it.
"""

from __future__ import annotations

import argparse
import configparser
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import generate
from .build_config import BuildConfig
from .errors import DispatchError, printable, shown
from .inputs import read_input
from .targets import parse, resolve

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOOL = "dispatchgen meson-variants"


class Variant:
    def __init__(self, section: str, target: str, flags: List[str], checks: List[str],
                 sources: List[str], entries: Dict[str, str],
                 source_lines: Optional[List[int]] = None) -> None:
        self.section, self.target, self.flags, self.checks = section, target, flags, checks
        self.sources, self.entries = sources, entries
        # the line that names each source in the variants file, for errors
        self.source_lines = source_lines or [0] * len(sources)


def _section_lines(text: str) -> Dict[str, int]:
    lines = {}
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[([^\]]*)\]", line)
        if m:
            lines.setdefault(m.group(1).strip(), i)
    return lines


def _key_lines(text: str) -> Dict[Tuple[str, str], List[Tuple[int, str]]]:
    """(section, key) -> the lines of its value, (line number, text) each: the
    key's own line, then its indented continuation lines. For errors that
    point at the line naming a value."""
    lines: Dict[Tuple[str, str], List[Tuple[int, str]]] = {}
    section, current = "", None
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[([^\]]*)\]", line)
        if m:
            section, current = m.group(1).strip(), None
            continue
        if current is not None and line[:1].isspace() and line.strip():
            current.append((i, line))
            continue
        m = re.match(r"([^\s;#=][^=]*?)\s*=(.*)", line)
        current = None
        if m and (section, m.group(1).strip()) not in lines:
            current = lines[(section, m.group(1).strip())] = [(i, m.group(2))]
    return lines


def _word_lines(value_lines: List[Tuple[int, str]]) -> Dict[str, int]:
    """Each word of a value's lines -> the line where it first appears: one
    pass, so finding the lines of n sources costs n, not n times the value."""
    first: Dict[str, int] = {}
    for i, line in value_lines:
        for word in re.split(r"[\s;#]+", line):
            first.setdefault(word, i)
    return first


def _line_of(word_lines: Dict[str, int], value_lines: List[Tuple[int, str]], word: str,
             default: int) -> int:
    """The line among a value's lines where ``word`` is (its first), else default."""
    if word in word_lines:
        return word_lines[word]
    return value_lines[0][0] if value_lines else default


_SOURCES_KEY = re.compile(r"sources(?:\[\s*(!?)\s*([A-Za-z0-9_.-]+)\s*(?::\s*([^\]]*?))?\s*\])?\Z")
_TRUE, _FALSE = ("true", "enabled", "1", "yes"), ("false", "disabled", "0", "no")


def parse_options(values: List[str]) -> Dict[str, str]:
    """`--option NAME=VALUE` arguments as a dict; a malformed one is a DispatchError."""
    options: Dict[str, str] = {}
    for item in values:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise DispatchError(f"--option {shown(item)!r}: expected NAME=VALUE, "
                                "e.g. --option asm=true")
        options[name.strip()] = value.strip()
    return options


def _sources(section: str, keys: Dict[str, str], options: Dict[str, str],
             loc: str) -> List[Tuple[str, str]]:
    """The section's sources under these option values, (source, the key that
    names it) each; pops every sources key."""
    out: List[Tuple[str, str]] = []
    for key in [k for k in keys if k.startswith("sources")]:
        value = keys.pop(key)
        m = _SOURCES_KEY.match(key)
        if m is None:
            raise DispatchError(f"[{shown(section)}] {shown(key)}: expected sources, "
                                "sources[OPTION], sources[!OPTION] or sources[OPTION:VALUE]", loc)
        negate, option, wanted = m.groups()
        if option is not None:
            if option not in options:
                given = ", ".join(sorted(options)) or "none"
                raise DispatchError(f"[{shown(section)}] {shown(key)} depends on the option "
                                    f"'{shown(option)}', which the build did not pass "
                                    f"(--option {shown(option)}=VALUE; passed: {given})", loc)
            have = options[option].lower()
            if wanted is not None:
                if negate:
                    raise DispatchError(f"[{shown(section)}] {shown(key)}: '!' and ':VALUE' "
                                        "do not combine", loc)
                use = have == wanted.strip().lower()
            elif have in _TRUE or have in _FALSE:
                use = (have in _TRUE) != bool(negate)
            else:
                raise DispatchError(f"[{shown(section)}] {shown(key)}: the option "
                                    f"'{shown(option)}' is {shown(options[option])!r}, not a "
                                    "boolean; compare it with sources[OPTION:VALUE]", loc)
            if not use:
                continue
        out += [(src, key) for src in value.split()]
    for src, _ in out:
        bad = next((c for c in src if not c.isprintable()), None)
        if bad is not None:
            raise DispatchError(f"[{shown(section)}] source {shown(src)!r} holds {bad!r}; a "
                                "source path must be printable text", loc)
    return out


def load(path: Path, config: BuildConfig,
         options: Optional[Dict[str, str]] = None) -> Tuple[str, List[Variant], List[str]]:
    """(library name, variants built (highest interest first), notes)."""
    name, _, variants, notes = _load(path, config, options)
    return name, variants, notes


def _load(path: Path, config: BuildConfig,
          options: Optional[Dict[str, str]]) -> Tuple[str, int, List[Variant], List[str]]:
    """load, and the line of [library]'s name."""
    for shown_path in (str(path), str(Path(path).resolve())):
        bad = next((c for c in shown_path if not c.isprintable()), None)
        if bad is not None or "*/" in Path(path).name:
            raise DispatchError(f"unusable variants file path: it holds {bad or '*/'!r}; it "
                                "must be printable text (its name goes into generated C)",
                                printable(shown_path))
    text = read_input(Path(path), "variants file")
    # '=' alone separates keys from values: sources[impl:fast] keeps its ':'.
    ini = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";", "#"),
                                    delimiters=("=",))
    ini.optionxform = str  # entry points are case-sensitive C names
    try:
        ini.read_string(text, str(path))
    except configparser.Error as exc:
        raise DispatchError(f"not a valid variants file: {printable(str(exc))}",
                            str(path)) from None
    where = _section_lines(text)
    key_lines = _key_lines(text)
    if "library" not in ini or not ini["library"].get("name"):
        raise DispatchError("a variants file needs [library] with name = <macro prefix>",
                            str(path))
    name = ini["library"]["name"].strip()
    if not _IDENT.match(name):
        raise DispatchError(f"library name '{shown(name)}' must be a C identifier",
                            f"{path}:{where.get('library', 1)}")
    policies = ini["library"].get("policies", "").split()
    variants: List[Variant] = []
    notes: List[str] = []
    seen: Dict[str, str] = {}
    for section in ini.sections():
        if section == "library":
            continue
        loc = f"{path}:{where.get(section, 1)}"
        keys = dict(ini[section])
        if not any(k.startswith("sources") for k in keys):
            raise DispatchError(f"[{shown(section)}] lists no sources", loc)
        named = _sources(section, keys, options or {}, loc)
        sources = [src for src, _ in named]
        words = {key: _word_lines(key_lines.get((section, key), []))
                 for key in {k for _, k in named}}
        source_lines = [_line_of(words[key], key_lines.get((section, key), []), src,
                                 where.get(section, 1)) for src, key in named]
        if not sources:
            notes.append(f"{path.name}: [{section}] has no sources under these options; "
                         "not built")
            continue
        for entry, symbol in keys.items():
            if not _IDENT.match(entry) or not _IDENT.match(symbol.strip()):
                raise DispatchError(f"[{shown(section)}] {shown(entry)} = {shown(symbol)}: "
                                    "an entry point and its symbol must be C identifiers", loc)
        entries = {k: v.strip() for k, v in keys.items()}
        # The section name is a @targets expression, parsed where it is written.
        # (Its line is passed, not padded with newlines: that cost each
        # section its position in the file, quadratic in the sections.)
        stmt = parse(f"/*@targets $keep_baseline {' '.join(policies)} {section} */",
                     str(path), config.table, first_line=where.get(section, 1))
        res = resolve(stmt, config)
        if stmt.baseline and (stmt.targets or section.strip().lower() != "baseline"):
            raise DispatchError(f"[{shown(section)}]: 'baseline' must be a section of its own",
                                loc)
        if stmt.baseline:
            target, flags, checks = "baseline", list(config.baseline_flags), []
            defines = ["-DDISPATCH_CPU_TARGET_IS_BASELINE=1",
                       '-DDISPATCH_CPU_TARGET_NAME="baseline"']
        elif len(stmt.targets) != 1:
            raise DispatchError(f"[{shown(section)}] names {len(stmt.targets)} targets; a "
                                "section is one target (group features in parentheses)", loc)
        elif not res.targets:
            for s in res.skipped:
                notes.append(f"{path.name}: skipped [{section}] {s['target']}: {s['reason']}")
            notes += res.notes
            continue
        else:
            t = res.targets[0]
            target, flags, checks = t.name, list(t.flags), list(t.checks)
            defines = [f"-DDISPATCH__CPU_TARGET_CURRENT={t.name}",
                       *(f"-DDISPATCH__CPU_TARGET_{n}" for n in t.enables),
                       "-DDISPATCH_CPU_TARGET_IS_BASELINE=0",
                       f'-DDISPATCH_CPU_TARGET_NAME="{t.name}"']
        if target in seen:
            raise DispatchError(f"[{shown(section)}] is target {target} again (also "
                                f"[{seen[target]}])", loc)
        seen[target] = section
        variants.append(Variant(section, target, flags + defines, checks, sources, entries,
                                source_lines))
    rank = _interest(config, [v for v in variants if v.target != "baseline"])
    variants.sort(key=lambda v: rank.get(v.target, -1), reverse=True)
    name_lines = key_lines.get(("library", "name"), [])
    name_line = _line_of(_word_lines(name_lines), name_lines, name, where.get("library", 1))
    return name, name_line, variants, notes


def check_sources(path: Path, variants: List[Variant]) -> None:
    """Every source of the variants built must be a file (beside the variants
    file, where a relative name is read from): a missing one is an error now,
    naming it and the line that names it, not a failed compile later."""
    base = Path(path).resolve().parent
    for v in variants:
        for src, line in zip(v.sources, v.source_lines):
            full = base / src
            if not full.is_file():
                why = "is not a file" if full.exists() else "does not exist"
                raise DispatchError(f"[{shown(v.section)}] names the source {shown(src)!r}, "
                                    f"which {why} ({printable(str(full))})", f"{path}:{line}")


def _interest(config: BuildConfig, variants: List[Variant]) -> Dict[str, int]:
    """Order as one @targets statement of all targets would (highest first)."""
    if not variants:
        return {}
    body = " ".join(f"({v.target.replace('__', ' ')})" for v in variants)
    res = resolve(parse(f"/*@targets $keep_baseline {body} */", "<variants>", config.table),
                  config)
    n = len(res.targets)
    return {t.name: n - i for i, t in enumerate(res.targets)}


def header(name: str, variants: List[Variant], source_name: str) -> str:
    up = name.upper()
    entries: Dict[str, None] = {}  # every variant's entry points, first seen first
    for v in variants:
        entries.update(dict.fromkeys(v.entries))
    out = [f"/* Generated by {_TOOL} from {source_name}: the variants of {name}'s entry",
           " * points this build compiled, highest interest first. Do not edit. */",
           f"#ifndef {up}_DISPATCH_H_", f"#define {up}_DISPATCH_H_", "",
           '#include "dispatch/cpu_features.h"', '#include "dispatch/cpu_runtime.h"', "",
           f'#define {up}_DISPATCH_TARGETS "{" ".join(v.target for v in variants)}"',
           "/* The chosen variant of ENTRY, recorded in the CPU runtime's trace as",
           f" * {name}.ENTRY (a module's __cpu_targets__). */",
           f"#define {up}_DISPATCH(ENTRY) (dispatch_cpu_trace_record_choice(\"{name}.\" #ENTRY, \\",
           f"    {up}_DISPATCH_TARGETS, {up}_DISPATCH_INFO(ENTRY)), {up}_DISPATCH__##ENTRY)",
           f"#define {up}_DISPATCH_INFO(ENTRY) {up}_DISPATCH_INFO__##ENTRY", ""]
    for e in entries:
        have = [v for v in variants if e in v.entries]
        fn, info = [], []
        for v in have:
            cond = " && ".join(f"DISPATCH_CPU_HAVE({c})" for c in v.checks) or "1"
            if v.target == "baseline":
                fn.append(v.entries[e])
                info.append('"baseline"')
                break
            fn.append(f"({cond}) ? {v.entries[e]} :")
            info.append(f'({cond}) ? "{v.target}" :')
        else:
            fn.append("0")
            info.append('"none"')
        out.append(f"#define {up}_DISPATCH__{e} ({' '.join(fn)})")
        out.append(f"#define {up}_DISPATCH_INFO__{e} ({' '.join(info)})")
    out += ["", f"#endif /* {up}_DISPATCH_H_ */", ""]
    return "\n".join(out)


def variant_objects(path: Path, config: BuildConfig, outdir: Path,
                    options: Dict[str, str]):
    """(header file to write, as (path, text, what asks for it: the variants
    file and the line of its name), [(library name, [source paths], flags)],
    notes): source paths are resolved against the variants file's directory,
    and each must exist (check_sources)."""
    name, name_line, variants, notes = _load(path, config, options)
    check_sources(path, variants)
    base = Path(path).resolve().parent
    objects = [(f"{name}_{v.target}", [str(base / s) for s in v.sources], v.flags)
               for v in variants]
    notes = [f"{path.name}: builds {' '.join(v.target for v in variants) or 'nothing'}", *notes]
    origin = f"{path}:{name_line} ([library] name = {name})"
    return (Path(outdir) / f"{name}_dispatch.h", header(name, variants, path.name),
            origin), objects, notes


def cmd_meson_variants(args: argparse.Namespace) -> str:
    """Write <name>_dispatch.h; print variant<TAB>lib<TAB>target<TAB>flags<TAB>sources."""
    config = BuildConfig.load(args.config)
    path = Path(args.variants)
    name, name_line, variants, notes = _load(path, config, parse_options(args.option))
    check_sources(path, variants)
    out = Path(args.outdir) / f"{name}_dispatch.h"
    base = Path(path).resolve().parent
    records = generate.check_outputs(
        [(out, f"{path}:{name_line} ([library] name = {name})")],
        [(path, f"the variants file {path}"),
         *((base / s, f"the source {s}") for v in variants for s in v.sources)])
    generate.write_files([(out, header(name, variants, path.name)), *records])
    lines = [f"variant\t{name}_{v.target}\t{v.target}\t{' '.join(v.flags)}\t"
             f"{' '.join(v.sources)}" for v in variants]
    lines.append(f"note\t{printable(path.name)}: builds "
                 f"{' '.join(v.target for v in variants) or 'nothing'}")
    lines += [f"note\t{printable(n)}" for n in notes]
    return "".join(f"{line}\n" for line in lines)


def add_parser(sub) -> None:
    p = sub.add_parser("meson-variants", help="per-ISA source files as targets' variants (meson)")
    p.add_argument("variants", type=Path, help="the library's variants INI file")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--outdir", type=Path, required=True)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a build option's value, for sources[NAME] keys (repeatable)")
    p.set_defaults(func=cmd_meson_variants)
