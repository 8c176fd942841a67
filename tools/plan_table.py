"""CONTRIBUTING.md's table of what an edit re-runs, rendered from `python -m normsite.prepare --plan`'s answer.

For each representative edit of normsite.plan.EDITS (a card, a label, a comment in figures.yml, in a value
module, in a site module, in a test file), normsite.plan.plan makes every key of a build in a fresh process
in a copy of the tree, before and after the edit, and lists the results whose key changed: this renders
them by kind with counts (normsite.plan.table). tests/test_plan.py fails when CONTRIBUTING.md's table is
not the rendered one. Computing it takes a fresh process per edit (a few seconds each).

Usage: python tools/plan_table.py          rewrite CONTRIBUTING.md's table (between its two markers)
       python tools/plan_table.py --check  exit 1 when CONTRIBUTING.md's table is not the rendered one
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import marked  # tools/, beside this script

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "CONTRIBUTING.md"
BEGIN = "<!-- plan-table: rendered by tools/plan_table.py from python -m normsite.prepare --plan; do not edit -->"
END = "<!-- /plan-table -->"


def doc_block(text: str) -> str:
    """What the document holds between the markers (ValueError when they are missing)."""
    return marked.block(text, BEGIN, END, f"{DOC.name}'s table of what an edit re-runs")


def rendered_doc(text: str, table: str) -> str:
    """``text`` with ``table`` between its markers."""
    return marked.replaced(text, BEGIN, END, table, f"{DOC.name}'s table of what an edit re-runs")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the table in --doc is not the rendered one")
    ap.add_argument("--doc", type=Path, default=DOC, help="the Markdown file that holds the table (default: %(default)s)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this checkout's normsite, whatever the current folder
    from normsite import plan

    text = a.doc.read_text(encoding="utf-8")
    try:
        new = rendered_doc(text, plan.table(plan.plans(ROOT)))
    except ValueError as e:
        print(f"plan_table: {e}", file=sys.stderr)
        return 2
    if a.check:
        if new != text:
            print(f"{a.doc}'s table of what an edit re-runs is out of date: run python tools/plan_table.py", file=sys.stderr)
            return 1
        return 0
    a.doc.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
