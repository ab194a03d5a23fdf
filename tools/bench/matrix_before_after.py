"""Two builds of ours compared row by row (bench_matrix.py --before DIR).

Each side is the best of its K processes, and the processes alternate
(before, after, before, after, ...), so that a slow spell of the machine
falls on both. torch and NumPy run the same code on both sides: their own
after/before ratios are the noise this run cannot tell from a change, and
the text gives them beside ours.
"""

from __future__ import annotations

from typing import Any

import matrix_report as report

LIBS = ("ours", "torch", "numpy")
MOVED = 0.10  # a row "moved" when after/before is beyond 1 +- this


def _label(r: dict) -> str:
    return f"{report.label(r)} ({r['threads']}t, {r['size']})"


def compare(before: list, after: list) -> dict[str, Any]:
    """Per library: the rows both sides timed, the geometric mean of
    after/before, how many moved beyond MOVED each way; for ours also the
    rows that moved most, each way, with both times."""
    b = {report.row_key(r): r for r in before}
    out: dict[str, Any] = {"moved": MOVED}
    for lib in LIBS:
        pairs = [(r, b[report.row_key(r)]) for r in after
                 if report.row_key(r) in b and r.get(f"{lib}_s")
                 and b[report.row_key(r)].get(f"{lib}_s")]
        if not pairs:
            continue
        ratios = [(a[f"{lib}_s"] / o[f"{lib}_s"], a, o) for a, o in pairs]
        entry = {
            "rows": len(ratios),
            "geomean": report.geomean([x for x, _, _ in ratios]),
            "faster": sum(x < 1 - MOVED for x, _, _ in ratios),
            "slower": sum(x > 1 + MOVED for x, _, _ in ratios),
        }
        if lib == "ours":
            ratios.sort(key=lambda t: t[0])
            show = lambda t: {"row": _label(t[1]), "after/before": t[0],
                              "before_us": t[2]["ours_s"] * 1e6, "after_us": t[1]["ours_s"] * 1e6}
            entry["most_faster"] = [show(t) for t in ratios[:10] if t[0] < 1 - MOVED]
            entry["most_slower"] = [show(t) for t in reversed(ratios[-10:]) if t[0] > 1 + MOVED]
        out[lib] = entry
    return out


def text(c: dict, before_dir: str, processes: int) -> str:
    pct = round(c["moved"] * 100)
    lines = [f"before/after: ours from {before_dir} (before) and as imported (after), "
             f"{processes} alternating processes each, each row the best of its side",
             f"after/before per library (rows, geometric mean, moved beyond +-{pct}%):"]
    for lib in LIBS:
        if lib not in c:
            continue
        e = c[lib]
        note = "" if lib == "ours" else "  (the same code on both sides: this run's noise)"
        lines.append(f"  {lib:6} {e['rows']:5d} rows  geomean {e['geomean']:.3f}  "
                     f"faster {e['faster']}  slower {e['slower']}{note}")
    ours = c.get("ours", {})
    for name, what in (("most_faster", "faster"), ("most_slower", "slower")):
        if ours.get(name):
            lines.append(f"ours, the rows most {what}: " + ", ".join(
                f"{m['row']} {m['before_us']:.1f} -> {m['after_us']:.1f} us"
                for m in ours[name]))
    return "\n".join(lines) + "\n"
