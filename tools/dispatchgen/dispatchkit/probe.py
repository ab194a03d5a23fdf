"""Ask the real compiler what it can build, and remember the answers.

Note [Probe validation]: a feature counts as supported only when its test
source (checks/cpu_<name>.c, one real intrinsic) compiles AND assembles to an
object with the flags of the feature and of everything it implies, warnings
as errors. Accepting a flag is not enough: clang accepts unknown -m flags with
an "unused argument" warning in some modes, and an assembler too old for an
instruction set only fails once the object is written.

Note [Probe cache]: results are stored per compiler identity (resolved path,
size and mtime of each program in the compiler command, plus the user's
cflags) and keyed by version, flags and test-source text, in one JSON file per
identity under the cache directory. A warm configure runs one preprocessor
call at most and no compiles. Installing another compiler at the same path
changes its size or mtime and so its identity. The cache is only a cache: an
unreadable file or an entry of the wrong type (another version, a hand edit)
is a miss, asked again and rewritten.

Note [Union probe]: a cold configure would compile one check per feature
(about 30 on x86_64, each parsing immintrin.h: ~130 ms of CPU apiece). Instead
compile_union first compiles ONE translation unit holding every candidate's
check (each defines its own dispatch_check_<name>) with the union of all their
flags. If that object is built (-Werror, assembled), every feature is accepted:
  - each feature's flags are a subset of the union's flags (compile_union only
    tries when the arch's merge rule keeps every flag: x86's additive -m flags;
    never where flags override each other, e.g. several -march= or -mcpu=), and
    the compiler accepted all of them without even a warning;
  - each check's intrinsics compiled and assembled, so the compiler and the
    assembler know the instructions.
What union success does not prove is that a check builds with ONLY its own
feature's flags (a check source that used an intrinsic of a feature it does not
imply would pass). That is a property of the check sources, not of the
compiler: tests/toolkit runs every check on its own (exhaustive=True,
`--exhaustive-probe`) with gcc and clang and asserts both modes agree. If the
union fails (one unknown flag, one missing intrinsic: clang 14 has no
AVX512_KNM), nothing is concluded from it and each feature is checked on its
own, in parallel, as before, so every reason names its feature. Both the union
result and the per-feature results are cached; per-feature answers already in
the cache (from an exhaustive run) are used without compiling the union.

Note [Apple without an SDK]: clang builds for macOS anywhere
(`--target=arm64-apple-macos11`), but its <stdint.h> goes on to the C
library's, which only the macOS SDK has: off a Mac every check would fail on
a missing header, not on the instruction set. When the target is Apple and a
plain `#include <stdint.h>` does not compile, the checks are compiled
-ffreestanding (probe_flags): clang's own intrinsics headers need nothing
else, and the checks are objects only (-c), never linked. The flags a build
gets are unchanged; building the package still needs the SDK.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import msvc
from .errors import DispatchError, printable
from .features import ARCHES
from .fsutil import make_dirs

CHECKS_DIR = Path(__file__).with_name("checks")
_CACHE_FORMAT = 1
# Note [Probe cache file]: a real cache is a few hundred KiB (one answer per
# feature, a few macro lists); 16 MiB bounds what a planted or runaway file
# costs to read. The cache is only a cache, so every fault in it is a miss,
# never an error: a link is neither followed nor replaced, one warning line;
# a file over the limit, not JSON (truncated, not UTF-8, nested too deep) or
# not a JSON object is ignored and rewritten, one warning line; entries of
# the wrong type are asked again, one warning line for them all.
CACHE_LIMIT = 16 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _warn(text: str) -> dict:
    """One warning line on stderr; returns an empty cache."""
    if sys.stderr is not None:
        try:
            print(f"dispatchgen: warning: {text}", file=sys.stderr, flush=True)
        except OSError:
            pass
    return {}


def _entry_ok(key, value) -> bool:
    """Whether a cache entry has the type its kind of key stores."""
    if not isinstance(key, str):
        return False
    if key.startswith("macros "):
        return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in value.items())
    if key.startswith(("compile ", "union ")) or key == "hosted headers":
        return isinstance(value, str) and value.isprintable()
    return False


def default_cache_dir() -> Optional[Path]:
    """$DISPATCHGEN_CACHE_DIR, else $XDG_CACHE_HOME/dispatchgen, else ~/.cache/dispatchgen."""
    env = os.environ.get("DISPATCHGEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dispatchgen"


class Probe:
    """One compiler command (``argv``, e.g. ``["ccache", "gcc"]``) plus user cflags."""

    def __init__(self, argv: Sequence[str], cflags: Sequence[str] = (),
                 cache_dir: Optional[Path] = None) -> None:
        if not argv:
            raise DispatchError("--cc: empty compiler command")
        self.argv = list(argv)
        self.cflags = list(cflags)
        self.style = msvc.style_of(self.argv)  # Note [MSVC-style compilers] in msvc.py
        self.compiles_run = 0
        # Note [Apple without an SDK]: flags for the checks only, never the build's.
        self.probe_flags: List[str] = []
        self._identity = self._compute_identity()
        self._cache_path = (cache_dir / f"probe-{self._identity}.json") if cache_dir else None
        self._dirty = False
        self._cache = self._load_cache()

    # -- identity and cache ------------------------------------------------
    def _compute_identity(self) -> str:
        stats = []
        for word in self.argv:
            path = shutil.which(word) if os.sep not in word else word
            if path and os.path.isfile(path):
                real = os.path.realpath(path)
                st = os.stat(real)
                stats.append([real, st.st_size, st.st_mtime_ns])
        if not stats:
            raise DispatchError(f"--cc: compiler '{self.argv[0]}' not found on PATH")
        blob = json.dumps([_CACHE_FORMAT, self.argv, self.cflags, stats])
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def _load_cache(self) -> dict:
        """The cache file's entries; see Note [Probe cache file]."""
        self._refused = False
        if self._cache_path is None:
            return {}
        path = self._cache_path
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreachable: save() says nothing either, it only costs speed
        if stat.S_ISLNK(st.st_mode):
            self._refused = True  # neither read nor replaced: whoever made it decides
            return _warn(f"probe cache {printable(str(path))} is a symbolic link; not read "
                         "and not written (remove it to cache again)")
        if not stat.S_ISREG(st.st_mode):  # never open a FIFO (it would block): it
            return {}                      # costs only speed, and save() replaces it
        if st.st_size > CACHE_LIMIT:
            return _warn(f"probe cache {printable(str(path))} is {st.st_size} bytes, over "
                         f"the limit of {CACHE_LIMIT >> 20} MiB; ignored (rewritten)")
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(CACHE_LIMIT + 1)
        except OSError:
            return {}
        if len(raw) > CACHE_LIMIT:  # grown since the lstat
            return _warn(f"probe cache {printable(str(path))} is over the limit of "
                         f"{CACHE_LIMIT >> 20} MiB; ignored (rewritten)")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            why = printable(str(exc))[:120]
            return _warn(f"probe cache {printable(str(path))} is corrupt ({why}); ignored "
                         "(rewritten)")
        if not isinstance(data, dict):
            return _warn(f"probe cache {printable(str(path))} is corrupt (a JSON "
                         f"{type(data).__name__}, not an object); ignored (rewritten)")
        good = {k: v for k, v in data.items() if _entry_ok(k, v)}
        if len(good) != len(data):
            self._dirty = True  # rewritten without them
            _warn(f"probe cache {printable(str(path))} holds {len(data) - len(good)} "
                  "entries of the wrong type; they are asked again (rewritten)")
        return good

    def save(self) -> None:
        """Write the cache atomically (a temporary file beside it, flushed to
        disk, then renamed over it: a run killed at any point leaves the old
        cache or the new one, never a part); an unwritable cache dir only
        costs speed. A cache refused as a link is left alone."""
        if self._cache_path is None or not self._dirty or self._refused:
            return
        tmp = None
        try:
            make_dirs(self._cache_path.parent)
            fd, tmp = tempfile.mkstemp(dir=self._cache_path.parent,
                                       prefix=f".{self._cache_path.name}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._cache, fh, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._cache_path)
            tmp = None
            self._dirty = False
        except OSError:
            pass
        finally:
            if tmp is not None:  # any failure, an interrupt too: no temporary left
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    # -- questions ---------------------------------------------------------
    def macros(self, extra: Sequence[str] = ()) -> Dict[str, str]:
        """Predefined macros with the user's cflags plus ``extra``.

        Answers for ``-march=native`` (any flag naming ``native``) depend on
        the CPU, not only on the compiler the cache is keyed by: they are asked
        anew on every configure and never cached (a cache in a shared home or
        a container image must not decide what `native` means elsewhere).
        """
        key = "macros " + " ".join(extra)
        cacheable = not any("native" in flag for flag in [*self.cflags, *extra])
        cached = self._cache.get(key) if cacheable else None
        if isinstance(cached, dict) and all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in cached.items()):
            return cached
        with tempfile.TemporaryDirectory(prefix="dispatchgen-") as tmp:
            src = Path(tmp) / "empty.c"
            if self.style:  # no -dM: ask for the macros the toolkit reads, by name
                src.write_text(msvc.macro_source(msvc.wanted_macros(ARCHES.values())))
                cmd = msvc.preprocess_command(self.argv, self.style, [*self.cflags, *extra],
                                              str(src))
            else:
                src.write_text("")
                cmd = [*self.argv, *self.cflags, *extra, "-dM", "-E", str(src)]
            proc = self._run(cmd)
        if proc.returncode != 0:
            what = " ".join([*self.argv, *self.cflags, *extra])
            how = "/EP" if self.style else "-dM -E"
            hint = ""
            if "-arch" in [*self.argv, *self.cflags] and "-arch" in proc.stderr:
                hint = ("; -arch is Apple clang's option: elsewhere name the target as well "
                        "(--target=arm64-apple-macos11 or --target=x86_64-apple-macos11)")
            raise DispatchError(f"--cc: '{what} {how}' failed: "
                                f"{_first_error(proc.stderr)}{hint}")
        found: Dict[str, str] = msvc.parse_macros(proc.stdout) if self.style else {}
        for line in [] if self.style else proc.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2 and parts[0] == "#define":
                found[parts[1]] = parts[2] if len(parts) > 2 else ""
        if cacheable:
            self._cache[key] = found
            self._dirty = True
        return found

    def family_and_version(self) -> Tuple[str, str]:
        m = self.macros()
        if self.style:
            return msvc.family_and_version(m)
        if "__clang__" in m:
            return "clang", ".".join(m.get(k, "0") for k in
                                     ("__clang_major__", "__clang_minor__", "__clang_patchlevel__"))
        if "__GNUC__" in m:
            return "gcc", ".".join(m.get(k, "0") for k in
                                   ("__GNUC__", "__GNUC_MINOR__", "__GNUC_PATCHLEVEL__"))
        return "unknown", ""

    def hosted_headers_error(self) -> str:
        """'' when the compiler finds the C library's headers, else its error (cached).

        Asked for Apple targets only: Note [Apple without an SDK].
        """
        key = "hosted headers"
        cached = self._cache.get(key)
        if isinstance(cached, str) and cached.isprintable():
            return cached
        with tempfile.TemporaryDirectory(prefix="dispatchgen-") as tmp:
            src = Path(tmp) / "hosted.c"
            src.write_text("#include <stdint.h>\n#include <stdlib.h>\n")
            err = self._run_compile(tmp, src, [])
        self._cache[key] = err
        self._dirty = True
        return err

    def compile_checks(self, jobs: Iterable[Tuple[str, str, Sequence[str]]]) -> Dict[str, str]:
        """Compile each (key, check source name, flags); returns key -> error ('' = ok).

        Uncached jobs run in parallel, one compiler process each.
        """
        version = self._key_version()
        results: Dict[str, str] = {}
        todo = []
        for key, check, flags in jobs:
            ckey = self._check_key(version, flags, (CHECKS_DIR / check).read_text())
            cached = self._cache.get(ckey)
            if isinstance(cached, str) and cached.isprintable():  # '' or the error
                results[key] = cached
            else:
                todo.append((key, ckey, check, list(flags)))
        if todo:
            with tempfile.TemporaryDirectory(prefix="dispatchgen-") as tmp:
                with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
                    errors = pool.map(lambda job: self._compile(tmp, job[2], job[3]), todo)
                    for (key, ckey, _, _), err in zip(todo, errors):
                        results[key] = self._cache[ckey] = err
            self._dirty = True
        return results

    def compile_union(self, jobs: Sequence[Tuple[str, str, Sequence[str]]],
                      merge: Callable[[Sequence[str]], List[str]]) -> Optional[Dict[str, str]]:
        """Every job's answer from ONE compile, or None when that cannot tell.

        See Note [Union probe]: None when the flags do not simply add up, or
        when the union does not build (then ask compile_checks, per feature).
        """
        jobs = list(jobs)
        if not jobs:
            return {}
        version = self._key_version()
        texts = {check: (CHECKS_DIR / check).read_text() for _, check, _ in jobs}
        known = {}
        for key, check, flags in jobs:  # all answered already (an exhaustive run)?
            cached = self._cache.get(self._check_key(version, flags, texts[check]))
            if isinstance(cached, str) and cached.isprintable():
                known[key] = cached
        if len(known) == len(jobs):
            return known
        flags = merge([f for _, _, fl in jobs for f in fl])
        if any(not set(fl) <= set(flags) for _, _, fl in jobs):
            return None  # flags override each other: no one set enables all
        checks = sorted(texts)
        ukey = "union " + hashlib.sha256(json.dumps(
            [version, flags, [[c, texts[c]] for c in checks]]).encode()).hexdigest()[:32]
        cached = self._cache.get(ukey)
        if not (isinstance(cached, str) and cached.isprintable()):
            with tempfile.TemporaryDirectory(prefix="dispatchgen-") as tmp:
                src = Path(tmp) / "union.c"
                src.write_text("".join(f"/* {c} */\n{texts[c]}\n" for c in checks))
                cached = self._cache[ukey] = self._compile(tmp, src, flags)
            self._dirty = True
        return {key: "" for key, _, _ in jobs} if cached == "" else None

    # -- plumbing ----------------------------------------------------------
    def _key_version(self) -> Tuple[str, ...]:
        """What keys a check's answer besides its flags and text: the compiler's
        version, and the probe-only flags when there are any."""
        return (*self.family_and_version(), *self.probe_flags)

    @staticmethod
    def _check_key(version: Tuple[str, ...], flags: Sequence[str], text: str) -> str:
        return "compile " + hashlib.sha256(
            json.dumps([version, list(flags), text]).encode()).hexdigest()[:32]

    def _compile(self, tmp: str, check, flags: List[str]) -> str:
        """Compile ``check`` (a name under checks/, or a path) to an object."""
        return self._run_compile(tmp, check, [*self.probe_flags, *flags])

    def _run_compile(self, tmp: str, check, flags: List[str]) -> str:
        self.compiles_run += 1
        src = Path(check) if isinstance(check, Path) else CHECKS_DIR / check
        digest = hashlib.sha1(" ".join(flags).encode()).hexdigest()[:8]
        if self.style:  # cl's syntax, .obj objects
            obj = Path(tmp) / f"{src.name}.{digest}.obj"
            cmd = msvc.compile_command(self.argv, self.style, [*self.cflags, *flags],
                                       str(src), str(obj))
        else:
            obj = Path(tmp) / f"{src.name}.{digest}.o"
            cmd = [*self.argv, *self.cflags, *flags, "-Werror", "-c", str(src),
                   "-o", str(obj)]
        proc = self._run(cmd)
        if proc.returncode == 0 and obj.exists():
            return ""
        # printable: the reason goes into dispatch_config.json and meson's lines
        return printable(_first_error(proc.stderr)) or f"exit status {proc.returncode}"

    def _run(self, cmd: List[str]) -> subprocess.CompletedProcess:
        try:
            # errors="replace": a compiler may print bytes that are not UTF-8
            return subprocess.run(cmd, capture_output=True, encoding="utf-8", errors="replace",
                                  check=False, env={**os.environ, "LC_ALL": "C"})
        except OSError as exc:
            raise DispatchError(f"--cc: cannot run '{cmd[0]}': {exc.strerror}") from None


def _first_error(stderr: str) -> str:
    """The most telling line of a compiler's stderr, without paths."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln:
            idx = ln.find("error")
            return ln[idx:]
    return lines[0] if lines else ""
