"""Lighthouse on a few pages of the session's build (tools/lighthouse.py: the site served gzipped,
Debian's Chromium, Lighthouse's default phone profile): accessibility, best practices and SEO at 100.

Three pages: the Chinese home page (the print edition's links; the browser review found a link
without an address there, SEO 92), the English glossary (the largest page) and the Chinese practice
page (the drill). Performance is not asserted: it depends on the machine and its load (on two shared
cores it swings by tens of points); run the tool on a quiet machine to read it. Lighthouse comes from
npm, pinned by tools/lighthouse/package-lock.json and installed by `make browser-deps`.
"""

from __future__ import annotations

import json

import pytest

from support import load_tool

pytestmark = pytest.mark.browser

lh = load_tool("lighthouse")
CATEGORIES = ("accessibility", "best-practices", "seo")


@pytest.fixture(scope="module")
def gz_site(site):
    server, base = lh.serve(site)
    yield base
    server.shutdown()


@pytest.mark.parametrize("page", lh.PAGES)
def test_lighthouse_accessibility_best_practices_and_seo(gz_site, page, tmp_path):
    if not lh.LIGHTHOUSE.exists():
        pytest.fail(f"{lh.LIGHTHOUSE} is missing: run `make browser-deps`")
    out = tmp_path / "report.json"
    scores = lh.run(lh.page_url(gz_site, page), out, CATEGORIES)
    report = json.loads(out.read_text(encoding="utf-8"))
    failed = {c: lh.failing(report, c) for c in CATEGORIES if scores[c] != 100}
    assert scores == dict.fromkeys(CATEGORIES, 100), failed
