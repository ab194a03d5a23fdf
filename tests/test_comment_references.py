"""Comments that name something name what is there.

A comment that sends the reader to a Note, a file or a symbol is only as good
as the thing it names: files move, symbols are renamed, Notes move between
files, and the comment stays behind. Read from the tracked sources, with no
build (tests/test_docs_links.py checks the repository paths; this checks what
a comment names without a path):

- every ``Note [X]`` named anywhere is defined once (its title line, then a
  line of ``~``), and a ``Note [X] in FILE`` is defined in FILE;
- every C file name a C comment names (``keys.c``, ``simd.h``) is a file of
  the tree, or one the build writes;
- every ``dispatch_*`` / ``DISPATCH_*`` / ``dcu_*`` name a C comment names
  stands in some code, outside comments;
- a ``SYMBOL in FILE`` / ``SYMBOL of FILE`` in a C comment: FILE holds SYMBOL.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
C_SUFFIXES = {".c", ".h", ".cu", ".cuh", ".cdef"}
TEXT_SUFFIXES = C_SUFFIXES | {".py", ".md", ".build", ".toml", ".sh", ".txt", ".in"}

# Written by the build (not tracked): a comment may name them.
GENERATED = {"_cpu_dispatch.h", "_cpu_features_table.h", "_loops.h", "kernels_sources.h",
             "ops_generated.c", "_cuda_build.py", "_ops_generated.py"}
GENERATED_PATTERN = re.compile(r"^[\w-]+\.dispatch\.h$|^[\w-]+_[A-Z0-9_]+\.c$")

# A Note is defined where a comment line (or a docstring's) starts with its
# title, alone or before a colon; it is named anywhere else, its title maybe
# broken across comment lines.
NOTE_DEF = re.compile(r"^[ \t]*(?:/\*+|\*|#|//|\"\"\")?[ \t]*Note \[([^\]\n]+)\][ \t]*(?:$|:)", re.M)
NOTE_REF = re.compile(r"Note\s+\[([^\]\"]{1,120})\](?:\s+in\s+`?([\w./-]+\.\w+))?")
LEADER = re.compile(r"\s*\n\s*(?:\*|#|//)?\s*")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
C_FILE = re.compile(r"(?<![\w./*<-])(\w[\w-]*(?:\.dispatch)?\.(?:c|h|cu|cuh))\b(?![\w-])")
SYMBOL = re.compile(r"\b((?:dispatch|DISPATCH|dcu)_\w*[A-Za-z0-9])\b(?![.<]\w)")
SYSTEM_INCLUDE = re.compile(r"#\s*include\s*<([^>]+)>")
# Files a comment may name that are not this tree's: a user's own file in an
# example, a CUDA toolkit header.
NOT_OURS = {"module.c", "cuda_fp8.h"}
SYMBOL_IN = re.compile(r"\b((?:dispatch|DISPATCH|dcu)_\w+)`?\s+(?:in|of)\s+`?([\w./-]+\.(?:c|h|cu|cuh))\b")


def _title(raw: str) -> str:
    return " ".join(LEADER.sub(" ", raw).split())


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
        files = [ROOT / f for f in out]
    except (OSError, subprocess.CalledProcessError):  # an sdist: no git
        files = [p for p in ROOT.rglob("*") if p.is_file() and "build" not in p.parts]
    # The tests' own fixtures feed the tools bad input on purpose.
    return [f for f in files if f.is_file() and f.suffix in TEXT_SUFFIXES]


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except UnicodeDecodeError:
        return ""


def _c_files(files: list[Path]) -> list[Path]:
    return [f for f in files if f.suffix in C_SUFFIXES and "tests" not in f.relative_to(ROOT).parts]


def _comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of each C comment, string literals skipped."""
    out = []
    masked = STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    for m in COMMENT.finditer(masked):
        out.append((text.count("\n", 0, m.start()) + 1, text[m.start():m.end()]))
    return out


def _code(text: str) -> str:
    return COMMENT.sub(" ", STRING.sub('""', text))


def _where(files: list[Path], name: str) -> list[Path]:
    """The files that `name` (a path or a bare file name) may mean."""
    return [f for f in files if str(f.relative_to(ROOT)).endswith(name)
            and (len(str(f.relative_to(ROOT))) == len(name)
                 or str(f.relative_to(ROOT))[-len(name) - 1] == "/")]


def test_the_readers_find_what_they_look_for():
    text = '/* x: Note [A b] in a.c, keys.c, dispatch_foo in b.h */\nint dispatch_bar;\n'
    (line, comment), = _comments(text)
    assert NOTE_REF.findall(comment) == [("A b", "a.c")]
    assert "keys.c" in C_FILE.findall(comment)
    assert SYMBOL_IN.findall(comment) == [("dispatch_foo", "b.h")]
    assert "dispatch_bar" in SYMBOL.findall(_code(text))
    assert "dispatch_foo" not in SYMBOL.findall(_code(text))
    assert NOTE_DEF.findall("/*\n * Note [Key order]\n * ~~~~~~~\n */") == ["Key order"]
    assert NOTE_DEF.findall("/* see Note [Key order] */") == []
    assert NOTE_DEF.findall("# Note [Probe cache]: results") == ["Probe cache"]
    assert NOTE_DEF.findall('    """Note [Tied features]: one target') == ["Tied features"]
    assert NOTE_DEF.findall("/* Note [Overlapping out=] on the device */") == []
    assert _title("Sum order\n * independent") == "Sum order independent"


def test_every_note_named_is_defined_once_and_where_it_is_said_to_be():
    files = _tracked()
    defined: dict[str, list[Path]] = {}
    texts = {f: _read(f) for f in files}
    for f, text in texts.items():
        for title in set(NOTE_DEF.findall(text)):
            defined.setdefault(_title(title), []).append(f)
    # A test restates the Note it checks ("Note [X]: ..."): the code's is the one.
    for title, where in defined.items():
        code = [p for p in where if not p.name.startswith("test_")]
        defined[title] = code or where
    twice = {t: [str(p.relative_to(ROOT)) for p in ps] for t, ps in defined.items() if len(ps) > 1}
    assert not twice, f"Notes defined more than once: {twice}"
    bad = []
    for f, text in texts.items():
        if "tests" in f.relative_to(ROOT).parts and f.name == Path(__file__).name:
            continue
        for title, place in NOTE_REF.findall(text):
            title = _title(title)
            if title not in defined:
                if f.suffix in C_SUFFIXES | {".py", ".md", ".build", ".toml"}:
                    bad.append(f"{f.relative_to(ROOT)}: Note [{title}] is defined nowhere")
                continue
            place = place.rstrip(".:,")
            if place and not any(str(d.relative_to(ROOT)).endswith(place)
                                 or d.resolve() == (f.parent / place).resolve()
                                 for d in defined[title]):
                where = defined[title][0].relative_to(ROOT)
                bad.append(f"{f.relative_to(ROOT)}: Note [{title}] is in {where}, not {place}")
    assert not bad, "\n".join(sorted(set(bad)))


def test_every_c_file_a_comment_names_exists():
    files = _tracked()
    names = {f.name for f in files} | GENERATED | NOT_OURS
    names |= {Path(h).name for f in files for h in SYSTEM_INCLUDE.findall(_read(f))}
    bad = []
    for f in _c_files(files):
        for line, comment in _comments(_read(f)):
            for name in C_FILE.findall(comment):
                if name in names or GENERATED_PATTERN.match(name) or name.startswith("X."):
                    continue
                bad.append(f"{f.relative_to(ROOT)}:{line}: names {name}, which is no file")
    assert not bad, "\n".join(bad)


def test_every_symbol_a_comment_names_stands_in_the_code():
    files = _tracked()
    code_names: set[str] = set()
    for f in files:
        if f.suffix in C_SUFFIXES or f.suffix in {".py", ".build"}:
            code_names.update(SYMBOL.findall(_code(_read(f)) if f.suffix in C_SUFFIXES
                                             else _read(f)))
    # Names that macros paste together (DISPATCH_RK_##K) stand in the code as
    # their prefix: a comment's DISPATCH_RK_SUM is good when DISPATCH_RK_ is.
    # (A bare DISPATCH_## says nothing: every name would pass.)
    pasted = {m for f in _c_files(files)
              for m in re.findall(r"\b((?:dispatch|DISPATCH|dcu)_\w*?_?)##", _read(f))}
    pasted -= {"dispatch_", "DISPATCH_", "dcu_"}
    bad = []
    for f in _c_files(files):
        for line, comment in _comments(_read(f)):
            for name in SYMBOL.findall(comment):
                if name in code_names or any(name.startswith(p) for p in pasted):
                    continue
                bad.append(f"{f.relative_to(ROOT)}:{line}: names {name}, which no code defines")
    assert not bad, "\n".join(bad)


def test_a_symbol_said_to_be_in_a_file_is_there():
    files = _tracked()
    bad = []
    for f in _c_files(files):
        for line, comment in _comments(_read(f)):
            for name, place in SYMBOL_IN.findall(comment):
                targets = _where(files, place)
                if not targets:
                    continue  # a file that is no file: the test above says so
                if not any(re.search(rf"\b{re.escape(name)}\b", _read(t)) for t in targets):
                    bad.append(f"{f.relative_to(ROOT)}:{line}: {name} is not in {place}")
    assert not bad, "\n".join(bad)
