"""The site hosted under a sub-path, the way a GitHub project page serves it
(https://OWNER.github.io/REPO/): built with NORMREF_SITE_URL=…/normref/ and
served so that the site lives at /normref/ and nothing at /.

Statically: no built file links outside /normref/, every link resolves.
In Chromium (Debian's, never a downloaded one): both home pages load with no
failed request, the language switch goes to /normref/en/… and back to the same
page, and search finds a page in each language.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import LANGS, StaticServer, load_tool

PREFIX = "/normref/"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture(scope="module")
def hosted(tmp_path_factory, site_builder):
    """(served root folder, site folder, base URL): the site at http://127.0.0.1:PORT/normref/."""
    root = tmp_path_factory.mktemp("host")
    # Bound first: the address (with its port) goes into the build.
    server = StaticServer(root)
    base = server.base + PREFIX.lstrip("/")
    site = root / PREFIX.strip("/")
    site_builder(site, site_url=base)
    server.start()
    yield root, site, base
    server.close()


# ------------------------------------------------------------------ static


ATTR = re.compile(r"""\b(?:href|src|action|content|data-root)\s*=\s*["']([^"']*)["']""", re.I)
SRCSET = re.compile(r"""\bsrcset\s*=\s*["']([^"']*)["']""", re.I)
CSS_URL = re.compile(r"""url\(\s*["']?([^)"']+)""", re.I)


def test_no_built_file_links_outside_the_sub_path(hosted):
    _, site, base = hosted
    host = base[: -len(PREFIX)]
    bad = []
    for f in site.rglob("*"):
        if f.suffix not in (".html", ".css", ".xml"):
            continue
        text = f.read_text(encoding="utf-8")
        refs = ATTR.findall(text) + CSS_URL.findall(text)
        refs += [u.strip().split()[0] for s in SRCSET.findall(text) for u in s.split(",") if u.strip()]
        refs += re.findall(r"<(?:loc|xhtml:link[^>]*href=\")([^<\"]+)", text)
        for ref in refs:
            ref = ref.strip()
            if ref.startswith(host):
                ref = ref[len(host):]
            elif ref.startswith(("http:", "https:", "//")):
                continue
            if ref.startswith("/") and not ref.startswith(PREFIX):
                bad.append(f"{f.relative_to(site)}: {ref}")
    assert not bad, "\n".join(sorted(set(bad))[:30])


def test_every_link_resolves_under_the_sub_path(hosted):
    _, site, base = hosted
    report = load_tool("links").check(site, base)
    assert report.site_url == base and report.checked > 0
    assert not report.broken, "\n".join(f"{s}: {u} ({w})" for s, u, w in report.broken[:30])


def test_404_page_loads_its_assets_from_the_sub_path(hosted):
    _, site, base = hosted
    for f in (site / "404.html", site / "en" / "404.html"):
        text = f.read_text(encoding="utf-8")
        assert f'href="{PREFIX}assets/stylesheets/' in text or f'href="{PREFIX}en/assets/stylesheets/' in text, f
        assert f'href="{base}"' in text and f'href="{base}en/"' in text


# ------------------------------------------------------------------ in the browser (conftest's `browser`)


class Watch:
    """A page that records every failed request and uncaught script error."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.failed: list[str] = []
        # A request the page's own navigation cancels (net::ERR_ABORTED: the search worker fetching
        # lunr.zh.min.js as the reader switches language) is not a failure; a missing file is a 404 below.
        self.page.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "")
                     and self.failed.append(f"{r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.url} (HTTP {r.status})"))
        self.page.on("pageerror", lambda e: self.failed.append(f"script error: {e}"))

    def goto(self, url: str):
        self.page.goto(url, wait_until="networkidle")

    def close(self):
        self.context.close()


@pytest.fixture
def watch(browser):
    w = Watch(browser)
    yield w
    w.close()


def _a_page_below_the_root(site: Path, base: str) -> str:
    """A page other than the home page (from the sitemap), else the home page."""
    locs = [e.text for e in ET.parse(site / "sitemap.xml").getroot().iterfind("sm:url/sm:loc", NS)]
    below = [u for u in locs if u != base]
    return (below[0] if below else base)[len(base):]


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_loads_with_no_failed_request(hosted, watch, lang):
    _, _, base = hosted
    url = base if lang == "zh" else base + "en/"
    watch.goto(url)
    assert watch.page.evaluate("document.documentElement.lang") == lang
    assert watch.page.url == url
    # Material's stylesheet and our own really applied (a 404 would leave them unstyled).
    assert watch.page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    assert not watch.failed, "\n".join(watch.failed)


def test_language_switch_stays_on_the_page_under_the_sub_path(hosted, watch):
    _, site, base = hosted
    path = _a_page_below_the_root(site, base)
    zh, en = base + path, base + "en/" + path

    def switch(to: str):
        link = watch.page.locator(f'a.md-select__link[hreflang="{to}"]')
        link.evaluate("a => a.click()")  # the selector's menu opens on hover; click the link itself

    watch.goto(zh)
    switch("en")
    watch.page.wait_for_url(en)
    watch.page.wait_for_load_state("networkidle")
    assert watch.page.evaluate("document.documentElement.lang") == "en"
    switch("zh")
    watch.page.wait_for_url(zh)
    watch.page.wait_for_load_state("networkidle")
    assert watch.page.evaluate("document.documentElement.lang") == "zh"
    assert not watch.failed, "\n".join(watch.failed)


@pytest.mark.parametrize("lang", LANGS)
def test_search_finds_pages_under_the_sub_path(hosted, watch, lang):
    _, _, base = hosted
    root = base if lang == "zh" else base + "en/"
    watch.goto(root)
    # Material's shortcut focuses the search box; it searches on keyup, which
    # fill() and insert_text() do not send, hence the End key.
    watch.page.keyboard.press("/")
    watch.page.keyboard.insert_text("RMSNorm")
    watch.page.keyboard.press("End")
    first = watch.page.locator(".md-search-result__item a").first
    first.wait_for(state="attached", timeout=15_000)
    href = first.evaluate("a => a.href")
    assert href.startswith(root) and (lang == "en" or not href.startswith(base + "en/")), href
    watch.goto(href)  # the result leads to a page that exists
    assert watch.page.url.split("#")[0] == href.split("#")[0]
    assert not watch.failed, "\n".join(watch.failed)


def test_screenshot_tool_photographs_a_built_page(hosted, tmp_path, browser):
    import struct

    _, site, _ = hosted
    mod = load_tool("screenshot")
    out = mod.screenshot(site, tmp_path / "shot.png", path="en/", width=800, height=500, browser=browser)
    head = out.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (800, 500)
    with pytest.raises(ValueError, match="site="):
        mod.screenshot(tmp_path, tmp_path / "x.png")
    with pytest.raises(ValueError, match="scheme="):
        mod.screenshot(site, tmp_path / "x.png", scheme="sepia")


# ------------------------------------------------------------------ reading aids under the sub-path (issue L)


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_side_by_side_zoom_and_switch_under_the_sub_path(hosted, watch, lang):
    """Side-by-side reading fetches the other language from /normref/…, a figure zooms from
    /normref/…/figures/, and the switch keeps the section the reader is in: nothing leaves
    the sub-path."""
    _, _, base = hosted
    other = "en" if lang == "zh" else "zh"
    root = base if lang == "zh" else base + "en/"
    other_root = base if other == "zh" else base + "en/"
    page = watch.page
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    watch.goto(root + "toll-booth/#evidence-2")
    page.locator("button.nr-pair-toggle").click()
    page.wait_for_function("() => document.querySelector('article .nr-pair') && !document.querySelector('article[aria-busy]')",
                           timeout=20000)
    rows = page.evaluate("[...document.querySelectorAll('.nr-pair')].map(r => [r.dataset.nrSection,"
                         " r.querySelector('.nr-pair__other').lang])")
    assert ["evidence-2", other] in rows, rows
    assert other_root + "toll-booth/" in requests
    link = page.locator(".nr-pair__own a.nr-zoom:visible").first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_function("() => { const i = document.querySelector('.glightbox-container .gslide.current img');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=15000)
    src = page.evaluate("document.querySelector('.glightbox-container .gslide.current img').src")
    assert src.startswith(base) and "/figures/" in src, src
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('.glightbox-container')")
    here = page.evaluate("location.hash")  # the section in view now (the hash follows the reader)
    assert here
    page.locator(f'a.md-select__link[hreflang="{other}"]').evaluate("a => a.click()")
    page.wait_for_url(other_root + "toll-booth/" + here)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.lang") == other
    assert all(u.startswith(base) for u in requests if u.startswith("http")), [u for u in requests if not u.startswith(base)]
    assert not watch.failed, "\n".join(watch.failed)
