"""Where does search put a glossary entry when a reader types its name? Measured in Chromium.

For every name and alias of every glossary term (normsite.glossary.search_cases,
sub-words left out), in each language's site, this types the query into
Material's search box, as a reader would, and reads the result list the page
shows: the rank of the term's entry among the section results (links with a
#fragment, in the order shown), or None when it is not among them.

    python tools/search_rank.py SITE [--json PATH]    # SITE: a built site (zh at SITE/, en at SITE/en/)

prints, per language, how many names and aliases put their entry first, and the
ones that do not. Debian's Chromium (/usr/bin/chromium) through Playwright.
The site is served at 127.0.0.1 on a free port (search needs no matching
site_url). tests/test_search_rank.py runs the same code on the test build.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
sys.path.insert(0, str(ROOT))
from normref.bilingual import LANGS  # noqa: E402  (the one definition)


@dataclass
class Rank:
    lang: str
    query: str
    term: str
    kind: str
    rank: int | None  # 1 = the first section result; None = not among the results shown
    first: str  # the first section result (path#fragment relative to the language root)


def name_cases(glossary=None) -> list:
    """Every name and alias of every term, in both languages (sub-words left out)."""
    from normsite.glossary import search_cases

    return [c for c in search_cases(glossary) if c.kind != "sub-word"]


_RESULTS = """(p) => {
    const meta = document.querySelector('.md-search-result__meta');
    return meta && meta.textContent.trim() !== p;
}"""


def query_results(page, query: str, placeholder: str) -> list[str]:
    """Type ``query`` into the search box of the open page; the result links, in order."""
    box = page.locator("input.md-search__input")
    box.fill("")
    box.press("End")  # Material reads the box on key events, not on `input`
    page.wait_for_function("(p) => document.querySelector('.md-search-result__meta').textContent.trim() === p",
                           arg=placeholder)
    box.fill(query)
    box.press("End")
    page.wait_for_function(_RESULTS, arg=placeholder, timeout=15000)
    return page.eval_on_selector_all(".md-search-result__list a[href]", "as => as.map(a => a.href)")


def section_rank(hrefs: list[str], root: str, anchor: str) -> tuple[int | None, str]:
    """Rank of ``anchor`` ("glossary/#id") among the section links (those with a #fragment)."""
    root_path = urlsplit(root).path
    sections = []
    for h in hrefs:
        u = urlsplit(h)
        if not u.fragment:
            continue
        path = u.path[len(root_path):] if u.path.startswith(root_path) else u.path
        sections.append(f"{path}#{u.fragment}")
    rank = sections.index(anchor) + 1 if anchor in sections else None
    return rank, sections[0] if sections else ""


def rank_cases(page, base: str, cases: list) -> list[Rank]:
    """Run every case on the site served at ``base`` (zh at base, en at base + "en/")."""
    out = []
    for lang in LANGS:
        root = base if lang == "zh" else base + "en/"
        page.goto(root, wait_until="load")
        placeholder = page.evaluate("JSON.parse(document.getElementById('__config').textContent)"
                                    ".translations['search.result.placeholder']")
        for c in (c for c in cases if c.lang == lang):
            hrefs = query_results(page, c.query, placeholder)
            rank, first = section_rank(hrefs, root, c.anchor)
            out.append(Rank(lang, c.query, c.term, c.kind, rank, first))
    return out


def summary(ranks: list[Rank]) -> dict:
    out = {}
    for lang in LANGS:
        mine = [r for r in ranks if r.lang == lang]
        out[lang] = {"cases": len(mine), "first": sum(r.rank == 1 for r in mine),
                     "top3": sum(r.rank is not None and r.rank <= 3 for r in mine),
                     "missing": sum(r.rank is None for r in mine)}
    return out


def serve(folder: Path):
    sys.path.insert(0, str(ROOT))  # normsite, beside the tools
    from normsite.serve import static_site

    return static_site(folder)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", type=Path, help="a built site: zh at SITE/, en at SITE/en/")
    ap.add_argument("--json", type=Path, help="write every rank here")
    args = ap.parse_args(argv)
    if not (args.site / "search" / "search_index.json").is_file():
        raise SystemExit(f"site={args.site}: no search/search_index.json (build the site first)")
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    cases = name_cases()
    with serve(args.site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        ranks = rank_cases(page, base, cases)
        browser.close()
    s = summary(ranks)
    for lang in LANGS:
        v = s[lang]
        print(f"{lang}: {v['first']} of {v['cases']} names and aliases put their entry first "
              f"({v['top3']} in the top 3, {v['missing']} not among the results)")
        for r in ranks:
            if r.lang == lang and r.rank != 1:
                print(f"   {r.kind:8} {r.query!r}: #{r.term} ranks {r.rank}; first is {r.first}")
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "ranks": [asdict(r) for r in ranks]}, ensure_ascii=False,
                                        indent=1), encoding="utf-8")
    return 0 if all(r.rank == 1 for r in ranks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
