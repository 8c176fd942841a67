"""Search lands on the definition: for every name and alias of every glossary term,
Material's search in Chromium (typed into the search box, read from the result
list the reader sees) shows the term's glossary entry as the first section result,
in each language's site. The ranks are written to test-artifacts/search-rank.json.

tools/search_rank.py is the same code as a command (it printed, on this site
before the change: zh 138 of 221, en 135 of 221 names and aliases first)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import pytest

from support import CHROMIUM, LANGS, ROOT, load_tool

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "test-artifacts"


def _tool():
    return load_tool("search_rank")


def test_section_rank_reads_the_result_list():
    tool = _tool()
    base = "http://127.0.0.1:9/en/"
    hrefs = [base + "glossary/?h=rms", base + "formulas/#rms", base + "glossary/?h=rms#rms", base + "#home"]
    assert tool.section_rank(hrefs, base, "glossary/#rms") == (2, "formulas/#rms")
    assert tool.section_rank(hrefs, base, "glossary/#gain") == (None, "formulas/#rms")
    assert tool.summary([tool.Rank("zh", "q", "t", "alias", 1, ""), tool.Rank("zh", "r", "t", "alias", None, "")])["zh"] \
        == {"cases": 2, "first": 1, "top3": 1, "missing": 1}


def test_every_glossary_name_and_alias_puts_its_entry_first(site):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps`")
    from playwright.sync_api import sync_playwright

    tool = _tool()
    cases = tool.name_cases()
    assert {c.lang for c in cases} == set(LANGS) and len(cases) >= 100
    with tool.serve(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=tool.FLAGS)
        try:
            ranks = tool.rank_cases(browser.new_page(), base, cases)
        finally:
            browser.close()
    summary = tool.summary(ranks)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "search-rank.json").write_text(json.dumps({"summary": summary, "ranks": [asdict(r) for r in ranks]},
                                                           ensure_ascii=False, indent=1), encoding="utf-8")
    assert len(ranks) == len(cases)
    bad = [f"{r.lang}: {r.kind} {r.query!r} puts #{r.term} at {r.rank} (first: {r.first})" for r in ranks if r.rank != 1]
    assert not bad, f"{summary}\n" + "\n".join(bad[:40])
