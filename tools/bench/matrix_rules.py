"""The rows of the matrix a peer may win because we compute them another way
on purpose: an accuracy rule of ours, written down, that the peer does not
keep (issue 44: "where a row cannot reach it, the benchmark names the row
and docs/performance.md says why"); and, under --as-cpu, the rows a peer
runs above the level it was asked for (its switch does not reach them).

bench_matrix.py tags each row a rule covers (``torch_rule``,
``numpy_rule``: the rule's name) and the summary lists the rows above 1.0
that carry one apart from the rest, so a rule never hides a slow row it
does not explain: the rows it covers are still timed, counted and shown.

Each rule names where it is documented (a file of this repository and a
phrase in it); tests/test_bench_matrix.py holds the phrase to the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

NARROW_AND_FLOAT32 = ("float16", "bfloat16", "float32")


@dataclass(frozen=True)
class Rule:
    name: str  # a few words, shown beside each row
    why: str  # one sentence: what we do and what the peer does instead
    doc: str  # the file that documents it, relative to the repository root
    phrase: str  # words of that file that say it
    peers: tuple[str, ...]  # the peers that compute it the other way
    covers: Callable[[dict], bool]  # does a row of the matrix fall under it
    levels: tuple[str, ...] = ()  # only under bench_matrix --as-cpu one of these (): always


RULES = (
    Rule(
        name="float64 products",
        why=("dot and prod of float32 and narrower multiply in float64 (each product exact) "
             "and round once at the end; torch and NumPy multiply and accumulate in float32"),
        doc="docs/semantics.md",
        phrase="`dot` sums its float64 products pairwise",
        peers=("torch", "numpy"),
        covers=lambda r: r["op"] in ("dot", "prod") and r["dtype"] in NARROW_AND_FLOAT32,
    ),
    Rule(
        name="rounded once",
        why=("float64 and int32 become float16/bfloat16 rounded once, from the exact value; "
             "torch goes through float32 and can round twice"),
        doc="docs/semantics.md",
        phrase="of a float64 or int32 tensor round once, from the exact value",
        peers=("torch",),
        covers=lambda r: (r["op"] == "cast" and r["to"] in ("float16", "bfloat16")
                          and r["dtype"] in ("float64", "int32")),
    ),
    Rule(
        name="correctly rounded sqrt",
        why=("sqrt of float32 and float64 is the hardware's correctly rounded square root; "
             "torch's MKL build takes MKL's vector sqrt, which is off by one ulp in about "
             "one result of 150"),
        doc="docs/semantics.md",
        phrase="`sqrt` and `+ - * /` are correctly rounded",
        peers=("torch",),
        covers=lambda r: r["op"] == "sqrt" and r["dtype"] in ("float32", "float64"),
    ),
    Rule(
        name="torch above the level",
        why=("torch converts contiguous float16 <-> float32 through fbgemm, which picks its "
             "F16C/AVX2/AVX-512 loops by its own CPU check, not ATEN_CPU_CAPABILITY: under "
             "--as-cpu torch runs these two rows with this CPU's widest loops, we and NumPy at "
             "the level"),
        doc="docs/performance.md",
        phrase="torch's float16 <-> float32 copies ignore ATEN_CPU_CAPABILITY",
        peers=("torch",),
        covers=lambda r: (r["op"] == "cast" and r["layout"] == "contig"
                          and {r["dtype"], r["to"]} == {"float16", "float32"}),
        levels=("sse4.2", "avx2"),
    ),
)


def rule_for(row: dict, peer: str, level: str | None = None) -> Rule | None:
    """The rule that covers this row against this peer, if one does; `level`
    is bench_matrix's --as-cpu (None: this CPU's own)."""
    for rule in RULES:
        if peer in rule.peers and (not rule.levels or level in rule.levels) and rule.covers(row):
            return rule
    return None


def by_name(name: str) -> Rule:
    return next(r for r in RULES if r.name == name)
