"""Generate the operator registration (C) and the ``dispatch.ops`` table (Python).

Reads the declarative operator table (sources/dispatcher/operators.toml) and
writes, deterministically (same input, same bytes: no timestamps, no absolute
paths)::

    python tools/opgen.py sources/dispatcher/operators.toml \
        --c-out ops_generated.c --py-out _ops_generated.py --loops-h _loops.h

The C file defines ``dispatch_register_generated_ops()``, which defines every
schema and registers its kernel for the CPU and Meta keys; the Python file
holds ``OPERATORS``: name -> (overload names in order, doc), which
``dispatch.ops`` turns into callables. The header holds the X-macro
``DISPATCH_FORALL_LOOPS(X)`` of the table's ``[[loop]]`` entries, from which
sources/include/dispatch/loops.h makes the loop ids (Note [One table] in
loops.h); it is rewritten only when its bytes change, so that (meson's
custom commands restat their outputs) an edit of the table that leaves the
loops alone rebuilds nothing that includes it. Errors exit non-zero with one
line.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

_SCHEMA_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\s*\(")
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OpgenError(Exception):
    """A user error in the operator table."""


@dataclass(frozen=True)
class Operator:
    schema: str
    kernel: str
    ctx: str
    doc: str
    line: int

    @property
    def name(self) -> str:
        return _SCHEMA_NAME.match(self.schema).group(1)

    @property
    def full_name(self) -> str:
        m = _SCHEMA_NAME.match(self.schema)
        return m.group(1) + (f".{m.group(2)}" if m.group(2) else "")


@dataclass(frozen=True)
class Loop:
    name: str
    nin: int
    ctx: str                       # "none", "optional" or "required"
    bool_operands: tuple[int, ...]  # operands (0 = the output) that are bool, not T
    doc: str
    line: int
    gather_strided: bool = False   # strided inputs are copied to a buffer first


_LOOP_CTX = ("none", "optional", "required")
_LOOP_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _section_lines(text: str, section: str) -> list[int]:
    """1-based line of each `[[section]]` header, in order."""
    return [i + 1 for i, ln in enumerate(text.splitlines()) if ln.strip() == f"[[{section}]]"]


def _schema_lines(text: str) -> list[int]:
    """1-based line of each `schema =` entry, in order (tomllib gives no positions)."""
    return [i + 1 for i, ln in enumerate(text.splitlines()) if ln.lstrip().startswith("schema")]


def _read(path: Path) -> tuple[str, dict]:
    if tomllib is None:
        raise OpgenError("tools/opgen.py needs Python >= 3.11 (tomllib)")
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OpgenError(f"{path.name}: {exc}") from None


def load_loops(path: Path) -> list[Loop]:
    """The `[[loop]]` entries of the table at path, validated, in order (= their ids)."""
    text, data = _read(path)
    entries = data.get("loop", [])
    lines = _section_lines(text, "loop")
    if len(lines) != len(entries):
        raise OpgenError(f"{path.name}: write each loop as a '[[loop]]' table")
    loops: list[Loop] = []
    seen: dict[str, int] = {}
    for entry, line in zip(entries, lines):
        unknown = set(entry) - {"name", "nin", "ctx", "bool_operands", "gather_strided", "doc"}
        if unknown:
            raise OpgenError(f"{path.name}:{line}: unknown field(s) {sorted(unknown)}")
        for field in ("name", "nin"):
            if field not in entry:
                raise OpgenError(f"{path.name}:{line}: missing field '{field}'")
        name, nin = entry["name"], entry["nin"]
        if not isinstance(name, str) or not _LOOP_NAME.match(name):
            raise OpgenError(f"{path.name}:{line}: loop name must be lower-case letters, digits "
                             f"and '_', got {name!r}")
        if not isinstance(nin, int) or isinstance(nin, bool) or not 0 <= nin <= 3:
            raise OpgenError(f"{path.name}:{line}: nin must be 0 to 3, got {nin!r}")
        ctx = entry.get("ctx", "none")
        if ctx not in _LOOP_CTX:
            raise OpgenError(f"{path.name}:{line}: ctx must be one of {list(_LOOP_CTX)}, "
                             f"got {ctx!r}")
        bools = entry.get("bool_operands", [])
        if not isinstance(bools, list) or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= nin for k in bools):
            raise OpgenError(f"{path.name}:{line}: bool_operands must list operand numbers "
                             f"0 (the output) to {nin}")
        gather = entry.get("gather_strided", False)
        if not isinstance(gather, bool):
            raise OpgenError(f"{path.name}:{line}: gather_strided must be true or false, "
                             f"got {gather!r}")
        doc = entry.get("doc", "")
        if "*/" in doc or "\n" in doc:
            raise OpgenError(f"{path.name}:{line}: doc must be one line without '*/'")
        if name in seen:
            raise OpgenError(f"{path.name}:{line}: loop '{name}' already declared at line "
                             f"{seen[name]}")
        seen[name] = line
        loops.append(Loop(name, nin, ctx, tuple(sorted(set(bools))), doc, line, gather))
    return loops


def load(path: Path) -> list[Operator]:
    """Parse and validate the table at path."""
    text, data = _read(path)
    entries = data.get("operator", [])
    lines = _schema_lines(text)
    if len(lines) != len(entries):
        raise OpgenError(f"{path.name}: expected one 'schema =' line per [[operator]]")
    ops: list[Operator] = []
    seen: dict[str, int] = {}
    for entry, line in zip(entries, lines):
        unknown = set(entry) - {"schema", "kernel", "ctx", "doc"}
        if unknown:
            raise OpgenError(f"{path.name}:{line}: unknown field(s) {sorted(unknown)}")
        for field in ("schema", "kernel"):
            if field not in entry:
                raise OpgenError(f"{path.name}:{line}: missing field '{field}'")
        if not _SCHEMA_NAME.match(entry["schema"]):
            raise OpgenError(f"{path.name}:{line}: cannot read the operator name of the schema")
        for field in ("kernel", "ctx"):
            if field in entry and not _C_IDENT.match(entry[field]):
                raise OpgenError(f"{path.name}:{line}: {field} must be a C identifier")
        op = Operator(entry["schema"], entry["kernel"], entry.get("ctx", ""),
                      entry.get("doc", ""), line)
        if op.full_name in seen:
            raise OpgenError(f"{path.name}:{line}: operator '{op.full_name}' already declared "
                             f"at line {seen[op.full_name]}")
        seen[op.full_name] = line
        ops.append(op)
    return ops


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_c(ops: list[Operator], table_name: str) -> str:
    """The C registration source."""
    out = [
        f"/* Generated by tools/opgen.py from {table_name}: do not edit. */",
        '#include "dispatch/dispatcher.h"',
        '#include "operators.h"',
        "",
        "typedef struct generated_op {",
        "    const char *schema;",
        "    const char *name;",
        "    dispatch_kernel_fn kernel;",
        "    void *ctx;",
        "    const char *debug;",
        "} generated_op;",
        "",
        "static const generated_op generated_ops[] = {",
    ]
    for op in ops:
        ctx = f"(void *)(intptr_t){op.ctx}" if op.ctx else "NULL"
        debug = f"{table_name}:{op.line} (dispatch_boxed_{op.kernel})"
        out.append(f"    {{{_c_string(op.schema)},")
        out.append(f"     {_c_string(op.full_name)}, dispatch_boxed_{op.kernel}, {ctx},")
        out.append(f"     {_c_string(debug)}}},")
    out += [
        "};",
        "",
        "int dispatch_register_generated_ops(void) {",
        "    for (size_t i = 0; i < sizeof generated_ops / sizeof generated_ops[0]; i++) {",
        "        const generated_op *g = &generated_ops[i];",
        "        if (!dispatch_def(g->schema, g->debug)) return -1;",
        "        if (dispatch_impl(g->name, DISPATCH_KEY_CPU, g->kernel, g->ctx, g->debug) < 0 ||",
        "            dispatch_impl(g->name, DISPATCH_KEY_META, g->kernel, g->ctx, g->debug) < 0)",
        "            return -1;",
        "    }",
        "    return 0;",
        "}",
        "",
    ]
    return "\n".join(out)


def _packet_doc(group: list[Operator]) -> str:
    """help() of an operator: its first overload's doc, then every other doc
    (an out= form's, a dim form's) once, after the overloads it is for."""
    others: dict[str, list[str]] = {}
    for o in group[1:]:
        if o.doc and o.doc != group[0].doc:
            others.setdefault(o.doc, []).append(o.full_name)
    return "\n".join([group[0].doc, *(f"{', '.join(names)}: {doc}"
                                      for doc, names in others.items())])


def render_py(ops: list[Operator], table_name: str) -> str:
    """The Python table behind dispatch.ops."""
    by_name: dict[str, list[Operator]] = {}
    for op in ops:
        by_name.setdefault(op.name, []).append(op)
    out = [
        f'"""Generated by tools/opgen.py from {table_name}: do not edit."""',
        "",
        "# name -> (overloads in resolution order, doc: the first overload's, then",
        "# each other doc once, after the overloads it documents)",
        "OPERATORS: dict[str, tuple[tuple[str, ...], str]] = {",
    ]
    for name, group in by_name.items():
        overloads = ", ".join(repr(o.full_name) for o in group) + ","
        out.append(f"    {name!r}: (({overloads}), {_packet_doc(group)!r}),")
    out += ["}", ""]
    return "\n".join(out)


def render_loops_h(loops: list[Loop], table_name: str) -> str:
    """The X-macro header of the loops (included by sources/include/dispatch/loops.h)."""
    out = [
        f"/* Generated by tools/opgen.py from {table_name}: do not edit. */",
        "#ifndef DISPATCH__LOOPS_H_",
        "#define DISPATCH__LOOPS_H_",
        "",
        "/* X(NAME, name, nin, ctx, bool_mask) per loop, in id order: DISPATCH_LOOP_<NAME>,",
        " * its name, its number of inputs, whether it reads ctx (DISPATCH_LOOP_CTX_<ctx>),",
        " * and the operands (bit k: operand k, 0 = the output) that are bool, not T. */",
        "#define DISPATCH_FORALL_LOOPS(X) \\",
    ]
    width = max((len(lp.name) for lp in loops), default=0)
    for lp in loops:
        mask = sum(1 << k for k in lp.bool_operands)
        entry = (f"X({lp.name.upper() + ',':<{width + 1}} {lp.name + ',':<{width + 1}} {lp.nin}, "
                 f"DISPATCH_LOOP_CTX_{lp.ctx.upper() + ',':<9} {mask:#x})")
        out.append(f"    {entry}{f' /* {lp.doc} */' if lp.doc else ''} \\")
    out += [
        "",
        "/* X(NAME) per loop whose strided inputs the engine copies to a buffer",
        " * first (gather_strided: Note [Gathered strided inputs] in",
        " * sources/iterator/iterator.c). */",
        "#define DISPATCH_FORALL_GATHERED_LOOPS(X) \\",
    ]
    out += [f"    X({lp.name.upper()}) \\" for lp in loops if lp.gather_strided]
    out += [
        "",
        "#endif /* DISPATCH__LOOPS_H_ */",
        "",
    ]
    return "\n".join(out)


def _write_if_changed(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("--c-out", type=Path)
    parser.add_argument("--py-out", type=Path)
    parser.add_argument("--loops-h", type=Path)
    args = parser.parse_args(argv)
    try:
        ops = load(args.table)
        loops = load_loops(args.table)
    except (OSError, OpgenError) as exc:
        print(f"opgen: error: {exc}", file=sys.stderr)
        return 1
    name = f"sources/dispatcher/{args.table.name}"
    if args.c_out:
        args.c_out.write_text(render_c(ops, name), encoding="utf-8")
    if args.py_out:
        args.py_out.write_text(render_py(ops, name), encoding="utf-8")
    if args.loops_h:
        _write_if_changed(args.loops_h, render_loops_h(loops, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
