"""Generated C: _cpu_dispatch.h, <name>.dispatch.h and per-target wrappers.

Everything here is a pure function of its inputs: no timestamps, no absolute
paths, stable order, so ccache/sccache hit across rebuilds and machines.
Files are rewritten only when their content changes (unchanged mtimes mean
no needless recompiles after a reconfigure).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .build_config import BuildConfig
from .errors import DispatchError, os_error_reason, printable
from .fsutil import make_dirs
from . import owners
from .targets import Resolved, Target

_TOOL = "dispatchgen"


def write_if_changed(path: Path, text: str) -> bool:
    """Write one file (see write_files); False when it already held ``text``."""
    return bool(write_files([(Path(path), text)]))


def write_files(files: Sequence[Tuple[Path, str]]) -> List[Path]:
    """Write each (path, text) whose content differs; returns those written.

    See Note [Writing outputs]. Any failure is a DispatchError naming the path,
    raised before any file is replaced.
    """
    todo = [(Path(p), text) for p, text in files if _differs(Path(p), text)]
    staged: List[Tuple[str, Path]] = []
    try:
        for path, text in todo:
            staged.append((_stage(path, text), path))
        for tmp, path in staged:
            if _is_real_dir(path):  # made since _differs looked: os.replace would fail midway
                raise DispatchError("cannot write: it is a directory", str(path))
        for i, (tmp, path) in enumerate(staged):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise DispatchError(f"cannot write: {os_error_reason(exc)}", str(path)) from None
            staged[i] = ("", path)
    finally:
        for tmp, _ in staged:
            if tmp:
                _unlink(tmp)
    return [path for path, _ in todo]


def check_outputs(outputs: Sequence[Tuple[Path, str]],
                  inputs: Sequence[Tuple[Path, str]] = ()) -> List[Tuple[Path, str]]:
    """Refuse a set of outputs in which two share a path, or one is an input,
    or one an earlier run into its folder generated for another input
    (owners.py); returns the folders' records to write with the outputs.

    Each output and input comes with what asked for it, as the user wrote it
    (``"--dispatch mylib_dispatch.c"``, ``"mylib.ini:2: [library] name = mylib"``),
    so the one line names both. See Note [One path, one output].

    >>> _ = check_outputs([(Path("out/a.h"), "a.c"), (Path("out/b.h"), "b.c")])
    """
    seen: Dict[str, Tuple[str, str, str]] = {}
    folders: Dict[str, str] = {}  # each folder resolved once, not once per file
    for path, origin in inputs:
        for key in (_entry(path, folders), os.path.realpath(path)):
            seen.setdefault(key.casefold(), ("input", origin, key))
    for path, origin in outputs:
        key = _entry(path, folders)
        kind, other, other_key = seen.get(key.casefold(), ("", "", ""))
        what = f"{printable(Path(path).name)} in {printable(str(Path(path).parent))}"
        if kind and other_key != key:
            what += (f" (and {printable(os.path.basename(other_key))}: names that differ only "
                     "in case are one file on Windows and macOS)")
        if kind == "input":
            raise DispatchError(f"{printable(origin)} would generate {what}, which is "
                                f"{printable(other)} itself; write the generated files into "
                                "another folder (--outdir) or rename the input")
        if kind == "output":
            if other == origin:
                raise DispatchError(f"{printable(origin)} is named twice (both would generate "
                                    f"{what}); name it once")
            raise DispatchError(f"{printable(other)} and {printable(origin)} would both "
                                f"generate {what}, the second replacing the first; rename one "
                                "of them")
        seen[key.casefold()] = ("output", origin, key)
    return owners.claim([(key, origin) for _, (kind, origin, key) in seen.items()
                         if kind == "output"])


def _entry(path: Path, folders: Optional[Dict[str, str]] = None) -> str:
    """The directory entry a write replaces: its folder resolved, its own name
    kept (os.replace swaps a link, it never writes through one)."""
    path = Path(path)
    parent = str(path.parent)
    if folders is None:
        return os.path.join(os.path.realpath(parent), path.name)
    if parent not in folders:
        folders[parent] = os.path.realpath(parent)
    return os.path.join(folders[parent], path.name)


# Note [One path, one output]: every command writes its whole set of files
# at once (Note [Writing outputs]); two files of one set with one path would
# leave the later one, silently: two variants files with one [library] name
# wrote one <name>_dispatch.h, and the first file's variants were compiled and
# never chosen. So the set is checked first, by the directory entry each write
# replaces, and so are the files the command reads: a variants file kept where
# its own header goes would be replaced by it.


# Note [Writing outputs]: several outputs form one set (configure's header and
# JSON must agree), and meson may run two generators on the same build tree at
# once. So every output is first written in full to its own temporary file
# (mkstemp: unique, never shared with another writer) in the target's directory,
# and only once all of them are ready is each renamed over its target
# (os.replace, atomic): a reader sees the old file or the new one, never a part,
# and a failure (bad --outdir, a directory in the way, a full disk) leaves the
# old set as it was. Unchanged files are not touched, so their mtimes hold.


def _differs(path: Path, text: str) -> bool:
    """Whether ``path`` must be replaced to hold ``text``.

    Only a regular file is read, and no further than ``text``'s length: a
    symbolic link, a FIFO or a device planted where an output goes is
    replaced (os.replace swaps the directory entry, it never follows a link),
    never opened, so it can neither hang the build (a FIFO, a link to
    /dev/zero) nor lend its target's content or mode to the output.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return True  # _stage says why if it cannot be replaced
    if stat.S_ISDIR(st.st_mode):
        raise DispatchError("cannot write: it is a directory", str(path))
    if not stat.S_ISREG(st.st_mode):
        return True
    want = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return True
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since lstat
            return True
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(len(want) + 1) != want
    except OSError:
        return True  # unreadable or not ours: _stage says why if it cannot be replaced
    finally:
        if fd >= 0:
            os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _is_real_dir(path: Path) -> bool:
    """A directory, not a link to one (a link is replaced like any file)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def _stage(path: Path, text: str) -> str:
    """A complete temporary copy of ``path``'s new content, beside it."""
    try:
        make_dirs(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except (OSError, ValueError) as exc:
        raise DispatchError(f"cannot write into {str(path.parent)!r}: {os_error_reason(exc)}",
                            str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            os.chmod(tmp, _file_mode(path))  # mkstemp makes it 0600
    except (OSError, ValueError) as exc:
        _unlink(tmp)
        raise DispatchError(f"cannot write: {os_error_reason(exc)}", str(path)) from None
    return tmp


_UMASK: Optional[int] = None


def _file_mode(path: Path) -> int:
    """The mode a plain open() would give a new file, or the existing file's."""
    global _UMASK
    try:
        st = os.stat(path, follow_symlinks=False)  # never a link's target's mode
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except (OSError, ValueError):
        pass
    if _UMASK is None:
        _UMASK = os.umask(0o022)  # the only way to read it; put it back at once
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _xmacro(name: str, items: List[str]) -> str:
    lines = [f"#define {name}(MACRO_TO_CALL, ...)"]
    lines += [f"    DISPATCH_WITH_CPU_EXPAND_(MACRO_TO_CALL({i}, __VA_ARGS__))" for i in items]
    return " \\\n".join(lines)


def cpu_dispatch_header(config: BuildConfig) -> str:
    """The build-wide header: which features this build has and where."""
    arch = config.table
    out = [
        f"/* Generated by {_TOOL} configure: the CPU features of this build. Do not edit.",
        f" * arch {config.arch}, {config.compiler_family} {config.compiler_version}",
        f" * cpu-baseline: {config.requested_baseline!r} -> {' '.join(config.baseline) or 'none'}",
        f" * cpu-dispatch: {config.requested_dispatch!r} -> {' '.join(config.dispatch) or 'none'}",
        " */",
        "#ifndef DISPATCH__CPU_DISPATCH_CONFIG_H_",
        "#define DISPATCH__CPU_DISPATCH_CONFIG_H_",
        "",
        "#define DISPATCH_WITH_CPU_EXPAND_(X) X",
        f'#define DISPATCH_WITH_CPU_BASELINE "{" ".join(config.baseline)}"',
        f'#define DISPATCH_WITH_CPU_DISPATCH "{" ".join(config.dispatch)}"',
        f"#define DISPATCH_WITH_CPU_BASELINE_N {len(config.baseline)}",
        f"#define DISPATCH_WITH_CPU_DISPATCH_N {len(config.dispatch)}",
        _xmacro("DISPATCH_WITH_CPU_BASELINE_CALL", config.baseline),
        _xmacro("DISPATCH_WITH_CPU_DISPATCH_CALL", config.dispatch),
        "",
        "/* Baseline: every object of the build may use these. */",
    ]
    out += [f"#define DISPATCH_HAVE_{n} 1" for n in config.baseline]
    # DISPATCH_NO_CPU_INTRINSICS_HEADERS: for code built without the baseline
    # flags (the baseline guard), where some intrinsic headers would not parse.
    out += ["", "#ifndef DISPATCH_NO_CPU_INTRINSICS_HEADERS"]
    out += [f"    #include <{h}>" for h in arch.headers_for(config.baseline)]
    out += ["#endif", "",
            "/* Beyond the baseline: defined only inside a target's compilation",
            " * (its -D flags define DISPATCH__CPU_TARGET_<F> for all it enables). */"]
    baseline = set(config.baseline)
    base_headers = set(arch.headers_for(config.baseline))  # once, not once per header
    beyond = [f.name for f in arch.features
              if f.name not in baseline and f.name not in config.unsupported]
    for name in beyond:
        out += [f"#ifdef DISPATCH__CPU_TARGET_{name}", f"    #define DISPATCH_HAVE_{name} 1",
                "    #ifndef DISPATCH_NO_CPU_INTRINSICS_HEADERS"]
        out += [f"        #include <{h}>" for h in arch.headers_for([name])
                if h not in base_headers]
        out += ["    #endif", "#endif"]
    out += ["", "#endif /* DISPATCH__CPU_DISPATCH_CONFIG_H_ */", ""]
    return "\n".join(out)


def _check_expr(target: Target) -> str:
    return "&&".join(f"CHK({n})" for n in target.checks) or "1"


def source_header(res: Resolved, source_name: str) -> str:
    """<name>.dispatch.h: the targets of one source, highest interest first."""
    names = [t.name for t in res.targets] + (["baseline"] if res.baseline else [])
    out = [
        f"/* Generated by {_TOOL} from {source_name}: its compiled targets. Do not edit.",
        " * Include it right before the DISPATCH_CPU_DISPATCH_* macros that use it;",
        " * it redefines the callbacks of whichever source was included before.",
        " */",
        "#include \"dispatch/cpu_dispatch.h\"",
        "",
        "#undef DISPATCH__CPU_DISPATCH_CALL",
        "#undef DISPATCH__CPU_DISPATCH_BASELINE_CALL",
        "#undef DISPATCH__CPU_DISPATCH_CALL_FALLBACK",
        "#undef DISPATCH__CPU_DISPATCH_INFO_FALLBACK",
        "#undef DISPATCH_CPU_DISPATCH_TARGETS",
        "",
        f'#define DISPATCH_CPU_DISPATCH_TARGETS "{" ".join(names)}"',
        "",
    ]
    calls = ["#define DISPATCH__CPU_DISPATCH_CALL(CHK, CB, ...)"]
    calls += [f"    DISPATCH_EXPAND(CB(({_check_expr(t)}), {t.name}, __VA_ARGS__))"
              for t in res.targets]
    out.append(" \\\n".join(calls))
    if res.baseline:
        out += ["#define DISPATCH__CPU_DISPATCH_BASELINE_CALL(CB, ...) \\",
                "    DISPATCH_EXPAND(CB(__VA_ARGS__))",
                "#define DISPATCH__CPU_DISPATCH_CALL_FALLBACK(NAME, ...) (NAME __VA_ARGS__)",
                '#define DISPATCH__CPU_DISPATCH_INFO_FALLBACK "baseline"']
    else:
        out += ["#define DISPATCH__CPU_DISPATCH_BASELINE_CALL(CB, ...)",
                "/* No `baseline` in @targets: DISPATCH_CPU_DISPATCH_CALL has no fallback. */",
                "#define DISPATCH__CPU_DISPATCH_CALL_FALLBACK(NAME, ...) "
                "NAME##_has_no_baseline_target",
                '#define DISPATCH__CPU_DISPATCH_INFO_FALLBACK "none"']
    out.append("")
    return "\n".join(out)


def target_defines(target: Target) -> List[str]:
    """The -D flags that compile a source itself as its ``target``: the same
    macros wrapper_source defines, with the same values (CURRENT is the name,
    the others empty). See Note [No wrapper files]."""
    return [f"-DDISPATCH__CPU_TARGET_CURRENT={target.name}"] + [
        f"-DDISPATCH__CPU_TARGET_{n}=" for n in target.enables]


# Note [No wrapper files]: `meson-sources` makes no per-target wrapper .c; each
# target's object is the user's source itself compiled with the target's flags
# plus target_defines() (meson accepts one source in several static_library
# targets). The compiler sees exactly what the wrapper gave it (the macros are
# defined before the first line of the source), so no file needs to be written
# per target at configure time and none needs a configure_file process. The
# `wrapper` subcommand still prints one, for build systems that want files.


def wrapper_source(target: Target, source_name: str) -> str:
    """The per-target translation unit: define the target, include the source."""
    out = [
        f"/* Generated by {_TOOL}: {source_name} built for {target.name}. Do not edit. */",
        f"#define DISPATCH__CPU_TARGET_CURRENT {target.name}",
    ]
    out += [f"#define DISPATCH__CPU_TARGET_{n}" for n in target.enables]
    out += [f'#include "{source_name}"', ""]
    return "\n".join(out)


# `??` then one of these is a trigraph, which C11 (gcc -std=c11) replaces even
# inside an #include "..." name.
_TRIGRAPH_ENDS = "=(/)'<!>-"


def check_source_path(src: Path) -> None:
    """Refuse a dispatchable source whose path the generated files cannot carry.

    Its name goes into `#include "<name>"` and C comments of the generated
    files, its path into meson's tab-separated lines; a character that would
    end or change either is a DispatchError naming the file.

    >>> check_source_path(Path("src/add.dispatch.c"))
    """
    name = src.name
    for path in (str(src), os.path.realpath(src)):  # as given, as meson gets it
        bad = next((c for c in path if not c.isprintable() and c != " "), None)
        if bad is not None:
            raise DispatchError(
                f"unusable source path: it holds {bad!r}; a dispatchable source's path "
                "must be printable text (no tab, newline, control character or "
                "undecodable byte)", path)
    bad = next((c for c in name if c in '"\\'), None)
    if bad is None and any(name[i:i + 2] == "??" and name[i + 2] in _TRIGRAPH_ENDS
                           for i in range(len(name) - 2)):
        bad = "??"
    if bad is not None:
        raise DispatchError(f"unusable source name: {bad!r} cannot appear in the "
                            f'generated #include "..." of it; rename the file', str(src))


SOURCE_SUFFIXES = {".c": "c", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp"}


def source_language(src: Path) -> str:
    """'c' or 'cpp' by the name's suffix; anything else is a DispatchError."""
    lang = SOURCE_SUFFIXES.get(Path(src).suffix)
    if lang is None:
        raise DispatchError("a dispatchable source must end in "
                            f"{', '.join(SOURCE_SUFFIXES)}", str(src))
    return lang


def _stem(source_name: str) -> str:
    suffix = Path(source_name).suffix
    return source_name[: -len(suffix)] if suffix in SOURCE_SUFFIXES else source_name


def wrapper_name(source_name: str, target: Target) -> str:
    suffix = Path(source_name).suffix
    return f"{_stem(source_name)}.{target.name.lower()}{suffix if suffix in SOURCE_SUFFIXES else '.c'}"


def header_name(source_name: str) -> str:
    return f"{_stem(source_name)}.h"
