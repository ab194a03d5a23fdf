"""What bench_matrix.py writes from its rows: the per-row line, the summary
(rows, rows <= 1.0, geometric mean, the worst rows, per category), the CSV
and JSON files and the heat map, an SVG written here as text (no plotting
library).

A row's ratio is ours/peer: our seconds a call over the peer's, < 1 when
we are faster. The summary counts only rows both sides ran; the others are
listed as named rows, with the library's own reason. A row a documented
accuracy rule covers (matrix_rules.py: ``torch_rule``, ``numpy_rule``) is
counted like any other and, above 1.0, listed again with its rule.
"""

from __future__ import annotations

import csv
import json
import math
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import matrix_rules as rules

CATEGORIES = {  # name -> does a row belong to it (categories overlap)
    "casts (.to)": lambda r: r["op"] == "cast",
    "float16": lambda r: r["op"] != "cast" and r["dtype"] == "float16",
    "bfloat16": lambda r: r["op"] != "cast" and r["dtype"] == "bfloat16",
    "8/16-bit ints": lambda r: r["op"] != "cast" and r["dtype"] in ("uint8", "int8", "int16"),
    "broadcast": lambda r: r["layout"].startswith("bcast"),
    "float32/64": lambda r: r["op"] != "cast" and r["dtype"] in ("float32", "float64"),
}
WORST = 20
FAR = 1.25  # the bound: no row above it
CSV_FIELDS = ["threads", "size", "n", "op", "form", "dtype", "layout", "to", "ours_s", "torch_s",
              "numpy_s", "ours/torch", "ours/numpy", "ours_out", "torch_out", "numpy_out",
              "ours_note", "torch_note", "numpy_note", "torch_rule", "numpy_rule"]


def label(r: dict) -> str:
    if r["op"] == "cast":
        return f"cast {r['dtype']}->{r['to']}"
    return f"{r['op']} {r['dtype']} {r['layout']}"


def row_key(r: dict) -> tuple:
    """What a row is, whichever process or build timed it."""
    return tuple(r.get(k) for k in ("size", "threads", "op", "form", "dtype", "layout", "to"))


def cell_key(r: dict) -> tuple:
    """The heat map cell of a row: (operator, dtype); a cast's operator is
    its target (`to float16`), so each cast pair has its own cell."""
    return (f"to {r['to']}" if r["op"] == "cast" else r["op"], r["dtype"])


def geomean(xs: list) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# ------------------------------------------------------------------ rows
def row_header() -> str:
    return (f"{'thr':>3} {'size':>4}  {'row':<34} {'ours us':>9} {'torch us':>9} {'numpy us':>9}"
            f"  {'/torch':>7} {'/numpy':>7}  note")


def _us(r: dict, k: str) -> str:
    return f"{r[k] * 1e6:9.2f}" if k in r else f"{'-':>9}"


def _ratio(r: dict, k: str) -> str:
    return f"{r[k]:7.2f}" if k in r else f"{'-':>7}"


def row_line(r: dict) -> str:
    notes = "; ".join([f"{lib}: {r[lib + '_note']}" for lib in ("ours", "torch", "numpy")
                       if lib + "_note" in r] +
                      [f"vs {peer}: rule '{r[peer + '_rule']}'" for peer in ("torch", "numpy")
                       if peer + "_rule" in r])
    return (f"{r['threads']:>3} {r['size']:>4}  {label(r):<34} {_us(r, 'ours_s')} "
            f"{_us(r, 'torch_s')} {_us(r, 'numpy_s')}  {_ratio(r, 'ours/torch')} "
            f"{_ratio(r, 'ours/numpy')}  {notes}").rstrip()


# ------------------------------------------------------------------ summary
def _stats(rows: list, key: str) -> dict:
    rs = [r for r in rows if key in r]
    if not rs:
        return {"rows": 0, "le1": 0, "geomean": None, "worst": None, "worst_row": None}
    w = max(rs, key=lambda r: r[key])
    return {"rows": len(rs), "le1": sum(r[key] <= 1.0 for r in rs),
            "geomean": geomean([r[key] for r in rs]), "worst": w[key], "worst_row": label(w)}


def summarize(rows: list, meta: dict) -> dict:
    """Per (threads, size) and peer: the figures the summary prints."""
    groups = []
    peers = meta["peers"]
    for threads in meta["threads"]:
        for size in meta["sizes"]:
            rs = [r for r in rows if r["threads"] == threads and r["size"] == size]
            g: dict[str, Any] = {"threads": threads, "size": size, "rows": len(rs), "vs": {}}
            for peer in peers:
                key = f"ours/{peer}"
                s = _stats(rs, key)
                s["worst_rows"] = [[label(r), r[key]] for r in sorted(
                    (r for r in rs if key in r), key=lambda r: -r[key])[:WORST]]
                s["categories"] = {name: _stats([r for r in rs if f(r)], key)
                                   for name, f in CATEGORIES.items()}
                far = [r for r in rs if r.get(key, 0.0) > FAR]
                s["above_far"] = len(far)
                s["above_far_by_rule"] = sum(f"{peer}_rule" in r for r in far)
                s["rule_rows"] = [[label(r), r[key], r[f"{peer}_rule"]] for r in sorted(
                    (r for r in rs if r.get(key, 0.0) > 1.0 and f"{peer}_rule" in r),
                    key=lambda r: -r[key])]
                g["vs"][peer] = s
            if not peers:  # ours alone: the slowest rows per element
                timed = [r for r in rs if "ours_s" in r]
                g["ours_ns_per_element"] = [[label(r), r["ours_s"] * 1e9 / r["n"]] for r in sorted(
                    timed, key=lambda r: -r["ours_s"] / r["n"])[:WORST]]
            named: dict = {}
            for r in rs:
                for lib in ("ours", "torch", "numpy"):
                    note = r.get(f"{lib}_note")
                    if note:
                        k = f"{lib} | {r['op']} | {note}"
                        named.setdefault(k, []).append(
                            f"{r['dtype']}->{r['to']}" if r["op"] == "cast" else
                            f"{r['dtype']} {r['layout']}")
            g["named"] = named
            groups.append(g)
    return {"meta": meta, "groups": groups}


def _fmt(x: Any, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def summary_text(summary: dict) -> str:
    meta = summary["meta"]
    m = meta["machine"]
    peers = meta["peers"]
    out = [f"bench_matrix: {meta['command']}",
           (f"machine: {m.get('cpu', '?')}, {m.get('cpus')} CPUs ({m.get('avx', '')}); load "
            f"average {_fmt(m.get('load_before'))} before, {_fmt(m.get('load_after'))} after; "
            f"{meta.get('seconds', '?')} s"),
           (f"ours: dispatch (its kernels' target here: {meta['dispatch_target']}); torch "
            f"{meta['torch'] or 'not installed or not asked for'}; NumPy "
            f"{meta['numpy'] or 'not installed or not asked for'}; best of {meta['rounds']} "
            f"turns of {meta['turn_ms']:g} ms" +
            (f" in each of {meta['processes']} processes" if meta.get("processes", 1) > 1
             else "")),
           "compared with: " + (" and ".join(peers) if peers else
                                "nothing (neither torch nor NumPy): our times alone")]
    if meta.get("device", "cpu") != "cpu":
        out.append(f"on the GPU (--device {meta['device']}): {meta.get('gpu')}; every turn "
                   f"ends with its library's synchronize; the CPU rules name no row")
    as_cpu = meta.get("as_cpu")
    if as_cpu:
        seen = ", ".join(f"{k} {v}" for k, v in as_cpu["seen"].items())
        wrong = as_cpu["not_at_level"]
        out.append(f"as an {as_cpu['level']} CPU (--as-cpu): {seen}" +
                   (f"; NOT at that level: {', '.join(wrong)}" if wrong else ""))
    for g in summary["groups"]:
        out.append("")
        out.append(f"== {g['threads']} thread(s), {g['size']} elements: {g['rows']} rows ==")
        for peer, s in g["vs"].items():
            out.append(f"ours/{peer}: {s['rows']} rows timed on both sides, {s['le1']} <= 1.0, "
                       f"geometric mean {_fmt(s['geomean'])}, worst {_fmt(s['worst'])}x "
                       f"({s['worst_row'] or '-'})")
            out.append(f"  {'category':<16} {'rows':>5} {'<= 1.0':>6} {'geomean':>8} {'worst':>8}"
                       f"  worst row")
            for name, c in s["categories"].items():
                out.append(f"  {name:<16} {c['rows']:>5} {c['le1']:>6} {_fmt(c['geomean']):>8} "
                           f"{_fmt(c['worst']):>8}  {c['worst_row'] or '-'}")
            out.append(f"  the worst {len(s['worst_rows'])} rows: " + ", ".join(
                f"{lab} {v:.1f}x" for lab, v in s["worst_rows"]))
            if "above_far" in s:  # summaries written before the rules lack it
                out.append(f"  above {FAR}x: {s['above_far']} rows, "
                           f"{s['above_far_by_rule']} of them under a documented rule")
                out.append(f"  above 1.0 under a documented rule ({len(s['rule_rows'])} rows): "
                           + (", ".join(f"{lab} {v:.2f}x [{rule}]"
                                        for lab, v, rule in s["rule_rows"]) or "none"))
        if "ours_ns_per_element" in g:
            out.append("ours alone, the slowest rows (ns per element): " + ", ".join(
                f"{lab} {v:.2f}" for lab, v in g["ours_ns_per_element"]))
        used = {rule for s in g["vs"].values() for _, _, rule in s.get("rule_rows", [])}
        for rule in rules.RULES:
            if rule.name in used:
                out.append(f"rule '{rule.name}' ({rule.doc}): {rule.why}")
        out.append(f"named rows (a library did not run them; {sum(map(len, g['named'].values()))}"
                   f" library-rows):")
        for k in sorted(g["named"]):
            out.append(f"  {k}: {', '.join(g['named'][k])}")
    return "\n".join(out)


# ------------------------------------------------------------------ heat map
CELL_W, CELL_H, LEFT, TOP = 64, 18, 96, 58


def _color(t: float) -> str:
    """t in [-1, 1]: green (we are faster) through white to red."""
    t = max(-1.0, min(1.0, t))
    to = (26, 152, 80) if t < 0 else (215, 48, 39)
    a = abs(t)
    return "#" + "".join(f"{round(255 + (c - 255) * a):02x}" for c in to)


def heatmap_svg(rows: list, threads: int, size: str, peers: list, dtypes: list) -> str:
    """ours/peer per (operator, dtype) at one thread count and size: each
    cell the geometric mean of its rows (layouts), each row in its tooltip.
    Without a peer: our ns per element."""
    peer = peers[0] if peers else None
    key = f"ours/{peer}" if peer else None
    rs = [r for r in rows if r["threads"] == threads and r["size"] == size]
    ops: list = []
    cells: dict = {}
    for r in rs:
        k = cell_key(r)
        if k[0] not in ops:
            ops.append(k[0])
        cells.setdefault(k, []).append(r)
    width = LEFT + CELL_W * len(dtypes) + 10
    height = TOP + CELL_H * len(ops) + 60
    title = (f"ours/{peer}" if peer else "ours alone, ns per element") + \
        f", {threads} thread(s), {size} elements: geometric mean of each cell's layouts " + \
        ("(green: we are faster)" if peer else "")
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'),
           f'<title>{escape(title)}</title>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="4" y="16" font-size="12" font-weight="bold">{escape(title)}</text>']
    for j, dt in enumerate(dtypes):
        out.append(f'<text x="{LEFT + j * CELL_W + CELL_W / 2}" y="{TOP - 8}" '
                   f'text-anchor="middle">{escape(dt)}</text>')
    for i, op in enumerate(ops):
        y = TOP + i * CELL_H
        out.append(f'<text x="{LEFT - 6}" y="{y + 13}" text-anchor="end">{escape(op)}</text>')
        for j, dt in enumerate(dtypes):
            x = LEFT + j * CELL_W
            members = cells.get((op, dt), [])
            if not members:
                continue
            if peer:
                vals = [r[key] for r in members if key in r]
                value = geomean(vals) if vals else None
                shade = math.log2(value) / 3 if value else 0.0
                text = f"{value:.2f}" if value is not None else "-"
            else:
                vals = [r["ours_s"] * 1e9 / r["n"] for r in members if "ours_s" in r]
                value = geomean(vals) if vals else None
                shade = math.log10(value) / 2 if value else 0.0
                text = f"{value:.2g}" if value is not None else "-"
            tip = "; ".join(_tip(r, key) for r in members)
            cls = "cell" if value is not None else "none"
            fill = _color(shade) if value is not None else "#d9d9d9"
            out.append(f'<g class="{cls}" data-op={quoteattr(op)} data-dtype={quoteattr(dt)}>'
                       f'<title>{escape(f"{op} {dt}: {tip}")}</title>'
                       f'<rect x="{x}" y="{y}" width="{CELL_W - 1}" height="{CELL_H - 1}" '
                       f'fill="{fill}"/><text x="{x + CELL_W / 2}" y="{y + 13}" '
                       f'text-anchor="middle" fill="{"white" if abs(shade) > 0.7 else "black"}">'
                       f'{escape(text)}</text></g>')
    y = TOP + CELL_H * len(ops) + 16
    legend = [0.125, 0.25, 0.5, 1, 2, 4, 8] if peer else [0.01, 0.1, 1, 10, 100]
    for k, v in enumerate(legend):
        shade = math.log2(v) / 3 if peer else math.log10(v) / 2
        x = LEFT + k * 48
        out.append(f'<rect x="{x}" y="{y}" width="47" height="14" fill="{_color(shade)}"/>'
                   f'<text x="{x + 24}" y="{y + 26}" text-anchor="middle">{v:g}</text>')
    out.append(f'<text x="4" y="{y + 11}">{"ours/" + peer if peer else "ns/element"}</text>')
    out.append(f'<text x="4" y="{y + 42}">grey: no ratio (a library did not run the row; '
               f'the tooltip says why)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tip(r: dict, key: str | None) -> str:
    where = r["layout"] if r["op"] != "cast" else f"{r['dtype']}->{r['to']}"
    if key and key in r:
        rule = r.get(key.replace("ours/", "") + "_rule")
        return f"{where} {r[key]:.2f}" + (f" (rule: {rule})" if rule else "")
    notes = [r[k] for k in ("ours_note", "torch_note", "numpy_note") if k in r]
    if not key and "ours_s" in r:
        return f"{where} {r['ours_s'] * 1e6:.1f} us"
    return f"{where}: {' / '.join(notes) or 'not timed'}"


# ------------------------------------------------------------------ files
def write_all(prefix: str, rows: list, summary: dict, text: str) -> list:
    meta = summary["meta"]
    paths = [f"{prefix}-rows.csv", f"{prefix}-rows.json", f"{prefix}-summary.txt",
             f"{prefix}-summary.json"]
    with open(paths[0], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    with open(paths[1], "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=0)
    with open(paths[2], "w") as f:
        f.write(text + "\n")
    with open(paths[3], "w") as f:
        json.dump(summary, f, indent=1)
    dtypes: list = []
    for r in rows:
        if r["dtype"] not in dtypes:
            dtypes.append(r["dtype"])
    for threads in meta["threads"]:
        for size in meta["sizes"]:
            p = f"{prefix}-{threads}t-{size}.svg"
            with open(p, "w") as f:
                f.write(heatmap_svg(rows, threads, size, meta["peers"], dtypes))
            paths.append(p)
    return paths
