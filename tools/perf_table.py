"""CONTRIBUTING.md's performance table, rendered from what `make perf` recorded (tools/perf-build.json).

Numbers we print about ourselves come from a tool, never typed: `make perf` (tools/perf.py) merges each
part it measured (rmsnorm, build, serve, weight) into the JSON with its own stamp (CPU model, family and
model, cores, load average, commit, date), and this renders the table and the line under it that says
where each part was measured. tests/test_perf_table.py fails when CONTRIBUTING.md and the JSON disagree.

Usage: python tools/perf_table.py          rewrite CONTRIBUTING.md's table (between its two markers)
       python tools/perf_table.py --check  exit 1 when CONTRIBUTING.md's table is not the rendered one
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import marked  # tools/, beside this script

ROOT = Path(__file__).resolve().parent.parent
PERF_JSON = ROOT / "tools" / "perf-build.json"
DOC = ROOT / "CONTRIBUTING.md"  # the contributors' guide holds the table (the README is one screen)
BEGIN = "<!-- perf-table: rendered by tools/perf_table.py from tools/perf-build.json; do not edit -->"
END = "<!-- /perf-table -->"


def _verdict(ok: bool) -> str:
    return "holds" if ok else "**fails**"


def _s(x: float) -> str:
    return f"{x:.1f} s"


def _machine(stamp: dict) -> str:
    cpu = stamp.get("cpu") or {}
    kind = ", ".join(x for x in (
        f"family {cpu['family']} model {cpu['model']}" if cpu.get("family") is not None else "",
        f"{cpu['mhz']} MHz" if cpu.get("mhz") else "") if x)
    load = ", ".join(f"{x:.2f}" for x in stamp.get("load") or [])
    commit = (stamp.get("commit") or "?") + (" with local changes" if stamp.get("dirty") else "")
    return (f"{cpu.get('model_name') or 'unknown CPU'}" + (f" ({kind})" if kind else "")
            + f", {stamp.get('cores')} cores, commit {commit}; recorded {stamp.get('date')}, load average {load} then")


def _load1(text: str) -> str | None:
    """The 1-minute figure of perf.py's "load average a, b, c"."""
    import re

    m = re.search(r"load average ([\d.]+)", str(text))
    return m.group(1) if m else None


def rows(data: dict) -> list[tuple[str, str, str, str]]:
    """(budget, measured, limit, verdict) for every part the JSON holds, in the table's order."""
    parts = data.get("parts") or {}
    out = []
    if "rmsnorm" in parts:
        r = parts["rmsnorm"]
        h = r["holds"]
        out += [
            ("`torch.nn.RMSNorm` forward ÷ normref forward (4096 × 4096, float32)", f"{r['speedup_vs_torch_nn']:.2f}×",
             "≥ 2×", _verdict(h["speedup_vs_torch_nn >= 2"])),
            ("normref forward ÷ `x.clone()` (copy roofline)", f"{r['over_copy']:.2f}", "≤ 1.35",
             _verdict(h["over_copy <= 1.35"])),
            ("max \\|normref − `torch.nn.RMSNorm`\\|", f"{r['max_abs_diff']:.1e}", "≤ 1e-5",
             _verdict(h["max_abs_diff <= 1e-5"])),
            ("forward + backward, normref ÷ `torch.nn.RMSNorm`", f"{r['fb_over_torch_nn']:.2f}", "≤ 1",
             _verdict(h["fb_over_torch_nn <= 1"])),
            ("gradcheck (float64)", "passes" if r["gradcheck"] else "fails", "passes", _verdict(bool(r["gradcheck"]))),
        ]
        if r.get("one_row"):
            o = r["one_row"]
            out.append(("one row of 4096 (a decode step), inference: normref ÷ `torch.nn.RMSNorm` time",
                        f"{1 / o['torch_over_normref']:.2f} (the blocked forward alone: {1 / o['torch_over_blocked']:.2f})",
                        "not a budget", ""))
    if "build" in parts:
        b = parts["build"]
        cold_b, warm_b = b["budgets"]["cold_s"], b["budgets"]["warm_s"]
        worst = max(b["cold_s"])
        loads = [_load1(x) for x in b.get("cold_load") or []]
        cold = sorted(zip(b["cold_s"], loads + [None] * (len(b["cold_s"]) - len(loads))), key=lambda c: -c[0])
        each = [_s(t) + (f" at load {ld}" if ld else "") for t, ld in cold]
        w = statistics.median(b["warm_s"])
        out += [
            ("cold full build, both languages, fresh caches: the worst of the cold builds (1-minute load average as each ended)",
             each[0] + (f" (the other{'s' if len(each) > 2 else ''} {', '.join(each[1:])})" if len(each) > 1 else ""),
             f"≤ {cold_b} s", _verdict(worst <= cold_b)),
            ("warm build, no change (median of the warm builds)",
             f"{w:.2f} s (single builds {min(b['warm_s']):.2f}–{max(b['warm_s']):.2f} s)", f"≤ {warm_b} s",
             _verdict(w <= warm_b)),
        ]
    if "serve" in parts:
        v = parts["serve"]
        m = statistics.median(v["edit_to_served_s"])
        prose = " (a prose edit: the prepare pass's manifest is reused)" if v.get("directive_edit_to_served_s") else ""
        out.append((f"edit one page under `make serve` until the served page changes (median){prose}", f"{m:.2f} s",
                    f"≤ {v['budget_s']:g} s", _verdict(m <= v["budget_s"])))
        if v.get("directive_edit_to_served_s"):
            out.append(("add a `[[value: …]]` to one page under `make serve` (the prepare pass runs) until it is served (median)",
                        f"{statistics.median(v['directive_edit_to_served_s']):.2f} s", "not a budget", ""))
        if v.get("value_module_edit_to_served_s"):
            out.append(("edit one value module (`normref/values/basics.py`) under `make serve` until the page is served (median)",
                        f"{statistics.median(v['value_module_edit_to_served_s']):.2f} s", "not a budget yet", ""))
    if "weight" in parts:
        wt = parts["weight"]
        pages = wt.get("pages") or {}
        plain = [(k, p) for k, p in pages.items() if "ratio" in p and not p.get("math")]
        math = [(k, p) for k, p in pages.items() if p.get("math")]
        for k, p in plain:
            out.append((f"page without math or widgets (`{k}`) ÷ a plain Material page of the same text",
                        f"{p['ratio']:.3f} ({p['ours']['total'] / 1024:.1f} vs {p['plain_material']['total'] / 1024:.1f} KiB)",
                        "≤ 1.05", _verdict(p["ratio"] <= 1.05)))
        for k, p in math:
            out.append((f"page with math (`{k}`), first load ÷ the same kind of plain page", f"{p['ratio']:.2f}", "≤ 2.5",
                        _verdict(p["ratio"] <= 2.5)))
        css = [(p["inline_css_before"], p["inline_css_after"]) for p in pages.values() if p.get("inline_css_after") is not None]
        if css:
            before, after = max(c[0] or 0 for c in css), max(c[1] for c in css)
            out.append(("notebook page inline CSS (the largest)", f"{before / 1024:.0f} KiB → {after / 1024:.0f} KiB",
                        "trimmed", _verdict(after < before)))
        n = len(wt.get("external_requests") or [])
        out.append(("requests to other hosts while loading pages", str(n), "0", _verdict(n == 0)))
    return out


def render(data: dict) -> str:
    """The Markdown between the document's markers: the table, then where each part was measured."""
    lines = ["| budget | measured | limit | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows(data)]
    lines.append("")
    names = {"rmsnorm": "RMSNorm rows", "build": "build rows", "serve": "edit-to-reload row", "weight": "page-weight rows"}
    for part in ("rmsnorm", "build", "serve", "weight"):
        if part in (data.get("parts") or {}):
            lines.append(f"- {names[part]}: {_machine(data['parts'][part]['stamp'])}.")
    return "\n".join(lines)


def doc_block(text: str) -> str:
    """What the document holds between the markers (ValueError when they are missing)."""
    return marked.block(text, BEGIN, END, f"{DOC.name}'s performance table")


def rendered_doc(text: str, data: dict) -> str:
    """``text`` with the table between its markers rendered from ``data``."""
    return marked.replaced(text, BEGIN, END, render(data), f"{DOC.name}'s performance table")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the table in --doc is not the rendered one")
    ap.add_argument("--json", type=Path, default=PERF_JSON)
    ap.add_argument("--doc", type=Path, default=DOC, help="the Markdown file that holds the table (default: %(default)s)")
    a = ap.parse_args(argv)
    data = json.loads(a.json.read_text(encoding="utf-8"))
    text = a.doc.read_text(encoding="utf-8")
    new = rendered_doc(text, data)
    if a.check:
        if new != text:
            print(f"{a.doc} disagrees with {a.json}: run python tools/perf_table.py", file=sys.stderr)
            return 1
        return 0
    a.doc.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
