"""Reading aids in a real browser (Debian's Chromium via Playwright): side-by-side
reading (对照阅读) on every page in both directions, zoomable figures, and the
language switch that keeps the reader's section, instant navigation included.

The session's site, served at the address it was built for (conftest's `served`);
each test opens a fresh browser context (side-by-side is remembered in
localStorage, so tests must not share one).
"""

from __future__ import annotations

import contextlib
import json
import re
from urllib.parse import urljoin

import pytest
from bs4 import BeautifulSoup

from support import LANGS, Served, Tab, axe_violations

pytestmark = pytest.mark.browser

OTHER = {"zh": "en", "en": "zh"}


# ---------------------------------------------------------------- fixtures


@contextlib.contextmanager
def _context(browser, served: Served, **kw):
    """A fresh context on the served site (as support.open_tab, with a viewport and colour
    scheme of the test's choosing): other hosts recorded and aborted, errors recorded."""
    t = Tab(page=None, served=served)
    ctx = browser.new_context(**{"viewport": {"width": 1400, "height": 900}, "color_scheme": "light", **kw})
    origin = served.base.rstrip("/")

    def route(r):
        if r.request.url.startswith(origin + "/"):
            t.local.append(r.request.url)
            r.continue_()
        else:
            t.foreign.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    ctx.add_init_script("try { Object.keys(localStorage).filter(k => k.endsWith('.__palette'))"
                        ".forEach(k => localStorage.removeItem(k)); } catch (e) {}")
    page = ctx.new_page()
    page.on("console", lambda m: t.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: t.errors.append(f"page error: {e}"))
    page.on("response", lambda r: t.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    t.page = page
    try:
        yield t
    finally:
        ctx.close()


@pytest.fixture
def tab(browser, served):
    """A fresh tab per test (this module's own: not conftest's module-wide one)."""
    with _context(browser, served) as t:
        yield t
    assert not t.foreign, f"requests to other hosts: {t.foreign}"


def _rels(served: Served, lang: str) -> list[str]:
    return [r for r in served.pages(lang) if r != "404.html"]


# ---------------------------------------------------------------- side by side

_ROWS = """() => [...document.querySelectorAll('article .nr-pair')].map(r => {
    const own = r.querySelector(':scope > .nr-pair__own'), other = r.querySelector(':scope > .nr-pair__other');
    const h = own.querySelector('h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]');
    const oh = other.querySelector('h1[data-nr-id],h2[data-nr-id],h3[data-nr-id],h4[data-nr-id],h5[data-nr-id],h6[data-nr-id]');
    return {section: r.dataset.nrSection, own: h ? h.id : '', other: oh ? oh.dataset.nrId : '',
            lang: other.lang, text: other.textContent.trim().length, ownText: own.textContent.trim().length};
})"""


def _pair_ready(page):
    page.wait_for_function("() => document.querySelector('article .nr-pair') && "
                           "!document.querySelector('article[aria-busy]')", timeout=20000)


def _until(page, js: str, arg=None, timeout_s: float = 20.0):
    """Poll ``js`` (a function of ``arg``) with separate evaluations until it is true. (Material
    re-renders the page on the first in-page link; a wait_for_function spanning that was flaky.)"""
    import time

    end = time.monotonic() + timeout_s
    while True:
        try:
            if page.evaluate(js, arg):
                return
        except Exception:  # the page was being swapped: ask again
            pass
        state = None
        if time.monotonic() > end:
            state = page.evaluate("() => [location.href, scrollY, document.querySelectorAll('.nr-pair').length,"
                                  " document.activeElement && document.activeElement.tagName]")
            raise AssertionError(f"not true after {timeout_s} s: {js} ({arg!r}); page: {state}")
        page.wait_for_timeout(100)


def _toggle(page):
    page.locator("button.nr-pair-toggle").click()


def _duplicate_ids(page) -> list[str]:
    return page.evaluate("() => { const seen = {}, dup = [];"
                         " document.querySelectorAll('[id]').forEach(e => { if (seen[e.id]) dup.push(e.id); seen[e.id] = 1; });"
                         " return dup; }")


@pytest.mark.parametrize("lang", LANGS)
def test_side_by_side_on_every_page(tab, served, lang):
    """Every page: each section's row holds this language's section and the other's,
    matched by id; nothing is lost, no id is doubled, nothing fails to load."""
    page = tab.page
    rels = _rels(served, lang)
    page.goto(served.url(lang, rels[0]))
    button = page.locator("button.nr-pair-toggle")
    assert button.get_attribute("aria-pressed") == "false" and button.get_attribute("aria-label")
    _toggle(page)
    assert button.get_attribute("aria-pressed") == "true"
    problems = {}
    for rel in rels:
        if page.url.split("#")[0] != served.url(lang, rel):
            page.goto(served.url(lang, rel))  # the choice is remembered: no click here
        _pair_ready(page)
        rows = page.evaluate(_ROWS)
        soup = BeautifulSoup(served.html(lang, rel), "html.parser")
        art = soup.select_one("article.md-content__inner")
        notebook = art.select_one(".jupyter-wrapper") is not None
        bad = []
        if notebook:
            want = len(art.select("h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]"))
            if len(rows) != want:
                bad.append(f"{len(rows)} rows for {want} sections")
        else:
            want = []  # a section starts at each child that is, or holds, a heading with an id
            for child in art.find_all(True, recursive=False):
                h = child if re.fullmatch(r"h[1-6]", child.name) and child.has_attr("id") else \
                    child.find(re.compile(r"^h[1-6]$"), id=True)
                if h is not None:
                    want.append(h["id"])
            if [r["own"] for r in rows] != want:
                bad.append(f"rows {[r['own'] for r in rows]} != sections {want}")
            bad += [f"row {r['own']!r} holds the other's {r['other']!r}" for r in rows if r["own"] != r["other"]]
        bad += [f"row {r['own']!r}: other column lang={r['lang']!r}" for r in rows if r["lang"] != OTHER[lang]]
        bad += [f"row {r['own']!r}: empty" for r in rows if not r["text"] or not r["ownText"]]
        dup = _duplicate_ids(page)
        if dup:
            bad.append(f"duplicate ids {dup[:5]}")
        if tab.errors:
            bad += list(tab.errors)
            tab.errors.clear()
        if bad:
            problems[rel or "(home)"] = bad
    # and off again: the page as it was
    _toggle(page)
    page.wait_for_function("() => !document.querySelector('.nr-pair')")
    assert page.evaluate("document.body.classList.contains('nr-pair-on')") is False
    last = rels[-1]
    art = BeautifulSoup(served.html(lang, last), "html.parser").select_one("article.md-content__inner")
    want_ids = [h["id"] for h in art.select("h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]")]
    assert page.evaluate("[...document.querySelectorAll('article h1[id],article h2[id],article h3[id],"
                         "article h4[id],article h5[id],article h6[id]')].map(h => h.id)") == want_ids
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("lang", LANGS)
def test_side_by_side_after_instant_navigation_and_remembered(tab, served, lang):
    page = tab.page
    rels = [r for r in _rels(served, lang) if r not in ("", "print/")]
    tab.goto(served.url(lang))
    _toggle(page)
    _pair_ready(page)
    tab.mark()
    tab.instant(served.url(lang, rels[0]))
    assert tab.marked(), "no instant navigation"
    first = BeautifulSoup(served.html(lang, rels[0]), "html.parser").select_one("article h1[id]")["id"]
    page.wait_for_selector(f'article .nr-pair[data-nr-section="{first}"]', timeout=20000)
    _pair_ready(page)
    rows = page.evaluate(_ROWS)
    assert rows and rows[0]["lang"] == OTHER[lang]
    page.reload()
    _pair_ready(page)
    assert page.locator("button.nr-pair-toggle").get_attribute("aria-pressed") == "true"
    _toggle(page)
    page.reload()
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    assert page.evaluate("document.querySelectorAll('.nr-pair').length") == 0
    assert page.locator("button.nr-pair-toggle").get_attribute("aria-pressed") == "false"
    assert not tab.errors, tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_side_by_side_keeps_toc_math_widgets_and_search(tab, served, lang):
    page = tab.page
    tab.goto(served.url(lang))
    _toggle(page)
    _pair_ready(page)
    # the widget (moved into the first column) still answers the keyboard
    page.wait_for_selector('.nr-pair__own [data-nr-widget="scale-playground"] input[type="range"]')
    slider = page.locator('.nr-pair__own [data-nr-widget="scale-playground"] input[type="range"]')
    slider.focus()
    page.keyboard.press("Home")
    low = page.evaluate("document.querySelector('[data-nr-widget=\"scale-playground\"] output').textContent")
    page.keyboard.press("End")
    high = page.evaluate("document.querySelector('[data-nr-widget=\"scale-playground\"] output').textContent")
    assert low != high
    assert page.evaluate("document.querySelectorAll('.nr-pair__other [data-nr-widget]').length") == 0
    # math in both columns, typeset and visible
    sizes = page.evaluate("""() => ['own', 'other'].map(c => [...document.querySelectorAll('.nr-pair__' + c + ' .katex')]
        .filter(k => !k.closest('details:not([open])')).map(k => k.getBoundingClientRect().width > 0))""")
    assert sizes[0] and sizes[1] and all(sizes[0]) and all(sizes[1]), sizes
    # the table of contents still leads to this language's sections (images loaded first:
    # without a size of their own they move the text below them when they arrive)
    page.evaluate("""async () => { const imgs = [...document.querySelectorAll('article img')];
        imgs.forEach(i => { i.loading = 'eager'; });
        await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; }))); }""")
    target = page.evaluate("document.querySelectorAll('.nr-pair')[2].dataset.nrSection")
    # Let Material's tracking settle first (it rewrites the hash 250 ms after a scroll, here the
    # slider's): clicking the table of contents sooner loses the click's hash in Material alone too.
    page.wait_for_timeout(600)
    page.locator(f'nav.md-nav--secondary a[href$="#{target}"]:visible').first.click()
    _until(page, "(t) => location.hash === '#' + t && (r => r.top >= 0 && r.top < innerHeight / 2)"
                 "(document.getElementById(t).getBoundingClientRect())", target)
    assert page.evaluate("(t) => !!document.getElementById(t).closest('.nr-pair__own')", target)
    # search still searches this language's site, and its result opens in side-by-side. Material
    # closes the search when the hash changes, and its tracking rewrites the hash 250 ms after the
    # scroll the table-of-contents click made: let that settle before opening it.
    page.wait_for_timeout(600)
    page.keyboard.press("/")
    page.keyboard.insert_text("RMSNorm")
    page.keyboard.press("End")
    first = page.locator(".md-search-result__list a").first
    first.wait_for(state="visible", timeout=15000)
    href = first.get_attribute("href")
    assert served.lang_of(href) == lang
    first.click()
    _pair_ready(page)
    assert not tab.errors, tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_side_by_side_tooltips_show_the_term_pair(tab, served, lang):
    from normsite.content import glossary as gl

    g = gl.default()
    page = tab.page
    tab.goto(served.url(lang, "toll-booth/"))
    _toggle(page)
    _pair_ready(page)
    for column in ("own", "other"):
        link = page.locator(f".nr-pair__{column} a.nr-term").first
        term = g.get(link.get_attribute("href").split("#")[1])
        pair = f"{term.name['zh']} / {term.name['en']}"
        page.mouse.move(0, 0)
        link.scroll_into_view_if_needed()
        link.hover()
        tip = page.locator(".md-tooltip2").filter(has_text=pair)
        tip.first.wait_for(state="visible", timeout=5000)
        text = tip.first.text_content()
        assert text.startswith(pair) and len(text) > len(pair) + 5, text  # the pair, then the short definition
        if column == "other":
            assert link.get_attribute("aria-describedby") == "nr-pair-tip"
            page.keyboard.press("Escape")
            assert page.locator("#nr-pair-tip").count() == 0
            link.focus()  # the keyboard gets the tooltip too
            page.locator("#nr-pair-tip").filter(has_text=pair).wait_for(state="visible", timeout=5000)
    assert not tab.errors, tab.errors


_HEADER = """() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
    const toggle = document.querySelector('button.nr-pair-toggle'),
          select = toggle.closest('.md-header__inner').querySelector('.md-select'),
          lang = select.querySelector(':scope > .md-header__button');
    return {toggle: box(toggle), lang: box(lang), menuOpen: select.matches(':hover, :focus-within'),
            hovered: toggle.matches(':hover')};
}"""


@pytest.mark.parametrize("lang,rel", [("zh", "formulas/"), ("en", "toll-booth/")])
def test_side_by_side_toggle_stays_under_the_pointer(browser, served, lang, rel):
    """Browser review D2: at 1280 px the wider side-by-side page moved the header 30 px, slid the
    language button under the resting pointer and opened its menu. Turning it on and off by
    clicking the toggle and leaving the pointer there moves neither the toggle nor the language
    button, and opens no menu; the second click lands on the toggle again."""
    with _context(browser, served, viewport={"width": 1280, "height": 800}) as t:
        page = t.page
        page.goto(served.url(lang, rel))
        before = page.evaluate(_HEADER)
        x, y = before["toggle"][0] + before["toggle"][2] / 2, before["toggle"][1] + before["toggle"][3] / 2
        for on in (True, False):
            page.mouse.click(x, y)
            if on:
                _pair_ready(page)
            else:
                page.wait_for_function("() => !document.querySelector('.nr-pair')")
            page.wait_for_timeout(400)  # Material's transitions
            page.mouse.move(x, y)  # the pointer rests where it clicked (hover is re-read)
            after = page.evaluate(_HEADER)
            for k in ("toggle", "lang"):
                assert after[k] == pytest.approx(before[k], abs=0.5), (on, k, before[k], after[k])
            assert after["hovered"] and not after["menuOpen"], (on, after)
            assert page.locator("button.nr-pair-toggle").get_attribute("aria-pressed") == str(on).lower()
        assert not t.errors and not t.foreign, (t.errors, t.foreign)


def test_side_by_side_layout_wide_and_phone(browser, served):
    for width, wide in ((1400, True), (390, False)):
        with _context(browser, served, viewport={"width": width, "height": 900}) as t:
            page = t.page
            page.goto(served.url("zh", "toll-booth/"))
            if wide:
                _toggle(page)
            else:  # the header button is there on a phone too; the choice, set once, is what counts here
                assert page.locator("button.nr-pair-toggle").is_visible()
                page.evaluate("localStorage.setItem('nr.pair', '1')")
                page.reload()
            _pair_ready(page)
            boxes = page.evaluate("""() => [...document.querySelectorAll('.nr-pair')].map(r => {
                const a = r.querySelector('.nr-pair__own').getBoundingClientRect(),
                      b = r.querySelector('.nr-pair__other').getBoundingClientRect();
                return {aTop: a.top, aBottom: a.bottom, aRight: a.right, bTop: b.top, bLeft: b.left, bWidth: b.width};
            })""")
            assert len(boxes) >= 3
            for b in boxes:
                if wide:  # two columns, each section's tops aligned
                    assert abs(b["aTop"] - b["bTop"]) < 2 and b["bLeft"] >= b["aRight"], b
                else:  # alternating blocks: the other language below its section
                    assert b["bTop"] >= b["aBottom"] - 1 and b["bWidth"] > 250, b
            assert page.evaluate("document.documentElement.scrollWidth <= innerWidth + 1"), "the page scrolls sideways"
            assert not t.errors and not t.foreign, (t.errors, t.foreign)


# One language per scheme, each language's text in both roles across the two: light zh (zh in
# the own column, en in the other) and dark en (en own, zh other). Side by side adds the other
# language's column and the two-column layout; pair.css styles both columns alike in either
# language (no rule depends on the language), so what a scheme's colours do to either column, and
# what the narrower columns do to each language's content (code and tables that now scroll, say),
# is seen in both schemes and for both languages. Each page's own view, alone, in each scheme and
# language is test_browser.py's test_accessibility. The two other pairs (light en, dark zh) would
# scan the same content, columns and colours again, each language in its other role; they cost
# about 90 s of axe each on CI.
@pytest.mark.parametrize("scheme,lang", [("light", "zh"), ("dark", "en")], ids=["light-zh", "dark-en"])
def test_side_by_side_accessibility(browser, served, lang, scheme):
    """axe-core finds nothing serious or critical on any page with side-by-side reading on.
    (Not the print edition: side by side it is the whole site twice, minutes of axe; it is
    the other pages' content, and test_browser.py checks it as it comes.)"""
    with _context(browser, served, color_scheme=scheme) as t:
        page = t.page
        found = {}
        page.goto(served.url(lang))
        page.evaluate("localStorage.setItem('nr.pair', '1')")
        for rel in [r for r in _rels(served, lang) if r != "print/"]:
            page.goto(served.url(lang, rel))
            _pair_ready(page)
            page.wait_for_function("(s) => document.body.getAttribute('data-md-color-scheme') === s",
                                   arg="slate" if scheme == "dark" else "default")
            bad = axe_violations(page)
            if bad:
                found[rel or "(home)"] = bad
        assert not found, json.dumps(found, ensure_ascii=False, indent=1)
        assert not t.errors and not t.foreign, (t.errors, t.foreign)


# ---------------------------------------------------------------- zoomable figures

_OPEN = "() => { const i = document.querySelector('.glightbox-container .gslide.current img');" \
        " return i && i.complete && i.naturalWidth > 0 ? i.src : null; }"


def _current(page) -> dict:
    return page.evaluate("""() => {
        const s = document.querySelector('.glightbox-container .gslide.current');
        const img = s.querySelector('img');
        return {src: img.src, width: img.getBoundingClientRect().width, desc: s.querySelector('.gslide-desc').textContent.trim(),
                focus: !!document.activeElement.closest('.glightbox-container')};
    }""")


@pytest.mark.parametrize("lang", LANGS)
def test_figures_zoom_by_keyboard_in_the_themes_variant(tab, served, lang):
    page = tab.page
    rel = "toll-booth/"
    tab.goto(served.url(lang, rel))
    assert not [u for u in tab.local if "glightbox" in u or "zoom" in u], "zoom code loaded before any zoom"
    link = page.locator("article a.nr-zoom:visible").first
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(_OPEN, timeout=15000)
    got = _current(page)
    href = link.get_attribute("href")
    assert got["src"] == urljoin(page.url, href) and got["src"].endswith("-light.svg#only-light")
    caption = link.evaluate("a => a.closest('figure').querySelector('figcaption').textContent.trim()")
    assert got["desc"] == caption
    column = page.evaluate("document.querySelector('article').getBoundingClientRect().width")
    assert got["width"] > column, "the zoomed figure is no larger than in the page"
    assert got["focus"], "the keyboard focus did not move into the viewer"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(s) => { const i = document.querySelector('.glightbox-container .gslide.current img');"
                           " return i && i.src !== s; }", arg=got["src"])
    assert _current(page)["src"].endswith("-light.svg#only-light")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('.glightbox-container')")
    assert page.evaluate("document.activeElement.href") == urljoin(page.url, href)
    # dark theme: the dark variant; and after an instant navigation
    page.emulate_media(color_scheme="dark")
    start = next(r for r in served.pages(lang) if r not in (rel, "404.html", "print/"))
    tab.goto(served.url(lang, start))
    tab.mark()
    tab.instant(served.url(lang, "performance/"))
    assert tab.marked()
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
    page.evaluate("""async () => { const imgs = [...document.querySelectorAll('article img')];
        imgs.forEach(i => { i.loading = 'eager'; });
        await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; }))); }""")
    page.locator("article a.nr-zoom:visible").first.click()
    page.wait_for_function(_OPEN, timeout=15000)
    assert _current(page)["src"].endswith("-dark.svg#only-dark")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('.glightbox-container')")
    page.emulate_media(color_scheme="light")
    assert not tab.errors, tab.errors


def test_instant_navigation_is_waited_for_until_the_new_page_is_in(tab, served):
    # Material pushes the new address at the click and swaps the content only when the page has
    # arrived: waiting for the address (and "an article h1", which the old page has too) let a slow
    # machine go on with the old page. The zoom test then made the old page's images eager, and the
    # new page's figures stayed lazy, unloaded and of no size: `a.nr-zoom:visible` never appeared.
    # Here every page request of Material's is held back 1.5 s.
    page = tab.page
    tab.goto(served.url("en", ""))
    page.evaluate("""() => { const send = XMLHttpRequest.prototype.send;
        XMLHttpRequest.prototype.send = function (...a) { setTimeout(() => send.apply(this, a), 1500); }; }""")
    tab.instant(served.url("en", "performance/"))
    want = BeautifulSoup(served.html("en", "performance/"), "html.parser").select_one("article h1").get_text()
    assert page.evaluate("document.querySelector('article h1').textContent") == want


def test_each_figure_link_shows_one_variant_in_each_theme(tab, served):
    """A figure's one link holds both variants; the theme shows one of them, so the link is
    never an invisible tab stop, and its accessible name is that image's alt text."""
    page = tab.page
    for scheme, want in (("light", "#only-light"), ("dark", "#only-dark")):
        page.emulate_media(color_scheme=scheme)
        tab.goto(served.url("zh", "toll-booth/"))
        page.wait_for_function("(s) => document.body.getAttribute('data-md-color-scheme') === s",
                               arg="slate" if scheme == "dark" else "default")
        seen = page.evaluate("""() => [...document.querySelectorAll('article a.nr-zoom')].map(a => [
            getComputedStyle(a).display,
            [...a.querySelectorAll('img')].filter(i => getComputedStyle(i).display !== 'none').map(i => i.getAttribute('src'))])""")
        assert seen
        for display, shown in seen:
            assert display != "none" and len(shown) == 1 and shown[0].endswith(want), (scheme, display, shown)
    page.emulate_media(color_scheme="light")


# ---------------------------------------------------------------- language switch


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_keeps_the_section(tab, served, lang):
    """From …/toll-booth/#evidence-2, reached by instant navigation and the table of
    contents, the switch lands on the same section in the other language; scrolling on
    (the hash follows the reader) and switching back lands on the new section."""
    other = OTHER[lang]
    page = tab.page
    tab.goto(served.url(lang, "formulas/"))
    tab.mark()
    tab.instant(served.url(lang, "toll-booth/"))
    assert tab.marked()
    page.locator('nav.md-nav--secondary a[href$="#evidence-2"]:visible').first.click()
    _until(page, "() => location.hash === '#evidence-2'")
    page.hover(".md-header__option .md-select")
    page.locator(f'a.md-select__link[hreflang="{other}"]').click()
    page.wait_for_url(served.url(other, "toll-booth/") + "#evidence-2")
    page.wait_for_load_state("load")
    _until(page, "() => { const r = document.getElementById('evidence-2').getBoundingClientRect();"
                 " return r.top >= 0 && r.top < innerHeight / 2; }")
    # Material's tracking skips the first scroll it sees (here the load's own, to #evidence-2)
    # and debounces by 250 ms: let that pass, as a reader would, before scrolling on.
    page.wait_for_timeout(600)
    page.evaluate("document.getElementById('evidence-3').scrollIntoView()")
    _until(page, "() => location.hash === '#evidence-3'")  # navigation.tracking: the hash follows the reader
    page.hover(".md-header__option .md-select")
    page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
    page.wait_for_url(served.url(lang, "toll-booth/") + "#evidence-3")
    assert not tab.errors, tab.errors


# ---------------------------------------------------------------- print edition links


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_links_the_print_edition_and_the_pdf_once_it_exists(tab, served, lang):
    """The print edition is always linked; the PDF only when print/pdf.json names one (a local
    `make build` writes none: no link, and no request that fails)."""
    page = tab.page
    manifest = {"pdf": None}
    page.route("**/print/pdf.json", lambda r: r.fulfill(content_type="application/json", body=json.dumps(manifest)))
    tab.goto(served.url(lang))
    page.wait_for_load_state("networkidle")
    box = page.locator(".nr-print-links")
    assert box.locator('a[href$="print/"]').is_visible()
    assert box.locator("[data-nr-pdf]").count() == 1 and not box.locator("[data-nr-pdf]").is_visible()
    assert not tab.errors, tab.errors
    pdf = f"normref-{lang}.pdf"
    manifest["pdf"] = ("../" if lang == "zh" else "../../") + pdf  # what tools/pdf.py writes
    for rel in ("", "print/"):
        tab.goto(served.url(lang, rel))
        link = page.locator("a[data-nr-pdf], [data-nr-pdf] a")
        link.wait_for(state="visible", timeout=10000)
        assert link.get_attribute("href") == served.base + pdf
    page.unroute("**/print/pdf.json")
