"""The rows of the matrix a peer may win because we compute them another way
on purpose: an accuracy rule of ours, written down, that the peer does not
keep (issue 44: "where a row cannot reach it, the benchmark names the row
and docs/performance.md says why").

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
)


def rule_for(row: dict, peer: str) -> Rule | None:
    """The rule that covers this row against this peer, if one does."""
    for rule in RULES:
        if peer in rule.peers and rule.covers(row):
            return rule
    return None


def by_name(name: str) -> Rule:
    return next(r for r in RULES if r.name == name)
