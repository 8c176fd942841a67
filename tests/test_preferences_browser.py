"""The reader's preferences survive the language switch (Debian's Chromium via Playwright).

The two languages are two MkDocs builds (zh at /, en at /en/). Material stores the
chosen palette in localStorage under a key scoped to the build's root, so each build
kept its own, and dark mode chosen on / was lost on /en/. mkdocs.yml's `extra.scope: /`
gives both builds one key. Each test opens a fresh context (nothing remembered) whose
system scheme is light, so a dark page can only come from the reader's choice.
"""

from __future__ import annotations

import contextlib

import pytest

from support import Served

pytestmark = pytest.mark.browser

OTHER = {"zh": "en", "en": "zh"}


@contextlib.contextmanager
def _fresh(browser, served: Served):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    origin = served.base.rstrip("/")
    foreign = []

    def route(r):
        if r.request.url.startswith(origin + "/"):
            r.continue_()
        else:
            foreign.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    try:
        yield ctx.new_page()
    finally:
        ctx.close()
    assert not foreign, f"requests to other hosts: {foreign}"


def _scheme(page) -> str:
    return page.evaluate("document.body.getAttribute('data-md-color-scheme')")


def _choose(page, scheme: str):
    """Click the header's palette toggle until Material shows `scheme` (as the reader would)."""
    if _scheme(page) != scheme:
        page.locator("form[data-md-component=palette] label.md-header__button:visible").first.click()
    page.wait_for_function("(s) => document.body.getAttribute('data-md-color-scheme') === s", arg=scheme,
                           timeout=5000)


def _switch_language(page, served: Served, lang: str, to: str):
    """Follow the header's language switch (site.js points it at the same page in the other language)."""
    link = page.locator(f"a.md-select__link[hreflang={to}]")
    link.dispatch_event("focusin")  # site.js aims the link at this page in the other language
    href = link.get_attribute("href")
    assert href and served.lang_of(page.evaluate("(h) => new URL(h, location.href).href", href)) == to, href
    page.goto(page.evaluate("(h) => new URL(h, location.href).href", href), wait_until="load")
    assert served.lang_of(page.url) == to, page.url


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("rel", ["", "glossary/"])
def test_dark_mode_survives_the_language_switch(browser, served, lang, rel):
    with _fresh(browser, served) as page:
        page.goto(served.url(lang, rel), wait_until="load")
        assert _scheme(page) == "default", "a fresh visit on a light system starts light"
        _choose(page, "slate")
        _switch_language(page, served, lang, OTHER[lang])
        assert _scheme(page) == "slate", f"dark mode chosen on {served.url(lang, rel)} was lost on {page.url}"
        # And back: light chosen on the other language holds on this one.
        _choose(page, "default")
        _switch_language(page, served, OTHER[lang], lang)
        assert _scheme(page) == "default", f"light mode chosen on the {OTHER[lang]} page was lost on {page.url}"
