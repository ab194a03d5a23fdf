"""The C half of the feature tables: ``_cpu_features_table.h``.

The runtime (sources/cpu/) knows the features through this one generated
header: the enum ``dispatch_cpu_feature`` (one id per feature and group of
every table) and the rows of its feature table. It depends on the tables in
features/ only, never on the compiler or the options, so every build writes
the same bytes; `dispatchgen configure` writes it beside ``_cpu_dispatch.h``.

>>> text = render()
>>> "DISPATCH_CPU_FEATURE_AVX2 = 13," in text
True
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from .features import ARCHES, Arch

__all__ = ["HEADER_NAME", "ID_MAX", "c_ids", "arch_condition", "render"]

HEADER_NAME = "_cpu_features_table.h"

# The enum's sentinel (DISPATCH_CPU_FEATURE_MAX): the runtime keeps arrays
# of this size, so every id stays below it.
ID_MAX = 400

# Note [Stable C ids]
# Each feature and group carries its C id in its table entry (`cid`). Ids are
# stored nowhere, but compiled code holds them: a downstream extension built
# against an older header asks dispatch_cpu_have(42) of the runtime it links,
# and a C test or a debugger session names them. So an id never changes and
# is never reused; a new feature takes a number no one has used. Ranges, by
# convention: x86 1-199 (SSE..AVX2 1-13, AVX512F/CD 30-31, the NumPy AVX-512
# generations 40-46, the psABI levels 60-62, the single AVX-512 extensions
# 70-84), ppc64 200-299, ARM 300-349, IBM Z 350-379, RISC-V
# 380-389, LoongArch 390-399. A name shared by tables
# (x86 and x86_64, aarch64 and armhf) has one id.

_TOOL = "dispatchgen configure"


def _entries(arch: Arch) -> List[Tuple[str, int, Tuple[str, ...], bool]]:
    """(name, cid, direct implications or members, is_group), table order, groups last."""
    rows = [(f.name, f.cid, f.implies, False) for f in arch.features]
    # a group holding all of a smaller group's members implies it, so that
    # DISABLE of X86_V3 also turns X86_V4 off (the runtime's upward closure)
    return rows + [(g.name, g.cid,
                    g.members + tuple(h.name for h in arch.groups
                                      if h is not g and set(h.members) < set(g.members)),
                    True) for g in arch.groups]


def c_ids(arches: Mapping[str, Arch] = ARCHES) -> Dict[str, int]:
    """Every feature and group name -> its C id, in first-table order.

    Raises ValueError, naming the entry, when an id is missing, out of range,
    shared by two names, or different in two tables.
    """
    ids: Dict[str, int] = {}
    where: Dict[str, str] = {}
    by_id: Dict[int, str] = {}
    for arch in arches.values():
        for name, cid, _, _ in _entries(arch):
            if not 0 < cid < ID_MAX:
                raise ValueError(
                    f"{arch.name}: {name} has C id {cid}; give its entry in features/ a "
                    f"cid between 1 and {ID_MAX - 1} that no feature ever had "
                    "(Note [Stable C ids] in tools/dispatchgen/dispatchkit/ctable.py)")
            if name in ids and ids[name] != cid:
                raise ValueError(f"{name} has C id {ids[name]} in {where[name]} but {cid} in "
                                 f"{arch.name}; one name, one id in every table")
            if by_id.get(cid, name) != name:
                raise ValueError(f"{by_id[cid]} and {name} ({arch.name}) share C id {cid}; "
                                 "ids are never shared or reused")
            ids.setdefault(name, cid)
            where.setdefault(name, arch.name)
            by_id[cid] = name
    return ids


def arch_condition(arch: Arch) -> str:
    """The preprocessor test for ``arch``, from the macros that identify it."""
    tests = [f"defined({m})" for m in arch.macros]
    tests += [f"!defined({m})" for m in arch.not_macros]
    return " && ".join(tests)


def _c_string(names: Sequence[str]) -> str:
    return '"' + " ".join(names) + '"'


def _enum(arches: Mapping[str, Arch], ids: Dict[str, int]) -> List[str]:
    tables: Dict[str, List[str]] = {name: [] for name in ids}
    for arch in arches.values():
        for name, *_ in _entries(arch):
            tables[name].append(arch.name)
    width = max(len(name) for name in ids) + len("DISPATCH_CPU_FEATURE_ = 400,")
    lines = ["enum dispatch_cpu_feature {", "    DISPATCH_CPU_FEATURE_NONE = 0,"]
    for name in sorted(ids, key=ids.__getitem__):
        entry = f"DISPATCH_CPU_FEATURE_{name} = {ids[name]},"
        lines.append(f"    {entry:<{width}} /* {' '.join(tables[name])} */")
    lines += [f"    DISPATCH_CPU_FEATURE_MAX = {ID_MAX}", "};"]
    return lines


def _rows_macro(here: List[Tuple[str, int, Tuple[str, ...], bool]],
                elsewhere: List[Tuple[str, bool]]) -> List[str]:
    rows = [f"X({name}, {_c_string(implies)}, {int(group)})"
            for name, _, implies, group in here]
    rows += [f"Y({name}, {int(group)})" for name, group in elsewhere]
    head = "    #define DISPATCH__CPU_TABLE_ROWS(X, Y)"
    return [" \\\n".join([head, *(f"        {r}" for r in rows)])]


def render(arches: Mapping[str, Arch] = ARCHES) -> str:
    """The text of ``_cpu_features_table.h``: byte-identical for identical tables."""
    ids = c_ids(arches)
    is_group = {name: group for arch in arches.values() for name, _, _, group in _entries(arch)}
    # Tables with identical rows (x86 and x86_64) share one block.
    blocks: List[Tuple[List[Arch], List[Tuple[str, int, Tuple[str, ...], bool]]]] = []
    for arch in arches.values():
        rows = _entries(arch)
        same = next((b for b in blocks if b[1] == rows), None)
        if same:
            same[0].append(arch)
        else:
            blocks.append(([arch], rows))

    out = [
        f"/* Generated by {_TOOL} from the feature tables",
        " * (tools/dispatchgen/dispatchkit/features/): the C id of every feature and group, and",
        " * the rows of the runtime's feature table (dispatchkit/cpu/cpu_features.c).",
        " * The same for every build and compiler. Do not edit. */",
        "#ifndef DISPATCH__CPU_FEATURES_TABLE_H_",
        "#define DISPATCH__CPU_FEATURES_TABLE_H_",
        "",
        "/* Ids are fixed forever: Note [Stable C ids] in tools/dispatchgen/dispatchkit/ctable.py. */",
        *_enum(arches, ids),
        "",
        "/* DISPATCH__CPU_TABLE_ROWS(X, Y): the rows of the architecture being",
        " * compiled, in its table's order, groups last, as X(NAME, IMPLIES, IS_GROUP)",
        " * (IMPLIES: the direct implications, or a group's members, space separated);",
        " * then every name only other tables have, as Y(NAME, IS_GROUP). */",
    ]
    keyword = "#if"
    for members, rows in blocks:
        tests = [arch_condition(a) for a in members]
        cond = " || ".join(f"({t})" if len(tests) > 1 and " " in t else t for t in tests)
        here = {name for name, *_ in rows}
        elsewhere = [(name, is_group[name]) for name in ids if name not in here]
        out += [f"{keyword} {cond} /* {' '.join(a.name for a in members)} */",
                *_rows_macro(rows, elsewhere)]
        keyword = "#elif"
    out += ["#else /* an architecture without a table */",
            *_rows_macro([], [(name, is_group[name]) for name in ids]),
            "#endif", "", "#endif /* DISPATCH__CPU_FEATURES_TABLE_H_ */", ""]
    return "\n".join(out)
