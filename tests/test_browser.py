"""The built site in a real browser: Debian's Chromium driven by Playwright.

One browser and one tab serve the whole file (conftest's `browser` and `tab`);
the session's built site is served on 127.0.0.1 at the address it was built
for, since instant navigation only works when the two agree (`served`). Every
request the browser makes is routed through the tests: requests to the local
server go through, anything else is recorded and aborted, so "no other host"
is checked on every page view of every test, not only in the page-load test.

Screenshots land in test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urlsplit

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from support import LANGS, SCREENSHOTS, Served, Tab, axe_violations


# ---------------------------------------------------------------- search queries

# Queries for the pages that exist now: (lang, query, expected). `expected` is
# a page path relative to the language's root ("" is the home page), with an
# optional "#fragment"; a bare "#fragment" (or a bare id) matches that
# fragment on any page. The glossary's own cases (every name, alias and sub-word)
# are asked of Material's search worker in node (test_glossary.py) and, for rank 1
# in Chromium, by test_search_rank.py: typing them here one test each added 600
# browser tests and no check the other two lack.
BUILTIN_QUERIES = [
    ("zh", "RMSNorm", ""),
    ("zh", "均方根", "glossary/#rms"),  # the definition first (issue L), not a page that uses the word
    ("zh", "归一化", ""),
    ("zh", "尺度不变性", "notebooks/scale_invariance/"),
    ("zh", "LayerNorm", ""),
    ("en", "RMSNorm", ""),
    ("en", "root mean square", ""),
    ("en", "LayerNorm", ""),
    ("en", "scale invariance", "notebooks/scale_invariance/"),
    ("en", "worked example", ""),
]


def _matches(rel: str, fragment: str, expected: str) -> bool:
    """Does a search result (page path relative to its language root, and fragment) match `expected`?"""
    path, sep, frag = expected.partition("#")
    if not sep and path and "/" not in path and "." not in path:
        path, frag = "", path  # a bare id: "rmsnorm" means "#rmsnorm" on any page
    if expected.startswith("#") or (not sep and frag):
        return fragment == frag
    return rel == path and (not frag or fragment == frag)


# ---------------------------------------------------------------- every page


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_loads_clean(clean_tab, served, lang):
    """Zero console errors, zero failed loads, zero requests to another host, on every page."""
    problems = {}
    rels = served.pages(lang)
    assert "" in rels and len(rels) >= 2, rels
    for rel in rels:
        clean_tab.reset()
        clean_tab.goto(served.url(lang, rel), idle=True)
        got = clean_tab.page.evaluate("document.documentElement.lang")
        issues = list(clean_tab.errors) + [f"request to other host: {u}" for u in clean_tab.foreign]
        if not got.startswith(lang):
            issues.append(f"<html lang={got!r}>")
        if issues:
            problems[rel or "(home)"] = issues
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)


# ---------------------------------------------------------------- search


def _search(tab: Tab, lang: str, query: str) -> list[str]:
    """Type `query` into Material's search box on the language's home page; the result links."""
    page = tab.page
    home = tab.served.url(lang)
    if page.url.split("#")[0].split("?")[0] != home:
        tab.goto(home)
    box = page.locator("input.md-search__input")
    placeholder = page.evaluate("JSON.parse(document.getElementById('__config').textContent)"
                                ".translations['search.result.placeholder']")
    meta = page.locator(".md-search-result__meta")
    box.fill("")
    box.press("End")  # Material's search listens to key events, not to `input`
    page.wait_for_function("(p) => document.querySelector('.md-search-result__meta').textContent.trim() === p",
                           arg=placeholder)
    box.fill(query)
    box.press("End")
    page.wait_for_function("(p) => document.querySelector('.md-search-result__meta').textContent.trim() !== p",
                           arg=placeholder, timeout=15000)
    assert meta.text_content().strip()
    return page.eval_on_selector_all(".md-search-result__list a[href]", "as => as.map(a => a.href)")


@pytest.mark.parametrize("lang,query,expected", BUILTIN_QUERIES, ids=[f"{l}-{q}" for l, q, _ in BUILTIN_QUERIES])
def test_search(clean_tab, served, lang, query, expected):
    hrefs = _search(clean_tab, lang, query)
    assert hrefs, f"{lang} search for {query!r} found nothing"
    other = [h for h in hrefs if served.lang_of(h) != lang]
    assert not other, f"{lang} search for {query!r} returned pages of the other language: {other}"
    found = [(served.rel(lang, h), urlsplit(h).fragment) for h in hrefs]
    assert any(_matches(rel, frag, expected) for rel, frag in found), \
        f"{lang} search for {query!r}: expected {expected!r}, got {found}"


@pytest.mark.parametrize("lang,query", [("en", "归一化"), ("zh", "normalization"), ("en", "均方根")])
def test_search_stays_in_its_language(clean_tab, served, lang, query):
    """A word of the other language finds nothing of the other site (each language has its own index)."""
    hrefs = _search(clean_tab, lang, query)
    assert all(served.lang_of(h) == lang for h in hrefs), hrefs


# ---------------------------------------------------------------- language switch


def _switch(tab: Tab, to: str):
    page = tab.page
    page.hover(".md-header__option .md-select")
    link = page.locator(f'a.md-select__link[hreflang="{to}"]')
    link.click()
    page.wait_for_load_state("load")


# Pages on which the language switch is clicked through; on every other page its link is read (site.js
# aims it at the same page in the other language when the page is shown: the same code on every page).
SWITCH_CLICKED = ["", "glossary/", "notebooks/scale_invariance/", "404.html"]


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_same_page(clean_tab, served, lang):
    other = "en" if lang == "zh" else "zh"
    wrong = {}
    rels = served.pages(lang)
    assert all(r in rels for r in SWITCH_CLICKED), [r for r in SWITCH_CLICKED if r not in rels]
    for rel in rels:
        clean_tab.goto(served.url(lang, rel))
        want = served.url(other, rel)
        if rel not in SWITCH_CLICKED:
            link = f"document.querySelector('a.md-select__link[hreflang=\"{other}\"]').href"
            try:
                clean_tab.page.wait_for_function(f"(w) => {link} === w", arg=want, timeout=10000)
            except PlaywrightTimeout:
                wrong[rel] = clean_tab.page.evaluate(link)
            continue
        _switch(clean_tab, other)
        try:
            clean_tab.page.wait_for_url(want, timeout=10000)
        except PlaywrightTimeout:
            wrong[rel] = clean_tab.page.url
    assert not wrong, wrong
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_after_instant_navigation(clean_tab, served, lang):
    other = "en" if lang == "zh" else "zh"
    # An article, the glossary and a notebook page (the link's aim is the same code on every page; the
    # other pages' links are read in test_language_switch_same_page).
    want = ["formulas/", "glossary/", "notebooks/scale_invariance/"]
    rels = [r for r in served.instant_pages(lang) if r in want]
    assert len(rels) == len(want), f"not all of {want} are in the {lang} sitemap: {rels}"
    clean_tab.goto(served.url(lang))
    for rel in rels:
        clean_tab.mark()
        clean_tab.instant(served.url(lang, rel))
        assert clean_tab.marked(), f"{rel}: instant navigation did not happen (full reload)"
        _switch(clean_tab, other)
        clean_tab.page.wait_for_url(served.url(other, rel))
        clean_tab.goto(served.url(lang))
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- copy button

# Every snippet's copy button, on every page of both languages, is clicked and the clipboard
# compared with the file by the copy test (tests/test_copy.py, the `copies` fixture), which then
# runs what it copied: one check, there.


# ---------------------------------------------------------------- scale-invariance widget


def _widget_reading(page) -> dict:
    return page.evaluate(
        """() => {
            const w = document.querySelector('[data-nr-widget="scale-playground"]');
            const num = (s) => parseFloat(s.replace('\\u2212', '-'));
            return {
              c: parseFloat(w.dataset.nrC),
              shown_c: num(w.querySelector('output').textContent),
              l2_in: num(w.querySelector('[data-nr-value="in"]').textContent),
              l2_out: num(w.querySelector('[data-nr-value="out"]').textContent),
              text_out: w.querySelector('[data-nr-value="out"]').textContent,
              sliders: w.querySelectorAll('input[type="range"]').length,
              value: w.querySelector('input[type="range"]').value,
              label: w.querySelector('label').textContent,
              hidden: w.hidden,
              bar_in: parseFloat(w.querySelector('.nr-scale__row--in .nr-scale__bar').style.width),
              bar_out: parseFloat(w.querySelector('.nr-scale__row--out .nr-scale__bar').style.width),
            };
        }"""
    )


def _expect(data: dict, k: int) -> tuple[float, float, float]:
    """normref's numbers at stop k of the sweep: (c, ||c x||, ||RMSNorm(c x)||), recomputed from normref."""
    from normref import rms_norm
    from normref.experiments.scale import scale_sweep
    from normref.stats import l2

    r = scale_sweep()
    x = np.random.default_rng(r["seed"]).standard_normal(r["d"])
    c = float(r["scales"][k])
    # the embedded data is normref's sweep, and recomputing gives the same numbers
    assert abs(data["l2_out"][k] - float(r["l2_out"][k])) < 1e-5
    return c, float(l2(c * x)), float(l2(rms_norm(c * x, eps=data["eps"])))


def _check_reading(got: dict, data: dict, k: int, where: str):
    c, l2_in, l2_out = _expect(data, k)
    assert got["c"] == pytest.approx(c, rel=1e-9), where
    assert abs(got["shown_c"] - c) <= 0.005 + 1e-9, where
    assert abs(got["l2_in"] - l2_in) <= 0.005 + 1e-6, (where, got, l2_in)  # shown with 2 decimals
    assert abs(got["l2_out"] - l2_out) <= 0.00005 + 1e-6, (where, got, l2_out)  # shown with 4 decimals
    assert abs(got["l2_out"] - data["sqrt_d"]) < 1e-3, where


@pytest.mark.parametrize("lang", LANGS)
def test_scale_widget_matches_normref(clean_tab, served, lang):
    from normref import data as nrdata

    data = nrdata.get("scale_playground", lang)
    n = len(data["scales"])
    page = clean_tab.page
    clean_tab.goto(served.url(lang))
    page.wait_for_selector('[data-nr-widget="scale-playground"] input[type="range"]')
    got = _widget_reading(page)
    assert not got["hidden"] and got["sliders"] == 1
    # The words come from the page, in its language.
    want_label = page.get_attribute('[data-nr-widget="scale-playground"]', "data-label-factor")
    assert got["label"] == want_label and want_label
    assert bool(re.search(r"[\u4e00-\u9fff]", want_label)) == (lang == "zh")
    _check_reading(got, data, n // 2, "initial (c = 1)")

    # Keyboard alone: the label's control takes focus, arrows move one stop of the sweep.
    slider = page.get_by_label(want_label)
    slider.focus()
    page.keyboard.press("Home")
    low = _widget_reading(page)
    _check_reading(low, data, 0, "Home")
    for k in range(1, 6):
        page.keyboard.press("ArrowRight")
        _check_reading(_widget_reading(page), data, k, f"ArrowRight x{k}")
    page.keyboard.press("End")
    high = _widget_reading(page)
    _check_reading(high, data, n - 1, "End")
    # Both lengths are drawn: the input's bar grows with c, the output's does not move.
    assert low["bar_in"] < low["bar_out"] < high["bar_in"] and low["bar_out"] == pytest.approx(high["bar_out"], abs=0.05)
    page.keyboard.press("ArrowLeft")
    _check_reading(_widget_reading(page), data, n - 2, "ArrowLeft")
    # fill() sets log10(c) directly.
    for k in (0, 7, 30, n - 1):
        slider.fill(str(round(np.log10(data["scales"][k]), 6)))
        _check_reading(_widget_reading(page), data, k, f"fill stop {k}")
    assert page.get_attribute('[data-nr-widget="scale-playground"] input', "aria-valuetext").endswith("×")
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_widget_data_is_inert(served, lang):
    """[[data: …]] ends up inside a <template>: Material's instant navigation re-runs every
    inline <script> of the new page without its type and id, which would execute the JSON."""
    page = served.html(lang, "")
    assert '<template class="nr-data" id="nr-data-scale_playground"><script type="application/json">{' in page
    assert not re.search(r'<script[^>]* id="nr-data-', page)


@pytest.mark.parametrize("lang", LANGS)
def test_scale_widget_after_instant_navigation(clean_tab, served, lang):
    from normref import data as nrdata

    data = nrdata.get("scale_playground", lang)
    others = [r for r in served.pages(lang) if r not in ("", "404.html")]
    clean_tab.goto(served.url(lang, others[0]))
    clean_tab.mark()
    clean_tab.instant(served.url(lang))
    assert clean_tab.marked(), "instant navigation did not happen"
    page = clean_tab.page
    page.wait_for_selector('[data-nr-widget="scale-playground"] input[type="range"]')
    page.get_by_label(page.get_attribute('[data-nr-widget="scale-playground"]', "data-label-factor")).focus()
    page.keyboard.press("End")
    got = _widget_reading(page)
    assert got["sliders"] == 1
    _check_reading(got, data, len(data["scales"]) - 1, "End after instant navigation")
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_scale_widget_without_javascript(browser, served, lang):
    """Without JavaScript the static figure shows and the widget's empty box does not."""
    ctx = browser.new_context(java_script_enabled=False, color_scheme="light")
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(served.base) else r.abort())
    try:
        page = ctx.new_page()
        page.goto(served.url(lang))
        img = page.locator("#fig-scale_invariance img").first
        img.scroll_into_view_if_needed()
        assert img.is_visible()
        assert page.evaluate("document.querySelector('#fig-scale_invariance img').naturalWidth") > 0
        assert not page.locator('[data-nr-widget="scale-playground"]').is_visible()
    finally:
        ctx.close()


# ---------------------------------------------------------------- glossary tooltips


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_tooltips_on_hover(clean_tab, served, lang):
    """Hovering a glossary link in running text shows its short definition (Material's tooltip)."""
    linked = [rel for rel in served.pages(lang) if 'class="nr-term"' in served.html(lang, rel)]
    assert linked, "no page links a glossary term"
    rel = "" if "" in linked else linked[0]
    titles = [html.unescape(t) for t in re.findall(r'<a class="nr-term"[^>]*? title="([^"]*)"', served.html(lang, rel))]
    assert titles, rel
    page = clean_tab.page
    clean_tab.goto(served.url(lang, rel))
    links = page.locator("article a.nr-term")
    for i, title in list(enumerate(titles))[:3]:
        page.mouse.move(0, 0)
        link = links.nth(i)
        link.scroll_into_view_if_needed()
        link.hover()
        tip = page.locator(".md-tooltip2").filter(has_text=title)
        tip.first.wait_for(state="visible", timeout=5000)
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- math


def _math_pages(served: Served, lang: str) -> list[str]:
    return [rel for rel in served.pages(lang) if 'class="katex"' in served.html(lang, rel)]


_KATEX_CHECK = """async () => {
    await document.fonts.ready;
    // Formulas a reader cannot see yet are left out: in a closed <details>, or in a widget's part that is
    // [hidden] until the reader asks (the practice drill's unrevealed answer).
    const els = [...document.querySelectorAll('article .katex')].filter(e => !e.closest('details:not([open]), [hidden]'));
    const empty = els.filter(e => { const r = e.getBoundingClientRect(); return !(r.width > 0 && r.height > 0); });
    const fam = els.length ? getComputedStyle(els[0]).fontFamily : '';
    const fonts = [...document.fonts].filter(f => f.family.replace(/"/g, '').startsWith('KaTeX') && f.status === 'loaded')
                                     .map(f => f.family.replace(/"/g, ''));
    return {n: els.length, empty: empty.length, family: fam, fonts: fonts};
}"""


def _check_math(tab: Tab, where: str):
    # After an instant navigation the page's KaTeX stylesheet (a <link> in the
    # swapped-in content) loads asynchronously: give it a moment, then check.
    try:
        tab.page.wait_for_function(
            "() => { const k = document.querySelector('article .katex');"
            " return k && getComputedStyle(k).fontFamily.includes('KaTeX_Main'); }", timeout=5000)
    except PlaywrightTimeout:
        pass  # the assertions below say what is missing
    got = tab.page.evaluate(_KATEX_CHECK)
    if got["n"] == 0:  # every formula folded away until the reader opens it (the practice page's cards)
        return False
    assert got["empty"] == 0, f"{where}: {got['empty']} of {got['n']} formulas have no size"
    assert "KaTeX_Main" in got["family"], f"{where}: KaTeX stylesheet not applied ({got['family']})"
    assert "KaTeX_Main" in got["fonts"], f"{where}: KaTeX fonts not loaded ({got['fonts']})"
    return True


@pytest.mark.parametrize("lang", LANGS)
def test_math_renders_and_survives_instant_navigation(clean_tab, served, lang):
    math = _math_pages(served, lang)
    assert math, "no page with math"
    shown = []
    for rel in math:
        clean_tab.goto(served.url(lang, rel))
        shown.append(_check_math(clean_tab, rel or "(home)"))
    # Only a page whose every formula is folded away may show none (one page: the practice cards)
    assert sum(not s for s in shown) <= 1, [rel for rel, s in zip(math, shown) if not s]
    fonts = [u for u in clean_tab.local if "/katex/fonts/" in u]
    assert fonts and all(u.startswith(served.base) and u.endswith(".woff2") for u in fonts), fonts
    # Instant navigation: arrive at each math page from another page without a reload.
    others = [r for r in served.pages(lang) if r != "404.html"]
    for rel in [r for r in math if r in served.instant_pages(lang)]:
        start = next(r for r in others if r != rel)
        clean_tab.goto(served.url(lang, start))
        clean_tab.mark()
        clean_tab.instant(served.url(lang, rel))
        assert clean_tab.marked(), f"{rel}: no instant navigation"
        _check_math(clean_tab, f"{rel or '(home)'} after instant navigation from {start or '(home)'}")
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- accessibility and screenshots


# The print edition is every chapter on one page: 40,000 elements, half of one scan's axe time. Its
# chapters are the other pages' content, which every scan below checks page by page. So the whole print
# page is scanned once, in the default scheme and language (a reader's first view); the other scans check
# its own parts (header, cover and contents, the first two chapters, footer) with the rest excluded.
_PRINT_WHOLE = ("default", "zh")
_PRINT_TRIMMED = {"exclude": [['.nr-print-chapter:not([data-nr-chapter="home"]):not([data-nr-chapter="formulas"])']]}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_accessibility(clean_tab, served, lang, scheme):
    """axe-core (the copy bundled in axe-playwright-python) finds nothing serious or critical."""
    found = {}
    clean_tab.set_scheme(scheme)
    for rel in served.pages(lang):
        clean_tab.goto(served.url(lang, rel))
        clean_tab.scheme_is(scheme)
        if rel == "":
            clean_tab.page.wait_for_selector('[data-nr-widget] input[type="range"]')
        bad = axe_violations(clean_tab.page, _PRINT_TRIMMED if rel == "print/" and (scheme, lang) != _PRINT_WHOLE else None)
        if bad:
            found[rel or "(home)"] = bad
    clean_tab.set_scheme("default")
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


KEY_PAGES = ["", "glossary/", "notebooks/scale_invariance/"]


def _key_pages(served: Served, lang: str) -> list[str]:
    """The home page, the glossary, a notebook, and every page with a widget."""
    rels = served.pages(lang)
    widgets = [r for r in rels if "data-nr-widget=" in served.html(lang, r)]
    return list(dict.fromkeys([r for r in KEY_PAGES if r in rels] + widgets))


@pytest.mark.parametrize("lang", LANGS)
def test_screenshots(clean_tab, served, lang):
    """Full-page screenshots of the key pages in light and dark, kept in test-artifacts/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    rels = _key_pages(served, lang)
    assert "" in rels
    for scheme in ("default", "slate"):
        clean_tab.set_scheme(scheme)
        for rel in rels:
            clean_tab.goto(served.url(lang, rel))
            page = clean_tab.page
            clean_tab.scheme_is(scheme)
            # Lazy images below the fold would be blank in a full-page shot: load them all.
            page.evaluate("""async () => {
                const imgs = [...document.querySelectorAll('article img')];
                imgs.forEach(i => { i.loading = 'eager'; });
                await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
                await document.fonts.ready;
            }""")
            broken = page.evaluate("[...document.querySelectorAll('article img')]"
                                   ".filter(i => i.offsetParent !== null && !(i.naturalWidth > 0)).map(i => i.src)")
            assert not broken, f"{rel} ({scheme}): images that do not show: {broken}"
            name = (rel.strip("/").replace("/", "-") or "home")
            out = SCREENSHOTS / f"{lang}-{name}-{'light' if scheme == 'default' else 'dark'}.png"
            page.screenshot(path=str(out), full_page=True)
            assert out.stat().st_size > 10_000, out
    clean_tab.set_scheme("default")
    assert not clean_tab.errors, clean_tab.errors
