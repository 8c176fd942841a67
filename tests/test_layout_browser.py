"""Every built page laid out on a phone (390 px, Debian's Chromium via Playwright): nothing scrolls sideways,
no Chinese closing punctuation starts a line after a formula, no number in a caption breaks across lines.

Sideways scroll (browser review D1): KaTeX's visually hidden MathML is absolutely positioned, so a formula
in a wide table escaped the table's scroll box and widened the page (``.md-typeset__scrollwrap`` is now
positioned, overrides/assets/stylesheets/normref.css). The test loads every page of both languages,
notebooks, glossary, print edition and 404 included, and compares the document's scroll width with its
width.

Lines (D4, D5): a formula's last box and the closing punctuation after it, and a caption's number such as
1e-6, are kept on one line by a ``nr-nobr`` span (normsite.mathtex, normsite.directives); the browser says
where each piece of text landed. :func:`test_build_keeps_them_together` checks the same spans in the HTML, no browser.
"""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup, NavigableString

from support import LANGS

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}  # support.open_tab's
CLOSING = "，。、；：！？）》」』】〉”’…,.;:!?)]"

# [scrollWidth, clientWidth] of the page.
_WIDTH = "() => [document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
# Each inline formula followed by closing punctuation whose first character sits on a later line than the
# formula's last box: [the formula's text, the punctuation].
_PUNCT_STARTS_LINE = """(closing) => {
  const bad = [];
  for (const k of document.querySelectorAll('article .katex')) {
    if (k.closest('.katex-display, .nr-math')) continue;
    const t = k.nextSibling;
    if (!t || t.nodeType !== Node.TEXT_NODE || !t.data || !closing.includes(t.data[0])) continue;
    const boxes = k.getClientRects();
    if (!boxes.length) continue;  // not shown (a closed <details>, a hidden card)
    const r = document.createRange();
    r.setStart(t, 0); r.setEnd(t, 1);
    const p = r.getBoundingClientRect(), last = boxes[boxes.length - 1];
    if (p.width && p.top >= last.bottom - 1) bad.push([k.textContent.slice(0, 40), t.data.slice(0, 10)]);
  }
  return bad;
}"""
# Each caption number kept together (class nr-nobr) that a browser still laid out on more than one line.
_SPLIT_NUMBERS = """() => [...document.querySelectorAll('article figcaption .nr-nobr')]
  .filter(n => n.getClientRects().length > 1).map(n => n.textContent)"""


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_scrolls_sideways_or_breaks_badly_on_a_phone(clean_tab, served, lang):
    page = clean_tab.page
    page.set_viewport_size(PHONE)
    wide, punct, numbers = {}, {}, {}
    try:
        rels = served.pages(lang)
        assert "" in rels and any(r.startswith("notebooks/") for r in rels) and "print/" in rels, rels
        for rel in rels:
            clean_tab.goto(served.url(lang, rel))
            scroll, client = page.evaluate(_WIDTH)
            if scroll > client:
                wide[rel or "(home)"] = f"scrollWidth {scroll} > clientWidth {client}"
            if bad := page.evaluate(_PUNCT_STARTS_LINE, CLOSING):
                punct[rel or "(home)"] = bad
            if bad := page.evaluate(_SPLIT_NUMBERS):
                numbers[rel or "(home)"] = bad
    finally:
        page.set_viewport_size(DESKTOP)
    assert not wide, "pages that scroll sideways at 390 px: " + json.dumps(wide, ensure_ascii=False, indent=1)
    assert not punct, "closing punctuation starting a line after a formula: " + json.dumps(punct, ensure_ascii=False)
    assert not numbers, "caption numbers split across lines: " + json.dumps(numbers, ensure_ascii=False)


def test_build_keeps_them_together(site):
    """In the built HTML: every inline formula followed by closing punctuation ends in a nr-nobr span that
    holds its last box and the punctuation (normsite.mathtex), and every caption number a browser could break inside (1e-6, 3.18–3.48) is in one."""
    from normsite import directives
    from support import pages

    loose, numbers, kept = [], [], 0
    for lang in LANGS:
        for path in pages(site, lang):
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            for k in soup.select("article span.katex"):
                if k.find_parent(class_=["katex-display", "nr-math"]):
                    continue
                t = k.next_sibling
                if isinstance(t, NavigableString) and t[:1] and t[0] in CLOSING:
                    if "nr-nobr" in (k.parent.get("class") or ()):
                        kept += 1
                    else:
                        loose.append(f"{path.relative_to(site)}: {k.get_text()[:30]!r}{t[:5]!r}")
            for cap in soup.select("article figcaption"):
                for s in cap.find_all(string=True):
                    if s.parent.get("class") and "nr-nobr" in s.parent["class"]:
                        continue
                    for m in directives._NUMBER.finditer(s):
                        numbers.append(f"{path.relative_to(site)}: {s[max(0, m.start() - 10):m.end() + 10]!r}")
    assert kept > 10, kept  # the zh pages have dozens
    assert not loose, "\n".join(loose)
    assert not numbers, "\n".join(numbers)


def test_a_formula_keeps_its_last_box_with_the_punctuation():
    """No browser: the HTML normsite.mathtex writes, and what the search index reads of it."""
    from normsite import mathtex

    def formula(tex):
        return f'<span class="arithmatex">\\({tex}\\)</span>'

    eps = formula("x + \\varepsilon")
    out, n = mathtex.typeset(f"<p>极小的 {eps}），而 {formula('x')} 是</p>", "t")
    soup = BeautifulSoup(out, "html.parser")
    kept = soup.select_one("span.nr-nobr")
    assert n == 2 and kept is not None and kept.get_text().endswith("ε），"), out
    assert kept.select_one(".katex.nr-math-tail .katex-html[aria-hidden=true]") and not kept.select(".katex-mathml")
    whole = kept.find_previous_sibling("span", class_="katex")
    assert "x+ε" in whole.select_one(".katex-mathml").get_text(), out  # the MathML reads the whole formula
    assert len(soup.select("span.nr-nobr")) == 1  # "x" followed by a space: left alone
    assert mathtex.for_search(out) == ('<p>极小的 <span class="nr-math-text">x + ε</span><span class="nr-nobr">），</span>'
                                       '而 <span class="nr-math-text">x</span> 是</p>')
    # a formula of one box goes whole, so the visible formula is never an empty .katex beside its tail
    one, _ = mathtex.typeset(f"<p>经过 {formula('W_q')}；</p>", "t")
    soup = BeautifulSoup(one, "html.parser")
    assert not soup.select(".nr-math-tail") and soup.select_one("span.nr-nobr > span.katex .katex-mathml"), one
    assert soup.select_one("span.nr-nobr").get_text().endswith("；")
    display, _ = mathtex.typeset('<div class="arithmatex">\\[x\\]</div>。', "t")
    assert "nr-nobr" not in display


def test_caption_numbers_are_unbreakable():
    from normsite.directives import unbreakable_numbers

    assert unbreakable_numbers("ε = 1e-6; computed") == 'ε = <span class="nr-nobr">1e-6</span>; computed'
    assert unbreakable_numbers("在 3.18–3.48 之间，2017-2026") == \
        '在 <span class="nr-nobr">3.18–3.48</span> 之间，<span class="nr-nobr">2017-2026</span>'
    for text in ("seed 0, 256 维", "GPT-2 and Qwen3.5", "-0.5", "v1.2.3"):
        assert unbreakable_numbers(text) == text
    with pytest.raises(TypeError, match="text"):
        unbreakable_numbers(None)
